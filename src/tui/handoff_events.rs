//! The handoff's phases → state changes (part of the pure reducer): the near notice, the writing
//! turn, the frozen document in the side editor (its review window), the divider of the new
//! generation, and the ways a handoff ends without one.

use std::path::PathBuf;
use std::time::Instant;

use crate::engine::context::{fmt_tokens, fmt_window};
use crate::engine::protocol::{HandoffId, HandoffPhase, Op};

use super::editor::{Review, SideEditor};
use super::msg::Effect;
use super::render::cell::Cell;
use super::state::{AppState, Focus, HandoffKind, Running};

/// Apply one handoff phase.
pub(super) fn on_handoff(
    state: &mut AppState,
    phase: HandoffPhase,
    now: Instant,
    fx: &mut Vec<Effect>,
) {
    match phase {
        HandoffPhase::Near {
            context,
            at,
            window,
        } => on_near(state, context, at, window),
        HandoffPhase::Writing { manual, .. } => on_writing(state, manual, now),
        HandoffPhase::Rescuing { .. } => on_writing(state, false, now),
        HandoffPhase::Waiting { .. } => {}
        HandoffPhase::Frozen {
            handoff,
            path,
            degraded,
            markdown,
            awaits_review,
            background: _,
        } => {
            state.running = Running::Idle;
            if degraded {
                state.notice(
                    "warning: the handoff is degraded (the writing turn failed); a mechanical document was saved",
                );
            }
            let frozen = Frozen {
                handoff,
                path,
                markdown,
                awaits_review,
            };
            on_frozen(state, frozen, now, fx);
        }
        HandoffPhase::Done {
            context,
            window,
            degraded,
            path,
            generation,
            ..
        } => on_done(state, generation, context, window, path, degraded),
        HandoffPhase::Cancelled { .. } => {
            state.handoff = None;
            state.running = Running::Idle;
            state.notice("Handoff cancelled");
        }
        HandoffPhase::Failed { message, .. } => {
            state.handoff = None;
            state.running = Running::Idle;
            state.error(format!("Handoff failed: {message}"));
        }
        HandoffPhase::Refused { message, .. } => state.notice(message),
        // The engine's notice says why; the `Frozen` that follows opens the review.
        HandoffPhase::Reopened {
            handoff, unsaved, ..
        } => super::unsaved::on_reopened(state, handoff, unsaved),
    }
}

fn on_near(state: &mut AppState, context: u64, at: u64, window: u64) {
    if state.near_noticed == Some(state.generation) {
        return;
    }
    state.near_noticed = Some(state.generation);
    state.notice(format!(
        "Context at {}/{}: a handoff will be written at {}",
        fmt_tokens(context),
        fmt_window(window),
        fmt_tokens(at)
    ));
}

fn on_writing(state: &mut AppState, manual: bool, now: Instant) {
    state.finish_streaming();
    state.running = Running::WritingHandoff { since: now };
    state.handoff = Some(if manual {
        HandoffKind::Manual
    } else {
        HandoffKind::Automatic
    });
    if !manual {
        state.notice("Context reached the handoff line: writing a handoff document");
    }
}

/// A frozen handoff document.
struct Frozen {
    handoff: HandoffId,
    path: Option<PathBuf>,
    markdown: String,
    awaits_review: bool,
}

/// The document is frozen: it opens in the side editor for the review window, or the UI says
/// where it is. The engine says whether it waits for the review; if it does and no review runs
/// here, it is told at once.
fn on_frozen(state: &mut AppState, doc: Frozen, now: Instant, fx: &mut Vec<Effect>) {
    let Frozen {
        handoff,
        path,
        markdown,
        awaits_review,
    } = doc;
    state.review_handoff = None;
    match (path, state.settings.review) {
        (Some(path), Some(review)) if awaits_review => {
            state.review_handoff = Some(handoff);
            open_for_review(state, path, &markdown, review, now, fx);
            super::unsaved::review_opened(state, handoff, fx);
            return;
        }
        (Some(path), _) => {
            state.notice(format!(
                "Handoff saved to {} (review off; /edit-handoff opens it)",
                path.display()
            ));
            state.latest_handoff = Some(path);
        }
        (None, _) => state.notice("Handoff written (no workbench: not saved to disk)"),
    }
    if awaits_review {
        fx.push(Effect::SendOp(Op::ReviewDone { handoff }));
    }
}

fn open_for_review(
    state: &mut AppState,
    path: PathBuf,
    markdown: &str,
    review: std::time::Duration,
    now: Instant,
    fx: &mut Vec<Effect>,
) {
    if let Some(old) = state.editor.take().filter(|ed| ed.is_dirty()) {
        // Never lose the user's words: the new document takes the editor, the edits go to a
        // file of their own.
        fx.push(Effect::KeepUnsaved {
            path: old.path.clone(),
            text: old.text(),
        });
    }
    state.latest_handoff = Some(path.clone());
    state.editor = Some(SideEditor::open(path.clone(), markdown, Some(review), now));
    if state.focus == Focus::Approval {
        state.focus_before_approval = Focus::Editor;
    } else {
        state.focus = Focus::Editor;
    }
    fx.push(Effect::WatchFile(path));
}

fn on_done(
    state: &mut AppState,
    generation: u32,
    context: u64,
    window: u64,
    path: Option<PathBuf>,
    degraded: bool,
) {
    if let Some(p) = &path {
        state.latest_handoff = Some(p.clone());
    }
    state.push_cell(Cell::Divider {
        generation,
        context,
        window,
        path: path.map(|p| p.display().to_string()),
        degraded,
    });
    if state.handoff.take() == Some(HandoffKind::Manual) {
        state.notice("New session started with handoff context");
    }
    if let Some(ed) = &mut state.editor
        && ed.in_review()
    {
        // The engine moved on (e.g. the review ended on its side): the countdown is moot.
        ed.review = Review::Over;
    }
    state.review_handoff = None;
    if matches!(state.running, Running::WritingHandoff { .. }) {
        state.running = Running::Idle;
    }
}
