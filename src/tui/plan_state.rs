//! The working mode as the TUI shows it (the status line's badge) and the plan under review in
//! the side editor, if any. The reducer that moves them is `plan_review`.

use std::path::{Path, PathBuf};

use crate::engine::policy::Mode;

/// The mode and the plan the side editor holds for the user's choice.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PlanView {
    /// The mode in force (set at once by Shift-Tab, confirmed by the engine's `Mode` event).
    mode: Mode,
    /// The presented plan's file while the side editor holds it for a choice.
    review: Option<PathBuf>,
}

impl PlanView {
    /// The mode in force.
    pub(crate) fn mode(&self) -> Mode {
        self.mode
    }

    /// Shift-Tab: the next mode, in force at once (the engine confirms it).
    pub(crate) fn cycle_mode(&mut self) -> Mode {
        self.mode = self.mode.next();
        self.mode
    }

    /// The engine's mode in force.
    pub(crate) fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
    }

    /// Whether the side editor holds the presented plan in `path` for a choice.
    pub(crate) fn reviews(&self, path: &Path) -> bool {
        self.review.as_deref() == Some(path)
    }

    /// The plan in `path` is presented: the side editor holds it for a choice.
    pub(crate) fn review(&mut self, path: PathBuf) {
        self.review = Some(path);
    }

    /// The plan's review is over (the editor closed).
    pub(crate) fn review_over(&mut self) {
        self.review = None;
    }

    /// Whether a plan is under review.
    #[cfg(test)]
    pub(crate) fn in_review(&self) -> bool {
        self.review.is_some()
    }
}
