//! The engine under the fake's chaos mode: every fault kind on both protocols is replayed
//! inside the retry budget, the user ends up seeing the scripted reply exactly once, the transcript
//! keeps only completed replies, and no tool runs from a broken stream.

use std::collections::BTreeSet;
use std::time::Duration;

use flower_tui::engine::ledger::load_transcript;
use flower_tui::engine::protocol::{Event, StreamState};
use flower_tui::engine::session::EngineParams;
use flower_tui::engine::types::{Block, Message, Role};
use serde_json::json;

use crate::support::check::picked;
use crate::support::fake::chaos::{
    Chaos, Dice, Fault, FaultKind, Protocol, split_events, terminal_index,
};
use crate::support::fake::{Reply, U, anthropic as a, openai as o};
use crate::support::harness::{Harness, Running, start, turn_end};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Anthropic,
    OpenAi,
}

pub fn text_reply(api: Api, text: &str, usage: U) -> Reply {
    match api {
        Api::Anthropic => a::text(text, usage),
        Api::OpenAi => o::text(text, usage),
    }
}

/// Some text, then one tool call.
pub fn tool_reply(api: Api, text: &str, id: &str, name: &str, args: &str, usage: U) -> Reply {
    match api {
        Api::Anthropic => a::text_then_tools(text, &[(id, name, args)], usage),
        Api::OpenAi => o::Stream::new(usage)
            .text(text)
            .tool(id, name, args)
            .reply(),
    }
}

/// Engine parameters for `api` with a short idle timeout.
pub fn params(h: &Harness, api: Api, idle: Duration) -> EngineParams {
    let mut p = h.params(200_000, 50_000);
    p.provider.client = match api {
        Api::Anthropic => h.anthropic(),
        Api::OpenAi => h.openai(),
    };
    p.provider.retry.idle_timeout = idle;
    p
}

/// What a front end shows after `events`: each completed answer, plus the live try; a discarded
/// try is taken back (and the engine's count of its characters must match what was shown).
pub fn shown(events: &[Event]) -> String {
    let mut done = String::new();
    let mut live = String::new();
    for e in events {
        match e {
            Event::TextDelta { text, .. } => live.push_str(text),
            Event::Stream(StreamState::Discarded { chars }) => {
                assert_eq!(live.chars().count(), *chars, "discarded count");
                live.clear();
            }
            Event::AssistantDone { .. } => done.push_str(&std::mem::take(&mut live)),
            _ => {}
        }
    }
    done + &live
}

/// The messages of the run's first session transcript, as they would be resumed.
pub fn transcript(r: &Running) -> Vec<Message> {
    let sid = r.manifest().steps[0].session_id.clone();
    load_transcript(&r.run_root.join(format!("sessions/{sid}.jsonl")))
        .unwrap()
        .1
}

pub fn retries(events: &[Event]) -> Vec<String> {
    picked!(events, Event::Retry { reason, .. } => reason.clone())
}

/// How the retry line of `fault` starts.
fn reason_prefix(fault: &Fault) -> &'static str {
    match fault {
        Fault::Status { status: 429, .. } => "rate_limited: ",
        Fault::Status {
            status: 503 | 529, ..
        } => "overloaded: ",
        Fault::Status { .. } => "other: ",
        Fault::Stall { after: None, .. } => "network: no response from the provider within 0.3s",
        Fault::Stall { .. } => "stream broken: stalled: no data from the provider for 0.3s",
        Fault::Truncate { .. } => "stream broken: ended before ",
        Fault::Malformed { .. } => "stream broken: malformed JSON in ",
        Fault::Drop { .. } => "stream broken: interrupted: ",
    }
}

const REPLY: &str =
    "The scripted reply arrives whole, in order, and only once, whatever broke before it.";

