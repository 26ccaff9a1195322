//! The context's events: the gauge (`usage`), the handoff's phases, compaction, the stream's retries
//! and states, a learned window, and the model in force.

use std::path::PathBuf;

use crate::engine::protocol::*;

/// The context events and their lines.
pub(super) fn entries(t: Thresholds) -> Vec<(Event, &'static str)> {
    vec![
        (
            Event::Model {
                model: "claude-opus-4-1".into(),
                effort: Some(Effort::High),
                thresholds: t,
                window_source: WindowSource::Flag,
            },
            r#"{"type":"model","model":"claude-opus-4-1","effort":"high","window":200000,"headroom":50000,"at":150000,"warn_at":130000,"window_source":"--window"}"#,
        ),
        (
            Event::Usage {
                turn: Some(TurnId(4)),
                context: 1200,
                thresholds: t,
                estimated: false,
                usage: crate::engine::types::Usage {
                    input_tokens: 1000,
                    output_tokens: 200,
                    cache_creation_input_tokens: 0,
                    cache_read_input_tokens: 0,
                },
                cost_usd: 0.5,
                session_cost_usd: 1.25,
                masked_tokens: 48_200,
            },
            r#"{"type":"usage","turn":4,"context":1200,"window":200000,"headroom":50000,"at":150000,"warn_at":130000,"estimated":false,"usage":{"input_tokens":1000,"output_tokens":200,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},"cost_usd":0.5,"session_cost_usd":1.25,"masked_tokens":48200}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Near {
                context: 130_000,
                at: 150_000,
                window: 200_000,
            }),
            r#"{"type":"handoff","phase":"near","context":130000,"at":150000,"window":200000}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Writing {
                handoff: HandoffId(1),
                manual: true,
                focus: Some("parser".into()),
                background: false,
            }),
            r#"{"type":"handoff","phase":"writing","handoff":1,"manual":true,"focus":"parser","background":false}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Rescuing {
                handoff: HandoffId(1),
                reason: "the writing request overflowed".into(),
                stubbed: 3,
                dropped: 0,
                background: true,
            }),
            r#"{"type":"handoff","phase":"rescuing","handoff":1,"reason":"the writing request overflowed","stubbed":3,"dropped":0,"background":true}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Retrying {
                handoff: HandoffId(1),
                reason:
                    "the document restated its instructions (words from the prompt: doing 100%)"
                        .into(),
                background: false,
            }),
            r#"{"type":"handoff","phase":"retrying","handoff":1,"reason":"the document restated its instructions (words from the prompt: doing 100%)","background":false}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Waiting {
                handoff: HandoffId(1),
                context: 183_700,
                limit: 183_616,
            }),
            r#"{"type":"handoff","phase":"waiting","handoff":1,"context":183700,"limit":183616}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Frozen {
                handoff: HandoffId(1),
                path: Some(PathBuf::from("/w/.flower/notes/handoff-s.md")),
                degraded: true,
                degraded_reason: Some("no text captured".into()),
                markdown: "Doing\n".into(),
                awaits_review: true,
                background: false,
            }),
            r#"{"type":"handoff","phase":"frozen","handoff":1,"path":"/w/.flower/notes/handoff-s.md","degraded":true,"degraded_reason":"no text captured","markdown":"Doing\n","awaits_review":true,"background":false}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Reopened {
                handoff: HandoffId(1),
                path: Some(PathBuf::from("/w/.flower/notes/handoff-s.md")),
                frozen_at: "2026-11-29T13:40:05Z".into(),
                unsaved: Some(PathBuf::from(
                    "/w/.flower/notes/handoff-s.md.unsaved-20261129T134100Z.md",
                )),
            }),
            r#"{"type":"handoff","phase":"reopened","handoff":1,"path":"/w/.flower/notes/handoff-s.md","frozen_at":"2026-11-29T13:40:05Z","unsaved":"/w/.flower/notes/handoff-s.md.unsaved-20261129T134100Z.md"}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Done {
                handoff: HandoffId(1),
                context: 152_000,
                window: 200_000,
                degraded: false,
                degraded_reason: None,
                path: None,
                sections: vec!["doing".into(), "next".into()],
                generation: 2,
                source: crate::engine::protocol::DocumentSource::Rescued,
                tail: 4,
                held: Held {
                    messages: 48,
                    tool_calls: 31,
                    tokens: 152_400,
                    transcript: Some(PathBuf::from("/d/runs/r/sessions/s1.jsonl")),
                },
            }),
            r#"{"type":"handoff","phase":"done","handoff":1,"context":152000,"window":200000,"degraded":false,"degraded_reason":null,"path":null,"sections":["doing","next"],"generation":2,"source":"rescued","tail":4,"held":{"messages":48,"tool_calls":31,"tokens":152400,"transcript":"/d/runs/r/sessions/s1.jsonl"}}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Cancelled {
                handoff: HandoffId(2),
            }),
            r#"{"type":"handoff","phase":"cancelled","handoff":2}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Failed {
                handoff: HandoffId(2),
                message: "no text captured".into(),
            }),
            r#"{"type":"handoff","phase":"failed","handoff":2,"message":"no text captured"}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Refused {
                reason: HandoffRefusal::NoMessages,
                message: HandoffRefusal::NoMessages.to_string(),
            }),
            r#"{"type":"handoff","phase":"refused","reason":"no_messages","message":"Nothing to hand off (no messages yet)"}"#,
        ),
        (
            Event::Compaction {
                before: 80_000,
                after: 20_000,
                trigger: CompactionTrigger::Overflow,
            },
            r#"{"type":"compaction","before":80000,"after":20000,"trigger":"overflow"}"#,
        ),
        (
            Event::Retry {
                attempt: 2,
                max: 5,
                reason: "overloaded".into(),
                delay_ms: 1000,
            },
            r#"{"type":"retry","attempt":2,"max":5,"reason":"overloaded","delay_ms":1000}"#,
        ),
        (
            Event::Stream(StreamState::Discarded { chars: 12 }),
            r#"{"type":"stream","state":"discarded","chars":12}"#,
        ),
        (
            Event::Stream(StreamState::Silent { silent_ms: 15_000 }),
            r#"{"type":"stream","state":"silent","silent_ms":15000}"#,
        ),
        (
            Event::Stream(StreamState::Resumed),
            r#"{"type":"stream","state":"resumed"}"#,
        ),
        (
            Event::WindowLearned {
                model: "m".into(),
                thresholds: t,
            },
            r#"{"type":"window_learned","model":"m","window":200000,"headroom":50000,"at":150000,"warn_at":130000}"#,
        ),
    ]
}
