//! MCP servers in the reducer: the question whether the workspace's `.mcp.json` may start its
//! servers (asked like a tool's approval, under the same guard against keys typed ahead), the
//! servers a request waits for (named on the spinner), and each server's state for `/mcp`.

use std::path::Path;
use std::time::Instant;

use crate::engine::mcp::ServerStatus;
use crate::engine::protocol::Event;

use super::questions::{Asked, PendingApproval};
use super::render::cell::Cell;
use super::state::AppState;

/// Apply one MCP event.
pub(super) fn on_mcp_event(state: &mut AppState, ev: Event, now: Instant) {
    match ev {
        Event::McpJsonApproval {
            path,
            sha256,
            servers,
        } => on_mcp_json(state, &path, sha256, &servers, now),
        Event::McpWaiting { servers } => on_mcp_waiting(state, servers, now),
        // Launch turns the changes worth a notice into notices; /mcp shows the states.
        Event::McpStatus(status) => {
            state.mcp.update(status);
        }
        _ => {}
    }
}

/// The engine holds the workspace's `.mcp.json` until the user says whether its servers may
/// start: the question goes in the chat and takes the keys like a tool's approval (with the same
/// guard against keys typed for something else).
fn on_mcp_json(
    state: &mut AppState,
    path: &Path,
    sha256: String,
    servers: &[ServerStatus],
    now: Instant,
) {
    let asked = Asked::McpJson { sha256 };
    if state.questions.asks(&asked) {
        return;
    }
    let shown = path.display().to_string();
    state.chat.push_cell(Cell::McpJson {
        path: shown.clone(),
        servers: servers
            .iter()
            .map(|s| (s.name.clone(), s.transport.clone()))
            .collect(),
        answer: None,
    });
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    let summary = format!("{shown} would start: {}", names.join(", "));
    let p = PendingApproval::question(asked, ".mcp.json", summary, state.chat.last_index());
    state.questions.enqueue(p, now);
}

/// The MCP servers the next request waits for (none: the wait is over).
fn on_mcp_waiting(state: &mut AppState, servers: Vec<String>, now: Instant) {
    state.activity.mcp_waiting(servers, now);
}
