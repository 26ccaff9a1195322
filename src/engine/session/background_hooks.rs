//! The user's handoff hooks for a handoff written in the background, run beside the main thread.
//!
//! `PreHandoff` runs before the writing request starts: while it runs the handoff is *vetting*
//! (a `/handoff` is refused as for a document being written); exit 2 (or a `block` decision)
//! cancels this background handoff with a notice and a ledger record, and no other starts in the
//! same turn; its text is added to the writing prompt's focus. `HandoffFrozen` runs once the
//! document is frozen (on disk, in the ledger) and before its review opens: the hook may edit the
//! file, the review shows it as it is on disk then, and the turnover waits for the review, so the
//! successor reads the edit. A hook that hangs is cut by its own timeout and the handoff goes on.
//!
//! Both run as tasks whose outcome comes back on the background handoff's channel, so every
//! place the engine waits (a stream, a tool, an approval, the idle loop) sees it through. Esc
//! kills them with their process groups (a vetting handoff is cancelled then, a frozen one goes
//! on to its review); quitting kills them too, and a frozen document's review reopens at the next
//! start.

use tokio::task::AbortHandle;

use super::Engine;
use super::hook_ops::{Gate, pre_handoff_input};
use super::lifecycle::{Background, BgState};
use crate::engine::hooks::Outcome;
use crate::engine::ledger::{FrozenHandoff, HandoffCause};
use crate::engine::protocol::{Event, HandoffId, HandoffPhase};

impl Engine {
    /// Start the `PreHandoff` hooks of the background handoff `id`. None: there are none, the
    /// writing may start at once.
    pub(super) fn vet_in_background(
        &self,
        id: HandoffId,
        focus: Option<String>,
    ) -> Option<AbortHandle> {
        self.background_batch(id, pre_handoff_input(false, &focus))
    }

    /// Start the `HandoffFrozen` hooks of the background handoff `id` on its frozen document.
    /// None: there are none (or the document is not on disk), the review may open at once.
    pub(super) fn frozen_in_background(
        &self,
        id: HandoffId,
        frozen: &FrozenHandoff,
    ) -> Option<AbortHandle> {
        let path = frozen.file.path()?;
        let input = self.frozen_input(HandoffCause::Pressure, path, frozen.generation);
        self.background_batch(id, input)
    }

    /// The background handoff's hooks are done: after `PreHandoff` the writing starts (or the
    /// handoff is refused), after `HandoffFrozen` the review opens. Stale outcomes (a cancelled
    /// handoff's) are dropped.
    pub(super) fn on_background_hooks(&mut self, id: HandoffId, outcome: Outcome) {
        let current = self.handoff.background().is_some_and(|bg| {
            bg.id == id && matches!(bg.state, BgState::Vetting { .. } | BgState::Hooked { .. })
        });
        if !current {
            tracing::debug!(handoff = id.0, "stale background hook outcome dropped");
            return;
        }
        self.report_hooks(&outcome);
        let Some(mut bg) = self.handoff.take_background() else {
            return;
        };
        if let BgState::Vetting { focus, .. } = &mut bg.state {
            let focus = focus.take();
            match self.pre_handoff_gate(&outcome, focus) {
                Gate::Go(focus) => self.write_after_vetting(bg, focus),
                Gate::Blocked(reason) => self.refused_in_background(id, &reason),
                Gate::Aborted => self.cancelled_in_background(id),
            }
            return;
        }
        if let BgState::Hooked { frozen, .. } = bg.state {
            bg.state = self.review_state(id, *frozen);
        }
        self.handoff.begin_background(bg);
    }

    /// Esc during the turn: the background handoff's hooks still running are killed. A vetting
    /// handoff is cancelled (no verdict, no document); a frozen one opens its review as it is.
    pub(super) fn abort_background_hooks(&mut self) {
        let Some(bg) = self.handoff.background() else {
            return;
        };
        let id = bg.id;
        match &bg.state {
            BgState::Vetting { .. } => self.cancel_background(id),
            BgState::Hooked { hooks, .. } => {
                hooks.abort();
                self.emit_logged(Event::Notice {
                    message: format!(
                        "{id}: the HandoffFrozen hooks were stopped; the document goes to its \
                         review as it is on disk"
                    ),
                });
                if let Some(mut bg) = self.handoff.take_background()
                    && let BgState::Hooked { frozen, .. } = bg.state
                {
                    bg.state = self.review_state(id, *frozen);
                    self.handoff.begin_background(bg);
                }
            }
            BgState::Writing { .. } | BgState::Frozen { .. } => {}
        }
    }

    /// `PreHandoff` let the background handoff `bg` go on: its writing request starts now, on the
    /// history it was cut at, with `focus`.
    fn write_after_vetting(&mut self, mut bg: Background, focus: Option<String>) {
        let prefix = bg
            .cut
            .split(&self.s.messages)
            .map(|(p, _)| p)
            .filter(|p| !p.is_empty());
        let Some(prefix) = prefix else {
            // The history changed under it (a rewind): nothing to write on.
            self.cancelled_in_background(bg.id);
            return;
        };
        bg.state = self.writing_state(bg.id, prefix, bg.ctx_at_cut, focus);
        self.handoff.begin_background(bg);
    }

    /// A `PreHandoff` hook refused the background handoff `id` (the ledger has it already):
    /// said, kept on disk, and no other starts in this turn.
    fn refused_in_background(&mut self, id: HandoffId, reason: &str) {
        tracing::info!(
            handoff = id.0,
            "background handoff refused by a PreHandoff hook"
        );
        self.emit_logged(Event::Notice {
            message: format!(
                "{id}: the background handoff was refused by a PreHandoff hook: {reason}"
            ),
        });
        self.save_manifest_if_any();
        self.cancelled_in_background(id);
    }

    /// The background handoff `id`, already taken out, is over without a document.
    fn cancelled_in_background(&mut self, id: HandoffId) {
        if let Some(turn) = self.turn.as_mut() {
            turn.background_cancelled = true;
        }
        self.emit_logged(Event::Handoff(HandoffPhase::Cancelled { handoff: id }));
    }
}
