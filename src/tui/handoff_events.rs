//! The handoff's phases → state changes (part of the pure reducer): the near notice, the writing
//! turn, the frozen document in the side editor (its review window), the divider of the new
//! generation, and the ways a handoff ends without one.
//!
//! A handoff written in the background never touches what the main thread shows:
//! it has its own spinner line (`Handoffs::spinner`), its notices wait for a streaming reply to
//! finish, and its document opens in the side editor without taking the focus.

use std::path::PathBuf;
use std::time::Instant;

use crate::engine::context::{fmt_tokens, fmt_window};
use crate::engine::protocol::{DocumentSource, HandoffId, HandoffPhase, Held, Op};

use super::editor::SideEditor;
use super::handoff_state::{BackgroundStage, HandoffKind};
use super::keymap::{Action, label_for, short_label_for};
use super::msg::Effect;
use super::render::cell::Cell;
use super::state::{AppState, Focus};

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
        HandoffPhase::Writing {
            handoff,
            background: true,
            ..
        } => on_background_writing(state, handoff, now),
        HandoffPhase::Writing { manual, .. } => on_writing(state, manual, now),
        HandoffPhase::Rescuing {
            handoff,
            reason,
            stubbed,
            dropped,
            background,
        } => on_rescuing(state, handoff, &reason, (stubbed, dropped), background, now),
        HandoffPhase::Retrying {
            reason, background, ..
        } => {
            let again = format!(
                "The handoff document restated its instructions ({reason}): writing it once more with a short prompt"
            );
            if background {
                state.chat.notice_soon(again);
            } else {
                state.chat.notice(again);
            }
        }
        HandoffPhase::Waiting {
            handoff, context, ..
        } => on_waiting(state, handoff, context, now),
        HandoffPhase::Frozen {
            handoff,
            path,
            degraded_reason,
            markdown,
            awaits_review,
            background,
            ..
        } => {
            if background {
                on_background_frozen(state, handoff, degraded_reason.as_deref(), now);
            } else {
                state.activity.stop();
                if let Some(why) = &degraded_reason {
                    state.chat.notice(format!(
                        "warning: the handoff is degraded (the writing turn failed: {why}); a mechanical document was saved"
                    ));
                }
            }
            let frozen = Frozen {
                handoff,
                path,
                markdown,
                awaits_review,
                background,
                degraded: degraded_reason,
            };
            on_frozen(state, frozen, now, fx);
        }
        HandoffPhase::Done {
            context,
            window,
            degraded,
            path,
            generation,
            source,
            tail,
            held,
            ..
        } => {
            on_done(
                state,
                Done {
                    generation,
                    context,
                    window,
                    path,
                    degraded,
                    held,
                },
                fx,
            );
            on_done_notes(state, tail, source == DocumentSource::Rescued);
        }
        HandoffPhase::Cancelled { handoff } => {
            if state.handoff.background_cancelled(handoff) {
                state
                    .chat
                    .notice_soon("Handoff cancelled (the work goes on)");
                return;
            }
            state.handoff.ended();
            state.activity.stop();
            state.chat.notice("Handoff cancelled");
        }
        HandoffPhase::Failed { message, .. } => {
            state.handoff.ended();
            state.activity.stop();
            state.chat.error(format!("Handoff failed: {message}"));
        }
        HandoffPhase::Refused { message, .. } => state.chat.notice(message),
        // The engine's notice says why; the `Frozen` that follows opens the review.
        HandoffPhase::Reopened {
            handoff, unsaved, ..
        } => super::unsaved::on_reopened(state, handoff, unsaved),
    }
}

