//! The generation turnover and in-place compaction.

use super::Engine;
use super::hook_ops::Gate;
use super::lifecycle::BlockingStage;
use super::request::{Outcome, Purpose};
use super::turnover::{Produced, Turnover, Why};
use crate::engine::compact::{self, CompactError};
use crate::engine::context;
use crate::engine::error::Error;
use crate::engine::fsutil::{minute_stamp, now_unix};
use crate::engine::handoff::document::DegradedParams;
use crate::engine::handoff::echo::Restated;
use crate::engine::handoff::{HandoffDoc, HandoffMeta};
use crate::engine::ledger::{HandoffCause, HandoffReason};
use crate::engine::protocol::{
    CompactionTrigger, Event, ExitReason, HandoffId, HandoffPhase, HandoffRefusal, TurnId, TurnKind,
};
use crate::engine::provider::{ErrorKind, ProviderError};
use crate::engine::types::{Message, ModelRequest, ToolChoice};

/// What started a handoff.
#[derive(Debug, Clone)]
pub(crate) enum Trigger {
    /// `ctx >= at` before a request.
    Auto,
    /// `/handoff [focus]`.
    Manual { focus: Option<String> },
    /// `ContextWindowExceeded` on a main-thread request: the writing turn on a reduced copy of
    /// the history (the rescue), else a degraded document.
    Overflow {
        reason: String,
        error: ProviderError,
    },
}

impl Trigger {
    /// Why the handoff happens, as the prompt, the briefing and the ledger say it.
    fn why(&self) -> Why {
        match self {
            Trigger::Auto => Why::cause(HandoffCause::Pressure),
            Trigger::Manual { focus } => Why {
                cause: HandoffCause::Manual,
                focus: focus
                    .as_deref()
                    .map(str::trim)
                    .filter(|f| !f.is_empty())
                    .map(str::to_string),
            },
            Trigger::Overflow { .. } => Why::cause(HandoffCause::Overflow),
        }
    }
}

pub(crate) enum HandoffOutcome {
    /// A successor session is running.
    Done,
    /// The session is unchanged: a manual handoff failed.
    Unchanged,
    /// The session is unchanged: Esc during a manual handoff.
    Cancelled,
    /// The turn must stop (breaker, shutdown, user abort during an automatic handoff).
    Stopped(ExitReason),
}

impl Engine {
    /// `Op::Handoff` when idle: the guard, then the same path as the automatic handoff.
    pub(crate) async fn manual_handoff(&mut self, id: TurnId, focus: Option<String>) {
        if !self.ledger.has_step() || self.s.messages.len() < 2 {
            self.refuse_handoff(id, HandoffRefusal::NoMessages);
            return;
        }
        if let Some(bg) = self.handoff.background() {
            let reason = if bg.writing() {
                HandoffRefusal::AlreadyWriting
            } else {
                HandoffRefusal::Reviewing
            };
            self.refuse_handoff(id, reason);
            return;
        }
        let turn = self.begin_turn(id, TurnKind::Handoff);
        let reason = match self.handoff(Trigger::Manual { focus }).await {
            // The front end says "New session started with handoff context" on `Done`.
            HandoffOutcome::Done => ExitReason::Handoff,
            HandoffOutcome::Unchanged => ExitReason::Unchanged,
            HandoffOutcome::Cancelled => ExitReason::Interrupted,
            HandoffOutcome::Stopped(r) => {
                // The breaker (its error is already shown) or quitting: the session is unchanged.
                if !self.inbox.shutdown {
                    self.emit(Event::Handoff(HandoffPhase::Failed {
                        // The id `handoff()` gave the attempt the breaker stopped.
                        handoff: self.handoff.last_id(),
                        message: "the handoff breaker stopped it (see the error above)".into(),
                    }));
                }
                r
            }
        };
        self.turn = None;
        self.end_turn(turn, reason);
    }

