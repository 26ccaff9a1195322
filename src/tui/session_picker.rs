//! The `/resume` picker: this workspace's sessions, newest first, the one open now marked and
//! never offered; the keys move the selection through them and continue the chosen one.

use crate::engine::protocol::{Op, SessionSummary};

/// The session picker, while it is open.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SessionPicker {
    /// The run open now (marked, not offered).
    current_run: String,
    /// The runs.
    sessions: Vec<SessionSummary>,
    /// The highlighted row.
    selected: usize,
}

/// What Enter in the picker asks for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Choice {
    /// Continue this run.
    Resume(Op),
    /// The highlighted run is the one open now.
    OpenNow,
    /// Nothing is highlighted.
    Nothing,
}

impl SessionPicker {
    /// The picker over `sessions`, on the newest one not open now; `None` when there is no
    /// other session to pick.
    pub(crate) fn new(current_run: String, sessions: Vec<SessionSummary>) -> Option<Self> {
        let selected = sessions.iter().position(|s| s.run_id != current_run)?;
        Some(SessionPicker {
            current_run,
            sessions,
            selected,
        })
    }

    /// The sessions listed, newest first.
    pub(crate) fn sessions(&self) -> &[SessionSummary] {
        &self.sessions
    }

    /// Whether `s` is the session open now.
    pub(crate) fn is_current(&self, s: &SessionSummary) -> bool {
        s.run_id == self.current_run
    }

    /// The highlighted row.
    pub(crate) fn selected(&self) -> usize {
        self.selected
    }

    /// The selection moves one session down (or up), wrapping around.
    pub(crate) fn step(&mut self, next: bool) {
        let n = self.sessions.len().max(1);
        self.selected = if next {
            (self.selected + 1) % n
        } else {
            (self.selected + n - 1) % n
        };
    }

    /// Home or End: the first row, or the last.
    pub(crate) fn jump(&mut self, last: bool) {
        self.selected = if last {
            self.sessions.len().saturating_sub(1)
        } else {
            0
        };
    }

    /// Enter: continue the highlighted run (not the one open now).
    pub(crate) fn choose(&self) -> Choice {
        match self.sessions.get(self.selected) {
            Some(s) if s.run_id == self.current_run => Choice::OpenNow,
            Some(s) => Choice::Resume(Op::Resume {
                run_id: s.run_id.clone(),
            }),
            None => Choice::Nothing,
        }
    }
}
