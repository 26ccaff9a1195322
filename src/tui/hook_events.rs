//! Hooks in the reducer: each hook that ran becomes a cell, and the question whether a workspace
//! settings file's hooks may run is asked like a tool's approval (under the same guard against
//! keys typed ahead), answered with `Op::HooksDecision`.

use std::time::Instant;

use crate::engine::hooks::{HookNote, HooksQuestion};

use super::questions::{Asked, PendingApproval};
use super::render::cell::Cell;
use super::state::AppState;

/// A hook ran.
pub(super) fn on_hook(state: &mut AppState, note: HookNote) {
    state.chat.push_cell(Cell::Hook(Box::new(note)));
}

/// The engine holds a settings file's hooks until the user says whether they may run.
pub(super) fn on_question(state: &mut AppState, q: HooksQuestion, now: Instant) {
    let asked = Asked::Hooks { sha256: q.sha256 };
    if state.questions.asks(&asked) {
        return;
    }
    let shown = q.path.display().to_string();
    let summary = format!("{shown} would run: {}", q.hooks.join("; "));
    state.chat.push_cell(Cell::HooksQuestion {
        path: shown,
        hooks: q.hooks,
        answer: None,
    });
    let p = PendingApproval::question(asked, "hooks", summary, state.chat.last_index());
    state.questions.enqueue(p, now);
}
