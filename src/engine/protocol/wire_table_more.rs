//! The wire table's second half: the later event kinds beside their JSON lines.

use std::path::PathBuf;

use super::*;
use crate::engine::provider::ErrorKind as P;

pub(super) fn table_5(t: Thresholds) -> Vec<(Event, &'static str)> {
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
            Event::InitExists {
                turn: TurnId(4),
                path: PathBuf::from("/w/AGENTS.md"),
            },
            r#"{"type":"init_exists","turn":4,"path":"/w/AGENTS.md"}"#,
        ),
        (
            Event::Permissions {
                policy: ApprovalPolicy::Ask,
                allowances: vec![Allowance::from(AllowRule::BashPrefix {
                    prefix: "cargo test".into(),
                })],
                sandbox: "workspace-write, network off (Landlock ABI 7 and a seccomp filter)"
                    .into(),
            },
            r#"{"type":"permissions","policy":"ask","allowances":[{"rule":{"kind":"bash_prefix","prefix":"cargo test"},"label":"bash: `cargo test …`"}],"sandbox":"workspace-write, network off (Landlock ABI 7 and a seccomp filter)"}"#,
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
    ]
}

pub(super) fn table_6(t: Thresholds) -> Vec<(Event, &'static str)> {
    vec![
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
        (
            Event::Pins {
                pins: vec!["never push to main".into(), "run the tests".into()],
                change: PinChange::Added,
                changed: vec!["run the tests".into()],
                step: Some("fix-it".into()),
            },
            r#"{"type":"pins","pins":["never push to main","run the tests"],"change":"added","changed":["run the tests"],"step":"fix-it"}"#,
        ),
        (
            Event::Focus {
                focus: Some("the parser".into()),
                step: None,
            },
            r#"{"type":"focus","focus":"the parser","step":null}"#,
        ),
    ]
}

/// Todos, memory, checkpoints and rewinds, modes and plans.
pub(super) fn table_7() -> Vec<(Event, &'static str)> {
    vec![
        (
            Event::Todo {
                items: vec![
                    TodoItem {
                        text: "read".into(),
                        status: TodoStatus::Done,
                    },
                    TodoItem {
                        text: "fix".into(),
                        status: TodoStatus::InProgress,
                    },
                    TodoItem {
                        text: "test".into(),
                        status: TodoStatus::Pending,
                    },
                ],
            },
            r#"{"type":"todo","items":[{"text":"read","status":"done"},{"text":"fix","status":"in_progress"},{"text":"test","status":"pending"}]}"#,
        ),
        (
            Event::MemoryRefused {
                reason: MemoryRefusal::PinTooLong,
                message: "Not pinned".into(),
            },
            r#"{"type":"memory_refused","reason":"pin_too_long","message":"Not pinned"}"#,
        ),
        (
            Event::Restore(crate::engine::checkpoint::RestoreReport::Conflict {
                action: crate::engine::checkpoint::UndoAction::Undo,
                of: crate::engine::checkpoint::TurnRef {
                    generation: 2,
                    turn: 3,
                    at: 1_800_000_000,
                },
                files: vec![crate::engine::checkpoint::RelPath::parse("src/a.rs").unwrap()],
            }),
            r#"{"type":"restore","outcome":"conflict","action":"undo","of":{"generation":2,"turn":3,"at":1800000000},"files":["src/a.rs"]}"#,
        ),
        (
            Event::RewindPoints {
                points: vec![RewindPoint {
                    turn: 3,
                    generation: 2,
                    at: 1_800_000_000,
                    text: "fix the parser".into(),
                    files: vec!["src/a.rs".into()],
                    current: true,
                    undone: false,
                }],
            },
            r#"{"type":"rewind_points","points":[{"turn":3,"generation":2,"at":1800000000,"text":"fix the parser","files":["src/a.rs"],"current":true}]}"#,
        ),
        (
            Event::Rewound {
                turn: 3,
                mode: RewindMode::Both,
                files: vec!["src/a.rs".into()],
                kept: Vec::new(),
                text: Some("fix the parser".into()),
                generation: None,
            },
            r#"{"type":"rewound","turn":3,"mode":"both","files":["src/a.rs"],"kept":[],"text":"fix the parser","generation":null}"#,
        ),
        (
            Event::RewindConflict {
                turn: 3,
                mode: RewindMode::Code,
                files: vec!["src/a.rs".into()],
            },
            r#"{"type":"rewind_conflict","turn":3,"mode":"code","files":["src/a.rs"]}"#,
        ),
        (
            Event::Mode {
                mode: crate::engine::policy::Mode::AcceptEdits,
            },
            r#"{"type":"mode","mode":"accept-edits"}"#,
        ),
        (
            Event::Plan {
                turn: Some(TurnId(2)),
                path: PathBuf::from("/w/.flower/notes/plan-fix.md"),
                markdown: "# Plan\n".into(),
            },
            r##"{"type":"plan","turn":2,"path":"/w/.flower/notes/plan-fix.md","markdown":"# Plan\n"}"##,
        ),
    ]
}

