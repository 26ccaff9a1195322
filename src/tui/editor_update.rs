//! The side editor's part of the reducer: typing (pauses the review), Ctrl-S, Esc (with unsaved
//! edits it asks save / discard / keep editing: nothing typed is dropped unasked), Ctrl-C,
//! `$EDITOR`, and the results of saving. The editor itself (`SideEditor`) changes its buffer,
//! countdown and question; this file ties that to the review the engine waits on, the focus and
//! the chat.

use std::path::PathBuf;
use std::time::Instant;

use crossterm::event::KeyEvent;

use crate::engine::protocol::Op;

use super::editor_review::{AfterSave, Escape, External};
use super::keymap::{Action, label_for};
use super::msg::{Effect, FileError};
use super::state::{AppState, Focus};

/// A key typed into the side editor: it pauses the review countdown.
pub(super) fn editor_key(state: &mut AppState, key: KeyEvent, now: Instant) {
    match state.editor.get_mut() {
        Some(ed) => ed.type_key(key, now),
        None => state.focus = Focus::Input,
    }
}

/// Ctrl-S: the buffer to the file (a review ends once it is on disk).
pub(super) fn save(state: &mut AppState, fx: &mut Vec<Effect>) {
    if let Some(save) = state.editor.get_mut().and_then(|ed| ed.begin_save()) {
        fx.push(save);
    }
}

/// A save landed: a review's save ends the review (the engine is told, the keys go back to the
/// input); what was to follow it follows.
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
    let landed = ed.save_landed(&text, &result);
    if let Err(e) = result {
        return state
            .chat
            .error(format!("Could not save {}: {e}", path.display()));
    }
    if landed.review_ended {
        if let Some(handoff) = state.editor.take_review_handoff() {
            fx.push(Effect::SendOp(Op::ReviewDone { handoff }));
        }
        if landed.recreated {
            state.chat.notice(format!(
                "The handoff file {} was deleted during the review: the editor's text is \
                 written back to it, and the next session reads it",
                path.display()
            ));
        }
        review_ended(state);
    }
    match landed.after {
        AfterSave::Stay => {}
        AfterSave::OpenExternal => fx.push(Effect::OpenExternalEditor(path)),
        AfterSave::Close => close(state, fx),
        AfterSave::PlanChoice => {
            if let Some(ed) = state.editor.get_mut() {
                ed.ask_plan();
            }
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
    match ed.escape(running, now) {
        Escape::Wait | Escape::Asked => {}
        Escape::Abort => fx.push(Effect::SendOp(Op::Abort {
            turn: state.turns.abort_turn(),
        })),
        Escape::Leave => leave(state, fx),
    }
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
    if let Some(ed) = state.editor.get_mut() {
        ed.end_review("review over: the next session reads the file as it is on disk");
    }
    if let Some(handoff) = state.editor.take_review_handoff() {
        fx.push(Effect::SendOp(Op::ReviewDone { handoff }));
    }
    review_ended(state);
}

/// The review ends while its file is gone from disk (deleted meanwhile): the editor's text is
/// what continues, so it is written back to the path first and the review ends once it is on disk
/// (`on_saved`). False when the file is there (nothing to do).
pub(super) fn write_back_deleted(state: &mut AppState, fx: &mut Vec<Effect>) -> bool {
    match state.editor.get_mut().and_then(|ed| ed.write_back()) {
        Some(save) => {
            fx.push(save);
            true
        }
        None => false,
    }
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
    let Some(ed) = state.editor.get_mut().filter(|e| e.asks_unsaved()) else {
        return;
    };
    match action {
        Action::SaveEdits => {
            if !ed.in_review() {
                ed.then(AfterSave::Close);
            }
            save(state, fx);
        }
        Action::DiscardEdits => {
            ed.revert();
            leave(state, fx);
        }
        _ => ed.keep_editing(format!("{} saves", label_for(Action::Save))),
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
        ed.set_note(format!(
            "{} again quits{kept}",
            label_for(Action::ClearOrQuit)
        ));
    }
    false
}

/// Ctrl-Home / Ctrl-End in the editor: the start or the end of the document.
pub(super) fn editor_cursor(state: &mut AppState, end: bool, now: Instant) {
    if let Some(ed) = state.editor.get_mut() {
        ed.jump_to(end, now);
    }
}

/// Ctrl-E: `$EDITOR` on the editor's file (its unsaved edits saved first), or on the latest
/// handoff document when no editor is open.
pub(super) fn external_editor(state: &mut AppState, now: Instant, fx: &mut Vec<Effect>) {
    let path = match (state.editor.get(), state.editor.latest_handoff()) {
        (Some(ed), _) => ed.path().to_path_buf(),
        (None, Some(p)) => p.to_path_buf(),
        (None, None) => return state.chat.notice("No handoff document yet"),
    };
    if state.settings.editor_cmd.is_none() {
        return state.chat.error("$EDITOR is not set");
    }
    let external = match state.editor.get_mut() {
        Some(ed) => ed.for_external(now),
        None => External::Open,
    };
    match external {
        External::Blocked => {}
        External::Save(save) => fx.push(save),
        External::Open => fx.push(Effect::OpenExternalEditor(path)),
    }
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
