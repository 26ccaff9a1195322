//! Subagents in the reducer: each one a live cell in the place of its `task` call (its tool
//! calls, the tokens it holds, what it does now), its elapsed time advanced once a second, and
//! its end and report.

use std::time::Instant;

use crate::engine::protocol::SubagentPhase;

use super::render::agent_cell::{AgentStep, STEP_TEXT_MAX};
use super::state::AppState;

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
    let Some(agent) = state.chat.subagent_mut(&id) else {
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
            state.activity.agent_ended(&id);
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
    state.activity.agent_started(&id, now);
    state
        .chat
        .subagent_started(id, description, model, window, transcript);
}

/// A tick: each running subagent's elapsed time, in whole seconds (a cell changes once a second).
pub(super) fn on_tick(state: &mut AppState, now: Instant) {
    let running: Vec<(String, Instant)> = state.activity.agents().to_vec();
    for (id, since) in running {
        let secs = now.saturating_duration_since(since).as_secs();
        state.chat.subagent_seconds(&id, secs);
    }
}
