//! The MCP servers as the TUI knows them: each one as its last status event described it, in
//! the order they came, and the `/mcp` listing made from them.

use crate::engine::mcp::ServerStatus;

/// The MCP servers, in the order their first status came.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct McpServers {
    servers: Vec<ServerStatus>,
}

impl McpServers {
    /// A server's new status (a server not seen yet is added at the end).
    pub(crate) fn update(&mut self, status: ServerStatus) {
        match self.servers.iter_mut().find(|s| s.name == status.name) {
            Some(known) => *known = status,
            None => self.servers.push(status),
        }
    }

    /// The `/mcp` notice: one line per server (state, then command or URL), and how to restart
    /// one.
    pub(crate) fn report(&self) -> String {
        if self.servers.is_empty() {
            return "No MCP servers: add [mcp_servers.NAME] to config.toml, or a .mcp.json to the \
                    workspace"
                .to_string();
        }
        let mut lines = vec!["MCP servers:".to_string()];
        for s in &self.servers {
            lines.push(format!(
                "  {} ({}) · {} · {}",
                s.name,
                s.origin.as_str(),
                s.state,
                s.transport
            ));
            if !s.tools.is_empty() {
                lines.push(format!("    tools: {}", s.tools.join(", ")));
            }
            if let Some(e) = &s.last_error {
                lines.push(format!("    last error: {e}"));
            }
            for w in &s.warnings {
                lines.push(format!("    note: {w}"));
            }
        }
        lines.push("/mcp restart NAME restarts one".to_string());
        lines.join("\n")
    }
}
