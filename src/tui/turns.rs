//! The turns between this front end and the engine: the ids it gives out, the turns sent whose
//! end has not come (a message typed meanwhile is queued), the turn the engine works on now (Esc
//! aborts it; a late event of another turn is dropped) and since when, and whether the engine
//! still talks at all.

use std::time::Instant;

use crate::engine::protocol::TurnId;

/// The turns in flight and the link they go over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Turns {
    /// The last turn id this front end gave out.
    last: TurnId,
    /// Turns sent to the engine whose `TurnEnd` has not come yet.
    in_flight: Vec<TurnId>,
    /// The turn the engine works on (`TurnStarted` until its `TurnEnd`).
    engine: Option<TurnId>,
    /// When the turn the engine works on started (for the end-of-turn notification).
    started_at: Option<Instant>,
    /// The engine's event channel closed: it is gone.
    closed: bool,
}

impl Default for Turns {
    fn default() -> Self {
        Turns {
            last: TurnId(0),
            in_flight: Vec::new(),
            engine: None,
            started_at: None,
            closed: false,
        }
    }
}

impl Turns {
    /// A new turn id for an op that starts a turn, counted in flight from now.
    pub(crate) fn send(&mut self) -> TurnId {
        self.last = self.last.next();
        self.in_flight.push(self.last);
        self.last
    }

    /// The turn Esc aborts: the one the engine works on, else the last one sent.
    pub(crate) fn abort_turn(&self) -> TurnId {
        self.engine.unwrap_or(self.last)
    }

    /// True while a turn this front end sent has not ended: a message typed now is queued.
    pub(crate) fn busy(&self) -> bool {
        !self.in_flight.is_empty()
    }

    /// The turns in flight, oldest first.
    #[cfg(test)]
    pub(crate) fn in_flight(&self) -> &[TurnId] {
        &self.in_flight
    }

    /// Whether an event of `turn` belongs to what the engine runs now.
    pub(crate) fn is_current(&self, turn: TurnId) -> bool {
        self.engine == Some(turn)
    }

    /// Whether `turn` ending ends what the engine runs (it is that turn, or none runs).
    pub(crate) fn ends_current(&self, turn: TurnId) -> bool {
        self.engine.is_none_or(|t| t == turn)
    }

    /// The engine started `turn` (one it started itself, as the demo's first message, is in
    /// flight too: what is typed now waits for it like for any other).
    pub(crate) fn started(&mut self, turn: TurnId, now: Instant) {
        self.engine = Some(turn);
        if !self.in_flight.contains(&turn) {
            self.in_flight.push(turn);
        }
        self.started_at = Some(now);
    }

    /// The engine's turn `turn` ended: since when it ran, if it was the one running (and its
    /// start was seen).
    pub(crate) fn ended(&mut self, turn: TurnId) -> Option<Instant> {
        if self.engine != Some(turn) {
            return None;
        }
        self.engine = None;
        self.started_at.take()
    }

    /// `turn` no longer runs (ended, or never reached the engine).
    pub(crate) fn over(&mut self, turn: TurnId) {
        self.in_flight.retain(|t| *t != turn);
    }

    /// The engine is gone: nothing of ours runs any more.
    pub(crate) fn engine_gone(&mut self) {
        self.closed = true;
        self.in_flight.clear();
    }

    /// The engine's event channel closed.
    pub(crate) fn engine_closed(&self) -> bool {
        self.closed
    }
}
