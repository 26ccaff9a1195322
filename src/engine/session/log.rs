//! What the engine's events say in the log file (`tracing`, this crate's target only). Text
//! streams are left out; message texts are logged by length only. The log writer masks secrets.

use std::time::Instant;

use crate::engine::protocol::{Event, HandoffId, HandoffPhase};

/// Log one event on its way to the front end. `handoff`: the handoff in progress and when it
/// began, so each phase says how long after the start it came.
pub(super) fn event(ev: &Event, handoff: Option<(HandoffId, Instant)>) {
    let since = handoff.map_or(0, |(_, t)| t.elapsed().as_millis());
    match ev {
        Event::Handoff(phase) => handoff_phase(phase, since),
        Event::SessionStarted { .. }
        | Event::SessionPrompt { .. }
        | Event::Resumed { .. }
        | Event::Model { .. }
        | Event::WindowLearned { .. }
        | Event::Compaction { .. }
        | Event::Usage { .. } => session_event(ev),
        Event::TurnStarted { .. }
        | Event::UserMessage { .. }
        | Event::AssistantDone { .. }
        | Event::ToolCall { .. }
        | Event::ToolResult { .. }
        | Event::ApprovalRequest { .. }
        | Event::Attachment { .. }
        | Event::Stream(_) => turn_event(ev),
        Event::Pins { .. }
        | Event::Focus { .. }
        | Event::Todo { .. }
        | Event::MemoryRefused { .. } => memory_event(ev),
        Event::McpStatus(_) | Event::McpWaiting { .. } | Event::McpJsonApproval { .. } => {
            mcp_event(ev)
        }
        Event::Hook(note) => tracing::info!(
            event = %note.event,
            outcome = note.outcome,
            ms = note.elapsed_ms,
            "hook `{}` ran: {}",
            note.name,
            note.exit
        ),
        Event::HooksApproval(q) => tracing::info!(
            hooks = q.hooks.len(),
            "{}'s hooks await the user's approval",
            q.path.display()
        ),
        Event::Restore(report) => tracing::info!("{}", report.summary()),
        Event::Diagnostics { id, report, .. } => tracing::info!(
            call = %id,
            files = report.checked.len(),
            new = report.new.len() + report.more_errors + report.more_warnings,
            fixed = report.gone.len() + report.more_gone,
            notes = report.notes.len(),
            "diagnostics"
        ),
        Event::Mode { mode } => tracing::info!(mode = mode.as_str(), "mode"),
        Event::Plan { path, markdown, .. } => tracing::info!(
            path = %path.display(),
            chars = markdown.chars().count(),
            "plan presented"
        ),
        Event::RewindPoints { points } => tracing::debug!("rewind points: {}", points.len()),
        Event::Models { models, error } => {
            tracing::info!(models = models.len(), error = ?error, "models listed")
        }
        Event::Rewound {
            turn, mode, files, ..
        } => tracing::info!(turn, ?mode, files = files.len(), "rewound"),
        Event::RewindConflict {
            turn, mode, files, ..
        } => tracing::info!(
            turn,
            ?mode,
            files = files.len(),
            "rewind stopped: files changed"
        ),
        Event::Notice { .. }
        | Event::Warning { .. }
        | Event::Error { .. }
        | Event::Sessions { .. }
        | Event::Cost { .. }
        | Event::InitExists { .. }
        | Event::Permissions { .. } => answer_event(ev),
        // A subagent logs its own start and end (its events do not pass through the engine's);
        // text streams, retries (the request logs them) and the ends of turns (the turn logs
        // its own) are not logged here.
        Event::JobEnded { job } => tracing::info!(
            id = job.id,
            state = job.state.describe(),
            bytes = job.bytes,
            "background job ended"
        ),
        Event::Subagent(_)
        | Event::Jobs { .. }
        | Event::JobOutput { .. }
        | Event::TextDelta { .. }
        | Event::ToolOutputDelta { .. }
        | Event::ThinkingDelta { .. }
        | Event::Retry { .. }
        | Event::TurnEnd { .. }
        | Event::Result { .. } => {}
    }
}

