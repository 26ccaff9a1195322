//! Messages typed while a turn runs (part of the pure reducer). They wait in `AppState::queue`,
//! drawn below the live reply, and go to the engine one at a time as turns end, so the chat shows
//! each one where the model reads it: after the reply it did not interrupt. Up on an empty input
//! takes the newest back for editing; Esc or Ctrl-C on an empty input drops it. An interrupted
//! turn puts them back into the input instead of sending them (the user stopped the agent).

use std::time::Instant;

use crate::engine::protocol::{ExitReason, Op, TurnId};

use super::input::Pastes;
use super::msg::{ChatScroll, Effect};
use super::render::cell::Cell;
use super::state::{AppState, Popup, Queued, Running, new_input};

/// Send `text` (the input with its chips expanded) now; the chat shows `raw`, chips and all.
pub(super) fn send_now(
    state: &mut AppState,
    raw: String,
    text: String,
    now: Instant,
    fx: &mut Vec<Effect>,
) {
    state.finish_streaming();
    // Drawn as the model gets it: a provider key typed or pasted in is masked.
    let shown = crate::engine::secrets::redact(&raw).into_owned();
    state.chat.push(Cell::User { text: shown });
    state.selected_tool = None;
    fx.push(Effect::ScrollChat(ChatScroll::Bottom));
    if state.running == Running::Idle {
        state.running = Running::Streaming { since: now };
    }
    let turn = state.new_turn();
    state.in_flight.push(turn);
    // `/name args` of a custom command runs it: the engine expands it into the message.
    let op = match super::slash::parse(&text, &state.settings.extensions.commands) {
        super::slash::Parsed::Custom { name, args } => Op::Command { turn, name, args },
        _ => Op::UserTurn { turn, text },
    };
    fx.push(Effect::SendOp(op));
}

/// A message to send: at once when no turn runs, else after the turns before it.
pub(super) fn send_or_queue(
    state: &mut AppState,
    raw: String,
    pastes: Pastes,
    now: Instant,
    fx: &mut Vec<Effect>,
) {
    if state.busy() {
        state.queue.push(Queued { raw, pastes });
        return;
    }
    let text = pastes.expand(&raw);
    send_now(state, raw, text, now, fx);
}

/// Up on an empty input: the newest queued message back into the input, for editing (Enter
/// queues it again). False when nothing is queued.
pub(super) fn recall_newest(state: &mut AppState, now: Instant) -> bool {
    let Some(q) = state.queue.pop() else {
        return false;
    };
    state.input = new_input();
    state.input.insert_str(&q.raw);
    state.pastes = q.pastes;
    state.popup = Popup::Auto { selected: 0 };
    state.history.reset_browsing();
    state.input_edited(now);
    true
}

/// Esc or Ctrl-C on an empty input: the newest queued message is dropped. False when nothing
/// is queued.
pub(super) fn drop_newest(state: &mut AppState) -> bool {
    state.queue.pop().is_some()
}

/// The engine ended `turn`: it no longer runs. When no turn of ours runs any more, the next
/// queued message goes, or (after an interrupt) every queued message goes back to the input.
pub(super) fn on_turn_over(
    state: &mut AppState,
    turn: TurnId,
    reason: ExitReason,
    now: Instant,
    fx: &mut Vec<Effect>,
) {
    state.in_flight.retain(|t| *t != turn);
    if state.busy() || state.queue.is_empty() {
        return;
    }
    if reason == ExitReason::Interrupted {
        return restore_to_input(state, now);
    }
    let q = state.queue.remove(0);
    let text = q.pastes.expand(&q.raw);
    send_now(state, q.raw, text, now, fx);
}

/// Every queued message back into the input, oldest first, before what is typed there.
fn restore_to_input(state: &mut AppState, now: Instant) {
    let queued = std::mem::take(&mut state.queue);
    let n = queued.len();
    let mut pastes = Pastes::default();
    let mut parts: Vec<String> = Vec::new();
    for q in queued {
        parts.push(q.raw);
        pastes.extend(q.pastes);
    }
    let typed = state.input_text();
    if !typed.trim().is_empty() {
        parts.push(typed);
    }
    pastes.extend(std::mem::take(&mut state.pastes));
    state.input = new_input();
    state.input.insert_str(parts.join("\n"));
    state.pastes = pastes;
    state.popup = Popup::Auto { selected: 0 };
    state.input_edited(now);
    let what = if n == 1 {
        "The queued message is".to_string()
    } else {
        format!("The {n} queued messages are")
    };
    state.notice(format!(
        "{what} back in the input (the turn was interrupted): Enter sends"
    ));
}

/// The engine is gone: nothing of ours runs any more (the queue stays, to be recalled).
pub(super) fn engine_gone(state: &mut AppState) {
    state.in_flight.clear();
}