async fn alone(api: Api, kind: FaultKind) {
    let h = Harness::new().await;
    h.server.push(text_reply(api, REPLY, U::new(1200, 30)));
    // Stalls last longer than the idle timeout, so the timeout (not the server) ends them.
    h.server
        .set_chaos(Chaos::only(11, kind, 2).stall_for(Duration::from_secs(5)));
    let mut r = start(params(&h, api, Duration::from_millis(300)));
    let ev = r.completed_turn("hi").await;
    let faults = h.server.faults();
    assert_eq!(faults.len(), 2, "{faults:?}");
    assert!(faults.iter().all(|f| f.kind() == kind), "{faults:?}");
    assert_eq!(h.server.requests().len(), 3);
    let reasons = retries(&ev);
    assert_eq!(reasons.len(), 2, "{ev:#?}");
    for (reason, fault) in reasons.iter().zip(&faults) {
        assert!(
            reason.starts_with(reason_prefix(fault)),
            "{fault:?}: {reason}"
        );
    }
    assert_eq!(shown(&ev), REPLY);
    let done: Vec<_> = picked!(
        ev,
        Event::AssistantDone { text, interrupted, .. } => (text.as_str(), *interrupted)
    );
    assert_eq!(done, [(REPLY, false)]);
    assert_eq!(
        transcript(&r),
        [Message::user("hi"), Message::assistant(REPLY)]
    );
    // No connection is left hanging by an abandoned try.
    assert!(h.server.wait_idle(Duration::from_secs(3)).await);
    r.shutdown().await;
}

#[tokio::test]
async fn anthropic_status_storm_is_retried() {
    alone(Api::Anthropic, FaultKind::Status).await;
}

#[tokio::test]
async fn anthropic_truncated_stream_is_replayed() {
    alone(Api::Anthropic, FaultKind::Truncate).await;
}

#[tokio::test]
async fn anthropic_malformed_event_is_replayed() {
    alone(Api::Anthropic, FaultKind::Malformed).await;
}

#[tokio::test]
async fn anthropic_dropped_connection_is_replayed() {
    alone(Api::Anthropic, FaultKind::Drop).await;
}

#[tokio::test]
async fn anthropic_stall_is_abandoned_and_replayed() {
    alone(Api::Anthropic, FaultKind::Stall).await;
}

#[tokio::test]
async fn openai_status_storm_is_retried() {
    alone(Api::OpenAi, FaultKind::Status).await;
}

#[tokio::test]
async fn openai_truncated_stream_is_replayed() {
    alone(Api::OpenAi, FaultKind::Truncate).await;
}

#[tokio::test]
async fn openai_malformed_event_is_replayed() {
    alone(Api::OpenAi, FaultKind::Malformed).await;
}

#[tokio::test]
async fn openai_dropped_connection_is_replayed() {
    alone(Api::OpenAi, FaultKind::Drop).await;
}

#[tokio::test]
async fn openai_stall_is_abandoned_and_replayed() {
    alone(Api::OpenAi, FaultKind::Stall).await;
}

/// 20 turns, each a tool call (`bash` appends a line to a file) and a final answer, under a
/// combined fault rate. Faults are drawn independently per try, but never more than 4 in a row,
/// so each request fits the 5-try budget: this checks what replay does, not the budget's odds
/// (the `chaos` bench measures those).
async fn twenty_turns(api: Api, seed: u64) {
    let h = Harness::new().await;
    h.server.set_chaos(
        Chaos::combined(seed, 0.4)
            .max_in_a_row(4)
            .stall_for(Duration::from_millis(400)),
    );
    let mut r = start(params(&h, api, Duration::from_millis(200)));
    let mut expected = Vec::new();
    for n in 1..=20u64 {
        let id = format!("call_{n}");
        let args = json!({"command": format!("echo turn-{n} >> log.txt")}).to_string();
        let first = format!("Logging turn {n}.");
        let last = format!("Turn {n} is logged.");
        h.server.push(tool_reply(
            api,
            &first,
            &id,
            "bash",
            &args,
            U::new(1_000 + n * 40, 20),
        ));
        h.server
            .push(text_reply(api, &last, U::new(1_020 + n * 40, 20)));
        let ev = r.turn(&format!("log turn {n}")).await;
        assert_eq!(turn_end(&ev), "completed", "turn {n}: {ev:#?}");
        assert_eq!(shown(&ev), format!("{first}{last}"), "turn {n}");
        let calls = ev
            .iter()
            .filter(|e| matches!(e, Event::ToolCall { .. }))
            .count();
        assert_eq!(calls, 1, "turn {n}");
        expected.push(Message::user(format!("log turn {n}")));
        expected.push(Message {
            role: Role::Assistant,
            content: vec![
                Block::text(first),
                Block::ToolUse {
                    id: id.clone(),
                    name: "bash".into(),
                    input: serde_json::from_str(&args).unwrap(),
                    from_text: false,
                },
            ],
        });
        expected.push(Message {
            role: Role::User,
            content: vec![Block::ToolResult {
                tool_use_id: id,
                content: "(no output)".into(),
                is_error: false,
            }],
        });
        expected.push(Message::assistant(last));
    }
    // Every tool ran exactly once, in order.
    let log = std::fs::read_to_string(h.workspace.join("log.txt")).unwrap();
    let want: String = (1..=20).map(|n| format!("turn-{n}\n")).collect();
    assert_eq!(log, want);
    let got = transcript(&r);
    assert_eq!(got.len(), expected.len());
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        if let (
            Some(Block::ToolResult {
                tool_use_id,
                is_error,
                ..
            }),
            Some(Block::ToolResult {
                tool_use_id: want_id,
                ..
            }),
        ) = (g.content.first(), e.content.first())
        {
            // The bash result's wording is the tool's business; its pairing is ours.
            assert_eq!((tool_use_id, *is_error), (want_id, false), "message {i}");
            continue;
        }
        assert_eq!(g, e, "message {i}");
    }
    let faults = h.server.faults();
    let kinds: BTreeSet<FaultKind> = faults.iter().map(Fault::kind).collect();
    assert_eq!(kinds.len(), 5, "every fault kind came up: {faults:?}");
    let requests = h.server.requests().len();
    assert_eq!(requests, 40 + faults.len());
    assert!(
        faults.len() * 4 >= requests,
        "about 40% of {requests} requests faulted, got {}",
        faults.len()
    );
    r.shutdown().await;
}

