//! The state of `/rewind` in the TUI: the picker, open or not, and where it stands (asked the
//! engine, listing the messages, offering what to rewind), moved by its keys; the message last
//! picked (whose turn's cells the rewind removes from the chat); and the last Esc on an idle
//! empty input (a second one soon after opens the picker). Also what a question about
//! files changed since (asked for an undo, a redo or a rewind) sends again once answered.

use std::time::{Duration, Instant};

use crate::engine::checkpoint::{OnConflict, UndoAction};
use crate::engine::ledger::{RewindMode, RewindPoint};
use crate::engine::protocol::{Op, TurnId};

/// Two Esc presses this close together on an empty input open the picker.
pub(crate) const DOUBLE_ESC: Duration = Duration::from_millis(800);

/// The three choices after a message is picked, in the order shown.
pub(crate) const MODES: [(RewindMode, &str); 3] = [
    (RewindMode::Both, "code and conversation"),
    (RewindMode::Conversation, "conversation only"),
    (RewindMode::Code, "code only"),
];

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
    /// The picker, while it is open.
    picker: Option<RewindPicker>,
    /// The last Esc on an empty, idle input (a second one soon after opens the picker).
    esc_at: Option<Instant>,
    /// The message a rewind was last asked for: its step turn, and the front end's number of
    /// the turn that sent it when this process sent it.
    picked: Option<(u64, Option<TurnId>)>,
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

impl Rewind {
    /// The picker, while it is open.
    pub(crate) fn picker(&self) -> Option<&RewindPicker> {
        self.picker.as_ref()
    }

    /// Whether the picker is open (it takes every key).
    pub(crate) fn is_open(&self) -> bool {
        self.picker.is_some()
    }

    /// `/rewind`: the picker opens, waiting for the step's messages; the op asks the engine.
    pub(crate) fn open(&mut self) -> Op {
        self.picker = Some(RewindPicker::Loading);
        Op::RewindPoints
    }

    /// Esc on an empty input with nothing running: the second within [`DOUBLE_ESC`] opens the
    /// picker (the op asks the engine for its messages).
    pub(crate) fn idle_esc(&mut self, now: Instant) -> Option<Op> {
        match self.esc_at.take() {
            Some(at) if now.saturating_duration_since(at) <= DOUBLE_ESC => Some(self.open()),
            _ => {
                self.esc_at = Some(now);
                None
            }
        }
    }

    /// The engine rewound the conversation to before the message of step turn `turn`: the
    /// turn of this front end that sent it (None: an earlier process did), when it is the
    /// message picked; else nothing (`Some(None)` is a message older than any turn sent here).
    pub(crate) fn rewound(&mut self, turn: u64) -> Option<Option<TurnId>> {
        match self.picked.take() {
            Some((t, sent_as)) if t == turn => Some(sent_as),
            other => {
                self.picked = other;
                None
            }
        }
    }

    /// Esc in the picker: it closes.
    pub(crate) fn close(&mut self) {
        self.picker = None;
    }

    /// The engine's list of the step's messages, for an open picker. False when the list is
    /// empty (the picker closes: there is nothing to rewind).
    pub(crate) fn on_points(&mut self, points: Vec<RewindPoint>) -> bool {
        if self.picker.is_none() {
            return true;
        }
        if points.is_empty() {
            self.picker = None;
            return false;
        }
        self.picker = Some(RewindPicker::Messages {
            points,
            selected: 0,
        });
        true
    }

    /// Up or Down in the picker.
    pub(crate) fn step(&mut self, down: bool) {
        let (selected, n) = match self.picker.as_mut() {
            Some(RewindPicker::Messages { points, selected }) => (selected, points.len()),
            Some(RewindPicker::Mode { selected, .. }) => (selected, MODES.len()),
            _ => return,
        };
        let n = n.max(1);
        *selected = if down {
            (*selected + 1) % n
        } else {
            (*selected + n - 1) % n
        };
    }

    /// Home or End in the picker: its first row, or its last.
    pub(crate) fn jump(&mut self, last: bool) {
        let (selected, n) = match self.picker.as_mut() {
            Some(RewindPicker::Messages { points, selected }) => (selected, points.len()),
            Some(RewindPicker::Mode { selected, .. }) => (selected, MODES.len()),
            _ => return,
        };
        *selected = if last { n.saturating_sub(1) } else { 0 };
    }

    /// Enter in the picker: a message leads to the choice, the choice to the rewind (the op
    /// returned; the picker closes).
    pub(crate) fn choose(&mut self) -> Option<Op> {
        match self.picker.take() {
            Some(RewindPicker::Messages { points, selected }) => {
                self.picker = points
                    .into_iter()
                    .nth(selected)
                    .map(|point| RewindPicker::Mode { point, selected: 0 });
                None
            }
            Some(RewindPicker::Mode { point, selected }) => {
                self.picked = Some((point.turn, point.sent_as.map(TurnId)));
                MODES.get(selected).map(|(mode, _)| Op::Rewind {
                    turn: point.turn,
                    mode: *mode,
                    on_conflict: OnConflict::Stop,
                })
            }
            other => {
                self.picker = other;
                None
            }
        }
    }
}