    /// Cut, write (or assemble) the document, freeze it, wait for the review, start the successor.
    /// Logged with its trigger, each phase's time since the start, and how it ended.
    pub(crate) async fn handoff(&mut self, trigger: Trigger) -> HandoffOutcome {
        let id = self.handoff.begin_blocking(BlockingStage::Writing);
        let started = std::time::Instant::now();
        tracing::info!(
            handoff = id.0,
            trigger = trigger.why().cause.as_str(),
            session = %self.s.id,
            context = self.ctx_estimate(),
            at = self.settings.thresholds.at,
            window = self.settings.thresholds.window,
            "handoff started"
        );
        let outcome = self.run_handoff(id, trigger).await;
        self.handoff.end();
        let ended = match &outcome {
            HandoffOutcome::Done => "successor started".to_string(),
            HandoffOutcome::Unchanged => "failed; session unchanged".to_string(),
            HandoffOutcome::Cancelled => "cancelled; session unchanged".to_string(),
            HandoffOutcome::Stopped(r) => format!("stopped the turn: {r}"),
        };
        tracing::info!(
            handoff = id.0,
            ms = started.elapsed().as_millis(),
            "handoff ended: {ended}"
        );
        outcome
    }

    async fn run_handoff(&mut self, id: HandoffId, trigger: Trigger) -> HandoffOutcome {
        let done = self.ledger.rec().map_or(0, |r| r.handoffs.len());
        if done >= self.run.handoff.max_generations as usize {
            let reason = self.fail(&Error::HandoffBreaker {
                max: self.run.handoff.max_generations,
                at: self.settings.thresholds.at,
            });
            self.save_manifest();
            return HandoffOutcome::Stopped(reason);
        }
        let ctx_at_cut = self.ctx_estimate();
        let why = trigger.why();
        let cause = why.cause;
        let written = match &trigger {
            Trigger::Overflow { reason, error } => {
                self.overflow_document(id, ctx_at_cut, reason, error).await
            }
            Trigger::Auto => self.written_document(id, ctx_at_cut, None, cause).await,
            Trigger::Manual { focus } => {
                self.written_document(id, ctx_at_cut, Some(focus.clone()), cause)
                    .await
            }
        };
        self.handoff.set_stage(BlockingStage::Turnover);
        let (doc, reason, produced) = match written {
            Ok(document) => document,
            Err(outcome) => return outcome,
        };
        if self.inbox.shutdown {
            // Quitting: do not archive a good document or start a successor on the way out.
            return HandoffOutcome::Stopped(ExitReason::Interrupted);
        }
        match self
            .turn_over(id, doc, reason, ctx_at_cut, produced, why)
            .await
        {
            Turnover::Done if !self.inbox.shutdown => HandoffOutcome::Done,
            // Quitting during the review: the turnover is not committed; the frozen record in the
            // ledger reopens the review at the next start.
            Turnover::Done | Turnover::NotCommitted => {
                HandoffOutcome::Stopped(ExitReason::Interrupted)
            }
        }
    }

    /// After a main-thread overflow: the writing turn on a reduced copy of the history (the
    /// rescue), else the degraded document. `reason`: the overflow, in words.
    async fn overflow_document(
        &mut self,
        id: HandoffId,
        ctx_at_cut: u64,
        reason: &str,
        error: &ProviderError,
    ) -> Result<(HandoffDoc, HandoffReason, Produced), HandoffOutcome> {
        // The rescue writes the document an automatic handoff would: the standing focus.
        let focus = self.handoff_focus(None);
        let rescued = self
            .rescue_turn(
                id,
                ctx_at_cut,
                HandoffCause::Overflow,
                focus.as_deref(),
                reason,
                Some(error),
            )
            .await;
        match rescued {
            Ok((doc, reduced)) => Ok((
                doc,
                HandoffReason::after(HandoffCause::Overflow, reason),
                Produced::rescued(reduced),
            )),
            Err(WriteFailure::Aborted) => {
                self.emit_logged(Event::Handoff(HandoffPhase::Cancelled { handoff: id }));
                Err(HandoffOutcome::Stopped(ExitReason::Interrupted))
            }
            Err(f) => {
                let why = format!("{reason}; the rescue failed: {f}");
                let doc = self.degraded_doc(&why);
                Ok((
                    doc,
                    HandoffReason::after(HandoffCause::Overflow, why),
                    Produced::DEGRADED,
                ))
            }
        }
    }

