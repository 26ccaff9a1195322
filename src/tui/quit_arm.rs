//! The double Ctrl-C that quits: the first press on an idle, empty input arms it, a second one
//! within [`QUIT_WINDOW`] quits; it disarms by itself once the window has passed (the footer
//! says "again to quit" meanwhile).

use std::time::{Duration, Instant};

/// A second Ctrl-C within this long quits.
pub(crate) const QUIT_WINDOW: Duration = Duration::from_secs(1);

/// The first Ctrl-C of a possible double press.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct QuitArm {
    /// When it was pressed.
    at: Option<Instant>,
}

impl QuitArm {
    /// A first Ctrl-C at `now`.
    pub(crate) fn arm(&mut self, now: Instant) {
        self.at = Some(now);
    }

    /// Ctrl-C interrupted something: hammering it to stop the agent does not leave.
    pub(crate) fn disarm(&mut self) {
        self.at = None;
    }

    /// True while a second Ctrl-C would quit.
    pub(crate) fn armed(&self, now: Instant) -> bool {
        self.at
            .is_some_and(|t| now.saturating_duration_since(t) <= QUIT_WINDOW)
    }

    /// A tick: the window passed, it disarms.
    pub(crate) fn expire(&mut self, now: Instant) {
        if self
            .at
            .is_some_and(|t| now.saturating_duration_since(t) > QUIT_WINDOW)
        {
            self.at = None;
        }
    }

    /// How long until the window ends (the footer changes then); `None` when not armed.
    pub(crate) fn ends_in(&self, now: Instant) -> Option<Duration> {
        self.at
            .map(|t| (t + QUIT_WINDOW).saturating_duration_since(now))
    }
}
