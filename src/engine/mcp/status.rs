//! What `/mcp`, the notices and headless `mcp_status` events show about a server.

use std::fmt;

use serde::Serialize;

use super::config::Origin;

/// Where a server is in its life.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ServerState {
    /// `enabled = false`: configured, never started (until restarted by hand).
    Disabled,
    /// Started, not yet through the handshake and the tool list.
    #[default]
    Starting,
    /// Its tools are offered.
    Ready { tools: usize },
    /// It could not start, or it ended by itself; the reason is one line.
    Failed { reason: String },
    /// Stopped by flower-tui (shutdown).
    Stopped,
}

impl fmt::Display for ServerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerState::Disabled => write!(f, "disabled"),
            ServerState::Starting => write!(f, "starting"),
            ServerState::Ready { tools: 1 } => write!(f, "ready, 1 tool"),
            ServerState::Ready { tools } => write!(f, "ready, {tools} tools"),
            ServerState::Failed { reason } => write!(f, "failed: {reason}"),
            ServerState::Stopped => write!(f, "stopped"),
        }
    }
}

/// One server as the user sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerStatus {
    pub name: String,
    #[serde(serialize_with = "origin_str")]
    pub origin: Origin,
    /// The command line or the URL (never `env` or header values).
    pub transport: String,
    #[serde(flatten)]
    pub state: ServerState,
    /// The server's own names of the tools offered.
    pub tools: Vec<String>,
    /// The last call that failed (timeout, refused, unreachable), if any since it started.
    pub last_error: Option<String>,
    /// Things the user should know that did not stop it (variables not passed, …).
    pub warnings: Vec<String>,
}

fn origin_str<S: serde::Serializer>(o: &Origin, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(o.as_str())
}

impl ServerStatus {
    /// One line for `/mcp`: `github  ready, 12 tools  (npx -y @modelcontextprotocol/server-github)`.
    pub fn line(&self) -> String {
        format!("{}: {} ({})", self.name, self.state, self.transport)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_read_well_and_serialise_flat() {
        assert_eq!(ServerState::Ready { tools: 1 }.to_string(), "ready, 1 tool");
        assert_eq!(
            ServerState::Ready { tools: 3 }.to_string(),
            "ready, 3 tools"
        );
        let s = ServerStatus {
            name: "x".into(),
            origin: Origin::McpJson,
            transport: "npx server".into(),
            state: ServerState::Failed {
                reason: "exited with status 1".into(),
            },
            tools: vec![],
            last_error: None,
            warnings: vec![],
        };
        assert_eq!(s.line(), "x: failed: exited with status 1 (npx server)");
        assert_eq!(
            serde_json::to_value(&s).unwrap(),
            serde_json::json!({
                "name": "x", "origin": ".mcp.json", "transport": "npx server",
                "state": "failed", "reason": "exited with status 1",
                "tools": [], "last_error": null, "warnings": []
            })
        );
    }
}
