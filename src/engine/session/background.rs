//! The handoff in the background: the writing request runs beside the main thread.
//!
//! When the context crosses the handoff line (after a main-thread response, or before a request),
//! the writing request starts on the *same prefix* the main thread's last request sent (system
//! prompt, tools, the history up to the cut, so the provider reads its prompt cache), as a task of
//! its own whose result comes back on `Engine.bg_rx`. Every place the engine waits (a stream or a
//! tool in [`Engine::abortable`], an approval, the idle loop) also listens there, so the document
//! is frozen, and its review opened, while the main thread keeps working. The review ends with
//! `Op::ReviewDone` (or at once without one); the turnover happens at the first message boundary
//! after that: before the next main-thread request, or at once when idle. The successor's briefing
//! then holds the document and the record of everything after the cut ([`super::tail`]).
//!
//! A failed writing request (an error after its retries, a stall, an overflow, a reply without the
//! required sections) runs once more on a reduced copy of the history ([`super::writing_request`]);
//! a document that restated its instructions is asked for once more with the short prompt, on
//! the same history ([`super::background_retry`]); only when that fails too is the degraded
//! document frozen. `Op::CancelHandoff` stops the writing only. When the main thread's context
//! reaches the window minus the writing reserve first, it waits for the document
//! ([`Engine::wait_background`]), as in blocking mode.
//!
//! The user's `PreHandoff` hooks run before the writing request starts and `HandoffFrozen` hooks
//! between the freeze and the review, each as a task beside the main thread
//! ([`super::background_hooks`]): the main thread never waits for them, but the writing waits
//! for the first and the review and the turnover for the second.

use std::time::{Duration, Instant};

use tokio::task::AbortHandle;

use super::Engine;
use super::handoff_run::WriteFailure;
use super::lifecycle::{Attempt, Background, BgReply, BgState, ReviewState, Written};
use super::request::Stop;
use super::turnover::{Produced, Why};
use super::writing_request::retry_failed;
use crate::engine::context::strategy::{Pressure, StrategyKind};
use crate::engine::handoff::HandoffDoc;
use crate::engine::handoff::prompt::WritingPrompt;
use crate::engine::ledger::{Cut, FrozenHandoff, HandoffCause, HandoffReason};
use crate::engine::policy::HandoffMode;
use crate::engine::protocol::{Event, ExitReason, HandoffId, HandoffPhase, Op};
use crate::engine::provider::retry::{StreamNotice, stream_with_retry};
use crate::engine::provider::{ErrorKind, ProviderError};
use crate::engine::types::{Delta, ModelRequest, ModelResponse};

/// Sends the writing task's result, or, if the task ends without one (a panic), a failure: a
/// wait for the document never hangs on a task that is gone. An aborted task's failure is stale
/// (its handoff is no longer the current one) and dropped.
struct Reply {
    tx: tokio::sync::mpsc::UnboundedSender<BgReply>,
    id: HandoffId,
    attempt: Attempt,
    number: u64,
    started: Instant,
    sent: bool,
}

impl Reply {
    fn send(mut self, result: Result<ModelResponse, ProviderError>) {
        self.sent = true;
        let _ = self.tx.send(BgReply::Written(Written {
            id: self.id,
            attempt: self.attempt,
            result,
            number: self.number,
            ms: self.started.elapsed().as_millis(),
        }));
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if !self.sent {
            let _ = self.tx.send(BgReply::Written(Written {
                id: self.id,
                attempt: self.attempt,
                result: Err(ProviderError::other(
                    "the writing request's task ended without an answer",
                )),
                number: self.number,
                ms: self.started.elapsed().as_millis(),
            }));
        }
    }
}

/// How a wait for the background document ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Settle {
    /// It is ready to turn over, or it is gone (cancelled).
    Ready,
    /// The running turn was aborted.
    Aborted,
    Shutdown,
}

impl Engine {
    /// The handoff line is crossed (the first strategy in force that is due is handoff's).
    fn handoff_is_due(&self) -> bool {
        let pressure = Pressure {
            ctx: self.ctx_estimate(),
            window: self.settings.thresholds.window,
            writing_turn: false,
            has_session_id: !self.s.is_none(),
        };
        self.run
            .strategies
            .iter()
            .find(|s| s.due(&pressure))
            .is_some_and(|s| s.kind() == StrategyKind::Handoff)
    }

