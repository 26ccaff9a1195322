//! The answer to the question shown above the input (part of the pure reducer): a tool call's
//! approval (once, always, deny), the workspace's `.mcp.json` or hooks (approve, decline, or
//! leave it undecided with Esc), an overwrite (overwrite, skip, cancel). Keys typed before the
//! prompt could be read, or meant for the input, never answer it; the answer goes to the engine
//! and into the question's chat cell.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent};

use crate::engine::protocol::{Approval, Op};

use super::msg::Effect;
use super::questions::Asked;
use super::state::AppState;
use super::turn_events::approval_allowed;
use super::undo_commands;

/// Answer the question shown with `decision` (given by `key`).
pub(super) fn answer(
    state: &mut AppState,
    decision: Approval,
    key: KeyEvent,
    now: Instant,
    fx: &mut Vec<Effect>,
) {
    if !state.approval_takes_keys(now) {
        return; // typed before the prompt could be read, or meant for the input
    }
    if decision == Approval::Always && state.questions.front().is_some_and(|p| p.always.is_none()) {
        return; // not offered: the prompt does not name the key (nor for `.mcp.json`)
    }
    // The next prompt, if any, takes the place of this one.
    let Some(p) = state.questions.answered(now) else {
        return;
    };
    let text = match (p.asked, decision, &p.always) {
        (Asked::Tool { id }, _, always) => {
            if decision != Approval::Deny {
                approval_allowed(state, &id, now);
            }
            fx.push(Effect::SendOp(Op::Approval { id, decision }));
            match (decision, always) {
                (Approval::Once, _) => "allowed once".to_string(),
                (Approval::Always, Some(offer)) => offer.label.clone(),
                (Approval::Always, None) => "always allowed".to_string(),
                (Approval::Deny, _) => "denied".to_string(),
            }
        }
        // Esc leaves it undecided: the servers stay off now and the next launch asks again.
        (Asked::McpJson { .. }, _, _) if key.code == KeyCode::Esc => {
            "not decided: its servers stay off, the next launch asks again".to_string()
        }
        (Asked::Overwrite { retry }, _, _) => {
            undo_commands::answered(retry, decision, key.code == KeyCode::Esc, fx)
        }
        (Asked::Hooks { .. }, _, _) if key.code == KeyCode::Esc => {
            "not decided: its hooks do not run, the next launch asks again".to_string()
        }
        (Asked::Hooks { sha256 }, _, _) => {
            let approve = decision != Approval::Deny;
            fx.push(Effect::SendOp(Op::HooksDecision { sha256, approve }));
            if approve {
                "approved for this workspace".to_string()
            } else {
                "declined for this workspace (asked again when the file changes)".to_string()
            }
        }
        (Asked::McpJson { sha256 }, _, _) => {
            let approve = decision != Approval::Deny;
            fx.push(Effect::SendOp(Op::McpJsonDecision { sha256, approve }));
            if approve {
                "approved for this workspace".to_string()
            } else {
                "declined for this workspace (asked again when the file changes)".to_string()
            }
        }
    };
    if !state.chat.record_answer(p.cell, &text) {
        state.chat.notice(format!("→ {text}"));
    }
}
