//! A handoff as the TUI knows it: one written beside the main thread (its stage, since when, and
//! whether the main thread waits for it), and how a handoff in progress was started (which
//! decides the notice when it completes), and the generation whose near-handoff notice was shown.

use std::time::Instant;

use crate::engine::protocol::HandoffId;

use super::keymap::{Action, short_label_for};

/// A handoff written beside the main thread (the turn goes on meanwhile), as far as the UI knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BackgroundHandoff {
    /// The engine's id for it (`Op::CancelHandoff` names it).
    pub(crate) handoff: HandoffId,
    /// When its current stage began.
    pub(crate) since: Instant,
    pub(crate) stage: BackgroundStage,
    /// Since when the main thread waits for it: its context reached the window minus the reserve.
    pub(crate) main_waits: Option<Instant>,
}

/// Where a background handoff stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BackgroundStage {
    /// The writing request runs.
    Writing,
    /// It runs again, on a reduced history, after the first one failed.
    Rescuing,
    /// The document is frozen; its review decides when the successor starts.
    Review,
}

impl BackgroundHandoff {
    /// Its document is still being written (Esc / Ctrl-G cancels that).
    pub(crate) fn writing(&self) -> bool {
        matches!(
            self.stage,
            BackgroundStage::Writing | BackgroundStage::Rescuing
        )
    }
}

/// How a handoff in progress was started: decides the notice when it completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HandoffKind {
    /// `/handoff`.
    Manual,
    /// The context reached the handoff line.
    Automatic,
}

/// The handoffs as the TUI knows them: the one in progress, the one beside the main thread, and
/// the generation whose near-handoff notice was shown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Handoffs {
    /// How the handoff in progress was started, if one is.
    kind: Option<HandoffKind>,
    /// The handoff running beside the main thread, if any.
    background: Option<BackgroundHandoff>,
    /// The generation whose near-handoff notice was shown.
    near_noticed: Option<u32>,
}

impl Handoffs {
    /// How the handoff in progress was started.
    pub(crate) fn kind(&self) -> Option<HandoffKind> {
        self.kind
    }

    /// The handoff beside the main thread, if any.
    pub(crate) fn background(&self) -> Option<BackgroundHandoff> {
        self.background
    }

    /// The handoff beside the main thread while its document is still being written.
    pub(crate) fn writing_in_background(&self) -> Option<BackgroundHandoff> {
        self.background.filter(BackgroundHandoff::writing)
    }

    /// The background handoff's spinner line, while its document is written.
    pub(crate) fn spinner(&self) -> Option<(String, Instant, String)> {
        let bg = self.writing_in_background()?;
        let label = match bg.stage {
            BackgroundStage::Rescuing => "rewriting the handoff from a reduced history…",
            _ => "writing the handoff in the background…",
        };
        // Esc cancels it before it interrupts the main turn.
        let key = short_label_for(Action::Abort);
        Some((label.into(), bg.since, format!("{key} to cancel it")))
    }

    /// The context is near the handoff line in `generation`: true the first time (the notice
    /// is shown once a generation).
    pub(crate) fn near(&mut self, generation: u32) -> bool {
        if self.near_noticed == Some(generation) {
            return false;
        }
        self.near_noticed = Some(generation);
        true
    }

    /// The main thread's handoff is being written (`/handoff` when `manual`).
    pub(crate) fn writing(&mut self, manual: bool) {
        self.kind = Some(if manual {
            HandoffKind::Manual
        } else {
            HandoffKind::Automatic
        });
    }

    /// The main thread's handoff ended without a successor (cancelled, failed).
    pub(crate) fn ended(&mut self) {
        self.kind = None;
    }

    /// A handoff is written beside the main thread from `now`.
    pub(crate) fn background_writing(&mut self, handoff: HandoffId, now: Instant) {
        self.background = Some(BackgroundHandoff {
            handoff,
            since: now,
            stage: BackgroundStage::Writing,
            main_waits: None,
        });
    }

    /// The background handoff `handoff` reached `stage` at `now` (nothing when another one runs).
    pub(crate) fn background_stage(
        &mut self,
        handoff: HandoffId,
        stage: BackgroundStage,
        now: Instant,
    ) {
        if let Some(bg) = self.background.as_mut().filter(|b| b.handoff == handoff) {
            bg.stage = stage;
            bg.since = now;
        }
    }

    /// The main thread waits for the background handoff `handoff` from `now`: its stage, or
    /// `None` when no such handoff runs.
    pub(crate) fn main_waits(
        &mut self,
        handoff: HandoffId,
        now: Instant,
    ) -> Option<BackgroundStage> {
        let bg = self.background.as_mut().filter(|b| b.handoff == handoff)?;
        bg.main_waits = Some(now);
        Some(bg.stage)
    }

    /// The background handoff `handoff` was cancelled: false when it is not the one beside the
    /// main thread.
    pub(crate) fn background_cancelled(&mut self, handoff: HandoffId) -> bool {
        if self.background.is_some_and(|b| b.handoff == handoff) {
            self.background = None;
            return true;
        }
        false
    }

    /// A successor started: the handoff is over; returns how it was started.
    pub(crate) fn done(&mut self) -> Option<HandoffKind> {
        self.background = None;
        self.kind.take()
    }
}
