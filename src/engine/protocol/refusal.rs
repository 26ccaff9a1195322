//! Why the engine declined a `/handoff`.

use std::fmt;

use serde::Serialize;

/// Why the engine declined a `/handoff` (the guard on a manual handoff, kept in one place: here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HandoffRefusal {
    /// Fewer than 2 messages in the session.
    NoMessages,
    /// A handoff is being written already.
    AlreadyWriting,
    /// A handoff written in the background is in its review; its successor starts when it ends.
    Reviewing,
}

impl fmt::Display for HandoffRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HandoffRefusal::NoMessages => "Nothing to hand off (no messages yet)",
            HandoffRefusal::AlreadyWriting => "A handoff is already being written (Esc cancels it)",
            HandoffRefusal::Reviewing => {
                "A handoff is under review: its successor starts when the review ends"
            }
        })
    }
}
