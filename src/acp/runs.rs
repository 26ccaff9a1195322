//! `session/list`: the workspace's runs from the ledger, newest first, as the editor's sessions.
//! A run's id is its session id: the one `session/load` continues, and the one the terminal's
//! `flower-tui --resume RUN_ID` takes, so a run goes from the terminal to the editor and back.

use std::path::Path;

use agent_client_protocol::v1::schema::SessionInfo;

use crate::engine::ledger::run_list;

/// The runs of `workspace` as sessions.
pub(super) fn list(data_dir: &Path, workspace: &Path) -> Vec<SessionInfo> {
    let workspace = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    run_list::list(data_dir, &workspace)
        .into_iter()
        .map(|run| {
            let title = if run.first_message.trim().is_empty() {
                run.step.clone()
            } else {
                run.first_message.clone()
            };
            SessionInfo::new(run.run_id.clone(), workspace.clone())
                .title(title)
                .updated_at(run.updated)
        })
        .collect()
}
