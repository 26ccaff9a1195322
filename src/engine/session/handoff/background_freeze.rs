//! A background handoff's document frozen beside the main thread: its record in the ledger and
//! its file first, then its `HandoffFrozen` hooks as a task (they may edit the file), then its
//! review, which shows the file as it is on disk then; the turnover waits for the review, so the
//! successor reads the hooks' edit. Esc kills hooks still running and the document goes to its
//! review as it is; quitting kills them too, and the review reopens at the next start.

use tokio::task::AbortHandle;

use super::context::HandoffCx;
use super::freeze::{Produced, Why, emit_frozen, frozen_record, write_frozen};
use super::phases::{Background, BgState, ReviewState};
use super::tasks::spawn_hooks;
use crate::engine::handoff::HandoffDoc;
use crate::engine::ledger::{FrozenHandoff, HandoffCause, HandoffReason};
use crate::engine::protocol::{Event, HandoffId};
use crate::engine::session::user_hooks::frozen_input;

/// Freeze the background document (the ledger's record first), run its `HandoffFrozen` hooks
/// and open its review: the main thread goes on meanwhile.
pub(super) fn freeze(
    cx: &mut impl HandoffCx,
    doc: HandoffDoc,
    produced: Produced,
    reason: HandoffReason,
) {
    let Some((id, cut, ctx_at_cut)) = cx
        .handoffs()
        .background()
        .map(|b| (b.id, b.cut, b.ctx_at_cut))
    else {
        return;
    };
    let why = Why::cause(HandoffCause::Pressure);
    let frozen = frozen_record(cx, &doc, reason, ctx_at_cut, produced, Some(cut), why);
    let frozen = write_frozen(cx, frozen);
    let state = match start_hooks(cx, id, &frozen) {
        Some(hooks) => BgState::Hooked {
            frozen: Box::new(frozen),
            hooks,
        },
        None => review_state(cx, id, frozen),
    };
    if let Some(bg) = cx.handoffs().background_mut() {
        bg.state = state;
    }
}

/// Start the `HandoffFrozen` hooks of the background handoff `id` on its frozen document.
/// None: there are none (or the document is not on disk), the review may open at once.
fn start_hooks(
    cx: &mut impl HandoffCx,
    id: HandoffId,
    frozen: &FrozenHandoff,
) -> Option<AbortHandle> {
    let path = frozen.file.path()?;
    let step = cx.ledger().step_name();
    let batch = cx.hook_batch(&frozen_input(
        HandoffCause::Pressure,
        path,
        step,
        frozen.generation,
    ))?;
    Some(spawn_hooks(cx.handoffs().replies(), id, batch))
}

/// The frozen background document is shown (as on disk now) and its review opened.
fn review_state(cx: &mut impl HandoffCx, id: HandoffId, frozen: FrozenHandoff) -> BgState {
    let awaits = emit_frozen(cx, id, &frozen, true);
    BgState::Frozen {
        frozen: Box::new(frozen),
        review: if awaits {
            ReviewState::Open
        } else {
            ReviewState::Over
        },
    }
}

/// The `HandoffFrozen` hooks of `bg` (taken out of the runner) are done: its review opens.
pub(super) fn hooks_done(cx: &mut impl HandoffCx, mut bg: Background) {
    let id = bg.id;
    if let BgState::Hooked { frozen, .. } = bg.state {
        bg.state = review_state(cx, id, *frozen);
    }
    cx.handoffs().begin_background(bg);
}

/// Esc while the `HandoffFrozen` hooks run: they are killed, and the document goes to its
/// review as it is on disk.
pub(super) fn stop_hooks(cx: &mut impl HandoffCx) {
    let Some(bg) = cx.handoffs().take_background() else {
        return;
    };
    let id = bg.id;
    let BgState::Hooked { hooks, .. } = &bg.state else {
        cx.handoffs().begin_background(bg);
        return;
    };
    hooks.abort();
    cx.emit_logged(Event::Notice {
        message: format!(
            "{id}: the HandoffFrozen hooks were stopped; the document goes to its review as it is \
             on disk"
        ),
    });
    hooks_done(cx, bg);
}
