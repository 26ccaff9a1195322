//! Messages typed while a turn runs (part of the pure reducer). They wait in the input box's
//! queue (`InputBox::queue`), drawn below the live reply, and go to the engine one at a time as
//! turns end, so the chat shows each one where the model reads it: after the reply it did not
//! interrupt. Up on an empty input takes the newest back for editing; Esc or Ctrl-C on an empty
//! input drops it. An interrupted turn puts them back into the input instead of sending them
//! (the user stopped the agent).

use std::time::Instant;

use crate::engine::protocol::{ExitReason, Op, TurnId};

use super::input::Pastes;
use super::msg::{ChatScroll, Effect};
use super::state::AppState;

/// Send `text` (the input with its chips expanded) now; the chat shows `raw`, chips and all.
pub(super) fn send_now(
    state: &mut AppState,
    raw: String,
    text: String,
    now: Instant,
    fx: &mut Vec<Effect>,
) {
    let turn = state.turns.send();
    state.chat.turn_begins(turn);
    // Drawn as the model gets it: a provider key typed or pasted in is masked.
    state
        .chat
        .sent(crate::engine::secrets::redact(&raw).into_owned());
    fx.push(Effect::ScrollChat(ChatScroll::Bottom));
    state.activity.message_sent(now);
    // `/name args` of a custom command runs it: the engine expands it into the message.
    // `!command` runs the command in the sandbox, no model request.
    let op = match super::slash::parse(&text, &state.settings.extensions.commands) {
        super::slash::Parsed::Custom { name, args } => Op::Command { turn, name, args },
        _ => match shell_command(&text) {
            Some(command) => Op::Shell {
                turn,
                command: command.to_string(),
            },
            None => Op::UserTurn { turn, text },
        },
    };
    fx.push(Effect::SendOp(op));
}

/// The command of a `!command` line (`!` first, then something to run), else None.
pub(super) fn shell_command(text: &str) -> Option<&str> {
    text.strip_prefix('!')
        .map(str::trim)
        .filter(|c| !c.is_empty())
}

/// A message to send: at once when no turn runs, else after the turns before it.
pub(super) fn send_or_queue(
    state: &mut AppState,
    raw: String,
    pastes: Pastes,
    now: Instant,
    fx: &mut Vec<Effect>,
) {
    if state.turns.busy() {
        state.input.queue(raw, pastes);
        return;
    }
    let text = pastes.expand(&raw);
    send_now(state, raw, text, now, fx);
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
    state.turns.over(turn);
    if state.turns.busy() || state.input.queued().is_empty() {
        return;
    }
    if reason == ExitReason::Interrupted {
        return restore_to_input(state, now);
    }
    if let Some(q) = state.input.next_queued() {
        let text = q.pastes.expand(&q.raw);
        send_now(state, q.raw, text, now, fx);
    }
}

/// Every queued message back into the input, oldest first, before what is typed there.
fn restore_to_input(state: &mut AppState, now: Instant) {
    let n = state.input.unqueue_all(now);
    let what = if n == 1 {
        "The queued message is".to_string()
    } else {
        format!("The {n} queued messages are")
    };
    state.chat.notice(format!(
        "{what} back in the input (the turn was interrupted): Enter sends"
    ));
}
