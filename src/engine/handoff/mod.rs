//! The handoff document, its writing prompt and its store on disk (SPEC §6).

pub mod briefing;
pub mod document;
pub mod lock;
pub mod prompt;
pub mod reopen;
pub mod rescue;
pub mod store;
mod syntax;

pub use briefing::Briefing;
pub use document::{CARRIED_MARKER, DEGRADED_MARKER, DegradedParams, HandoffDoc, HandoffMeta};
pub use prompt::{handoff_prompt, successor_task_note};
pub use store::{ReadBack, freeze, live_path, read_back, safe_step_name};

use crate::engine::compact::{ContextStrategy, Pressure, StrategyKind};
use crate::engine::context::{DueInput, handoff_at, handoff_due};

/// Handoff as a [`ContextStrategy`]: due at the handoff line of the window in force
/// ([`crate::engine::context::handoff_line`]: `max(10_000, window - headroom)`, scaled in small
/// windows), never during the writing turn, only once the session has an id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandoffStrategy {
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
    use crate::engine::compact::CompactionStrategy;

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
            crate::engine::context::Thresholds::with_output(8_192, 50_000, 16_384).at,
            5_120
        );
    }
}
