//! Unsaved side-editor edits across the end of a process, in the reducer: a quit, a signal
//! or a closed terminal keeps them in a file beside the document (and tells the engine, which
//! keeps the turnover uncommitted); a reopened review offers them back (restore / discard).

use std::path::PathBuf;
use std::time::Instant;

use crate::engine::protocol::HandoffId;

use super::msg::{Effect, FileError};
use super::state::AppState;

/// The app ends now (a quit, SIGTERM, SIGHUP, the terminal gone): keep a dirty buffer, then
/// quit.
pub(super) fn keep_and_quit(state: &mut AppState, fx: &mut Vec<Effect>) {
    if let Some(ed) = state.editor.get().filter(|ed| ed.is_dirty()) {
        fx.push(Effect::KeepUnsavedOnExit {
            path: ed.path().to_path_buf(),
            text: ed.text(),
            handoff: state.editor.review_handoff(),
        });
    }
    fx.push(Effect::Quit);
}

/// The engine reopens a review an earlier process left: its unsaved edits, if any, are offered
/// once the `Frozen` that follows has put the document in the editor.
pub(super) fn on_reopened(state: &mut AppState, handoff: HandoffId, unsaved: Option<PathBuf>) {
    state.editor.offer_unsaved(handoff, unsaved);
}

/// The document of `handoff` is in the editor for its review: read the edits offered for it.
pub(super) fn review_opened(state: &AppState, handoff: HandoffId, fx: &mut Vec<Effect>) {
    if let Some(path) = state.editor.offered_for(handoff) {
        fx.push(Effect::LoadUnsaved(path.to_path_buf()));
    }
}

/// The kept edits were read: offer them in the editor reviewing their handoff.
pub(super) fn on_unsaved_loaded(
    state: &mut AppState,
    path: PathBuf,
    content: Result<String, FileError>,
    now: Instant,
) {
    let Some(handoff) = state.editor.take_offer(&path) else {
        return;
    };
    let reviewing = state.editor.review_handoff() == Some(handoff);
    match content {
        Ok(text) => match state.editor.get_mut() {
            Some(ed) if reviewing && ed.text() != text => {
                ed.offer_restore(path, text, now);
            }
            Some(_) if reviewing => {
                // The file already holds them (they were saved after all): nothing to offer.
            }
            _ => state.chat.notice(format!(
                "Unsaved edits of an interrupted review are kept in {}",
                path.display()
            )),
        },
        Err(e) => state.chat.error(format!(
            "Could not read the unsaved edits kept in {}: {e}",
            path.display()
        )),
    }
}

/// `r` / `d` on the restore offer.
pub(super) fn answer(state: &mut AppState, restore: bool, fx: &mut Vec<Effect>) {
    if let Some(path) = state
        .editor
        .get_mut()
        .and_then(|ed| ed.resolve_restore(restore))
    {
        fx.push(Effect::DiscardUnsaved(path));
    }
}

/// The discarded edits' file is gone (or could not be removed).
pub(super) fn on_discarded(state: &mut AppState, path: PathBuf, result: Result<(), FileError>) {
    let note = match result {
        Ok(()) => format!("discarded the unsaved edits ({} removed)", path.display()),
        Err(e) => format!(
            "discarded the unsaved edits, but {} could not be removed: {e}",
            path.display()
        ),
    };
    match state.editor.get_mut() {
        Some(ed) => ed.set_note(note),
        None => state.chat.notice(note),
    }
}