    /// An automatic (`manual: None`) or manual handoff's document: the writing turn, once more
    /// on a reduced copy when its request overflows. A manual one that fails leaves the session
    /// unchanged; an automatic one degrades.
    async fn written_document(
        &mut self,
        id: HandoffId,
        ctx_at_cut: u64,
        manual: Option<Option<String>>,
        cause: HandoffCause,
    ) -> Result<(HandoffDoc, HandoffReason, Produced), HandoffOutcome> {
        let trigger = match manual {
            Some(_) => HandoffCause::Manual,
            None => HandoffCause::Pressure,
        };
        let focus = self.handoff_focus(manual.flatten());
        let focus = match self
            .pre_handoff_hooks(trigger == HandoffCause::Manual, focus)
            .await
        {
            Gate::Go(focus) => focus,
            Gate::Blocked(reason) => {
                self.emit_logged(Event::Handoff(HandoffPhase::Failed {
                    handoff: id,
                    message: format!("refused by a PreHandoff hook: {reason}"),
                }));
                self.save_manifest();
                return Err(HandoffOutcome::Unchanged);
            }
            Gate::Aborted => {
                self.emit_logged(Event::Handoff(HandoffPhase::Cancelled { handoff: id }));
                return Err(HandoffOutcome::Stopped(ExitReason::Interrupted));
            }
        };
        let mut written = self
            .writing_turn(id, ctx_at_cut, focus.clone(), cause)
            .await
            .map(|d| (d, Produced::WRITTEN));
        if let Err(WriteFailure::Provider(e)) = &written
            && e.kind == ErrorKind::ContextWindowExceeded
        {
            // The writing request itself overflowed: once more on a reduced copy.
            let e = e.clone();
            if let Some(limit) = crate::engine::provider::error::overflow_limit(&e.message) {
                self.learn_window(limit);
            }
            let reason = format!("the writing request overflowed: {}", e.message);
            written = self
                .rescue_turn(id, ctx_at_cut, cause, focus.as_deref(), &reason, Some(&e))
                .await
                .map(|(d, reduced)| (d, Produced::rescued(reduced)))
                .map_err(|f| match f {
                    WriteFailure::Aborted => WriteFailure::Aborted,
                    f => WriteFailure::Rescue(format!("{reason}; the rescue failed: {f}")),
                });
        }
        match (written, trigger) {
            (Ok((doc, produced)), _) => Ok((doc, HandoffReason::clean(trigger), produced)),
            (Err(WriteFailure::Aborted), HandoffCause::Manual) => {
                self.emit_logged(Event::Handoff(HandoffPhase::Cancelled { handoff: id }));
                Err(if self.inbox.shutdown {
                    HandoffOutcome::Stopped(ExitReason::Interrupted)
                } else {
                    HandoffOutcome::Cancelled
                })
            }
            (Err(f), HandoffCause::Manual) => {
                self.emit_logged(Event::Handoff(HandoffPhase::Failed {
                    handoff: id,
                    message: f.to_string(),
                }));
                Err(HandoffOutcome::Unchanged)
            }
            (Err(WriteFailure::Aborted), _) => {
                // Esc aborts the handoff being generated: the session stays as it was and the
                // turn ends; the due check fires again on the next request.
                self.emit_logged(Event::Handoff(HandoffPhase::Cancelled { handoff: id }));
                Err(HandoffOutcome::Stopped(ExitReason::Interrupted))
            }
            (Err(f), _) => {
                let why = f.to_string();
                let doc = self.degraded_doc(&why);
                Ok((doc, HandoffReason::after(trigger, why), Produced::DEGRADED))
            }
        }
    }

    /// The mechanical (degraded) document, written without the model: it names the request in progress and carries
    /// forward what the document this generation was briefed with had settled.
    pub(super) fn degraded_doc(&mut self, reason: &str) -> HandoffDoc {
        let (task, touched) = self
            .ledger
            .rec()
            .map(|r| (r.task.clone(), r.touched.clone()))
            .unwrap_or_default();
        let request = self.s.request.in_flight();
        let mut doc = HandoffDoc::degraded_from(DegradedParams {
            reason,
            task: &task,
            request: &request,
            touched: &touched,
            previous: self.s.briefed.as_ref(),
            meta: None,
        });
        doc.meta = Some(self.meta(self.ctx_estimate()));
        doc
    }

