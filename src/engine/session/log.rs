//! What the engine's events say in the log file (`tracing`, this crate's target only). Text
//! streams are left out; message texts are logged by length only. The log writer masks secrets.

use std::time::Instant;

use crate::engine::protocol::{Event, HandoffId, HandoffPhase};

/// Log one event on its way to the front end. `handoff`: the handoff in progress and when it
/// began, so each phase says how long after the start it came.
pub(super) fn event(ev: &Event, handoff: Option<(HandoffId, Instant)>) {
    let since = handoff.map_or(0, |(_, t)| t.elapsed().as_millis());
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
        Event::TurnStarted { turn, kind, origin } => {
            tracing::info!(turn = turn.0, ?kind, ?origin, "turn started")
        }
        Event::UserMessage { turn, origin, text } => tracing::debug!(
            turn = turn.map_or(0, |t| t.0),
            ?origin,
            chars = text.len(),
            "user message"
        ),
        Event::AssistantDone { text, interrupted } => {
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
        } => tracing::debug!(
            id = %id,
            name = %name,
            is_error,
            chars = output.len(),
            spilled = spilled.is_some(),
            "tool result"
        ),
        Event::ApprovalRequest {
            id,
            name,
            summary,
            outside_workspace,
        } => tracing::info!(id = %id, name = %name, outside_workspace, "approval asked: {summary}"),
        Event::Usage {
            context,
            estimated,
            cost_usd,
            session_cost_usd,
            ..
        } => tracing::debug!(context, estimated, cost_usd, session_cost_usd, "usage"),
        Event::Handoff(phase) => handoff_phase(phase, since),
        Event::Compaction {
            before,
            after,
            trigger,
        } => tracing::info!(before, after, %trigger, "compacted"),
        Event::WindowLearned { model, thresholds } => {
            tracing::info!(model = %model, window = thresholds.window, "window learned")
        }
        Event::Stream(state) => tracing::debug!(?state, "stream"),
        Event::Notice { message } => tracing::debug!("notice: {message}"),
        Event::Warning { message } => tracing::warn!("{message}"),
        Event::Error { kind, message } => tracing::error!(%kind, "{message}"),
        Event::TextDelta { .. }
        | Event::ThinkingDelta { .. }
        | Event::Retry { .. }
        | Event::TurnEnd { .. }
        | Event::Result { .. } => {}
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
