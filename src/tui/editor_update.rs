//! The side editor's part of the reducer: typing (pauses the review), Ctrl-S, Esc (with unsaved
//! edits it asks save / discard / keep editing: nothing typed is dropped unasked), Ctrl-C,
//! `$EDITOR`, and the results of saving.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::KeyEvent;

use crate::engine::protocol::Op;

use super::editor::{AfterSave, Prompt, Review, conflict_keys};
use super::keymap::{Action, label_for};
use super::msg::{Effect, FileError};
use super::state::{AppState, Focus};

/// A key typed into the side editor: it pauses the review countdown.
pub(super) fn editor_key(state: &mut AppState, key: KeyEvent, now: Instant) {
    let Some(ed) = state.editor.get_mut() else {
        state.focus = Focus::Input;
        return;
    };
    if ed.asks() {
        return; // answer the question first (r / k, r / d, s / d / Esc, i / f / p / Esc; Ctrl-S)
    }
    ed.pause(now);
    ed.prompt = Prompt::None;
    ed.note = None;
    ed.area.input(key);
}

pub(super) fn save(state: &mut AppState, fx: &mut Vec<Effect>) {
    let Some(ed) = state.editor.get_mut() else {
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
    let Some(ed) = state.editor.on_file(&path) else {
        if let Err(e) = result {
            state
                .chat
                .error(format!("Could not save {}: {e}", path.display()));
        }
        return;
    };
    let after = std::mem::replace(&mut ed.after_save, AfterSave::Stay);
    // The file was gone (deleted during the review): this save wrote it again.
    let recreated = ed.disk_text.is_none();
    match result {
        Ok(()) => {
            ed.mark_disk(&text);
            if ed.review == Review::Saving {
                ed.review = Review::Over;
                ed.note = Some(if recreated {
                    "written back (the file had been deleted): the next session reads this text"
                        .into()
                } else {
                    "saved: the next session reads this file".into()
                });
                if let Some(handoff) = state.editor.take_review_handoff() {
                    fx.push(Effect::SendOp(Op::ReviewDone { handoff }));
                }
                if recreated {
                    state.chat.notice(format!(
                        "The handoff file {} was deleted during the review: the editor's text is \
                         written back to it, and the next session reads it",
                        path.display()
                    ));
                }
                review_ended(state);
            } else {
                ed.note = Some("saved".into());
            }
            match after {
                AfterSave::Stay => {}
                AfterSave::OpenExternal => fx.push(Effect::OpenExternalEditor(path)),
                AfterSave::Close => close(state, fx),
                AfterSave::PlanChoice => {
                    if let Some(ed) = state.editor.get_mut() {
                        ed.prompt = Prompt::Plan;
                        ed.note = None;
                    }
                }
            }
        }
        Err(e) => {
            if ed.review == Review::Saving {
                // Still in review: Esc continues with the file as it is on disk.
                ed.review = Review::Paused {
                    remaining: Duration::ZERO,
                };
            }
            ed.note = Some(if after == AfterSave::OpenExternal {
                format!("save failed: {e}; $EDITOR not opened")
            } else {
                format!("save failed: {e}")
            });
            state
                .chat
                .error(format!("Could not save {}: {e}", path.display()));
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

/// Esc in the side editor. During the review it ends the review with the file as it is on disk
/// (with the buffer written back when the file was deleted); after it, it aborts what runs, else
/// closes the editor. With unsaved edits it asks first (save / discard / keep editing), the
/// countdown paused until answered.
pub(super) fn editor_escape(state: &mut AppState, now: Instant, fx: &mut Vec<Effect>) {
    let running = state.activity.is_running();
    let Some(ed) = state.editor.get_mut() else {
        state.focus = Focus::Input;
        return;
    };
    let in_review = ed.in_review();
    match (ed.review, &ed.prompt) {
        (Review::Saving, _) => return,
        // Esc aborts what runs first, as it does in the input; the editor is left as it is.
        (Review::Over, _) if running => {
            fx.push(Effect::SendOp(Op::Abort {
                turn: state.turns.abort_turn(),
            }));
            return;
        }
        // The kept edits of an interrupted review stay in their file.
        (_, Prompt::Restore { .. }) => {
            ed.prompt = Prompt::None;
            if !in_review {
                return;
            }
        }
        _ => {}
    }
    // With the file gone during the review there is nothing to discard the edits for: the review
    // ends with the buffer written back (`leave`).
    if ed.is_dirty() && (ed.disk_text.is_some() || !in_review) {
        // A change on disk meanwhile: the question is now about the edits over it.
        ed.resolve_conflict(false);
        ed.pause(now);
        ed.prompt = Prompt::Unsaved;
        ed.note = None;
        return;
    }
    leave(state, fx);
}

/// The editor is done with the file as it is on disk: the review ends (the next session reads
/// it; a deleted file is written back with the buffer first), or, after the review, the editor
/// closes.
fn leave(state: &mut AppState, fx: &mut Vec<Effect>) {
    let Some(ed) = state.editor.get_mut() else {
        return;
    };
    if !ed.in_review() {
        return close(state, fx);
    }
    if write_back_deleted(state, fx) {
        return;
    }
    let Some(ed) = state.editor.get_mut() else {
        return;
    };
    ed.prompt = Prompt::None;
    ed.review = Review::Over;
    ed.note = Some("review over: the next session reads the file as it is on disk".into());
    if let Some(handoff) = state.editor.take_review_handoff() {
        fx.push(Effect::SendOp(Op::ReviewDone { handoff }));
    }
    review_ended(state);
}

/// The review ends while its file is gone from disk (deleted meanwhile): the editor's text is
/// what continues, so it is written back to the path first and the review ends once it is on disk
/// (`on_saved`). False when the file is there (nothing to do).
pub(super) fn write_back_deleted(state: &mut AppState, fx: &mut Vec<Effect>) -> bool {
    let Some(ed) = state.editor.get_mut().filter(|e| e.disk_text.is_none()) else {
        return false;
    };
    ed.review = Review::Saving;
    ed.prompt = Prompt::None;
    ed.note = Some("the file was deleted: writing this text back to it…".into());
    fx.push(Effect::SaveEditor {
        path: ed.path.clone(),
        text: ed.text(),
    });
    true
}

fn close(state: &mut AppState, fx: &mut Vec<Effect>) {
    state.editor.close();
    state.focus = Focus::Input;
    fx.push(Effect::UnwatchFile);
}

/// The answer to the unsaved-edits question: `s` saves them (the review ends with them, or the
/// editor closes once they are on disk), `d` discards them (the same, with the file as it is),
/// Esc goes back to editing.
pub(super) fn answer_unsaved(state: &mut AppState, action: Action, fx: &mut Vec<Effect>) {
    let Some(ed) = state
        .editor
        .get_mut()
        .filter(|e| e.prompt == Prompt::Unsaved)
    else {
        return;
    };
    match action {
        Action::SaveEdits => {
            if !ed.in_review() {
                ed.after_save = AfterSave::Close;
            }
            save(state, fx);
        }
        Action::DiscardEdits => {
            ed.revert();
            leave(state, fx);
        }
        _ => {
            ed.prompt = Prompt::None;
            ed.note = Some(format!("{} saves", label_for(Action::Save)));
        }
    }
}

/// Ctrl-C with the focus in the side editor: it interrupts what runs, as in the input (it never
/// clears the input it does not show, nor the buffer); otherwise the first press says in the
/// editor that a second one quits, and the second quits (unsaved edits are kept in a file).
pub(super) fn editor_ctrl_c(state: &mut AppState, now: Instant, fx: &mut Vec<Effect>) -> bool {
    if state.activity.is_running() {
        state.quit.disarm();
        fx.push(Effect::SendOp(Op::Abort {
            turn: state.turns.abort_turn(),
        }));
        return false;
    }
    if state.quit_armed(now) {
        return true;
    }
    state.quit.arm(now);
    if let Some(ed) = state.editor.get_mut() {
        let kept = if ed.is_dirty() {
            ", keeping your unsaved edits in a file"
        } else {
            ""
        };
        ed.note = Some(format!(
            "{} again quits{kept}",
            label_for(Action::ClearOrQuit)
        ));
    }
    false
}

/// Ctrl-Home / Ctrl-End in the editor: the start or the end of the document.
pub(super) fn editor_cursor(state: &mut AppState, end: bool, now: Instant) {
    if let Some(ed) = state.editor.get_mut() {
        ed.pause(now);
        ed.cursor_to(end);
    }
}

pub(super) fn external_editor(state: &mut AppState, now: Instant, fx: &mut Vec<Effect>) {
    let path = match (state.editor.get(), state.editor.latest_handoff()) {
        (Some(ed), _) => ed.path.clone(),
        (None, Some(p)) => p.to_path_buf(),
        (None, None) => return state.chat.notice("No handoff document yet"),
    };
    if state.settings.editor_cmd.is_none() {
        return state.chat.error("$EDITOR is not set");
    }
    if let Some(ed) = state.editor.get_mut() {
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
            ed.after_save = AfterSave::OpenExternal;
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
        Ok(kept) => state.chat.notice(format!(
                "A new handoff replaced the editor: your unsaved edits to {name} are kept in {}",
                kept.display()
            ),
        ),
        Err(e) => state.chat.error(format!(
                "A new handoff replaced the editor: your unsaved edits to {name} could not be kept ({e})"
            ),
        ),
    }
}
