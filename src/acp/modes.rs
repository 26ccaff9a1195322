//! The working modes as the editor's session modes: normal, accept edits and plan, with the
//! same words as the TUI's Shift-Tab cycle.

use agent_client_protocol::v1::schema::{SessionMode, SessionModeId, SessionModeState};

use crate::engine::policy::Mode;

const ALL: [Mode; 3] = [Mode::Normal, Mode::AcceptEdits, Mode::Plan];

/// The mode's id on the wire (`normal`, `accept-edits`, `plan`).
pub(super) fn id(mode: Mode) -> SessionModeId {
    SessionModeId::new(mode.as_str())
}

/// The mode an id names.
pub(super) fn parse(id: &SessionModeId) -> Option<Mode> {
    Mode::parse(&id.0)
}

/// The modes offered, with `current` in force.
pub(super) fn state(current: Mode) -> SessionModeState {
    SessionModeState::new(
        id(current),
        ALL.iter()
            .map(|m| {
                let (name, description) = match m {
                    Mode::Normal => ("Normal", "Edits and commands are asked for"),
                    Mode::AcceptEdits => (
                        "Accept edits",
                        "File edits in the workspace run without asking; commands are asked for",
                    ),
                    Mode::Plan => (
                        "Plan",
                        "Tools that change nothing; the turn ends with a plan document",
                    ),
                };
                SessionMode::new(id(*m), name).description(description)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_round_trips_through_its_id() {
        for m in ALL {
            assert_eq!(parse(&id(m)), Some(m));
        }
        assert_eq!(parse(&SessionModeId::new("yolo")), None);
        let s = state(Mode::Plan);
        assert_eq!(s.current_mode_id, id(Mode::Plan));
        assert_eq!(s.available_modes.len(), 3);
    }
}
