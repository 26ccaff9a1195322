//! The runner's state: which handoff runs now (none, one in the main thread, or one beside it)
//! with the data each phase owns, the ids given out, the one channel the background tasks answer
//! on, and the test hook that hands off after N responses.
//!
//! A handoff in the main thread writes its document (the main thread waits), then freezes it,
//! waits for its review and starts the successor. A background handoff writes on a copy of the
//! history while the main thread works on; its document is frozen when the writing request
//! answers, reviewed, and turned over at the next message boundary. Both own the time they
//! started (the log's phase timings) and what the step's document lock cost them. A background
//! handoff with `PreHandoff` hooks waits for them before its writing request starts, and one with
//! `HandoffFrozen` hooks waits for them between the freeze and the review: both run as tasks
//! ([`super::tasks`]).

use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use super::tasks::{Attempt, BgReply};
use crate::engine::handoff::prompt::WritingPrompt;
use crate::engine::ledger::{Cut, FrozenHandoff};
use crate::engine::protocol::HandoffId;
use crate::engine::types::ModelRequest;

/// Every handoff of the run: the one in progress and what the runner keeps between them.
pub(in crate::engine::session) struct Handoffs {
    /// The last id given out (ids count from 1 in a run).
    last: u64,
    now: HandoffState,
    /// `--handoff-after N`: the one manual handoff it makes.
    hook: AfterHook,
    /// Where background writing requests and the background handoff's hooks send their result.
    results_tx: mpsc::UnboundedSender<BgReply>,
    results: mpsc::UnboundedReceiver<BgReply>,
}

/// Which handoff runs now, with what each phase owns.
enum HandoffState {
    /// No handoff runs.
    Idle,
    /// A handoff in the main thread: the turn (or the `/handoff` turn, or a reopened review)
    /// waits for it.
    Blocking(Blocking),
    /// A handoff beside the main thread.
    Background(Background),
}

/// A handoff in the main thread.
struct Blocking {
    id: HandoffId,
    started: Instant,
    stage: BlockingStage,
    /// What the step's document lock cost it so far.
    lock: Duration,
}

/// Where a handoff in the main thread stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BlockingStage {
    /// The writing request (or its rescue) runs: a second `/handoff` is refused.
    Writing,
    /// The document is there: frozen, reviewed, read back, turned over.
    Turnover,
}

/// A handoff running beside the main thread.
pub(in crate::engine::session) struct Background {
    pub(super) id: HandoffId,
    pub(super) started: Instant,
    /// The history its document is written on (the successor's briefing records the rest).
    pub(super) cut: Cut,
    pub(super) ctx_at_cut: u64,
    pub(super) state: BgState,
    /// What the step's document lock cost it so far.
    pub(super) lock: Duration,
}

/// Where a background handoff stands.
pub(super) enum BgState {
    /// Its `PreHandoff` hooks run as a task; the writing starts when they are done, with the
    /// step's `focus` and theirs.
    Vetting {
        hooks: AbortHandle,
        focus: Option<String>,
    },
    /// The writing request runs as a task.
    Writing {
        attempt: Attempt,
        task: AbortHandle,
        /// Why the full attempt failed (for a rescue).
        failure: Option<String>,
        /// A rescue's history had parts elided.
        reduced: bool,
        /// The retry with the short prompt, for a document that restated its instructions.
        short: ShortRetry,
    },
    /// The document is frozen (on disk, in the ledger); its `HandoffFrozen` hooks run as a task
    /// (they may edit the file) and its review opens when they are done.
    Hooked {
        frozen: Box<FrozenHandoff>,
        hooks: AbortHandle,
    },
    /// The document is frozen (on disk, in the ledger); the turnover waits for the review.
    Frozen {
        frozen: Box<FrozenHandoff>,
        review: ReviewState,
    },
}

/// A background writing request's retry with the short prompt.
pub(super) enum ShortRetry {
    /// Not sent yet: the request, ready.
    Ready(Box<ModelRequest>),
    /// The request running is the retry (its document answers the short prompt).
    Sent,
}

impl ShortRetry {
    /// The prompt of the request running.
    pub(super) fn prompt(&self) -> WritingPrompt {
        match self {
            ShortRetry::Ready(_) => WritingPrompt::Full,
            ShortRetry::Sent => WritingPrompt::Short,
        }
    }
}

/// Whether the review of a frozen background document is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReviewState {
    Open,
    Over,
}

/// `--handoff-after N` (a headless test hook): one manual handoff after N main-thread responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AfterHook {
    Off,
    After(u32),
    Fired,
}

impl Background {
    /// Frozen and reviewed: the turnover may happen.
    pub(in crate::engine::session) fn ready(&self) -> bool {
        matches!(
            self.state,
            BgState::Frozen {
                review: ReviewState::Over,
                ..
            }
        )
    }

    /// Its document is still being written (or its `PreHandoff` hooks run before that).
    pub(in crate::engine::session) fn writing(&self) -> bool {
        matches!(
            self.state,
            BgState::Writing { .. } | BgState::Vetting { .. }
        )
    }
}

impl BgState {
    /// Stop the task this state runs (the writing request, or the hooks with their process
    /// groups); a frozen document stays as it is.
    pub(super) fn abort(&self) {
        match self {
            BgState::Writing { task, .. } => task.abort(),
            BgState::Vetting { hooks, .. } | BgState::Hooked { hooks, .. } => hooks.abort(),
            BgState::Frozen { .. } => {}
        }
    }

    /// The document is frozen (its record is in the ledger).
    pub(super) fn frozen(&self) -> bool {
        matches!(self, BgState::Hooked { .. } | BgState::Frozen { .. })
    }
}

