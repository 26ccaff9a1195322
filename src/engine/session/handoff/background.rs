//! The handoff in the background: the writing request runs beside the main thread.
//!
//! When the context crosses the handoff line (after a main-thread response, or before a request),
//! the writing request starts on the *same prefix* the main thread's last request sent (system
//! prompt, tools, the history up to the cut, so the provider reads its prompt cache), as a task of
//! its own ([`super::tasks`]) whose answer comes back on the runner's channel. Every place the
//! engine waits (a stream or a tool, an approval, the idle loop) also listens there and hands
//! the answer to [`on_reply`], so the document is frozen, and its review opened, while the main
//! thread keeps working. The review ends with `Op::ReviewDone` (or at once without one); the
//! turnover happens at the first message boundary after that ([`super::boundary`]). The
//! successor's briefing then holds the document and the record of everything after the cut
//! ([`super::after_cut`]).
//!
//! A failed writing request runs once more on a reduced copy of the history, a document that
//! restated its instructions is asked for once more with the short prompt
//! ([`super::background_writing`]); only when that fails too is the degraded document frozen.
//! The user's `PreHandoff` hooks run before the writing request starts ([`super::vetting`]) and
//! `HandoffFrozen` hooks between the freeze and the review ([`super::background_freeze`]), each
//! as a task beside the main thread: the main thread never waits for them, but the writing waits
//! for the first and the review and the turnover for the second.

use std::time::{Duration, Instant};

use super::background_freeze;
use super::background_writing::{on_written, writing_state};
use super::context::HandoffCx;
use super::phases::{Background, BgState};
use super::tasks::BgReply;
use super::vetting;
use crate::engine::context::strategy::StrategyKind;
use crate::engine::hooks::Outcome;
use crate::engine::ledger::Cut;
use crate::engine::policy::HandoffMode;
use crate::engine::protocol::{Event, HandoffId, HandoffPhase};

/// `max_generations` handoffs happened in this step: the next due one stops it.
pub(super) fn breaker_reached(cx: &mut impl HandoffCx) -> bool {
    cx.ledger().rec().map_or(0, |r| r.handoffs.len()) >= cx.params().max_generations as usize
}

/// The context at which the main thread waits for a background document: the window minus
/// the writing reserve (the request's `max_tokens`).
pub(super) fn hard_limit(cx: &impl HandoffCx) -> u64 {
    cx.settings()
        .thresholds
        .window
        .saturating_sub(u64::from(cx.output_cap()))
}

/// The user cancelled a background handoff during the running turn.
fn cancelled_this_turn(cx: &mut impl HandoffCx) -> bool {
    cx.turn().is_some_and(|t| t.background_cancelled)
}

/// Start the writing in the background if the line is crossed and nothing stops it. `cut`:
/// the history the main thread's request saw (after a response) or will see (before one).
/// Returns true when the pressure is met beside the main thread: the writing started, or the
/// user cancelled a background handoff in this turn and the hard limit is not reached yet.
pub(in crate::engine::session) fn consider(cx: &mut impl HandoffCx, cut: Cut) -> bool {
    let cancelled = cancelled_this_turn(cx);
    if cx.params().mode == HandoffMode::Background
        && cx.handoffs().is_idle()
        && !cancelled
        && !breaker_reached(cx)
        && cx.due_strategy() == Some(StrategyKind::Handoff)
        && start(cx, cut)
    {
        return true;
    }
    cancelled && cx.ctx() < hard_limit(cx)
}

fn start(cx: &mut impl HandoffCx, cut: Cut) -> bool {
    let Some((prefix, _)) = cut.split(&cx.conv().messages) else {
        return false;
    };
    if prefix.is_empty() {
        return false;
    }
    let id = cx.handoffs().next_id();
    let started = Instant::now();
    let used = cx.ctx();
    let thresholds = cx.settings().thresholds;
    tracing::info!(
        handoff = id.0,
        trigger = "background",
        session = %cx.conv().id,
        context = used,
        at = thresholds.at,
        window = thresholds.window,
        cut = cut.messages,
        "handoff started"
    );
    // The step's standing focus, as for every automatic handoff.
    let focus = cx.focus(None);
    cx.emit_logged(Event::Handoff(HandoffPhase::Writing {
        handoff: id,
        manual: false,
        focus: focus.clone(),
        background: true,
    }));
    // `PreHandoff` hooks first, off the engine task; the writing starts when they are done.
    let state = match vetting::start(cx, id, &focus) {
        Some(hooks) => BgState::Vetting { hooks, focus },
        None => writing_state(cx, id, prefix, used, focus),
    };
    cx.handoffs().begin_background(Background {
        id,
        started,
        cut,
        ctx_at_cut: used,
        state,
        lock: Duration::ZERO,
    });
    true
}

/// What a background handoff's task sent: a writing request's result, or its hooks' outcome.
/// The one place every answer is handled; stale ones (a cancelled handoff's, an earlier
/// attempt's) are dropped.
pub(in crate::engine::session) fn on_reply(cx: &mut impl HandoffCx, reply: BgReply) {
    match reply {
        BgReply::Written(w) => on_written(cx, w),
        BgReply::Hooks { id, outcome } => on_hooks(cx, id, outcome),
    }
}

/// The background handoff's hooks are done: after `PreHandoff` the writing starts (or the
/// handoff is refused), after `HandoffFrozen` the review opens.
fn on_hooks(cx: &mut impl HandoffCx, id: HandoffId, outcome: Outcome) {
    let current = cx.handoffs().background().is_some_and(|bg| {
        bg.id == id && matches!(bg.state, BgState::Vetting { .. } | BgState::Hooked { .. })
    });
    if !current {
        tracing::debug!(handoff = id.0, "stale background hook outcome dropped");
        return;
    }
    cx.report_hooks(&outcome);
    let Some(bg) = cx.handoffs().take_background() else {
        return;
    };
    if matches!(bg.state, BgState::Vetting { .. }) {
        vetting::done(cx, bg, &outcome);
    } else {
        background_freeze::hooks_done(cx, bg);
    }
}