#[tokio::test]
async fn twenty_anthropic_turns_with_tools_under_forty_percent_faults() {
    twenty_turns(Api::Anthropic, 2024).await;
}

#[tokio::test]
async fn twenty_openai_turns_with_tools_under_forty_percent_faults() {
    twenty_turns(Api::OpenAi, 2025).await;
}

#[test]
fn the_same_seed_gives_the_same_faults() {
    let reply = a::text("one two three four five six", U::new(1, 1));
    let roll = |seed| {
        let mut d = Dice::new(Chaos::combined(seed, 0.6));
        (0..200)
            .map(|_| d.roll(&reply, Protocol::Anthropic).map(|(f, _)| f))
            .collect::<Vec<_>>()
    };
    assert_eq!(roll(5), roll(5));
    assert_ne!(roll(5), roll(6));
    let faults = roll(5);
    let share = faults.iter().filter(|f| f.is_some()).count() as f64 / 200.0;
    assert!((0.45..0.75).contains(&share), "{share}");
    // A cap passes the request after it and does not shift the faults drawn later.
    let mut capped = Dice::new(Chaos::combined(5, 0.6).max_in_a_row(1));
    let got: Vec<_> = (0..200)
        .map(|_| capped.roll(&reply, Protocol::Anthropic).map(|(f, _)| f))
        .collect();
    assert!(got.windows(2).all(|w| w[0].is_none() || w[1].is_none()));
    for (g, f) in got.iter().zip(&faults) {
        assert!(g.is_none() || g == f);
    }
    // Only stream replies are faulted.
    let mut d = Dice::new(Chaos::only(1, FaultKind::Drop, 10));
    assert!(
        d.roll(&Reply::status(500, "x"), Protocol::Anthropic)
            .is_none()
    );
}

#[test]
fn events_split_and_the_terminal_event_is_found() {
    let anthropic = a::Stream::new(U::new(1, 1)).text("hi there").bytes();
    let ev = split_events(&anthropic);
    assert_eq!(ev.concat(), anthropic);
    assert!(ev.iter().all(|e| e.ends_with(b"\n\n")));
    let term = terminal_index(&ev, Protocol::Anthropic);
    assert_eq!(term, ev.len() - 1);
    assert!(ev[term].starts_with(b"event: message_stop"));

    let openai = o::Stream::new(U::new(1, 1)).text("hi there").bytes();
    let ev = split_events(&openai);
    assert_eq!(ev.concat(), openai);
    let term = terminal_index(&ev, Protocol::OpenAi);
    // The finish_reason chunk, before the usage chunk and `[DONE]`.
    assert_eq!(term, ev.len() - 3);
    assert!(String::from_utf8_lossy(&ev[term]).contains("\"finish_reason\":\"stop\""));
}
