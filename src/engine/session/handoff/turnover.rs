//! From a document to a successor: freeze it under the step's lock with a frozen record in the
//! ledger first, wait for the review, read the file back under the lock, brief the successor
//! with the file verbatim and the request in flight, and only then record the turnover. A review
//! that does not end (quit, signal) commits nothing: the frozen record reopens it at the next
//! start ([`super::reopened_review`]). A plan implemented in a fresh session turns over the
//! same way, with the plan file as its document.

use std::path::Path;

use super::after_cut::tail_record;
use super::background::on_reply;
use super::context::{HandoffCx, Wake};
use super::freeze::{Produced, Why, emit_frozen, frozen_record, set_frozen, write_frozen};
use super::phases::BlockingStage;
use super::read_back::read_back;
use crate::engine::handoff::{Briefing, HandoffDoc};
use crate::engine::ledger::{
    FrozenHandoff, HandoffReason, HandoffRecord, TranscriptLine, now_stamp,
};
use crate::engine::protocol::{
    DocumentSource, Event, ExitReason, HandoffId, HandoffPhase, Op, Origin,
};
use crate::engine::session::conversation::UserRequest;
use crate::engine::session::model_request::Stop;
use crate::engine::session::user_hooks::frozen_input;

/// How a turnover ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Turnover {
    /// The successor runs.
    Done,
    /// The front end went away during the review: nothing was committed.
    NotCommitted,
}

/// How a review ended.
enum Review {
    Over,
    Shutdown,
}

/// Freeze, review, read back, start the successor, record it all.
pub(super) async fn turn_over(
    cx: &mut impl HandoffCx,
    id: HandoffId,
    doc: HandoffDoc,
    reason: HandoffReason,
    ctx_at_cut: u64,
    produced: Produced,
    why: Why,
) -> Turnover {
    let cause = why.cause;
    let frozen = frozen_record(cx, &doc, reason, ctx_at_cut, produced, None, why);
    let frozen = write_frozen(cx, frozen);
    if let Some(path) = frozen.file.path() {
        let step = cx.ledger().step_name();
        cx.run_hooks(frozen_input(cause, path, step, frozen.generation))
            .await;
    }
    review_and_commit(cx, id, frozen).await
}

/// A plan implemented in a fresh session: its frozen record (the plan file as the document)
/// kept durably, its `HandoffFrozen` hooks (the successor reads what they leave in the file),
/// then the turnover without a review (the user reviewed the plan).
pub(in crate::engine::session) async fn turn_over_plan(
    cx: &mut impl HandoffCx,
    frozen: FrozenHandoff,
) {
    let id = cx.handoffs().begin_blocking(BlockingStage::Turnover);
    set_frozen(cx, Some(frozen.clone()), true);
    if let Some(path) = frozen.file.path() {
        let step = cx.ledger().step_name();
        cx.run_hooks(frozen_input(frozen.cause, path, step, frozen.generation))
            .await;
    }
    commit_turnover(cx, id, frozen);
    cx.handoffs().end();
}

/// The review (if the front end reviews and the file is on disk), then the turnover.
pub(super) async fn review_and_commit(
    cx: &mut impl HandoffCx,
    id: HandoffId,
    frozen: FrozenHandoff,
) -> Turnover {
    let awaits_review = emit_frozen(cx, id, &frozen, false);
    if awaits_review && matches!(wait_review(cx, id).await, Review::Shutdown) {
        tracing::info!(
            handoff = id.0,
            "the review did not end: the turnover is not committed"
        );
        return Turnover::NotCommitted;
    }
    commit_turnover(cx, id, frozen);
    Turnover::Done
}

/// The review window: wait until the front end says the successor may start.
/// Esc belongs to the review then (it ends it with `ReviewDone`): an abort does not stop it.
async fn wait_review(cx: &mut impl HandoffCx, handoff: HandoffId) -> Review {
    let done = |op: &Op| matches!(op, Op::ReviewDone { handoff: h } if *h == handoff);
    if cx.take_queued(done) {
        return Review::Over;
    }
    loop {
        let op = match cx.next_wake().await {
            Wake::Op(op) => op,
            // No background handoff runs beside a review in the main thread: a stale answer.
            Wake::Reply(reply) => {
                on_reply(cx, reply);
                continue;
            }
        };
        match op {
            Some(op) if done(&op) => return Review::Over,
            Some(Op::UnsavedEdits { handoff: h, path }) if h == handoff => {
                cx.ledger().record(|rec| {
                    if let Some(f) = rec.frozen.as_mut() {
                        f.unsaved = Some(path);
                    }
                });
                cx.save_manifest();
            }
            // Another handoff's review, or an answer nothing waits for: stale.
            Some(Op::ReviewDone { .. } | Op::Approval { .. } | Op::UnsavedEdits { .. }) => {}
            // An abort of the running turn does not stop the review.
            other => {
                if cx.triage(other) == Some(Stop::Shutdown) {
                    return Review::Shutdown;
                }
            }
        }
    }
}

