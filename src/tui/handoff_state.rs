//! A handoff as the TUI knows it: one written beside the main thread (its stage, since when, and
//! whether the main thread waits for it), and how a handoff in progress was started (which
//! decides the notice when it completes).

use std::time::Instant;

use crate::engine::protocol::HandoffId;

/// A handoff written beside the main thread (the turn goes on meanwhile), as far as the UI knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BackgroundHandoff {
    /// The engine's id for it (`Op::CancelHandoff` names it).
    pub(crate) handoff: HandoffId,
    /// When its current stage began.
    pub(crate) since: Instant,
    pub(crate) stage: BackgroundStage,
    /// Since when the main thread waits for it: its context reached the window minus the reserve.
    pub(crate) main_waits: Option<Instant>,
}

/// Where a background handoff stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BackgroundStage {
    /// The writing request runs.
    Writing,
    /// It runs again, on a reduced history, after the first one failed.
    Rescuing,
    /// The document is frozen; its review decides when the successor starts.
    Review,
}

impl BackgroundHandoff {
    /// Its document is still being written (Esc / Ctrl-G cancels that).
    pub(crate) fn writing(&self) -> bool {
        matches!(
            self.stage,
            BackgroundStage::Writing | BackgroundStage::Rescuing
        )
    }
}

/// How a handoff in progress was started: decides the notice when it completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HandoffKind {
    /// `/handoff`.
    Manual,
    /// The context reached the handoff line.
    Automatic,
}