    /// `max_generations` handoffs happened in this step: the next due one stops it.
    pub(super) fn breaker_reached(&self) -> bool {
        self.ledger.rec().map_or(0, |r| r.handoffs.len())
            >= self.run.handoff.max_generations as usize
    }

    /// The context at which the main thread waits for a background document: the window minus
    /// the writing reserve (the request's `max_tokens`).
    pub(super) fn hard_limit(&self) -> u64 {
        self.settings
            .thresholds
            .window
            .saturating_sub(u64::from(self.output_cap()))
    }

    /// Start the writing in the background if the line is crossed and nothing stops it. `cut`:
    /// the history the main thread's request saw (after a response) or will see (before one).
    /// Returns true when it started.
    pub(super) fn consider_background(&mut self, cut: Cut) -> bool {
        if self.run.handoff.mode != HandoffMode::Background
            || !self.handoff.is_idle()
            || self.background_cancelled()
            || self.breaker_reached()
            || !self.handoff_is_due()
        {
            return false;
        }
        self.start_background(cut)
    }

    fn start_background(&mut self, cut: Cut) -> bool {
        let Some((prefix, _)) = cut.split(&self.s.messages) else {
            return false;
        };
        if prefix.is_empty() {
            return false;
        }
        let id = self.handoff.next_id();
        let started = Instant::now();
        let used = self.ctx_estimate();
        tracing::info!(
            handoff = id.0,
            trigger = "background",
            session = %self.s.id,
            context = used,
            at = self.settings.thresholds.at,
            window = self.settings.thresholds.window,
            cut = cut.messages,
            "handoff started"
        );
        // The step's standing focus, as for every automatic handoff.
        let focus = self.handoff_focus(None);
        self.emit_logged(Event::Handoff(HandoffPhase::Writing {
            handoff: id,
            manual: false,
            focus: focus.clone(),
            background: true,
        }));
        // `PreHandoff` hooks first, off the engine task; the writing starts when they are done.
        let state = match self.vet_in_background(id, focus.clone()) {
            Some(hooks) => BgState::Vetting { hooks, focus },
            None => self.writing_state(id, prefix, used, focus),
        };
        self.handoff.begin_background(Background {
            id,
            started,
            cut,
            ctx_at_cut: used,
            state,
            lock: Duration::ZERO,
        });
        true
    }

    /// The writing request of the background handoff `id` starts on `prefix`, with `focus`.
    pub(super) fn writing_state(
        &mut self,
        id: HandoffId,
        prefix: Vec<crate::engine::types::Message>,
        used: u64,
        focus: Option<String>,
    ) -> BgState {
        let short = self.short_retry(&prefix, used, focus.as_deref());
        let req = self.writing_request(prefix, used, HandoffCause::Pressure, focus.as_deref());
        let task = self.spawn_writing(id, Attempt::Full, req);
        BgState::Writing {
            attempt: Attempt::Full,
            task,
            failure: None,
            reduced: false,
            short,
        }
    }

    /// Send a writing request from a task of its own; its result comes back on `bg_rx`. Its
    /// retries are said as notices (the main stream's `retry` events are the main thread's).
    pub(super) fn spawn_writing(
        &mut self,
        id: HandoffId,
        attempt: Attempt,
        req: ModelRequest,
    ) -> AbortHandle {
        self.counters.requests += 1;
        let number = self.counters.requests;
        tracing::debug!(
            request = number,
            purpose = "handoff",
            background = true,
            ?attempt,
            session = %self.s.id,
            messages = req.messages.len(),
            "request sent"
        );
        let provider = self.run.provider.client.clone();
        let policy = self.run.provider.retry;
        let reply = Reply {
            tx: self.handoff.results_tx.clone(),
            id,
            attempt,
            number,
            started: Instant::now(),
            sent: false,
        };
        let events = self.run.events.clone();
        let task = tokio::spawn(async move {
            let mut sink = |_: Delta| {};
            let mut on_notice = move |n: StreamNotice| match n {
                StreamNotice::Retry(n) => {
                    tracing::warn!(
                        request = number,
                        attempt = n.attempt,
                        delay_ms = n.delay.as_millis(),
                        "retrying the background writing request: {}",
                        n.reason
                    );
                    let _ = events.send(Event::Notice {
                        message: format!(
                            "{id}: the background writing request is retried ({}/{}) in {} ms: {}",
                            n.attempt,
                            n.max,
                            n.delay.as_millis(),
                            n.reason
                        ),
                    });
                }
                StreamNotice::Silent(d) => tracing::info!(
                    request = number,
                    silent_ms = d.as_millis(),
                    "background writing request silent"
                ),
                StreamNotice::Resumed | StreamNotice::ImagesLeftOut { .. } => {}
            };
            let result =
                stream_with_retry(&*provider, &req, &mut sink, &policy, &mut on_notice).await;
            reply.send(result);
        });
        task.abort_handle()
    }

