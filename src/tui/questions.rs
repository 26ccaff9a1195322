//! Queuing a question for the user's answer — a tool call's approval, the workspace's
//! `.mcp.json` or hooks, an overwrite — above the input: the focus stays where it is, and the
//! prompt takes keys only once the input is empty and 400 ms have passed since the first
//! question showed (`AppState::approval_takes_keys`), so typed-ahead text never answers it.

use std::time::Instant;

use super::state::{AppState, Asked, PendingApproval};

impl PendingApproval {
    /// A question that is no tool call, recorded in the chat's last cell.
    pub(crate) fn question(asked: Asked, name: &str, summary: String, state: &AppState) -> Self {
        PendingApproval {
            asked,
            name: name.into(),
            summary,
            cell: state.chat.len().saturating_sub(1),
            outside_workspace: false,
            command: None,
            diff: None,
            always: None,
            unsandboxed: None,
        }
    }
}

/// Queue `p` behind the questions already waiting; the first one shown starts the key guard.
pub(crate) fn enqueue(state: &mut AppState, p: PendingApproval, now: Instant) {
    state.approvals.push_back(p);
    if state.approval_shown_at.is_none() {
        state.approval_shown_at = Some(now);
    }
}
