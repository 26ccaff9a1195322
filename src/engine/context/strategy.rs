//! When the context is full enough to act: the [`ContextStrategy`] trait, the [`Pressure`] it
//! looks at before each main-thread request, and its two kinds — [`HandoffStrategy`] (due at the
//! handoff line) and [`CompactionStrategy`] (due at [`PRESSURE_FRACTION`] of the window). What each
//! strategy then does lives above: `handoff/` writes a document for a successor, `compact` summarises
//! in place. The session checks its list in order and the first due one acts.

use super::{DueInput, handoff_at, handoff_due};

/// The pressure path of compaction fires when the total reaches this fraction of the window.
pub(crate) const PRESSURE_FRACTION: f64 = 0.8;

/// What a strategy's trigger looks at before a main-thread request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pressure {
    /// Main-thread context (the last response's input tokens plus what was appended since),
    /// measured or estimated.
    pub ctx: u64,
    /// The context window in force.
    pub window: u64,
    /// True during the handoff writing turn (which must never trigger anything).
    pub writing_turn: bool,
    /// True once the session has an id.
    pub has_session_id: bool,
}

/// Which strategy a [`ContextStrategy`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrategyKind {
    Handoff,
    Compaction,
}

impl StrategyKind {
    /// A short name for logs and the ledger.
    pub fn as_str(self) -> &'static str {
        match self {
            StrategyKind::Handoff => "handoff",
            StrategyKind::Compaction => "compaction",
        }
    }
}

/// What replaces the model-visible history when the context runs out. Handoff and compaction both
/// implement it so a third strategy can be added.
pub trait ContextStrategy {
    /// Which strategy this is (the session acts on the kind, never on a name).
    fn kind(&self) -> StrategyKind;
    /// A short name for logs and the ledger (`handoff`, `compaction`).
    fn name(&self) -> &'static str {
        self.kind().as_str()
    }
    /// The pressure path: true when the strategy should act before the next request. The overflow
    /// path (a `ContextWindowExceeded` error) acts regardless of this.
    fn due(&self, p: &Pressure) -> bool;
}

/// Compaction as a [`ContextStrategy`]: due at [`PRESSURE_FRACTION`] of the window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CompactionStrategy;

impl ContextStrategy for CompactionStrategy {
    fn kind(&self) -> StrategyKind {
        StrategyKind::Compaction
    }

    fn due(&self, p: &Pressure) -> bool {
        !p.writing_turn && pressure_due(p.ctx, p.window)
    }
}

/// `total >= 0.8 × window`. A zero window (unknown) is never due.
pub(crate) fn pressure_due(total_tokens: u64, window: u64) -> bool {
    window > 0 && total_tokens as f64 >= PRESSURE_FRACTION * window as f64
}

/// Handoff as a [`ContextStrategy`]: due at the handoff line of the window in force
/// ([`super::handoff_line`]: `max(10_000, window - headroom)`, scaled in small windows so that
/// the writing request's output cap stays free), never during the writing turn, only once the
/// session has an id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HandoffStrategy {
    /// `HandoffPolicy.enabled` (false with `--no-handoff`).
    pub enabled: bool,
    /// Tokens kept free below the window (`--headroom`, default 50,000).
    pub headroom: u64,
    /// The requests' output cap: the room the writing request needs below the window.
    pub max_tokens: u32,
}

impl ContextStrategy for HandoffStrategy {
    fn kind(&self) -> StrategyKind {
        StrategyKind::Handoff
    }

    fn due(&self, p: &Pressure) -> bool {
        handoff_due(DueInput {
            enabled: self.enabled,
            writing_turn: p.writing_turn,
            ctx: p.ctx,
            at: handoff_at(p.window, self.headroom, self.max_tokens),
            has_session_id: p.has_session_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies_trigger_on_their_own_lines() {
        let p = Pressure {
            ctx: 150_000,
            window: 200_000,
            writing_turn: false,
            has_session_id: true,
        };
        let handoff = HandoffStrategy {
            enabled: true,
            headroom: 50_000,
            max_tokens: 16_384,
        };
        let strategies: [&dyn ContextStrategy; 2] = [&handoff, &CompactionStrategy];
        let names: Vec<_> = strategies.iter().map(|s| s.name()).collect();
        assert_eq!(names, ["handoff", "compaction"]);
        // 150K of 200K: the handoff line (150K) is reached, the 80% line (160K) is not.
        assert!(handoff.due(&p));
        assert!(!CompactionStrategy.due(&p));
        let high = Pressure { ctx: 160_000, ..p };
        assert!(CompactionStrategy.due(&high));
        // The writing turn is exempt from both; handoff needs a session id and to be enabled.
        let writing = Pressure {
            writing_turn: true,
            ..high
        };
        assert!(!handoff.due(&writing) && !CompactionStrategy.due(&writing));
        assert!(!handoff.due(&Pressure {
            has_session_id: false,
            ..p
        }));
        let off = HandoffStrategy {
            enabled: false,
            ..handoff
        };
        assert!(!off.due(&high));
        // The 10k floor: a 20K window hands off at 10k.
        let tiny = Pressure {
            ctx: 10_000,
            window: 20_000,
            ..p
        };
        assert!(handoff.due(&tiny));
        assert!(!handoff.due(&Pressure { ctx: 9_999, ..tiny }));
        // An 8K window: the line is scaled (5,120), the same line the thresholds show.
        let small = Pressure {
            ctx: 5_120,
            window: 8_192,
            ..p
        };
        assert!(handoff.due(&small));
        assert!(!handoff.due(&Pressure {
            ctx: 5_119,
            ..small
        }));
        assert_eq!(
            super::super::Thresholds::with_output(8_192, 50_000, 16_384).at,
            5_120
        );
    }

    #[test]
    fn pressure_is_due_at_eighty_percent() {
        assert!(!pressure_due(159_999, 200_000));
        assert!(pressure_due(160_000, 200_000));
        assert!(pressure_due(300_000, 200_000));
        assert!(!pressure_due(0, 0), "an unknown window is never due");
        assert!(pressure_due(800_000, 1_000_000));
        assert!(!pressure_due(799_999, 1_000_000));
    }
}