    /// What a background handoff's task sent: a writing request's result, or its hooks' outcome.
    pub(super) fn on_background(&mut self, reply: BgReply) {
        match reply {
            BgReply::Written(w) => self.on_written(w),
            BgReply::Hooks { id, outcome } => self.on_background_hooks(id, outcome),
        }
    }

    /// A writing request's result: freeze the document, or rescue, or degrade. Stale results (a
    /// cancelled handoff's, an earlier attempt's) are dropped.
    fn on_written(&mut self, w: Written) {
        let current = self.handoff.background().and_then(|bg| match &bg.state {
            BgState::Writing {
                attempt,
                failure,
                reduced,
                short,
                ..
            } if bg.id == w.id && *attempt == w.attempt => {
                Some((bg.ctx_at_cut, failure.clone(), *reduced, short.prompt()))
            }
            _ => None,
        });
        let Some((used, failure, reduced, prompt)) = current else {
            tracing::debug!(handoff = w.id.0, "stale background writing result dropped");
            return;
        };
        match &w.result {
            Ok(resp) => tracing::info!(
                request = w.number,
                purpose = "handoff",
                background = true,
                ms = w.ms,
                input = resp.usage.input_tokens,
                cache_read = resp.usage.cache_read_input_tokens,
                cache_write = resp.usage.cache_creation_input_tokens,
                output = resp.usage.output_tokens,
                "request done"
            ),
            Err(e) => tracing::warn!(
                request = w.number,
                purpose = "handoff",
                background = true,
                ms = w.ms,
                kind = e.kind.as_str(),
                "request failed: {}",
                e.message
            ),
        }
        let outcome = match w.result {
            Ok(resp) => self.document_from(&resp, used, prompt),
            Err(e) => Err(WriteFailure::Provider(e)),
        };
        match (outcome, w.attempt) {
            (Err(WriteFailure::Restated(r)), _) if prompt == WritingPrompt::Full => {
                self.retry_background(r)
            }
            (Err(f), _) if prompt == WritingPrompt::Short => {
                self.degrade_background(retry_failed(&failure.unwrap_or_default(), &f))
            }
            (Ok(doc), Attempt::Full) => self.freeze_background(
                doc,
                Produced::WRITTEN,
                HandoffReason::clean(HandoffCause::Pressure),
            ),
            (Ok(doc), Attempt::Rescue) => self.freeze_background(
                doc,
                Produced::rescued(reduced),
                HandoffReason::after(HandoffCause::Pressure, failure.unwrap_or_default()),
            ),
            (Err(f), Attempt::Full) => self.rescue_background(f),
            (Err(f), Attempt::Rescue) => {
                let first = failure.unwrap_or_default();
                self.degrade_background(format!(
                    "{first}; the rescue on a reduced history failed too: {f}"
                ));
            }
        }
    }

