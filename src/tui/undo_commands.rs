//! `/undo` and `/redo` in the TUI (part of the pure reducer): the commands become
//! `Op::Restore`, and the engine's answer becomes a cell listing the files restored. When files
//! the turn changed were changed again since (by the user), the engine restored nothing and the
//! cell asks: `/undo overwrite` writes over them (the engine keeps their content in a checkpoint
//! first), `/undo skip` leaves them as they are and restores the rest. A `/rewind` that took the
//! conversation back puts its message back in the input box here.

use crate::engine::checkpoint::{OnConflict, RestoreReport, UndoAction};
use crate::engine::protocol::Op;

use std::time::Instant;

use super::msg::Effect;
use super::state::{AppState, new_input};

/// `/undo [overwrite|skip]` or `/redo [overwrite|skip]`.
pub(super) fn command(
    state: &mut AppState,
    action: UndoAction,
    arg: Option<&str>,
    fx: &mut Vec<Effect>,
) {
    let on_conflict = match arg {
        None => OnConflict::Stop,
        Some("overwrite") => OnConflict::Overwrite,
        Some("skip") => OnConflict::KeepUsers,
        Some(other) => {
            return state.error(format!(
                "/{}: `{other}`? (usage: /{} [overwrite|skip])",
                action.as_str(),
                action.as_str()
            ));
        }
    };
    fx.push(Effect::SendOp(Op::Restore {
        action,
        on_conflict,
    }));
}

/// A rewound message back in the input box (what was typed there is replaced only when empty;
/// else the message is offered in a notice).
pub(super) fn put_back(state: &mut AppState, text: &str, now: Instant) {
    if state.input.is_empty() {
        state.input = new_input();
        state.input.insert_str(text);
        state.input_edited(now);
    } else {
        state.notice(format!(
            "The rewound message (your input was kept):\n{text}"
        ));
    }
}

/// The engine's answer to `/undo` or `/redo`.
pub(super) fn on_restore(state: &mut AppState, report: &RestoreReport) {
    match report {
        RestoreReport::Restored { .. } | RestoreReport::Nothing { .. } => {
            state.notice(report.summary())
        }
        RestoreReport::Conflict { action, .. } => {
            let a = action.as_str();
            state.notice(format!(
                "{}\n/{a} overwrite writes over them (your version is kept in a checkpoint); \
                 /{a} skip leaves them as they are and restores the rest",
                report.summary()
            ));
        }
        RestoreReport::Failed { .. } => state.error(report.summary()),
    }
}