/// Notices, errors, the ends of turns and runs, and hooks.
pub(super) fn table_8() -> Vec<(Event, &'static str)> {
    vec![
        (
            Event::Notice {
                message: "n".into(),
            },
            r#"{"type":"notice","message":"n"}"#,
        ),
        (
            Event::Warning {
                message: "w".into(),
            },
            r#"{"type":"warning","message":"w"}"#,
        ),
        (
            Event::Error {
                kind: ErrorKind::Provider(P::RateLimited),
                message: "slow down".into(),
            },
            r#"{"type":"error","kind":"rate_limited","message":"slow down"}"#,
        ),
        (
            Event::Error {
                kind: ErrorKind::HandoffBreaker,
                message: "stop".into(),
            },
            r#"{"type":"error","kind":"handoff_breaker","message":"stop"}"#,
        ),
        (
            Event::TurnEnd {
                turn: TurnId(3),
                kind: TurnKind::Message,
                origin: Origin::User,
                reason: ExitReason::Error(ErrorKind::Provider(P::ContextWindowExceeded)),
            },
            r#"{"type":"turn_end","turn":3,"kind":"message","origin":"user","reason":"error:context_window_exceeded"}"#,
        ),
        (
            Event::Result {
                text: "done".into(),
                is_error: false,
                num_turns: 1,
                cost_usd: 0.25,
                session_id: "s1".into(),
                plan: None,
            },
            r#"{"type":"result","text":"done","is_error":false,"num_turns":1,"cost_usd":0.25,"session_id":"s1"}"#,
        ),
        (
            Event::Result {
                text: "planned".into(),
                is_error: false,
                num_turns: 1,
                cost_usd: 0.0,
                session_id: "s1".into(),
                plan: Some(PathBuf::from("/w/.flower/notes/plan-fix.md")),
            },
            r#"{"type":"result","text":"planned","is_error":false,"num_turns":1,"cost_usd":0.0,"session_id":"s1","plan":"/w/.flower/notes/plan-fix.md"}"#,
        ),
        (
            Event::Hook(crate::engine::hooks::HookNote {
                event: "PreToolUse".into(),
                name: "./check.sh".into(),
                source: "/w/.claude/settings.json".into(),
                outcome: "blocked",
                exit: "exit code 2".into(),
                elapsed_ms: 12,
                output: "no rm here".into(),
            }),
            r#"{"type":"hook","event":"PreToolUse","name":"./check.sh","source":"/w/.claude/settings.json","outcome":"blocked","exit":"exit code 2","elapsed_ms":12,"output":"no rm here"}"#,
        ),
        (
            Event::HooksApproval(crate::engine::hooks::HooksQuestion {
                path: PathBuf::from("/w/.claude/settings.json"),
                sha256: "ab12".into(),
                hooks: vec!["PreToolUse [Bash]: ./check.sh".into()],
            }),
            r#"{"type":"hooks_approval","path":"/w/.claude/settings.json","sha256":"ab12","hooks":["PreToolUse [Bash]: ./check.sh"]}"#,
        ),
    ]
}
