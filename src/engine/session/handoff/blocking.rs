//! The handoff in the main thread: the turn (or the `/handoff` turn) waits while the document is
//! written, then it is frozen, reviewed and turned over. An automatic handoff that cannot write
//! its document degrades; a manual one that fails leaves the session unchanged. After a
//! main-thread overflow the document is written on a reduced copy of the history (the rescue),
//! else degraded. Each handoff is logged with its trigger, each phase's time since its start,
//! and how it ended.

use super::background::breaker_reached;
use super::context::HandoffCx;
use super::degraded::degraded_doc;
use super::freeze::{Produced, Why};
use super::phases::BlockingStage;
use super::turnover::{Turnover, turn_over};
use super::writing::{WriteFailure, rescue_turn, write_document};
use crate::engine::error::Error;
use crate::engine::handoff::HandoffDoc;
use crate::engine::ledger::{HandoffCause, HandoffReason};
use crate::engine::protocol::{
    Event, ExitReason, HandoffId, HandoffPhase, HandoffRefusal, TurnId, TurnKind,
};
use crate::engine::provider::{ErrorKind, ProviderError};
use crate::engine::session::user_hooks::Gate;

/// What started a handoff.
#[derive(Debug, Clone)]
pub(in crate::engine::session) enum Trigger {
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

/// How a handoff in the main thread ended.
pub(in crate::engine::session) enum HandoffOutcome {
    /// A successor session is running.
    Done,
    /// The session is unchanged: a manual handoff failed.
    Unchanged,
    /// The session is unchanged: Esc during a manual handoff.
    Cancelled,
    /// The turn must stop (breaker, shutdown, user abort during an automatic handoff).
    Stopped(ExitReason),
}

/// A document, why it was made and how; or how the handoff ends without one.
type Written = Result<(HandoffDoc, HandoffReason, Produced), HandoffOutcome>;

/// `Op::Handoff` when idle: the guard, then the same path as the automatic handoff, as a turn
/// of its own.
pub(in crate::engine::session) async fn manual(
    cx: &mut impl HandoffCx,
    id: TurnId,
    focus: Option<String>,
) {
    if !cx.ledger().has_step() || cx.conv().messages.len() < 2 {
        cx.refuse_handoff(id, HandoffRefusal::NoMessages);
        return;
    }
    if let Some(bg) = cx.handoffs().background() {
        let reason = if bg.writing() {
            HandoffRefusal::AlreadyWriting
        } else {
            HandoffRefusal::Reviewing
        };
        cx.refuse_handoff(id, reason);
        return;
    }
    let turn = cx.begin_turn(id, TurnKind::Handoff);
    let reason = match run(cx, Trigger::Manual { focus }).await {
        // The front end says "New session started with handoff context" on `Done`.
        HandoffOutcome::Done => ExitReason::Handoff,
        HandoffOutcome::Unchanged => ExitReason::Unchanged,
        HandoffOutcome::Cancelled => ExitReason::Interrupted,
        HandoffOutcome::Stopped(r) => {
            // The breaker (its error is already shown) or quitting: the session is unchanged.
            if !cx.shutting_down() {
                // The id `run` gave the attempt the breaker stopped.
                let handoff = cx.handoffs().last_id();
                cx.emit(Event::Handoff(HandoffPhase::Failed {
                    handoff,
                    message: "the handoff breaker stopped it (see the error above)".into(),
                }));
            }
            r
        }
    };
    cx.close_turn(turn, reason);
}

/// Cut, write (or assemble) the document, freeze it, wait for the review, start the successor.
/// Logged with its trigger, each phase's time since the start, and how it ended.
pub(in crate::engine::session) async fn run(
    cx: &mut impl HandoffCx,
    trigger: Trigger,
) -> HandoffOutcome {
    let id = cx.handoffs().begin_blocking(BlockingStage::Writing);
    let started = std::time::Instant::now();
    let (context, thresholds) = (cx.ctx(), cx.settings().thresholds);
    tracing::info!(
        handoff = id.0,
        trigger = trigger.why().cause.as_str(),
        session = %cx.conv().id,
        context,
        at = thresholds.at,
        window = thresholds.window,
        "handoff started"
    );
    let outcome = write_and_turn_over(cx, id, trigger).await;
    cx.handoffs().end();
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

async fn write_and_turn_over(
    cx: &mut impl HandoffCx,
    id: HandoffId,
    trigger: Trigger,
) -> HandoffOutcome {
    if breaker_reached(cx) {
        let max = cx.params().max_generations;
        let at = cx.settings().thresholds.at;
        let reason = cx.fail(&Error::HandoffBreaker { max, at });
        cx.save_manifest();
        return HandoffOutcome::Stopped(reason);
    }
    let ctx_at_cut = cx.ctx();
    let why = trigger.why();
    let cause = why.cause;
    let written = match &trigger {
        Trigger::Overflow { reason, error } => {
            overflow_document(cx, id, ctx_at_cut, reason, error).await
        }
        Trigger::Auto => written_document(cx, id, ctx_at_cut, None, cause).await,
        Trigger::Manual { focus } => {
            written_document(cx, id, ctx_at_cut, Some(focus.clone()), cause).await
        }
    };
    cx.handoffs().set_stage(BlockingStage::Turnover);
    let (doc, reason, produced) = match written {
        Ok(document) => document,
        Err(outcome) => return outcome,
    };
    if cx.shutting_down() {
        // Quitting: do not archive a good document or start a successor on the way out.
        return HandoffOutcome::Stopped(ExitReason::Interrupted);
    }
    match turn_over(cx, id, doc, reason, ctx_at_cut, produced, why).await {
        Turnover::Done if !cx.shutting_down() => HandoffOutcome::Done,
        // Quitting during the review: the turnover is not committed; the frozen record in the
        // ledger reopens the review at the next start.
        Turnover::Done | Turnover::NotCommitted => HandoffOutcome::Stopped(ExitReason::Interrupted),
    }
}

/// After a main-thread overflow: the writing turn on a reduced copy of the history (the
/// rescue), else the degraded document. `reason`: the overflow, in words.
async fn overflow_document(
    cx: &mut impl HandoffCx,
    id: HandoffId,
    ctx_at_cut: u64,
    reason: &str,
    error: &ProviderError,
) -> Written {
    // The rescue writes the document an automatic handoff would: the standing focus.
    let focus = cx.focus(None);
    let cause = HandoffCause::Overflow;
    let rescued = rescue_turn(
        cx,
        id,
        ctx_at_cut,
        cause,
        focus.as_deref(),
        reason,
        Some(error),
    )
    .await;
    match rescued {
        Ok((doc, reduced)) => Ok((
            doc,
            HandoffReason::after(cause, reason),
            Produced::rescued(reduced),
        )),
        Err(WriteFailure::Aborted) => {
            cx.emit_logged(Event::Handoff(HandoffPhase::Cancelled { handoff: id }));
            Err(HandoffOutcome::Stopped(ExitReason::Interrupted))
        }
        Err(f) => {
            let why = format!("{reason}; the rescue failed: {f}");
            let used = cx.ctx();
            let doc = degraded_doc(cx, &why, used);
            Ok((doc, HandoffReason::after(cause, why), Produced::DEGRADED))
        }
    }
}

/// An automatic (`manual: None`) or manual handoff's document: the writing turn, once more
/// on a reduced copy when its request overflows. A manual one that fails leaves the session
/// unchanged; an automatic one degrades.
async fn written_document(
    cx: &mut impl HandoffCx,
    id: HandoffId,
    ctx_at_cut: u64,
    manual: Option<Option<String>>,
    cause: HandoffCause,
) -> Written {
    let trigger = match manual {
        Some(_) => HandoffCause::Manual,
        None => HandoffCause::Pressure,
    };
    let focus = cx.focus(manual.flatten());
    let focus = match cx.pre_handoff(trigger == HandoffCause::Manual, focus).await {
        Gate::Go(focus) => focus,
        Gate::Blocked(reason) => {
            cx.emit_logged(Event::Handoff(HandoffPhase::Failed {
                handoff: id,
                message: format!("refused by a PreHandoff hook: {reason}"),
            }));
            cx.save_manifest();
            return Err(HandoffOutcome::Unchanged);
        }
        Gate::Aborted => {
            cx.emit_logged(Event::Handoff(HandoffPhase::Cancelled { handoff: id }));
            return Err(HandoffOutcome::Stopped(ExitReason::Interrupted));
        }
    };
    cx.emit_logged(Event::Handoff(HandoffPhase::Writing {
        handoff: id,
        manual: cause == HandoffCause::Manual,
        focus: focus.clone(),
        background: false,
    }));
    let history = cx.conv().messages.clone();
    let mut written = write_document(cx, id, &history, ctx_at_cut, cause, focus.as_deref())
        .await
        .map(|d| (d, Produced::WRITTEN));
    if let Err(WriteFailure::Provider(e)) = &written
        && e.kind == ErrorKind::ContextWindowExceeded
    {
        // The writing request itself overflowed: once more on a reduced copy.
        let e = e.clone();
        if let Some(limit) = crate::engine::provider::error::overflow_limit(&e.message) {
            cx.learn_window(limit);
        }
        let reason = format!("the writing request overflowed: {}", e.message);
        written = rescue_turn(
            cx,
            id,
            ctx_at_cut,
            cause,
            focus.as_deref(),
            &reason,
            Some(&e),
        )
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
            cx.emit_logged(Event::Handoff(HandoffPhase::Cancelled { handoff: id }));
            Err(if cx.shutting_down() {
                HandoffOutcome::Stopped(ExitReason::Interrupted)
            } else {
                HandoffOutcome::Cancelled
            })
        }
        (Err(f), HandoffCause::Manual) => {
            cx.emit_logged(Event::Handoff(HandoffPhase::Failed {
                handoff: id,
                message: f.to_string(),
            }));
            Err(HandoffOutcome::Unchanged)
        }
        (Err(WriteFailure::Aborted), _) => {
            // Esc aborts the handoff being generated: the session stays as it was and the
            // turn ends; the due check fires again on the next request.
            cx.emit_logged(Event::Handoff(HandoffPhase::Cancelled { handoff: id }));
            Err(HandoffOutcome::Stopped(ExitReason::Interrupted))
        }
        (Err(f), _) => {
            let why = f.to_string();
            let used = cx.ctx();
            let doc = degraded_doc(cx, &why, used);
            Ok((doc, HandoffReason::after(trigger, why), Produced::DEGRADED))
        }
    }
}
