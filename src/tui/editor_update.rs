//! The side editor's part of the reducer: typing (pauses the review), Ctrl-S, Esc, `$EDITOR`, and
//! the results of saving.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::KeyEvent;

use crate::engine::protocol::Op;

use super::editor::{Prompt, Review, conflict_keys};
use super::msg::{Effect, FileError};
use super::state::{AppState, Focus};

/// A key typed into the side editor: it pauses the review countdown.
pub(super) fn editor_key(state: &mut AppState, key: KeyEvent, now: Instant) {
    let Some(ed) = state.editor.as_mut() else {
        state.focus = Focus::Input;
        return;
    };
    if matches!(ed.prompt, Prompt::Conflict { .. } | Prompt::Restore { .. }) {
        return; // answer the prompt first (r / k or r / d, Ctrl-S, Esc)
    }
    ed.pause(now);
    ed.prompt = Prompt::None;
    ed.note = None;
    ed.area.input(key);
}

pub(super) fn save(state: &mut AppState, fx: &mut Vec<Effect>) {
    let Some(ed) = state.editor.as_mut() else {
        return;
    };
    if ed.review == Review::Saving {
        return;
    }
    if ed.in_review() {
        ed.review = Review::Saving;
    }
    ed.prompt = Prompt::None;
    ed.note = Some("saving…".into());
    fx.push(Effect::SaveEditor {
        path: ed.path.clone(),
        text: ed.text(),
    });
}

pub(super) fn on_saved(
    state: &mut AppState,
    path: PathBuf,
    text: String,
    result: Result<(), FileError>,
    fx: &mut Vec<Effect>,
) {
    let Some(ed) = state.editor.as_mut().filter(|e| e.path == path) else {
        if let Err(e) = result {
            state.error(format!("Could not save {}: {e}", path.display()));
        }
        return;
    };
    let then_external = std::mem::take(&mut ed.external_after_save);
    match result {
        Ok(()) => {
            ed.mark_disk(&text);
            if ed.review == Review::Saving {
                ed.review = Review::Over;
                ed.note = Some("saved: the next session reads this file".into());
                if let Some(handoff) = state.review_handoff.take() {
                    fx.push(Effect::SendOp(Op::ReviewDone { handoff }));
                }
                review_ended(state);
            } else {
                ed.note = Some("saved".into());
            }
            if then_external {
                fx.push(Effect::OpenExternalEditor(path));
            }
        }
        Err(e) => {
            if ed.review == Review::Saving {
                // Still in review: Esc continues with the file as it is on disk.
                ed.review = Review::Paused {
                    remaining: Duration::ZERO,
                };
            }
            ed.note = Some(if then_external {
                format!("save failed: {e}; $EDITOR not opened")
            } else {
                format!("save failed: {e}")
            });
            state.error(format!("Could not save {}: {e}", path.display()));
        }
    }
}

/// The review just ended: the keys go back to the input, where the conversation goes on (and
/// where Esc aborts what the successor runs).
pub(super) fn review_ended(state: &mut AppState) {
    if state.focus == Focus::Editor {
        state.focus = Focus::Input;
    }
}

pub(super) fn editor_escape(state: &mut AppState, fx: &mut Vec<Effect>) {
    let running = state.is_running();
    let Some(ed) = state.editor.as_mut() else {
        state.focus = Focus::Input;
        return;
    };
    match ed.review {
        Review::Saving => {}
        Review::Counting { .. } | Review::Paused { .. } => {
            // The successor reads the disk: show exactly that (a pending outside change included;
            // offered edits not restored stay in their file).
            ed.resolve_conflict(true);
            if matches!(ed.prompt, Prompt::Restore { .. }) {
                ed.prompt = Prompt::None;
            }
            ed.revert();
            ed.review = Review::Over;
            ed.note = Some("review over: the next session reads the file as it is on disk".into());
            if let Some(handoff) = state.review_handoff.take() {
                fx.push(Effect::SendOp(Op::ReviewDone { handoff }));
            }
            review_ended(state);
        }
        // Esc aborts what runs first, as it does in the input; the editor is left as it is.
        Review::Over if running => fx.push(Effect::SendOp(Op::Abort {
            turn: state.abort_turn(),
        })),
        Review::Over => match ed.prompt {
            Prompt::Conflict { .. } => ed.resolve_conflict(false),
            Prompt::Restore { .. } => ed.prompt = Prompt::None,
            Prompt::None if ed.is_dirty() => {
                ed.prompt = Prompt::DiscardConfirm;
            }
            Prompt::None | Prompt::DiscardConfirm => {
                state.editor = None;
                state.focus = Focus::Input;
                fx.push(Effect::UnwatchFile);
            }
        },
    }
}

pub(super) fn external_editor(state: &mut AppState, now: Instant, fx: &mut Vec<Effect>) {
    let path = match (&state.editor, &state.latest_handoff) {
        (Some(ed), _) => ed.path.clone(),
        (None, Some(p)) => p.clone(),
        (None, None) => return state.notice("No handoff document yet"),
    };
    if state.settings.editor_cmd.is_none() {
        return state.error("$EDITOR is not set");
    }
    if let Some(ed) = state.editor.as_mut() {
        ed.pause(now);
        if matches!(ed.prompt, Prompt::Conflict { .. }) {
            ed.note = Some(format!(
                "the file changed on disk: {} first",
                conflict_keys()
            ));
            return;
        }
        if ed.is_dirty() {
            // `$EDITOR` opens the file: it must hold the buffer, or the edits end in a conflict.
            ed.external_after_save = true;
            ed.prompt = Prompt::None;
            ed.note = Some("saving for $EDITOR…".into());
            fx.push(Effect::SaveEditor {
                path,
                text: ed.text(),
            });
            return;
        }
    }
    fx.push(Effect::OpenExternalEditor(path));
}

/// Where the unsaved edits of a replaced editor went (`Effect::KeepUnsaved`), said in the chat.
pub(super) fn on_unsaved_kept(
    state: &mut AppState,
    from: PathBuf,
    result: Result<PathBuf, FileError>,
) {
    let name = from.file_name().map_or_else(
        || from.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    match result {
        Ok(kept) => state.notice(format!(
                "A new handoff replaced the editor: your unsaved edits to {name} are kept in {}",
                kept.display()
            ),
        ),
        Err(e) => state.error(format!(
                "A new handoff replaced the editor: your unsaved edits to {name} could not be kept ({e})"
            ),
        ),
    }
}
