//! Issue 12's events in the TUI (part of the pure reducer): each subagent as a live cell in the
//! place of its `task` call, the question about the workspace's `.mcp.json`, and the MCP servers a
//! request waits for (on the spinner).

use std::path::Path;
use std::time::Instant;

use crate::engine::mcp::ServerStatus;
use crate::engine::protocol::SubagentPhase;

use super::render::agent_cell::{AgentCell, AgentStep, STEP_TEXT_MAX};
use super::render::cell::Cell;
use super::state::{AppState, Asked, PendingApproval};

/// One subagent event: the cell of its `task` call follows it.
pub(super) fn on_subagent(state: &mut AppState, phase: SubagentPhase, now: Instant) {
    if let SubagentPhase::Start {
        id,
        description,
        model,
        window,
        transcript,
        ..
    } = phase
    {
        start(state, id, &description, model, window, transcript, now);
        return;
    }
    let id = phase.id().to_string();
    let Some(Cell::Subagent(agent)) = state.chat.find_tool_mut(&id) else {
        return; // its start was never seen (a resumed run's replay): nothing to update
    };
    match phase {
        SubagentPhase::Start { .. } => {}
        SubagentPhase::Text { text, .. } => {
            let text = match text.char_indices().nth(STEP_TEXT_MAX) {
                Some((cut, _)) => format!("{}…", text.get(..cut).unwrap_or_default()),
                None => text,
            };
            if !text.trim().is_empty() {
                agent.steps.push(AgentStep::Text(text));
            }
        }
        SubagentPhase::ToolCall {
            call_id,
            summary,
            calls,
            ..
        } => {
            agent.calls = calls;
            agent.steps.push(AgentStep::Tool {
                call_id,
                summary,
                result: None,
            });
        }
        SubagentPhase::ToolResult {
            call_id,
            is_error,
            output,
            ..
        } => {
            let step = agent
                .steps
                .iter_mut()
                .rev()
                .find(|s| matches!(s, AgentStep::Tool { call_id: c, .. } if *c == call_id));
            if let Some(AgentStep::Tool { result, .. }) = step {
                *result = Some((is_error, output));
            }
        }
        SubagentPhase::Usage {
            context, cost_usd, ..
        } => {
            agent.context = context;
            agent.cost_usd = cost_usd;
        }
        SubagentPhase::End {
            outcome,
            context,
            cost_usd,
            tool_calls,
            elapsed_ms,
            ..
        } => {
            agent.outcome = Some(outcome);
            agent.context = context;
            agent.cost_usd = cost_usd;
            agent.calls = tool_calls;
            agent.elapsed_ms = elapsed_ms;
            state.agents.retain(|(a, _)| *a != id);
        }
    }
}

fn start(
    state: &mut AppState,
    id: String,
    description: &str,
    model: String,
    window: u64,
    transcript: std::path::PathBuf,
    now: Instant,
) {
    let fallback = format!("task: {description}");
    state.agents.retain(|(a, _)| *a != id);
    state.agents.push((id.clone(), now));
    match state.chat.find_tool_mut(&id) {
        Some(cell @ Cell::Tool { .. }) => {
            let summary = match cell {
                Cell::Tool { summary, .. } => std::mem::take(summary),
                _ => fallback,
            };
            *cell = Cell::Subagent(Box::new(AgentCell::started(
                id, summary, model, window, transcript,
            )));
        }
        Some(_) => {}
        None => state.push_cell(Cell::Subagent(Box::new(AgentCell::started(
            id, fallback, model, window, transcript,
        )))),
    }
}

/// A tick: each running subagent's elapsed time, in whole seconds (a cell changes once a second).
pub(super) fn on_tick(state: &mut AppState, now: Instant) {
    let running: Vec<(String, Instant)> = state.agents.clone();
    for (id, since) in running {
        let secs = now.saturating_duration_since(since).as_secs();
        let shown = match state.chat.iter().rev().find_map(|c| match c {
            Cell::Subagent(a) if a.id == id => Some(a.elapsed_ms / 1000),
            _ => None,
        }) {
            Some(s) => s,
            None => continue,
        };
        if shown != secs
            && let Some(Cell::Subagent(a)) = state.chat.find_tool_mut(&id)
        {
            a.elapsed_ms = secs.saturating_mul(1000);
        }
    }
}

/// The engine holds the workspace's `.mcp.json` until the user says whether its servers may
/// start: the question goes in the chat and takes the keys like a tool's approval (with the same
/// guard against keys typed for something else).
pub(super) fn on_mcp_json(
    state: &mut AppState,
    path: &Path,
    sha256: String,
    servers: &[ServerStatus],
    now: Instant,
) {
    let asked = Asked::McpJson { sha256 };
    if state.approvals.iter().any(|p| p.asked == asked) {
        return;
    }
    let shown = path.display().to_string();
    state.push_cell(Cell::McpJson {
        path: shown.clone(),
        servers: servers
            .iter()
            .map(|s| (s.name.clone(), s.transport.clone()))
            .collect(),
        answer: None,
    });
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    state.approvals.push_back(PendingApproval {
        asked,
        name: ".mcp.json".into(),
        summary: format!("{shown} would start: {}", names.join(", ")),
        cell: state.chat.len().saturating_sub(1),
        outside_workspace: false,
        command: None,
        diff: None,
        always: None,
    });
    // Like a tool's prompt it shows above the input and the focus stays; it answers keys only
    // on an empty input a while after it appeared and after the input last changed.
    if state.approval_shown_at.is_none() {
        state.approval_shown_at = Some(now);
    }
}

/// The MCP servers the next request waits for (none: the wait is over).
pub(super) fn on_mcp_waiting(state: &mut AppState, servers: Vec<String>, now: Instant) {
    state.mcp_waiting = match (servers.is_empty(), state.mcp_waiting.take()) {
        (true, _) => None,
        (false, Some((_, since))) => Some((servers, since)),
        (false, None) => Some((servers, now)),
    };
}
