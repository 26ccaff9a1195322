//! The side editor's review and questions as data: where the review window stands, the question
//! shown on the editor's last line (with the keys that answer each), what follows a save, and what
//! a landed save, Esc and Ctrl-E come to. `SideEditor` moves between them.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::keymap::{Action, label_for};
use super::msg::Effect;

/// The review window of a frozen handoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Review {
    /// Counting down; the successor starts at `ends_at`.
    Counting {
        /// When the countdown runs out.
        ends_at: Instant,
    },
    /// A keystroke paused the countdown with `remaining` left; only Ctrl-S or Esc end it now.
    Paused {
        /// What was left when it paused.
        remaining: Duration,
    },
    /// Ctrl-S during the review: the save is in flight; `ReviewDone` follows its success.
    Saving,
    /// No review running: it ended, or the editor was opened with `/edit-handoff`.
    Over,
}

/// A question the editor is asking, shown on its last line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Prompt {
    /// Nothing asked.
    None,
    /// The file changed on disk while the buffer has unsaved edits: `r` reload / `k` keep mine.
    Conflict {
        /// What the file now holds on disk.
        disk: String,
    },
    /// Esc with unsaved edits: `s` save them / `d` discard them (then the review ends, or the
    /// editor closes) / Esc keep editing. Nothing is dropped unasked.
    Unsaved,
    /// Esc in the editor holding a presented plan (its edits saved): `i` implement here / `f` in
    /// a fresh session / `p` keep planning / Esc keep editing.
    Plan,
    /// A reopened review (the last process ended during it) found its unsaved edits kept in
    /// `path`: `r` restore them into the buffer / `d` discard them (the file is removed).
    Restore {
        /// The kept edits.
        path: PathBuf,
        /// Their text.
        text: String,
    },
}

/// What the editor does once a save lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AfterSave {
    /// Nothing more: the buffer is saved.
    Stay,
    /// Ctrl-E saved the buffer first: `$EDITOR` opens on the file.
    OpenExternal,
    /// The unsaved-edits question was answered "save" after the review: the editor closes.
    Close,
    /// Esc saved a plan's edits: the plan question follows.
    PlanChoice,
}

/// What a landed save means beyond the editor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Landed {
    /// What was to follow the save.
    pub(crate) after: AfterSave,
    /// It was the review's save, and it is on disk: the review is over.
    pub(crate) review_ended: bool,
    /// The file had been deleted: this save wrote it again.
    pub(crate) recreated: bool,
}

/// What Esc in the editor comes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Escape {
    /// Nothing more now (a save is in flight, or a restore offer was dismissed).
    Wait,
    /// Something runs: Esc aborts it, the editor is left as it is.
    Abort,
    /// Unsaved edits: the question is asked.
    Asked,
    /// The editor is done with the file as it is on disk.
    Leave,
}

/// What Ctrl-E comes to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum External {
    /// A conflict on disk is to be answered first.
    Blocked,
    /// The buffer is saved first; `$EDITOR` opens once it is on disk.
    Save(Effect),
    /// `$EDITOR` opens now.
    Open,
}

/// `r reload / k keep mine`: the keys that answer the conflict prompt.
pub(crate) fn conflict_keys() -> String {
    format!(
        "{} reload / {} keep mine",
        label_for(Action::Reload),
        label_for(Action::KeepMine)
    )
}

/// The restore offer's keys, as the footer and the prompt say them.
pub(crate) fn restore_keys() -> String {
    format!(
        "{} restore / {} discard",
        label_for(Action::RestoreUnsaved),
        label_for(Action::DiscardUnsaved)
    )
}

/// The unsaved-edits question's keys: `s save · d discard · Esc keep editing`.
pub(crate) fn unsaved_keys() -> String {
    format!(
        "{} save · {} discard · {} keep editing",
        label_for(Action::SaveEdits),
        label_for(Action::DiscardEdits),
        label_for(Action::KeepEditing)
    )
}