/// The session's own events: its start and prompt, a resumed run, the settings, the gauge.
fn session_event(ev: &Event) {
    match ev {
        Event::SessionStarted {
            session_id,
            parent_session,
            generation,
            model,
            thresholds,
            ..
        } => tracing::info!(
            session = %session_id,
            parent = parent_session.as_deref().unwrap_or("-"),
            generation,
            model = %model,
            window = thresholds.window,
            at = thresholds.at,
            warn_at = thresholds.warn_at,
            "session started"
        ),
        Event::SessionPrompt { instructions, .. } => tracing::info!(
            files = instructions.len(),
            bytes = instructions.iter().map(|f| f.included).sum::<usize>(),
            "session prompt: {}",
            instructions
                .iter()
                .map(|f| f.path.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Event::Resumed {
            run_id,
            session_id,
            generation,
            messages,
            ..
        } => tracing::info!(run = %run_id, session = %session_id, generation, messages, "resumed"),
        Event::Model {
            model,
            effort,
            thresholds,
            window_source,
        } => tracing::info!(
            model = %model,
            effort = effort.map_or("off", |e| e.as_str()),
            window = thresholds.window,
            window_source = %window_source,
            "model settings"
        ),
        Event::WindowLearned { model, thresholds } => {
            tracing::info!(model = %model, window = thresholds.window, "window learned")
        }
        Event::Compaction {
            before,
            after,
            trigger,
        } => tracing::info!(before, after, %trigger, "compacted"),
        Event::Usage {
            context,
            estimated,
            cost_usd,
            session_cost_usd,
            ..
        } => tracing::debug!(context, estimated, cost_usd, session_cost_usd, "usage"),
        _ => {}
    }
}

/// One turn's events: its start, its messages, its tool calls and their approvals, the stream.
fn turn_event(ev: &Event) {
    match ev {
        Event::TurnStarted { turn, kind, origin } => {
            tracing::info!(turn = turn.0, ?kind, ?origin, "turn started")
        }
        Event::UserMessage { turn, origin, text } => tracing::debug!(
            turn = turn.map_or(0, |t| t.0),
            ?origin,
            chars = text.len(),
            "user message"
        ),
        Event::AssistantDone {
            text, interrupted, ..
        } => {
            tracing::debug!(chars = text.len(), interrupted, "assistant message")
        }
        Event::ToolCall {
            id, name, summary, ..
        } => {
            tracing::debug!(id = %id, name = %name, "tool call: {summary}")
        }
        Event::ToolResult {
            id,
            name,
            output,
            is_error,
            spilled,
            diff,
            exit,
            sandbox,
            ..
        } => tracing::debug!(
            id = %id,
            name = %name,
            is_error,
            chars = output.len(),
            spilled = spilled.is_some(),
            diff = diff.as_ref().map(|d| d.stat()).unwrap_or_default(),
            exit = exit.as_ref().map(|e| e.summary.as_str()).unwrap_or("-"),
            sandbox = sandbox.as_ref().map(|s| s.message.as_str()).unwrap_or("-"),
            "tool result"
        ),
        Event::ApprovalRequest {
            id,
            name,
            summary,
            outside_workspace,
            always,
            unsandboxed,
            ..
        } => tracing::info!(
            id = %id,
            name = %name,
            outside_workspace,
            unsandboxed = unsandboxed.is_some(),
            always = always.as_ref().map(|a| a.label.as_str()).unwrap_or("-"),
            "approval asked: {summary}"
        ),
        Event::Attachment { path, summary, .. } => {
            tracing::debug!(path = %path, "attachment: {summary}")
        }
        Event::Stream(state) => tracing::debug!(?state, "stream"),
        _ => {}
    }
}

/// The step's memory: pins, focus, plan, a refusal.
fn memory_event(ev: &Event) {
    match ev {
        Event::Pins {
            pins, change, step, ..
        } => tracing::info!(
            pins = pins.len(),
            ?change,
            step = step.as_deref().unwrap_or("-"),
            "pins changed"
        ),
        Event::Focus { focus, .. } => tracing::info!(
            chars = focus.as_ref().map_or(0, String::len),
            "standing focus {}",
            if focus.is_some() { "set" } else { "cleared" }
        ),
        Event::Todo { items } => tracing::debug!(items = items.len(), "plan written"),
        Event::MemoryRefused { reason, .. } => tracing::info!(?reason, "memory op refused"),
        _ => {}
    }
}

/// The MCP servers: a state change, the wait for them, a `.mcp.json` to approve.
fn mcp_event(ev: &Event) {
    match ev {
        Event::McpStatus(status) => {
            tracing::info!(server = %status.name, "mcp server {}", status.state)
        }
        Event::McpWaiting { servers } => {
            tracing::info!("waiting for MCP servers: {}", servers.join(", "))
        }
        Event::McpJsonApproval { path, servers, .. } => tracing::info!(
            servers = servers.len(),
            "{} awaits the user's approval",
            path.display()
        ),
        _ => {}
    }
}

/// Notices, warnings, errors and the answers to the front end's questions.
fn answer_event(ev: &Event) {
    match ev {
        Event::Notice { message } => tracing::debug!("notice: {message}"),
        Event::Warning { message } => tracing::warn!("{message}"),
        Event::Error { kind, message } => tracing::error!(%kind, "{message}"),
        Event::Sessions { sessions, .. } => {
            tracing::debug!(runs = sessions.len(), "sessions listed")
        }
        Event::Cost {
            total_usd, rows, ..
        } => tracing::debug!(total_usd, generations = rows.len(), "cost listed"),
        Event::InitExists { path, .. } => {
            tracing::info!(path = %path.display(), "/init: the file exists")
        }
        Event::Permissions { allowances, .. } => {
            tracing::debug!(grants = allowances.len(), "permissions listed")
        }
        _ => {}
    }
}

fn handoff_phase(phase: &HandoffPhase, ms: u128) {
    match phase {
        HandoffPhase::Near {
            context,
            at,
            window,
        } => tracing::info!(context, at, window, "handoff near"),
        HandoffPhase::Writing {
            handoff,
            manual,
            background,
            ..
        } => tracing::info!(
            handoff = handoff.0,
            manual,
            background,
            ms,
            "handoff: writing"
        ),
        HandoffPhase::Rescuing {
            handoff,
            reason,
            stubbed,
            dropped,
            background,
        } => tracing::warn!(
            handoff = handoff.0,
            ms,
            stubbed,
            dropped,
            background,
            "handoff: rescue on a reduced history ({reason})"
        ),
        HandoffPhase::Retrying {
            handoff,
            reason,
            background,
        } => tracing::warn!(
            handoff = handoff.0,
            ms,
            background,
            "handoff: once more with the short prompt ({reason})"
        ),
        HandoffPhase::Waiting {
            handoff,
            context,
            limit,
        } => tracing::info!(
            handoff = handoff.0,
            ms,
            context,
            limit,
            "handoff: the main thread waits for the document"
        ),
        HandoffPhase::Frozen {
            handoff,
            path,
            degraded,
            awaits_review,
            ..
        } => tracing::info!(
            handoff = handoff.0,
            ms,
            degraded,
            awaits_review,
            path = %path.as_deref().map_or("(no workbench)".into(), |p| p.display().to_string()),
            "handoff: frozen"
        ),
        HandoffPhase::Done {
            handoff,
            context,
            degraded,
            generation,
            sections,
            source,
            tail,
            ..
        } => tracing::info!(
            handoff = handoff.0,
            ms,
            context,
            degraded,
            generation,
            source = source.as_str(),
            tail,
            sections = %sections.join(","),
            "handoff: successor briefed"
        ),
        HandoffPhase::Cancelled { handoff } => {
            tracing::info!(handoff = handoff.0, ms, "handoff: cancelled")
        }
        HandoffPhase::Failed { handoff, message } => {
            tracing::warn!(handoff = handoff.0, ms, "handoff failed: {message}")
        }
        HandoffPhase::Refused { reason, .. } => tracing::info!(?reason, "handoff refused"),
        HandoffPhase::Reopened {
            handoff,
            frozen_at,
            unsaved,
            ..
        } => tracing::info!(
            handoff = handoff.0,
            frozen_at = %frozen_at,
            unsaved = unsaved.is_some(),
            "handoff: review reopened (frozen by an earlier process)"
        ),
    }
}