    pub(super) fn meta(&self, used: u64) -> HandoffMeta {
        HandoffMeta {
            step: self.ledger.step_name(),
            generation: self.s.generation,
            used,
            window: self.settings.thresholds.window,
            time: minute_stamp(now_unix().0),
        }
    }

    /// The writing turn: the same session, one more request with the handoff prompt, tool use off
    /// (and once more with the short prompt if the document restated its instructions).
    async fn writing_turn(
        &mut self,
        handoff: HandoffId,
        used: u64,
        focus: Option<String>,
        cause: HandoffCause,
    ) -> Result<HandoffDoc, WriteFailure> {
        self.emit_logged(Event::Handoff(HandoffPhase::Writing {
            handoff,
            manual: cause == HandoffCause::Manual,
            focus: focus.clone(),
            background: false,
        }));
        let history = self.s.messages.clone();
        self.write_document(handoff, &history, used, cause, focus.as_deref())
            .await
    }

    /// In-place compaction. Ok(true) when the history was replaced.
    pub(crate) async fn compact(
        &mut self,
        trigger: CompactionTrigger,
    ) -> Result<bool, CompactFailure> {
        let before = self.ctx_estimate();
        let total_chars: usize = self.s.messages.iter().map(Message::char_len).sum();
        // Scale per-message estimates so they add up to the reported ctx.
        let scale = if total_chars == 0 {
            1.0
        } else {
            before.max(1) as f64 / context::estimate_tokens(total_chars).max(1) as f64
        };
        let token_of =
            |m: &Message| (context::estimate_tokens(m.char_len()) as f64 * scale).ceil() as u64;
        let Some(plan) = compact::plan(
            &self.s.messages,
            token_of,
            compact::KEEP_FRACTION,
            self.ledger.compactions == 0,
        ) else {
            return Err(CompactError::NothingToSummarise.into());
        };
        let req = ModelRequest {
            model: self.settings.model.clone(),
            system: compact::SUMMARY_SYSTEM.to_string(),
            messages: vec![Message::user(compact::summary_request(
                self.s
                    .messages
                    .get(plan.summarize.clone())
                    .unwrap_or_default(),
            ))],
            tools: Vec::new(),
            tool_choice: ToolChoice::Auto,
            max_tokens: self.output_cap(),
            effort: None,
        };
        let resp = match self.stream(req, Purpose::Summary).await {
            Outcome::Done(r) => r,
            Outcome::Aborted { .. } => return Err(CompactFailure::Aborted),
            Outcome::Failed { error, .. } => return Err(CompactFailure::Failed(error.into())),
        };
        self.add_cost(crate::engine::pricing::cost_usd(
            &self.settings.model,
            &resp.usage,
        ));
        let summary = compact::summary_message(&resp.text())?;
        if !compact::apply(&mut self.s.messages, &plan, summary) {
            return Err(CompactError::HistoryChanged.into());
        }
        self.s.replaced();
        self.ledger.compactions += 1;
        self.ledger.record(|rec| rec.compactions += 1);
        self.save_manifest();
        self.commit_replacement();
        let after = self.ctx_estimate();
        self.emit_logged(Event::Compaction {
            before,
            after,
            trigger,
        });
        self.emit_usage_estimate();
        Ok(true)
    }
}

/// Why a compaction did not replace the history.
#[derive(Debug)]
pub(crate) enum CompactFailure {
    /// Esc or shutdown: the turn stops.
    Aborted,
    Failed(Error),
}

impl From<CompactError> for CompactFailure {
    fn from(e: CompactError) -> Self {
        CompactFailure::Failed(e.into())
    }
}

/// Why the writing turn produced no document.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WriteFailure {
    #[error("aborted")]
    Aborted,
    #[error("no text captured")]
    Empty,
    #[error("missing required sections: {0}")]
    Missing(String),
    /// A section is mostly the prompt's own wording, or a required one has no words of its own.
    #[error(transparent)]
    Restated(Restated),
    /// The retry with the short prompt failed too (both failures, in full).
    #[error("{0}")]
    Retried(String),
    #[error(transparent)]
    Provider(ProviderError),
    /// No reduced copy of the history fits the window.
    #[error("a reduced history does not fit the window either")]
    NoFit,
    /// The rescue after an overflow failed (what happened, in full).
    #[error("{0}")]
    Rescue(String),
}
