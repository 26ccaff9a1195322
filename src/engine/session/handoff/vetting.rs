//! A background handoff's `PreHandoff` hooks, run beside the main thread before its writing
//! request starts. While they run the handoff is *vetting* (a `/handoff` is refused as for a
//! document being written); exit 2 (or a `block` decision) cancels this background handoff with
//! a notice and a ledger record, and no other starts in the same turn; their text is added to the
//! writing prompt's focus. A hook that hangs is cut by its own timeout and the handoff goes on;
//! Esc kills them with their process groups and cancels the handoff.

use tokio::task::AbortHandle;

use super::background_writing::writing_state;
use super::context::HandoffCx;
use super::phases::{Background, BgState};
use super::tasks::spawn_hooks;
use crate::engine::hooks::Outcome;
use crate::engine::protocol::{Event, HandoffId, HandoffPhase};
use crate::engine::session::user_hooks::{Gate, pre_handoff_input};

/// Start the `PreHandoff` hooks of the background handoff `id`. None: there are none, the
/// writing may start at once.
pub(super) fn start(
    cx: &mut impl HandoffCx,
    id: HandoffId,
    focus: &Option<String>,
) -> Option<AbortHandle> {
    let batch = cx.hook_batch(&pre_handoff_input(false, focus))?;
    Some(spawn_hooks(cx.handoffs().replies(), id, batch))
}

/// The `PreHandoff` hooks of `bg` (taken out of the runner) are done: its writing starts, or it
/// is refused.
pub(super) fn done(cx: &mut impl HandoffCx, mut bg: Background, outcome: &Outcome) {
    let BgState::Vetting { focus, .. } = &mut bg.state else {
        cx.handoffs().begin_background(bg);
        return;
    };
    let focus = focus.take();
    match cx.handoff_verdict(outcome, focus) {
        Gate::Go(focus) => write_after_vetting(cx, bg, focus),
        Gate::Blocked(reason) => refused(cx, bg.id, &reason),
        Gate::Aborted => cancelled(cx, bg.id),
    }
}

/// `PreHandoff` let the background handoff `bg` go on: its writing request starts now, on the
/// history it was cut at, with `focus`.
fn write_after_vetting(cx: &mut impl HandoffCx, mut bg: Background, focus: Option<String>) {
    let prefix = bg
        .cut
        .split(&cx.conv().messages)
        .map(|(p, _)| p)
        .filter(|p| !p.is_empty());
    let Some(prefix) = prefix else {
        // The history changed under it (a rewind): nothing to write on.
        cancelled(cx, bg.id);
        return;
    };
    bg.state = writing_state(cx, bg.id, prefix, bg.ctx_at_cut, focus);
    cx.handoffs().begin_background(bg);
}

/// A `PreHandoff` hook refused the background handoff `id` (the ledger has it already):
/// said, kept on disk, and no other starts in this turn.
fn refused(cx: &mut impl HandoffCx, id: HandoffId, reason: &str) {
    tracing::info!(
        handoff = id.0,
        "background handoff refused by a PreHandoff hook"
    );
    cx.emit_logged(Event::Notice {
        message: format!("{id}: the background handoff was refused by a PreHandoff hook: {reason}"),
    });
    if cx.ledger().has_step() {
        cx.save_manifest();
    }
    cancelled(cx, id);
}

/// The background handoff `id`, already taken out, is over without a document.
fn cancelled(cx: &mut impl HandoffCx, id: HandoffId) {
    if let Some(turn) = cx.turn().as_mut() {
        turn.background_cancelled = true;
    }
    cx.emit_logged(Event::Handoff(HandoffPhase::Cancelled { handoff: id }));
}