/// The writing turn failed or overflowed: it is written again from a reduced history.
fn on_rescuing(
    state: &mut AppState,
    handoff: HandoffId,
    reason: &str,
    (stubbed, dropped): (usize, usize),
    background: bool,
    now: Instant,
) {
    let what = match (stubbed, dropped) {
        (0, 0) => "the whole history fits".to_string(),
        (s, 0) => format!("{s} old tool results as stubs"),
        (s, d) => format!("{s} old tool results as stubs, {d} old messages dropped"),
    };
    if background {
        state
            .handoff
            .background_stage(handoff, BackgroundStage::Rescuing, now);
        state.chat.notice_soon(format!(
            "The handoff writing failed ({reason}): writing it again from a reduced history ({what})"
        ));
    } else {
        let manual = state.handoff.kind() == Some(HandoffKind::Manual);
        on_writing(state, manual, now);
        state.chat.notice(format!(
            "The context window was exceeded ({reason}): writing the handoff from a reduced history ({what})"
        ));
    }
}

/// The main thread reached the hard limit before the background document: it waits for it.
fn on_waiting(state: &mut AppState, handoff: HandoffId, context: u64, now: Instant) {
    if let Some(stage) = state.handoff.main_waits(handoff, now) {
        // The document may be written already: then the work waits for its review.
        let what = if stage == BackgroundStage::Review {
            format!(
                "the review of the handoff document to end ({} starts the next session now)",
                short_label_for(Action::Save)
            )
        } else {
            "the handoff document".to_string()
        };
        state.chat.notice_soon(format!(
            "Context at {}: the work waits for {what}",
            fmt_tokens(context)
        ));
    }
}

/// What the successor's briefing holds beyond the document (the record after the cut), and
/// whether the document was rescued.
fn on_done_notes(state: &mut AppState, tail: usize, rescued: bool) {
    match (tail, rescued) {
        (0, false) => {}
        (0, true) => state
            .chat
            .notice("The handoff was rescued: written from a reduced history"),
        (n, r) => state.chat.notice(format!(
            "The new session's briefing also records the {n} message{} after the cut{}",
            if n == 1 { "" } else { "s" },
            if r {
                " (the document was rescued: written from a reduced history)"
            } else {
                ""
            }
        )),
    }
}

fn on_near(state: &mut AppState, context: u64, at: u64, window: u64) {
    if !state.handoff.near(state.session.generation()) {
        return;
    }
    // One response can jump past the line itself (a large tool result, a cancelled handoff):
    // then the handoff is due now, not "will be written" at a mark already behind.
    let when = if context >= at {
        format!(
            "past the handoff line at {}, a handoff is due",
            fmt_tokens(at)
        )
    } else {
        format!("a handoff will be written at {}", fmt_tokens(at))
    };
    state.chat.notice(format!(
        "Context at {}/{}: {when}",
        fmt_tokens(context),
        fmt_window(window)
    ));
}

/// The writing runs beside the main thread: its own spinner line, nothing else changes.
fn on_background_writing(state: &mut AppState, handoff: HandoffId, now: Instant) {
    state.handoff.background_writing(handoff, now);
    state.chat.notice_soon(format!(
        "Context reached the handoff line: the handoff document is written in the background while the work goes on ({} or {} cancels it)",
        label_for(Action::Abort),
        label_for(Action::CancelHandoff)
    ));
}

/// The background document is frozen: its review runs while the work goes on.
fn on_background_frozen(
    state: &mut AppState,
    handoff: HandoffId,
    degraded: Option<&str>,
    now: Instant,
) {
    // A review reopened at start-up is a blocking one; anything else is stale.
    state
        .handoff
        .background_stage(handoff, BackgroundStage::Review, now);
    if let Some(why) = degraded {
        state.chat.notice_soon(format!(
            "warning: the handoff is degraded (its writing failed: {why}); a mechanical document was saved"
        ));
    }
}

fn on_writing(state: &mut AppState, manual: bool, now: Instant) {
    state.chat.finish_streaming();
    state.activity.writing_started(now);
    state.handoff.writing(manual);
    if !manual {
        state
            .chat
            .notice("Context reached the handoff line: writing a handoff document");
    }
}

