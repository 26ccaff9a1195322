//! The handoff in the background and its rescue, engine in process against
//! the fake: the writing request beside the main thread on the same prefix, the review while work
//! goes on, the turnover at the next message boundary with the record after the cut, the wait at
//! the hard limit, and every way the writing can fail.
//!
//! The fake answers the writing request from its own queue (`push_writing`) and the main thread
//! from the main one; gates hold a reply until the test lets it go, so the order of what runs at
//! the same time is the test's, not the scheduler's.

mod beside;
mod rescue;
mod tail;

use std::time::Duration;

use flower_tui::engine::handoff::briefing::{RESCUED_NOTE, TAIL_NOTE};
use flower_tui::engine::policy::{FrontEnd, HandoffMode};
use flower_tui::engine::protocol::{
    DocumentSource, Event, ExitReason, HandoffId, HandoffPhase, HandoffRefusal, Op,
};
use flower_tui::engine::session::EngineParams;
use serde_json::Value;

use crate::support::fake::{Gate, Recorded, Reply, U, anthropic as a, is_writing};
use crate::support::harness::{Harness, Running, start, turn_end};

const DOC: &str = "## Doing\nRefactoring the parser.\n## Decided\n- Keep the old API: callers depend on it.\n## Dead ends\n- Regex parsing: breaks on nested quotes.\n## Next\nRun the parser tests.\n## Scene\n- src/parser.rs\n";

fn u(input: u64) -> U {
    U::new(input, 10)
}

/// window 40k, headroom 10k: the line at 30k, the hard limit at 40k - 1,024 = 38,976.
fn bg(h: &Harness) -> EngineParams {
    let mut p = h.params(40_000, 10_000);
    p.handoff.mode = HandoffMode::Background;
    p
}

fn phases(events: &[Event]) -> Vec<HandoffPhase> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Handoff(p) => Some(p.clone()),
            _ => None,
        })
        .collect()
}

/// The text blocks of the first message of a request body.
fn first_blocks(body: &Value) -> Vec<String> {
    body["messages"][0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str().map(str::to_string))
        .collect()
}

/// A body without its `cache_control` markers (they move from request to request).
fn unmarked(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "cache_control")
                .map(|(k, v)| (k.clone(), unmarked(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(unmarked).collect()),
        other => other.clone(),
    }
}

fn writing_requests(recorded: &[Recorded]) -> Vec<&Recorded> {
    recorded.iter().filter(|r| is_writing(&r.body)).collect()
}

fn main_requests(recorded: &[Recorded]) -> Vec<&Recorded> {
    recorded.iter().filter(|r| !is_writing(&r.body)).collect()
}

async fn until_phase(r: &mut Running, want: fn(&HandoffPhase) -> bool) -> Vec<Event> {
    r.until(|e| matches!(e, Event::Handoff(p) if want(p))).await
}

fn handoff_of(events: &[Event]) -> HandoffId {
    events
        .iter()
        .find_map(|e| match e {
            Event::Handoff(HandoffPhase::Writing { handoff, .. }) => Some(*handoff),
            _ => None,
        })
        .expect("a writing phase")
}

fn exit_of(ev: &[Event]) -> Option<ExitReason> {
    crate::support::harness::exit_reason(ev)
}
