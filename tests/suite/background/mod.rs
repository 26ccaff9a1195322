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

use crate::support::fake::{Gate, Recorded, Reply, U, anthropic as a, is_writing};
use crate::support::harness::{Harness, Running, phases, start, turn_end};
use crate::support::requests::{first_blocks, unmarked};

const DOC: &str = "## Doing\nRefactoring the parser.\n## Decided\n- Keep the old API: callers depend on it.\n## Dead ends\n- Regex parsing: breaks on nested quotes.\n## Next\nRun the parser tests.\n## Scene\n- src/parser.rs\n";

/// window 40k, headroom 10k: the line at 30k, the hard limit at 40k - 1,024 = 38,976.
fn bg(h: &Harness) -> EngineParams {
    let mut p = h.params(40_000, 10_000);
    p.handoff.mode = HandoffMode::Background;
    p
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
