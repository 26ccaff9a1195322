//! The working mode as the TUI shows it (the status line's badge) and the plan under review in
//! the side editor, if any. The reducer that moves them is `plan_review`.

use std::path::PathBuf;

use crate::engine::policy::Mode;

/// The mode and the plan the side editor holds for the user's choice.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PlanView {
    /// The mode in force (set at once by Shift-Tab, confirmed by the engine's `Mode` event).
    pub(crate) mode: Mode,
    /// The presented plan's file while the side editor holds it for a choice.
    pub(crate) review: Option<PathBuf>,
}