/// Read the document back, start the successor with it, record the turnover.
pub(super) fn commit_turnover(cx: &mut impl HandoffCx, id: HandoffId, frozen: FrozenHandoff) {
    let successor = read_back(cx, &frozen);
    // A `Pinned` section the user typed during the review: pins from now on.
    cx.adopt_typed_pins(&successor.text, &frozen.markdown);
    // What the step's document lock cost this handoff (freeze + read-back): `perf concurrency`
    // reads it from the log.
    tracing::info!(
        handoff = id.0,
        lock_us = cx.handoffs().take_lock().as_micros(),
        "handoff: document lock"
    );
    // The request as typed when this process cut it; as recorded when it reopens an earlier
    // process's review.
    let live = cx.conv().request.in_flight();
    let mut request = if live.is_empty() {
        frozen.request.clone()
    } else {
        live.clone()
    };
    // A background handoff: what the session did after the cut.
    let tail = match frozen.cut {
        Some(cut) => tail_record(cx, cut, &request),
        None => Vec::new(),
    };
    let old_id = cx.conv().id.clone();
    let old_ctx = cx.ctx();
    let generation = cx.conv().generation + 1;
    let held = cx.conv().held(old_ctx);
    let record = HandoffRecord {
        path: frozen.file.path().map(Path::to_path_buf),
        degraded: successor.degraded,
        reason: frozen.reason.clone(),
        ctx_at_cut: frozen.ctx_at_cut,
        time: now_stamp(),
        retired_session: old_id.clone(),
        generation,
        sections: successor.parsed.section_names(),
        edited: successor.edited,
        source: frozen.source,
        tail: tail.len(),
        held: held.clone(),
    };
    cx.ledger().record(|rec| {
        rec.retired.push(old_id.clone());
        rec.current_generation().context = old_ctx;
        rec.handoffs.push(record);
        rec.frozen = None;
    });
    end_cut_turn_in_transcript(cx);
    // What the engine carries itself, and the transcripts `recall` searches (this one too).
    let memory = cx.ledger().memory().clone();
    let predecessors = cx.predecessors();
    let jobs = cx.jobs_briefing();
    let mut briefing = Briefing {
        jobs: jobs.as_deref(),
        document: &successor.text,
        degraded: successor.degraded,
        request: &[],
        memory: Some(&memory),
        predecessors: &predecessors,
        tail: &tail,
        rescued: frozen.source == DocumentSource::Rescued && frozen.reduced,
        cause: frozen.cause,
        focus: frozen.focus.as_deref(),
    };
    // A message too large for the successor goes to a file; later successors carry the same.
    let spilled = cx.fit_request(&mut request, &briefing.message());
    briefing.request = &request;
    let first = briefing.message();
    if spilled || (live.is_empty() && !frozen.request.is_empty()) {
        // The successor continues this request (an earlier process's review's, maybe).
        cx.conv().request = UserRequest {
            messages: request.clone(),
            open: true,
        };
    }
    let mut shown = briefing.briefing_block();
    if !tail.is_empty() {
        shown.push_str(&format!(
            "(then the record of the {} message{} after the cut)\n",
            tail.len(),
            if tail.len() == 1 { "" } else { "s" }
        ));
    }
    // The old session's history is dropped here: retired histories are freed.
    cx.start_successor(old_id, generation, first);
    cx.conv().briefed = Some(successor.parsed.clone()).filter(|d| !d.section_names().is_empty());
    let window = cx.settings().thresholds.window;
    cx.emit_logged(Event::Handoff(HandoffPhase::Done {
        handoff: id,
        context: frozen.ctx_at_cut,
        window,
        degraded: successor.degraded,
        degraded_reason: successor
            .degraded
            .then(|| frozen.reason.failure_or_trigger()),
        path: frozen.file.path().map(Path::to_path_buf),
        sections: successor.parsed.section_names(),
        generation,
        source: frozen.source,
        tail: tail.len(),
        held,
    }));
    // Show what the successor was given (it is already in its history and transcript); the
    // request's messages are in the chat already.
    let turn = cx.turn().map(|t| t.id);
    cx.emit(Event::UserMessage {
        turn,
        origin: Origin::Engine,
        text: shown,
    });
    cx.emit_usage_estimate();
}

/// The cut turn ends in the old transcript; the successor goes on with it.
fn end_cut_turn_in_transcript(cx: &mut impl HandoffCx) {
    let cut = cx.turn().map(|t| Event::TurnEnd {
        turn: t.id,
        kind: t.kind,
        origin: Origin::User,
        reason: ExitReason::Handoff,
    });
    if let Some(v) = cut.and_then(|ev| serde_json::to_value(ev).ok()) {
        cx.conv()
            .transcript
            .append(&TranscriptLine::Event { event: v });
    }
}