    /// The first writing request failed: once more on a reduced copy of the prefix, or degraded.
    fn rescue_background(&mut self, first: WriteFailure) {
        let Some((id, cut, used)) = self
            .handoff
            .background()
            .map(|b| (b.id, b.cut, b.ctx_at_cut))
        else {
            return;
        };
        let error = match &first {
            WriteFailure::Provider(e) if e.kind == ErrorKind::ContextWindowExceeded => {
                if let Some(limit) = crate::engine::provider::error::overflow_limit(&e.message) {
                    self.learn_window(limit);
                }
                Some(e.clone())
            }
            _ => None,
        };
        let first = first.to_string();
        let prefix = cut
            .split(&self.s.messages)
            .map(|(p, _)| p)
            .unwrap_or_default();
        let focus = self.handoff_focus(None);
        let Some((req, reduced)) = self.reduced_writing_request(
            &prefix,
            used,
            HandoffCause::Pressure,
            focus.as_deref(),
            error.as_ref(),
        ) else {
            self.degrade_background(format!(
                "{first}; a reduced history does not fit the window either"
            ));
            return;
        };
        self.emit_logged(Event::Handoff(HandoffPhase::Rescuing {
            handoff: id,
            reason: first.clone(),
            stubbed: reduced.stubbed,
            dropped: reduced.dropped,
            background: true,
        }));
        let short = self.short_retry(&reduced.messages, used, focus.as_deref());
        let task = self.spawn_writing(id, Attempt::Rescue, req);
        if let Some(bg) = self.handoff.background_mut() {
            bg.state = BgState::Writing {
                attempt: Attempt::Rescue,
                task,
                failure: Some(first),
                reduced: !reduced.is_whole(),
                short,
            };
        }
    }

    pub(super) fn degrade_background(&mut self, reason: String) {
        let used = self.handoff.background().map_or(0, |b| b.ctx_at_cut);
        let mut doc = self.degraded_doc(&reason);
        doc.meta = Some(self.meta(used));
        let why = HandoffReason::after(HandoffCause::Pressure, reason);
        self.freeze_background(doc, Produced::DEGRADED, why);
    }

    /// Freeze the background document (the ledger's record first), run its `HandoffFrozen` hooks
    /// and open its review: the main thread goes on meanwhile.
    fn freeze_background(&mut self, doc: HandoffDoc, produced: Produced, reason: HandoffReason) {
        let Some((id, cut, ctx_at_cut)) = self
            .handoff
            .background()
            .map(|b| (b.id, b.cut, b.ctx_at_cut))
        else {
            return;
        };
        let why = Why::cause(HandoffCause::Pressure);
        let frozen = self.frozen_record(&doc, reason, ctx_at_cut, produced, Some(cut), why);
        let frozen = self.write_frozen(frozen);
        let state = match self.frozen_in_background(id, &frozen) {
            Some(hooks) => BgState::Hooked {
                frozen: Box::new(frozen),
                hooks,
            },
            None => self.review_state(id, frozen),
        };
        if let Some(bg) = self.handoff.background_mut() {
            bg.state = state;
        }
    }

    /// The frozen background document is shown (as on disk now) and its review opened.
    pub(super) fn review_state(&mut self, id: HandoffId, frozen: FrozenHandoff) -> BgState {
        let awaits = self.emit_frozen(id, &frozen, true);
        BgState::Frozen {
            frozen: Box::new(frozen),
            review: if awaits {
                ReviewState::Open
            } else {
                ReviewState::Over
            },
        }
    }

    /// The ops that belong to the background handoff: cancel, the review's end, kept edits.
    /// Anything for another handoff is stale.
    pub(super) fn background_op(&mut self, op: Op) {
        let Some(bg) = self.handoff.background_mut() else {
            return;
        };
        match op {
            Op::CancelHandoff { handoff } if handoff == bg.id => {
                if bg.writing() {
                    self.cancel_background(handoff);
                } else {
                    self.emit(Event::Notice {
                        message: format!(
                            "{handoff}: the document is written already; its review decides when the successor starts"
                        ),
                    });
                }
            }
            Op::ReviewDone { handoff } if handoff == bg.id => {
                if let BgState::Frozen { review, .. } = &mut bg.state {
                    *review = ReviewState::Over;
                }
            }
            Op::UnsavedEdits { handoff, path } if handoff == bg.id => {
                if let BgState::Frozen { frozen, .. } = &mut bg.state {
                    frozen.unsaved = Some(path.clone());
                }
                self.ledger.record(|rec| {
                    if let Some(f) = rec.frozen.as_mut() {
                        f.unsaved = Some(path);
                    }
                });
                self.save_manifest();
            }
            _ => {}
        }
    }