impl Handoffs {
    /// No handoff yet; `after`: the test hook's N.
    pub(in crate::engine::session) fn new(after: Option<u32>) -> Handoffs {
        let (results_tx, results) = mpsc::unbounded_channel();
        Handoffs {
            last: 0,
            now: HandoffState::Idle,
            hook: after.map_or(AfterHook::Off, AfterHook::After),
            results_tx,
            results,
        }
    }

    /// The next answer of a background task (cancel-safe: for `select!`).
    pub(in crate::engine::session) async fn next_reply(&mut self) -> Option<BgReply> {
        self.results.recv().await
    }

    /// An answer of a background task that is there already.
    pub(super) fn ready_reply(&mut self) -> Option<BgReply> {
        self.results.try_recv().ok()
    }

    /// Where the background tasks answer.
    pub(super) fn replies(&self) -> mpsc::UnboundedSender<BgReply> {
        self.results_tx.clone()
    }

    /// The next handoff's id.
    pub(super) fn next_id(&mut self) -> HandoffId {
        self.last += 1;
        HandoffId(self.last)
    }

    /// The last id given out.
    pub(super) fn last_id(&self) -> HandoffId {
        HandoffId(self.last)
    }

    /// Begin a handoff in the main thread at `stage`: its id.
    pub(super) fn begin_blocking(&mut self, stage: BlockingStage) -> HandoffId {
        let id = self.next_id();
        self.now = HandoffState::Blocking(Blocking {
            id,
            started: Instant::now(),
            stage,
            lock: Duration::ZERO,
        });
        id
    }

    /// The main thread's handoff moves on to `stage`.
    pub(super) fn set_stage(&mut self, stage: BlockingStage) {
        if let HandoffState::Blocking(b) = &mut self.now {
            b.stage = stage;
        }
    }

    /// Begin a handoff beside the main thread.
    pub(super) fn begin_background(&mut self, bg: Background) {
        self.now = HandoffState::Background(bg);
    }

    /// The handoff in progress is over (done, cancelled, dropped): its id and when it began.
    pub(super) fn end(&mut self) -> Option<(HandoffId, Instant)> {
        let clock = self.clock();
        self.now = HandoffState::Idle;
        clock
    }

    /// The handoff in progress and when it began (the log's phase timings).
    pub(in crate::engine::session) fn clock(&self) -> Option<(HandoffId, Instant)> {
        match &self.now {
            HandoffState::Idle => None,
            HandoffState::Blocking(b) => Some((b.id, b.started)),
            HandoffState::Background(bg) => Some((bg.id, bg.started)),
        }
    }

    /// The handoff whose document is being written now, if any.
    pub(in crate::engine::session) fn writing(&self) -> Option<HandoffId> {
        match &self.now {
            HandoffState::Blocking(b) if b.stage == BlockingStage::Writing => Some(b.id),
            HandoffState::Background(bg) if bg.writing() => Some(bg.id),
            _ => None,
        }
    }

    /// No handoff runs.
    pub(super) fn is_idle(&self) -> bool {
        matches!(self.now, HandoffState::Idle)
    }

    /// The handoff beside the main thread, if one runs.
    pub(in crate::engine::session) fn background(&self) -> Option<&Background> {
        match &self.now {
            HandoffState::Background(bg) => Some(bg),
            _ => None,
        }
    }

    pub(super) fn background_mut(&mut self) -> Option<&mut Background> {
        match &mut self.now {
            HandoffState::Background(bg) => Some(bg),
            _ => None,
        }
    }

    /// Take the background handoff out (it is over or dropped); the runner is idle then.
    pub(super) fn take_background(&mut self) -> Option<Background> {
        match std::mem::replace(&mut self.now, HandoffState::Idle) {
            HandoffState::Background(bg) => Some(bg),
            other => {
                self.now = other;
                None
            }
        }
    }

    /// A background handoff whose document is frozen and reviewed moves on to its turnover (the
    /// main thread's now, at a message boundary): its id and frozen record, for the successor.
    pub(super) fn take_ready(&mut self) -> Option<(HandoffId, FrozenHandoff)> {
        if !self.background().is_some_and(Background::ready) {
            return None;
        }
        let HandoffState::Background(bg) = std::mem::replace(&mut self.now, HandoffState::Idle)
        else {
            return None;
        };
        let BgState::Frozen { frozen, .. } = bg.state else {
            return None;
        };
        self.now = HandoffState::Blocking(Blocking {
            id: bg.id,
            started: bg.started,
            stage: BlockingStage::Turnover,
            lock: bg.lock,
        });
        Some((bg.id, *frozen))
    }

    /// The step's document lock cost the handoff in progress `d` more.
    pub(super) fn add_lock(&mut self, d: Duration) {
        match &mut self.now {
            HandoffState::Idle => {}
            HandoffState::Blocking(b) => b.lock += d,
            HandoffState::Background(bg) => bg.lock += d,
        }
    }

    /// What the document lock cost the handoff in progress (and from now on, nothing).
    pub(super) fn take_lock(&mut self) -> Duration {
        match &mut self.now {
            HandoffState::Idle => Duration::ZERO,
            HandoffState::Blocking(b) => std::mem::take(&mut b.lock),
            HandoffState::Background(bg) => std::mem::take(&mut bg.lock),
        }
    }

    /// The test hook's handoff is due: it has not fired, no background handoff runs, and the
    /// main thread has had `responses` responses, at least its N.
    pub(in crate::engine::session) fn hook_due(&self, responses: u32) -> bool {
        matches!(self.hook, AfterHook::After(n) if responses >= n) && self.background().is_none()
    }

    /// The test hook's handoff starts: it never fires again.
    pub(in crate::engine::session) fn hook_fired(&mut self) {
        self.hook = AfterHook::Fired;
    }
}
