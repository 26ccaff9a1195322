//! The turn the engine works on: its id, its kind, when it started, and whether the user
//! cancelled a background handoff during it.

use std::time::Instant;

use crate::engine::protocol::{TurnId, TurnKind};

/// The turn the engine works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ActiveTurn {
    pub id: TurnId,
    pub kind: TurnKind,
    pub started: Instant,
    /// The user cancelled a background handoff during this turn: none starts again before the
    /// next turn (unless the context reaches the hard limit).
    pub background_cancelled: bool,
}

impl ActiveTurn {
    /// `id` of `kind`, starting now.
    pub(super) fn new(id: TurnId, kind: TurnKind) -> ActiveTurn {
        ActiveTurn {
            id,
            kind,
            started: Instant::now(),
            background_cancelled: false,
        }
    }
}