    /// `Op::CancelHandoff` while the document is written: the writing stops, the turn goes on,
    /// and no background handoff starts again in this turn.
    pub(super) fn cancel_background(&mut self, handoff: HandoffId) {
        if let Some(bg) = self.handoff.take_background() {
            bg.state.abort();
        }
        if let Some(turn) = self.turn.as_mut() {
            turn.background_cancelled = true;
        }
        tracing::info!(handoff = handoff.0, "background handoff cancelled");
        self.emit_logged(Event::Handoff(HandoffPhase::Cancelled { handoff }));
    }

    /// The user cancelled a background handoff during the running turn.
    pub(super) fn background_cancelled(&self) -> bool {
        self.turn.is_some_and(|t| t.background_cancelled)
    }

    /// At a message boundary: a reviewed background document becomes the successor's briefing.
    /// Returns true when a successor started.
    pub(super) fn turnover_if_ready(&mut self) -> bool {
        let Some((id, frozen)) = self.handoff.take_ready() else {
            return false;
        };
        self.commit_turnover(id, frozen);
        if let Some((id, started)) = self.handoff.end() {
            tracing::info!(
                handoff = id.0,
                ms = started.elapsed().as_millis(),
                "handoff ended: successor started"
            );
        }
        true
    }

    /// Wait until the background document is ready to turn over (or the handoff is gone).
    pub(super) async fn wait_background(&mut self) -> Settle {
        loop {
            if self.handoff.background().is_none_or(Background::ready) {
                return Settle::Ready;
            }
            tokio::select! {
                op = self.inbox.ops.recv() => match self.triage(op) {
                    Some(Stop::Abort) => return Settle::Aborted,
                    Some(Stop::Shutdown) => return Settle::Shutdown,
                    None => {}
                },
                Some(w) = self.handoff.results.recv() => self.on_background(w),
            }
        }
    }

    /// Before a main-thread request: the turnover if the document is ready; the wait for it if
    /// the context reached the hard limit first. Some(reason) when the turn must stop.
    pub(super) async fn background_boundary(&mut self) -> Option<ExitReason> {
        self.handoff.background()?;
        // What arrived while the last request or tool ran counts before this boundary: a review
        // that ended then turns over now, not one request later.
        while let Ok(w) = self.handoff.results.try_recv() {
            self.on_background(w);
        }
        while let Ok(op) = self.inbox.ops.try_recv() {
            if self.triage(Some(op)).is_some() {
                return Some(ExitReason::Interrupted);
            }
        }
        let (id, ready) = self.handoff.background().map(|bg| (bg.id, bg.ready()))?;
        if !ready {
            let (context, limit) = (self.ctx_estimate(), self.hard_limit());
            if context < limit {
                return None;
            }
            self.emit_logged(Event::Handoff(HandoffPhase::Waiting {
                handoff: id,
                context,
                limit,
            }));
            if self.wait_background().await != Settle::Ready {
                return Some(ExitReason::Interrupted);
            }
        }
        self.turnover_if_ready();
        None
    }

    /// Headless, quitting: nobody else will see the background handoff through, so finish it
    /// (the writing, the freeze, the turnover) before the engine stops. Ops are not read.
    pub(super) async fn settle_before_exit(&mut self) {
        if self.run.front_end.can_ask() {
            return;
        }
        while self.handoff.background().is_some_and(|b| !b.ready()) {
            match self.handoff.results.recv().await {
                Some(w) => self.on_background(w),
                None => break,
            }
        }
        self.turnover_if_ready();
    }

    /// `/new`: the background handoff is dropped (its frozen document stays on disk, unused).
    pub(super) fn drop_background(&mut self, why: &str) {
        let Some(bg) = self.handoff.take_background() else {
            return;
        };
        bg.state.abort();
        if bg.state.frozen() {
            self.ledger.record(|rec| rec.frozen = None);
        }
        self.save_manifest_if_any();
        self.emit(Event::Notice {
            message: format!("the background handoff ({}) was dropped: {why}", bg.id),
        });
        self.emit_logged(Event::Handoff(HandoffPhase::Cancelled { handoff: bg.id }));
    }

    /// Quitting: a writing request still running is dropped, hooks still running are killed.
    pub(super) fn abort_background_writing(&mut self) {
        if let Some(bg) = self.handoff.background() {
            bg.state.abort();
        }
    }
}
