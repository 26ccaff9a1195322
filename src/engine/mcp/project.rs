//! Whether a workspace's `.mcp.json` is used: a repository must not start programs by itself.
//!
//! `mcp_json = "ask"` (the default): used once the user approved this version of the file in this
//! workspace; the TUI asks the first time, headless ignores a file never approved (with a notice).
//! `"trust"`: used without asking (for scripts and CI that own their workspace). `"ignore"`: never.

use std::path::Path;

use super::approval::{ApprovalStore, Decision};
use super::config::{EnvLookup, McpJsonFile, ServerConfig, read_mcp_json};

/// The `mcp_json` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum McpJsonPolicy {
    #[default]
    Ask,
    Trust,
    Ignore,
}

impl McpJsonPolicy {
    /// The accepted values, for errors.
    pub const ACCEPTED: &'static str = "ask, trust, ignore";

    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "ask" => Some(McpJsonPolicy::Ask),
            "trust" => Some(McpJsonPolicy::Trust),
            "ignore" => Some(McpJsonPolicy::Ignore),
            _ => None,
        }
    }
}

/// What to do with a workspace's `.mcp.json`.
#[derive(Debug, Clone, PartialEq)]
pub enum ProjectServers {
    /// There is none.
    Absent,
    /// Use these servers.
    Use(Vec<ServerConfig>),
    /// Never approved (or changed since): the TUI asks, then records the answer with
    /// [`ApprovalStore::record`] against `file.bytes`.
    NeedsApproval {
        file: McpJsonFile,
        servers: Vec<ServerConfig>,
    },
    /// Not used; the notice says why.
    Ignored(String),
    /// It cannot be read or parsed: not used; the notice says what is wrong.
    Invalid(String),
}

/// Decide about `<workspace>/.mcp.json`.
pub fn project_servers(
    workspace: &Path,
    policy: McpJsonPolicy,
    store: &ApprovalStore,
    env: EnvLookup<'_>,
) -> ProjectServers {
    let file = match read_mcp_json(workspace) {
        Ok(None) => return ProjectServers::Absent,
        Ok(Some(f)) => f,
        Err(e) => {
            return ProjectServers::Invalid(format!(
                "{} cannot be read: {e}; its MCP servers are not started",
                workspace.join(super::config::MCP_JSON).display()
            ));
        }
    };
    let shown = file.path.display().to_string();
    if policy == McpJsonPolicy::Ignore {
        return ProjectServers::Ignored(format!("{shown} is ignored (mcp_json = \"ignore\")"));
    }
    let servers = match file.servers(env) {
        Ok(s) => s,
        Err(e) => {
            return ProjectServers::Invalid(format!(
                "{shown}: {e}; its MCP servers are not started"
            ));
        }
    };
    if servers.is_empty() {
        return ProjectServers::Absent;
    }
    match (policy, store.decision(workspace, &file.bytes)) {
        (McpJsonPolicy::Trust, _) | (_, Some(Decision::Approved)) => ProjectServers::Use(servers),
        (_, Some(Decision::Denied)) => ProjectServers::Ignored(format!(
            "{shown} is not used: you declined it for this workspace (it asks again when the file changes)"
        )),
        (_, None) => ProjectServers::NeedsApproval { file, servers },
    }
}

/// The headless reading of [`ProjectServers::NeedsApproval`]: nobody can be asked, so the file is
/// ignored with this notice.
pub(crate) fn headless_notice(file: &McpJsonFile) -> String {
    format!(
        "{} is not used: it was never approved in this workspace (run flower-tui here once to \
         approve it, or pass --mcp-json trust)",
        file.path.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_store_and_file_decide() {
        let ws = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let store = ApprovalStore::new(data.path());
        let none = |_: &str| None;
        let decide = |policy| project_servers(ws.path(), policy, &store, &none);
        assert_eq!(decide(McpJsonPolicy::Ask), ProjectServers::Absent);

        let text = r#"{"mcpServers": {"a": {"command": "srv"}}}"#;
        std::fs::write(ws.path().join(".mcp.json"), text).unwrap();
        let ProjectServers::NeedsApproval { file, servers } = decide(McpJsonPolicy::Ask) else {
            panic!("a new file needs approval");
        };
        assert_eq!(servers.len(), 1);
        assert!(headless_notice(&file).ends_with(
            "is not used: it was never approved in this workspace (run flower-tui here once to approve it, or pass --mcp-json trust)"
        ));
        assert!(matches!(decide(McpJsonPolicy::Trust), ProjectServers::Use(s) if s.len() == 1));
        assert!(
            matches!(decide(McpJsonPolicy::Ignore), ProjectServers::Ignored(n) if n.ends_with("is ignored (mcp_json = \"ignore\")"))
        );

        store
            .record(ws.path(), &file.bytes, Decision::Approved)
            .unwrap();
        assert!(matches!(decide(McpJsonPolicy::Ask), ProjectServers::Use(_)));
        store
            .record(ws.path(), &file.bytes, Decision::Denied)
            .unwrap();
        assert!(
            matches!(decide(McpJsonPolicy::Ask), ProjectServers::Ignored(n) if n.contains("you declined it"))
        );
        // Changed: asked again.
        std::fs::write(ws.path().join(".mcp.json"), text.replace("srv", "other")).unwrap();
        assert!(matches!(
            decide(McpJsonPolicy::Ask),
            ProjectServers::NeedsApproval { .. }
        ));

        std::fs::write(ws.path().join(".mcp.json"), "{\"mcpServers\": 3}").unwrap();
        assert!(
            matches!(decide(McpJsonPolicy::Ask), ProjectServers::Invalid(n) if n.contains("key `mcpServers`: expected a table of servers (got a number); its MCP servers are not started"))
        );
        std::fs::write(ws.path().join(".mcp.json"), "{}").unwrap();
        assert_eq!(decide(McpJsonPolicy::Ask), ProjectServers::Absent);
    }
}
