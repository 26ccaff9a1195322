//! The user's answers about MCP servers: `/mcp restart NAME`, and the decision about the
//! workspace's `.mcp.json` (recorded for this workspace and version of the file, asked again when
//! it changes; its servers start or stay off).

use std::sync::Arc;

use super::outbox::Outbox;
use super::params::Places;
use crate::engine::mcp::{ApprovalStore, Decision, McpManager};
use crate::engine::protocol::Event;

/// `/mcp restart NAME`: what happened, in words.
pub(super) fn restart(mcp: Option<&Arc<McpManager>>, name: &str) -> String {
    match mcp {
        None => "no MCP servers are configured ([mcp_servers.NAME] in config.toml, or an \
                 approved .mcp.json)"
            .to_string(),
        Some(mcp) => match mcp.restart(name) {
            Ok(()) => format!("restarting MCP server `{name}`"),
            Err(e) => e.to_string(),
        },
    }
}

/// The user's answer about the workspace's `.mcp.json` of digest `sha256`: recorded in the data
/// directory of `places` (a failure to record is said through `out`), and what follows, in
/// words. None when nothing waits for the answer (answered already, or about another version of
/// the file).
pub(super) fn decide_json(
    mcp: Option<&Arc<McpManager>>,
    places: &Places,
    sha256: &str,
    approve: bool,
    out: &Outbox,
) -> Option<String> {
    let project = mcp?.decide_project(sha256, approve)?;
    let decision = if approve {
        Decision::Approved
    } else {
        Decision::Denied
    };
    let store = ApprovalStore::new(&places.data_dir);
    if let Err(e) = store.record_digest(&places.workspace, sha256, decision) {
        out.emit(Event::Warning {
            message: format!(
                "could not record the decision about {} in {}: {e} (you will be asked again)",
                project.path.display(),
                store.path().display()
            ),
        });
    }
    Some(if approve {
        format!(
            "{} approved for this workspace: starting its MCP servers",
            project.path.display()
        )
    } else {
        format!(
            "{} declined: its MCP servers stay off (asked again when the file changes)",
            project.path.display()
        )
    })
}
