//! The `/resume` picker's keys: moving the selection through the workspace's sessions and
//! continuing the chosen one (never the session open now).

use crate::engine::protocol::Op;

use super::msg::Effect;
use super::state::AppState;

/// Moves the `/resume` picker's selection one session down (or up), wrapping around.
pub(crate) fn step(state: &mut AppState, next: bool) {
    if let Some(p) = state.picker.as_mut() {
        let n = p.sessions.len().max(1);
        p.selected = if next {
            (p.selected + 1) % n
        } else {
            (p.selected + n - 1) % n
        };
    }
}

/// Enter in the picker: continue the highlighted run (not the one open now).
pub(crate) fn choose(state: &mut AppState, fx: &mut Vec<Effect>) {
    let Some(p) = state.picker.take() else {
        return;
    };
    match p.sessions.get(p.selected) {
        Some(s) if s.run_id == p.current_run => {
            state.notice("That is the session open now");
        }
        Some(s) => fx.push(Effect::SendOp(Op::Resume {
            run_id: s.run_id.clone(),
        })),
        None => {}
    }
}
