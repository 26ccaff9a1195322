//! When the context's pressure acts, in the main thread: before every request (a background
//! handoff's boundary, the warning near the handoff line, the `--handoff-after` hook, then the
//! first context strategy whose line is crossed: a handoff — beside the main thread when it can
//! be — or a compaction), and after a context-window error (the window it states is learned;
//! what the model sees is replaced, then the request is sent again only if that replacement
//! advanced, at most once in a row).

use super::background;
use super::blocking::{self, HandoffOutcome, Trigger};
use super::boundary;
use super::compaction::{self, CompactFailure};
use super::context::HandoffCx;
use crate::engine::context::strategy::StrategyKind;
use crate::engine::ledger::Cut;
use crate::engine::protocol::{CompactionTrigger, Event, ExitReason, HandoffPhase};
use crate::engine::provider::ProviderError;
use crate::engine::replace::may_retry_overflow;

/// At most this many overflow retries in a row.
const OVERFLOW_RETRY_CAP: u32 = 1;

/// What the turn loop does after a check.
pub(in crate::engine::session) enum Flow {
    Go,
    Stop(ExitReason),
}

/// The checks before every main-thread request.
pub(in crate::engine::session) async fn before_request(cx: &mut impl HandoffCx) -> Flow {
    if let Some(r) = boundary::before_request(cx).await {
        return Flow::Stop(r);
    }
    let ctx = cx.ctx();
    let thresholds = cx.settings().thresholds;
    if ctx >= thresholds.warn_at && !cx.conv().near_fired {
        cx.conv().near_fired = true;
        cx.emit_logged(Event::Handoff(HandoffPhase::Near {
            context: ctx,
            at: thresholds.at,
            window: thresholds.window,
        }));
    }
    // Test hook: a manual handoff after N responses (headless `--handoff-after`).
    let responses = cx.responses();
    if cx.handoffs().hook_due(responses) {
        cx.handoffs().hook_fired();
        if let HandoffOutcome::Stopped(r) = blocking::run(cx, Trigger::Manual { focus: None }).await
        {
            return Flow::Stop(r);
        }
    }
    if cx.handoffs().background().is_some() {
        // A handoff runs in the background: nothing else replaces the history meanwhile.
        return Flow::Go;
    }
    if cx.conv().ctx == 0 {
        // No response yet: the session holds only its briefing (or its task), so a handoff
        // or a compaction would free nothing and only start over; a first request too large
        // for the window meets the overflow path instead.
        return Flow::Go;
    }
    // The pressure path: the first strategy in force whose line is crossed acts.
    match cx.due_strategy() {
        // In background mode the writing starts beside the main thread; after the user
        // cancelled one in this turn, only the hard limit makes it block instead.
        Some(StrategyKind::Handoff) => {
            let cut = Cut::at_end(&cx.conv().messages);
            if !background::consider(cx, cut)
                && let HandoffOutcome::Stopped(r) = blocking::run(cx, Trigger::Auto).await
            {
                return Flow::Stop(r);
            }
        }
        Some(StrategyKind::Compaction) => {
            match compaction::compact(cx, CompactionTrigger::Pressure).await {
                Ok(_) => {}
                Err(CompactFailure::Aborted) => return Flow::Stop(ExitReason::Interrupted),
                // Failure is loose on this path: logged, and the request goes on.
                Err(CompactFailure::Failed(msg)) => cx.emit(Event::Warning {
                    message: format!("compaction skipped: {msg}"),
                }),
            }
        }
        None => {}
    }
    Flow::Go
}

/// The overflow path after error `e` of a request sent at replace generation `snapshot`:
/// replace what the model sees, then retry only if the replace generation strictly advanced,
/// at most once in a row.
pub(in crate::engine::session) async fn on_overflow(
    cx: &mut impl HandoffCx,
    e: &ProviderError,
    snapshot: u64,
) -> Flow {
    if let Some(limit) = crate::engine::provider::error::overflow_limit(&e.message) {
        cx.learn_window(limit);
    }
    if cx.overflow_retries() >= OVERFLOW_RETRY_CAP {
        return Flow::Stop(cx.fail(&e.clone().into()));
    }
    if cx.handoffs().background().is_some() {
        // A document is being written (or reviewed) on a shorter prefix: wait for it.
        if !boundary::wait_for_document(cx).await {
            return Flow::Stop(ExitReason::Interrupted);
        }
    } else if cx.params().context.hands_off() {
        let trigger = Trigger::Overflow {
            reason: format!("context window exceeded: {}", e.message),
            error: e.clone(),
        };
        if let HandoffOutcome::Stopped(r) = blocking::run(cx, trigger).await {
            return Flow::Stop(r);
        }
    } else {
        match compaction::compact(cx, CompactionTrigger::Overflow).await {
            Ok(_) => {}
            Err(CompactFailure::Aborted) => return Flow::Stop(ExitReason::Interrupted),
            Err(CompactFailure::Failed(msg)) => cx.emit(Event::Warning {
                message: format!("compaction failed: {msg}"),
            }),
        }
    }
    let replace = cx.ledger().replace.get();
    if may_retry_overflow(snapshot, replace, cx.overflow_retries(), OVERFLOW_RETRY_CAP) {
        cx.retry_overflow();
        Flow::Go
    } else {
        Flow::Stop(cx.fail(&e.clone().into()))
    }
}
