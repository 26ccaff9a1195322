//! Esc and Ctrl-C in the input (part of the pure reducer): each undoes the nearest thing first —
//! the newest queued message, a handoff written in the background, the running turn — and,
//! idle on an empty input, Esc twice opens the rewind picker while Ctrl-C twice quits.

use std::time::Instant;

use crate::engine::protocol::Op;

use super::commands::request_quit;
use super::editor_update::editor_ctrl_c;
use super::msg::Effect;
use super::state::{AppState, Focus};

/// Esc: drops the newest queued message when the input is empty; else cancels a handoff written
/// in the background (the main turn goes on; the next Esc interrupts it), interrupts the running
/// turn, or, idle on an empty input, counts toward the rewind picker's double Esc.
pub(super) fn abort(state: &mut AppState, now: Instant, fx: &mut Vec<Effect>) {
    if state.input.is_empty() && state.input.drop_newest() {
        return;
    }
    if let Some(bg) = state.handoff.writing_in_background() {
        fx.push(Effect::SendOp(Op::CancelHandoff {
            handoff: bg.handoff,
        }));
    } else if state.activity.is_running() {
        fx.push(Effect::SendOp(Op::Abort {
            turn: state.turns.abort_turn(),
        }));
    } else if state.input.is_empty()
        && let Some(op) = state.rewind.idle_esc(now)
    {
        fx.push(Effect::SendOp(op));
    }
}

/// Ctrl-C: clears the input; on an empty input drops the newest queued message, else
/// interrupts the running turn; on an idle empty input a second press within [`QUIT_WINDOW`]
/// quits. Interrupting never arms the quit: hammering Ctrl-C to stop the agent does not leave.
/// With the focus in the side editor it only interrupts or quits (`editor_ctrl_c`).
pub(super) fn clear_or_quit(state: &mut AppState, now: Instant, fx: &mut Vec<Effect>) {
    if state.focus == Focus::Editor {
        if editor_ctrl_c(state, now, fx) {
            request_quit(state, fx);
        }
        return;
    }
    if !state.input.is_empty() {
        state.input.clear(now);
        if !state.turns.busy() {
            state.quit.arm(now);
        }
        return;
    }
    if state.input.drop_newest() {
        return;
    }
    if state.turns.busy() || state.activity.is_running() {
        state.quit.disarm();
        fx.push(Effect::SendOp(Op::Abort {
            turn: state.turns.abort_turn(),
        }));
        return;
    }
    if state.quit_armed(now) {
        request_quit(state, fx);
    } else {
        state.quit.arm(now);
    }
}
