//! One tool call on an MCP server: finding the ready server that offers the tool (or saying,
//! before any approval, that its server is down), the call bounded by the server's
//! `tool_timeout`, and every failure turned into a tool error for the model (and recorded as the
//! server's last error; an HTTP server that cannot be reached is marked failed and its tools
//! withdrawn).

use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::service::Peer;
use serde_json::Value;

use super::super::client;
use super::super::config::{Transport, value_kind};
use super::super::names;
use super::super::process::Diagnostics;
use super::super::status::ServerState;
use super::{McpManager, Shared, secs};
use crate::engine::tools::ToolOutput;

/// What a call needs, taken under the lock.
struct CallTarget {
    idx: usize,
    generation: u64,
    server: String,
    tool: String,
    peer: Peer<RoleClient>,
    timeout: Duration,
    diag: Option<Arc<Diagnostics>>,
}

/// Why a call found no server to go to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum NoTarget {
    /// The tool's server is known but not ready (starting, failed, stopped, …).
    #[error("MCP server `{server}` is not available ({state}); the user can restart it with /mcp")]
    Unavailable { server: String, state: ServerState },
    /// No server offers a tool of that name.
    #[error("unknown MCP tool `{0}`")]
    Unknown(String),
}

impl McpManager {
    /// Why a call of `name` cannot run now: its server died, stopped or never started (named, with
    /// its state); None when the server is ready or none is configured under that name. The
    /// engine asks this before it asks the user to approve a call.
    pub fn unavailable(&self, name: &str) -> Option<String> {
        match self.shared.target(name) {
            Err(refused @ NoTarget::Unavailable { .. }) => Some(refused.to_string()),
            Ok(_) | Err(NoTarget::Unknown(_)) => None,
        }
    }

    /// Call a tool by its `mcp__…` name. Every failure is an `is_error` output for the model; the
    /// server's state and last error change with it.
    pub async fn call(&self, name: &str, input: &Value) -> ToolOutput {
        let target = match self.shared.target(name) {
            Ok(t) => t,
            Err(refused) => return ToolOutput::error(refused.to_string()),
        };
        let arguments = match input {
            Value::Object(map) => Some(map.clone()),
            Value::Null => None,
            other => {
                return ToolOutput::error(format!(
                    "the arguments of `{name}` must be a JSON object (got {})",
                    value_kind(other, "an object")
                ));
            }
        };
        let mut params = rmcp::model::CallToolRequestParams::new(target.tool.clone());
        if let Some(args) = arguments {
            params = params.with_arguments(args);
        }
        let outcome = tokio::time::timeout(target.timeout, target.peer.call_tool(params)).await;
        match outcome {
            Ok(Ok(result)) => super::super::convert::to_output(&result),
            Ok(Err(e)) => ToolOutput::error(self.shared.call_failed(&target, e).await),
            Err(_) => {
                let extra = target
                    .diag
                    .as_ref()
                    .map(|d| d.describe())
                    .unwrap_or_default();
                let message = format!(
                    "MCP tool `{}` of server `{}` did not answer within {} (its tool_timeout){}",
                    target.tool,
                    target.server,
                    secs(target.timeout),
                    client::clause(&extra)
                );
                self.shared
                    .note_error(target.idx, target.generation, &message);
                ToolOutput::error(message)
            }
        }
    }
}

impl Shared {
    /// The ready server that offers `name`, or why there is none.
    fn target(&self, name: &str) -> Result<CallTarget, NoTarget> {
        for (idx, slot) in self.slots.iter().enumerate() {
            let prefix = format!("{}{}__", names::PREFIX, slot.config.name);
            let s = slot.lock();
            if let Some(entry) = s.tools.iter().find(|t| t.qualified == name)
                && let (ServerState::Ready { .. }, Some(peer)) = (&s.state, &s.peer)
            {
                return Ok(CallTarget {
                    idx,
                    generation: s.generation,
                    server: slot.config.name.clone(),
                    tool: entry.tool.clone(),
                    peer: peer.clone(),
                    timeout: slot.config.tool_timeout,
                    diag: s.diag.clone(),
                });
            }
            if name.starts_with(&prefix) && !matches!(s.state, ServerState::Ready { .. }) {
                return Err(NoTarget::Unavailable {
                    server: slot.config.name.clone(),
                    state: s.state.clone(),
                });
            }
        }
        Err(NoTarget::Unknown(name.to_string()))
    }

    /// The message for a call that failed inside rmcp, after recording it.
    async fn call_failed(&self, t: &CallTarget, e: rmcp::service::ServiceError) -> String {
        use rmcp::service::ServiceError as E;
        let message = match &e {
            E::McpError(data) => format!(
                "MCP server `{}` refused the call of `{}`: {} (JSON-RPC error {})",
                t.server, t.tool, data.message, data.code.0
            ),
            E::TransportClosed => {
                // The supervisor is noting how the server ended: wait a moment for its reason.
                let reason = self
                    .await_failure(t.idx, t.generation, Duration::from_secs(1))
                    .await;
                format!(
                    "MCP server `{}` stopped during the call of `{}`{}",
                    t.server,
                    t.tool,
                    reason.map(|r| format!(": it {r}")).unwrap_or_default()
                )
            }
            E::TransportSend(inner) => format!(
                "could not reach MCP server `{}` for `{}`: {}",
                t.server,
                t.tool,
                client::transport_error(inner)
            ),
            _ => format!(
                "the call of `{}` on MCP server `{}` failed: {}",
                t.tool,
                t.server,
                client::error_chain(&e)
            ),
        };
        self.note_error(t.idx, t.generation, &message);
        // An HTTP server has no process to watch: a call that cannot reach it is how flower-tui
        // learns it is gone. Its tools are withdrawn until `/mcp restart` finds it again.
        let unreachable = matches!(e, E::TransportSend(_) | E::TransportClosed);
        let http = self
            .slots
            .get(t.idx)
            .is_some_and(|s| matches!(s.config.transport, Transport::Http { .. }));
        if unreachable && http {
            self.lose(
                t.idx,
                t.generation,
                format!(
                    "stopped answering ({message}); `/mcp restart {}` once it is back",
                    t.server
                ),
            );
        }
        message
    }
}
