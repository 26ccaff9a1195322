//! The state of `/rewind` in the TUI: the picker, open or not, and where it stands (asked the
//! engine, listing the messages, offering what to rewind); and the last Esc on an idle empty input
//! (a second one soon after opens the picker). The reducer that moves it is `rewind_picker`.
//! Also what a question about files changed since (asked for an undo, a redo or a rewind) sends
//! again once answered.

use std::time::Instant;

use crate::engine::checkpoint::UndoAction;
use crate::engine::ledger::{RewindMode, RewindPoint};

/// What a question about files changed since is for: the undo or redo, or the rewind, sent
/// again with the user's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retry {
    Restore(UndoAction),
    Rewind { turn: u64, mode: RewindMode },
}

/// Where `/rewind` stands in the TUI.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Rewind {
    pub(crate) picker: Option<RewindPicker>,
    /// The last Esc on an empty, idle input (a second one soon after opens the picker).
    pub(crate) esc_at: Option<Instant>,
}

/// The picker, while it is open.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RewindPicker {
    /// Asked the engine for the messages.
    Loading,
    Messages {
        points: Vec<RewindPoint>,
        selected: usize,
    },
    /// A message was picked: what to rewind.
    Mode { point: RewindPoint, selected: usize },
}
