//! `/undo` and `/redo` in the TUI (part of the pure reducer): the commands become
//! `Op::Restore`, and the engine's answer becomes a cell listing the files restored. When files
//! the turn changed were changed again since (by the user, or by someone else while the turn
//! ran), the engine restored nothing and the TUI asks with a prompt like a tool's approval (keys
//! typed ahead never answer it): overwrite them (the engine keeps their content in a checkpoint
//! first), skip them (they stay, the rest is restored), or cancel. A rewind whose code part meets
//! such files is asked the same way. `/undo overwrite` and `/undo skip` still give the answer
//! as a command. A `/rewind` that took the conversation back puts its message back in the input
//! box here.

use crate::engine::checkpoint::{OnConflict, RestoreReport, UndoAction};
use crate::engine::ledger::RewindMode;
use crate::engine::protocol::{Approval, Op};

use std::time::Instant;

use super::msg::Effect;
use super::questions::{Asked, PendingApproval};
use super::rewind_state::Retry;
use super::state::AppState;

/// How many files the rewind's question names before it counts the rest.
const NAMED: usize = 20;

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
            return state.chat.error(format!(
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
    if !state.input.put_back(text, now) {
        state.chat.notice(format!(
            "The rewound message (your input was kept):\n{text}"
        ));
    }
}

/// The engine's answer to `/undo` or `/redo`.
pub(super) fn on_restore(state: &mut AppState, report: &RestoreReport, now: Instant) {
    match report {
        RestoreReport::Restored { .. } | RestoreReport::Nothing { .. } => {
            state.chat.notice(report.summary())
        }
        RestoreReport::Conflict { action, .. } => {
            ask(state, Retry::Restore(*action), report.summary(), now);
        }
        RestoreReport::Failed { .. } => state.chat.error(report.summary()),
    }
}

/// The engine stopped a rewind: its code part would write over `files`.
pub(super) fn on_rewind_conflict(
    state: &mut AppState,
    turn: u64,
    mode: RewindMode,
    files: &[String],
    now: Instant,
) {
    let mut named = files
        .iter()
        .take(NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if files.len() > NAMED {
        named.push_str(&format!(" and {} more", files.len() - NAMED));
    }
    let text = format!(
        "Rewinding the code to before turn {turn} would write over files changed since: {named}"
    );
    ask(state, Retry::Rewind { turn, mode }, text, now);
}

/// Ask what to do with the files in `text`: a notice in the chat, and the prompt above the input.
fn ask(state: &mut AppState, retry: Retry, text: String, now: Instant) {
    state.chat.notice(text.clone());
    let name = match retry {
        Retry::Restore(action) => action.as_str(),
        Retry::Rewind { .. } => "rewind",
    };
    let cell = state.chat.last_index();
    let p = PendingApproval::question(Asked::Overwrite { retry }, name, text, cell);
    state.questions.enqueue(p, now);
}

/// The answer to the question: y (`Approval::Once`) writes over the files, n (`Deny`) leaves
/// them, Esc cancels the whole restore. The op is sent again with it; the words for the chat are
/// returned.
pub(super) fn answered(
    retry: Retry,
    decision: Approval,
    esc: bool,
    fx: &mut Vec<Effect>,
) -> String {
    let on_conflict = match decision {
        _ if esc => return "cancelled: nothing was changed".into(),
        Approval::Deny => OnConflict::KeepUsers,
        _ => OnConflict::Overwrite,
    };
    fx.push(Effect::SendOp(match retry {
        Retry::Restore(action) => Op::Restore {
            action,
            on_conflict,
        },
        Retry::Rewind { turn, mode } => Op::Rewind {
            turn,
            mode,
            on_conflict,
        },
    }));
    match on_conflict {
        OnConflict::Overwrite => "overwrite them (your versions are kept in a checkpoint)".into(),
        OnConflict::KeepUsers | OnConflict::Stop => {
            "skip them: they stay as you have them, the rest is restored".into()
        }
    }
}
