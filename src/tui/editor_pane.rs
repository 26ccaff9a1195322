//! The side editor's pane: the editor, when one is open, and what it is open for — the handoff
//! whose document its review window holds, the unsaved edits of an interrupted review offered
//! once that document is in it, and the latest handoff document on disk (what `/edit-handoff`
//! and Ctrl-E open). Opening a document over unsaved edits keeps them in a file first.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::engine::protocol::HandoffId;

use super::editor::SideEditor;
use super::editor_review::Prompt;
use super::msg::Effect;
use super::render::editor_view::TextAreaStyles;

/// The pane and what it holds.
#[derive(Debug, Clone, Default)]
pub(crate) struct EditorPane {
    /// The side editor, when open.
    editor: Option<SideEditor>,
    /// The handoff whose document the review window holds.
    review_handoff: Option<HandoffId>,
    /// A reopened review's unsaved edits, offered once its document is in the editor.
    unsaved_offer: Option<(HandoffId, PathBuf)>,
    /// The latest handoff document on disk.
    latest_handoff: Option<PathBuf>,
}

impl EditorPane {
    /// The editor, when open.
    pub(crate) fn get(&self) -> Option<&SideEditor> {
        self.editor.as_ref()
    }

    /// The editor, when open, to change.
    pub(crate) fn get_mut(&mut self) -> Option<&mut SideEditor> {
        self.editor.as_mut()
    }

    /// Whether an editor is open.
    pub(crate) fn is_open(&self) -> bool {
        self.editor.is_some()
    }

    /// The editor, when it is open on `path` (news of another file is stale).
    pub(crate) fn on_file(&mut self, path: &Path) -> Option<&mut SideEditor> {
        self.editor.as_mut().filter(|e| e.path() == path)
    }

    /// The question the editor asks, if it is open.
    pub(crate) fn prompt(&self) -> Option<&Prompt> {
        self.editor.as_ref().map(SideEditor::prompt)
    }

    /// `ed` takes the pane. Unsaved edits of the document it replaces are kept in a file of
    /// their own first (never lose the user's words).
    pub(crate) fn open(&mut self, ed: SideEditor, fx: &mut Vec<Effect>) {
        if let Some(old) = self.editor.take().filter(SideEditor::is_dirty) {
            fx.push(Effect::KeepUnsaved {
                path: old.path().to_path_buf(),
                text: old.text(),
            });
        }
        self.editor = Some(ed);
    }

    /// The editor becomes `ed`: the file `/edit-handoff` asked for while none was open.
    pub(crate) fn put(&mut self, ed: SideEditor) {
        self.editor = Some(ed);
    }

    /// The editor closes.
    pub(crate) fn close(&mut self) {
        self.editor = None;
    }

    /// Styles the editor's textarea for where the focus is, only when its focus or its buffer
    /// changed (its heading pattern is compiled then).
    pub(crate) fn style(&mut self, styles: &TextAreaStyles, focused: bool) {
        if let Some(ed) = self.editor.as_mut() {
            ed.style(styles, focused);
        }
    }

    /// A tick: true when the review's countdown ran out now.
    pub(crate) fn tick(&mut self, now: Instant) -> bool {
        self.editor.as_mut().is_some_and(|ed| ed.tick(now))
    }

    /// When the countdown shown next changes.
    pub(crate) fn next_change(&self, now: Instant) -> Option<Duration> {
        self.editor.as_ref().and_then(|e| e.next_change(now))
    }

    /// The latest handoff document on disk.
    pub(crate) fn latest_handoff(&self) -> Option<&Path> {
        self.latest_handoff.as_deref()
    }

    /// The latest handoff document is `path` (`None`: a resumed run has none).
    pub(crate) fn set_latest_handoff(&mut self, path: Option<PathBuf>) {
        self.latest_handoff = path;
    }

    /// The handoff whose document the review window holds.
    pub(crate) fn review_handoff(&self) -> Option<HandoffId> {
        self.review_handoff
    }

    /// The review of `handoff`'s document starts (`None`: no review runs here).
    pub(crate) fn set_review_handoff(&mut self, handoff: Option<HandoffId>) {
        self.review_handoff = handoff;
    }

    /// The review ended here: the handoff it held, to tell the engine (once).
    pub(crate) fn take_review_handoff(&mut self) -> Option<HandoffId> {
        self.review_handoff.take()
    }

    /// The engine reopens `handoff`'s review with the unsaved edits kept in `unsaved`, if any.
    pub(crate) fn offer_unsaved(&mut self, handoff: HandoffId, unsaved: Option<PathBuf>) {
        self.unsaved_offer = unsaved.map(|path| (handoff, path));
    }

    /// The file of the unsaved edits offered for `handoff`, if any.
    pub(crate) fn offered_for(&self, handoff: HandoffId) -> Option<&Path> {
        match &self.unsaved_offer {
            Some((h, path)) if *h == handoff => Some(path),
            _ => None,
        }
    }

    /// The offered edits in `path` were read: the offer is taken (its handoff returned); an
    /// offer of another file stays.
    pub(crate) fn take_offer(&mut self, path: &Path) -> Option<HandoffId> {
        match self.unsaved_offer.take() {
            Some((handoff, offered)) if offered == path => Some(handoff),
            other => {
                self.unsaved_offer = other;
                None
            }
        }
    }
}