/// A frozen handoff document.
struct Frozen {
    handoff: HandoffId,
    path: Option<PathBuf>,
    markdown: String,
    awaits_review: bool,
    /// Written in the background: the editor opens without the focus, the work goes on.
    background: bool,
    /// Why the writing failed, for a degraded document (the editor's title says it).
    degraded: Option<String>,
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
        background,
        degraded,
    } = doc;
    state.editor.set_review_handoff(None);
    match (path, state.settings.review) {
        (Some(path), Some(review)) if awaits_review => {
            state.editor.set_review_handoff(Some(handoff));
            // Written in the background, the user is working: the editor opens beside the
            // chat and the focus stays where it is.
            open_for_review(state, path, &markdown, review, now, !background, fx);
            if let Some(ed) = state.editor.get_mut() {
                ed.set_degraded(degraded);
            }
            if background {
                state.chat.notice_soon(format!(
                    "Handoff document ready in the side editor ({} to edit it): the next session starts from it when the review ends; the work goes on meanwhile",
                    label_for(Action::ToggleFocus)
                ));
            }
            super::unsaved::review_opened(state, handoff, fx);
            return;
        }
        (Some(path), _) => {
            let when = if background {
                "the next session starts from it at the next step of the work"
            } else {
                "review off"
            };
            state.chat.notice_soon(format!(
                "Handoff saved to {} ({when}; /edit-handoff opens it)",
                path.display()
            ));
            state.editor.set_latest_handoff(Some(path));
        }
        (None, _) => state
            .chat
            .notice_soon("Handoff written (no workbench: not saved to disk)"),
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
    take_focus: bool,
    fx: &mut Vec<Effect>,
) {
    state.editor.set_latest_handoff(Some(path.clone()));
    let mut ed = SideEditor::open(path.clone(), markdown, Some(review), now);
    // A document written in the background (the main thread works on), or someone typing a
    // message: the focus stays where the user has it, the countdown runs, Ctrl-O or a click
    // enters.
    if !take_focus || state.typing(now) {
        ed.set_note(format!(
            "{} to edit · the countdown runs",
            label_for(Action::ToggleFocus)
        ));
    } else {
        state.focus = Focus::Editor;
    }
    // Never lose the user's words: the new document takes the editor, the edits go to a file
    // of their own.
    state.editor.open(ed, fx);
    fx.push(Effect::WatchFile(path));
}

/// A successor started.
struct Done {
    generation: u32,
    context: u64,
    window: u64,
    path: Option<PathBuf>,
    degraded: bool,
    held: Held,
}

/// The successor started: the divider of its generation. The side editor holding the document
/// it started from closes (its review is over, the document is in the new session), unless it
/// holds unsaved edits or asks a question (never lose the user's words): then it stays, its
/// countdown moot.
fn on_done(state: &mut AppState, done: Done, fx: &mut Vec<Effect>) {
    let Done {
        generation,
        context,
        window,
        path,
        degraded,
        held,
    } = done;
    if let Some(p) = &path {
        state.editor.set_latest_handoff(Some(p.clone()));
    }
    let done_with =
        |ed: &SideEditor| path.as_deref() == Some(ed.path()) && !ed.is_dirty() && !ed.asks();
    if state.editor.get().is_some_and(done_with) {
        state.editor.close();
        state.focus = Focus::Input;
        fx.push(Effect::UnwatchFile);
    }
    state.chat.push_cell(Cell::Divider {
        generation,
        context,
        window,
        path: path.map(|p| p.display().to_string()),
        degraded,
        held: Some(held),
    });
    if state.handoff.done() == Some(HandoffKind::Manual) {
        state
            .chat
            .notice("New session started with handoff context");
    }
    if let Some(ed) = state.editor.get_mut() {
        // The engine moved on (e.g. the review ended on its side): the countdown is moot.
        ed.review_moot();
    }
    state.editor.set_review_handoff(None);
    state.activity.writing_over();
}
