//! Where the main thread meets a background handoff: the ops that belong to it (cancel, the
//! review's end, kept edits; Esc kills its hooks, quitting its tasks), the turnover at a message
//! boundary once the document is reviewed, the wait for the document when the context reaches
//! the window minus the writing reserve first (or the window overflows), its end before a
//! headless exit, and `/new` or `/resume` dropping it.

use super::background::{hard_limit, on_reply};
use super::background_freeze;
use super::context::{HandoffCx, Wake};
use super::phases::{Background, BgState, ReviewState};
use super::turnover::commit_turnover;
use crate::engine::protocol::{Event, ExitReason, HandoffId, HandoffPhase, Op};

/// The ops that belong to the background handoff: cancel, the review's end, kept edits; Esc of
/// the running turn (its hooks are killed) and quitting (its tasks are). Anything for another
/// handoff is stale.
pub(in crate::engine::session) fn on_op(cx: &mut impl HandoffCx, op: Op) {
    let Some(bg) = cx.handoffs().background_mut() else {
        return;
    };
    match op {
        Op::CancelHandoff { handoff } if handoff == bg.id => {
            if bg.writing() {
                cancel(cx, handoff);
            } else {
                cx.emit(Event::Notice {
                    message: format!(
                        "{handoff}: the document is written already; its review decides when the successor starts"
                    ),
                });
            }
        }
        Op::ReviewDone { handoff } if handoff == bg.id => {
            if let BgState::Frozen { review, .. } = &mut bg.state {
                *review = ReviewState::Over;
            }
        }
        Op::UnsavedEdits { handoff, path } if handoff == bg.id => {
            if let BgState::Frozen { frozen, .. } = &mut bg.state {
                frozen.unsaved = Some(path.clone());
            }
            cx.ledger().record(|rec| {
                if let Some(f) = rec.frozen.as_mut() {
                    f.unsaved = Some(path);
                }
            });
            cx.save_manifest();
        }
        // Esc: the hooks still running are killed. A vetting handoff is cancelled (no verdict,
        // no document); a frozen one opens its review as it is.
        Op::Abort { .. } => match &bg.state {
            BgState::Vetting { .. } => {
                let id = bg.id;
                cancel(cx, id);
            }
            BgState::Hooked { .. } => background_freeze::stop_hooks(cx),
            BgState::Writing { .. } | BgState::Frozen { .. } => {}
        },
        // Quitting: a writing request still running is dropped, hooks still running are killed.
        Op::Shutdown => bg.state.abort(),
        _ => {}
    }
}

/// `Op::CancelHandoff` while the document is written: the writing stops, the turn goes on,
/// and no background handoff starts again in this turn.
fn cancel(cx: &mut impl HandoffCx, handoff: HandoffId) {
    if let Some(bg) = cx.handoffs().take_background() {
        bg.state.abort();
    }
    if let Some(turn) = cx.turn().as_mut() {
        turn.background_cancelled = true;
    }
    tracing::info!(handoff = handoff.0, "background handoff cancelled");
    cx.emit_logged(Event::Handoff(HandoffPhase::Cancelled { handoff }));
}

/// At a message boundary: a reviewed background document becomes the successor's briefing.
/// Returns true when a successor started.
pub(in crate::engine::session) fn turnover_if_ready(cx: &mut impl HandoffCx) -> bool {
    let Some((id, frozen)) = cx.handoffs().take_ready() else {
        return false;
    };
    commit_turnover(cx, id, frozen);
    if let Some((id, started)) = cx.handoffs().end() {
        tracing::info!(
            handoff = id.0,
            ms = started.elapsed().as_millis(),
            "handoff ended: successor started"
        );
    }
    true
}

/// Wait until the background document is ready to turn over (or the handoff is gone): false
/// when the running turn was aborted or the engine shuts down meanwhile.
async fn wait(cx: &mut impl HandoffCx) -> bool {
    loop {
        if cx.handoffs().background().is_none_or(Background::ready) {
            return true;
        }
        match cx.next_wake().await {
            Wake::Op(op) => {
                if cx.triage(op).is_some() {
                    return false;
                }
            }
            Wake::Reply(reply) => on_reply(cx, reply),
        }
    }
}

/// The main thread waits for the background document `id` at `context` (it reached the hard
/// limit, or the window overflowed): said, waited for, turned over. False: the turn was stopped
/// meanwhile.
async fn wait_for(cx: &mut impl HandoffCx, id: HandoffId, context: u64) -> bool {
    let limit = hard_limit(cx);
    cx.emit_logged(Event::Handoff(HandoffPhase::Waiting {
        handoff: id,
        context,
        limit,
    }));
    if !wait(cx).await {
        return false;
    }
    turnover_if_ready(cx);
    true
}

/// The window overflowed while a background document is written (or reviewed) on a shorter
/// prefix: the main thread waits for it. False: the turn was stopped meanwhile.
pub(in crate::engine::session) async fn wait_for_document(cx: &mut impl HandoffCx) -> bool {
    let Some(id) = cx.handoffs().background().map(|bg| bg.id) else {
        return true;
    };
    let context = cx.ctx();
    wait_for(cx, id, context).await
}

/// Before a main-thread request: the turnover if the document is ready; the wait for it if
/// the context reached the hard limit first. Some(reason) when the turn must stop.
pub(in crate::engine::session) async fn before_request(
    cx: &mut impl HandoffCx,
) -> Option<ExitReason> {
    cx.handoffs().background()?;
    // What arrived while the last request or tool ran counts before this boundary: a review
    // that ended then turns over now, not one request later.
    while let Some(reply) = cx.handoffs().ready_reply() {
        on_reply(cx, reply);
    }
    while let Some(op) = cx.ready_op() {
        if cx.triage(Some(op)).is_some() {
            return Some(ExitReason::Interrupted);
        }
    }
    let (id, ready) = cx.handoffs().background().map(|bg| (bg.id, bg.ready()))?;
    if !ready {
        let context = cx.ctx();
        if context < hard_limit(cx) {
            return None;
        }
        if !wait_for(cx, id, context).await {
            return Some(ExitReason::Interrupted);
        }
        return None;
    }
    turnover_if_ready(cx);
    None
}

/// Headless, quitting: nobody else will see the background handoff through, so finish it
/// (the writing, the freeze, the turnover) before the engine stops. Ops are not read.
pub(in crate::engine::session) async fn settle_before_exit(cx: &mut impl HandoffCx) {
    if cx.front_end().can_ask() {
        return;
    }
    while cx.handoffs().background().is_some_and(|b| !b.ready()) {
        match cx.handoffs().next_reply().await {
            Some(reply) => on_reply(cx, reply),
            None => break,
        }
    }
    turnover_if_ready(cx);
}

/// `/new` or `/resume`: the background handoff is dropped (its frozen document stays on disk,
/// unused).
pub(in crate::engine::session) fn drop_background(cx: &mut impl HandoffCx, why: &str) {
    let Some(bg) = cx.handoffs().take_background() else {
        return;
    };
    bg.state.abort();
    if bg.state.frozen() {
        cx.ledger().record(|rec| rec.frozen = None);
    }
    if cx.ledger().has_step() {
        cx.save_manifest();
    }
    cx.emit(Event::Notice {
        message: format!("the background handoff ({}) was dropped: {why}", bg.id),
    });
    cx.emit_logged(Event::Handoff(HandoffPhase::Cancelled { handoff: bg.id }));
}
