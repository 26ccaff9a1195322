//! Engine events → state changes and chat cells (part of the pure reducer). The handoff's
//! phases are in `handoff_events.rs`.

use std::time::{Duration, Instant};

use crate::engine::context::{Thresholds, fmt_tokens};
use crate::engine::protocol::{Event, ExitReason, Origin, StreamState, TurnId, TurnKind};

use super::handoff_events::on_handoff;
use super::msg::Effect;
use super::render::cell::{AssistantState, Cell, ToolStatus};
use super::state::{AppState, Focus, GenerationCost, PendingApproval, Running};

/// Lines of an engine-written user message shown in the chat.
const ENGINE_MESSAGE_LINES: usize = 8;

/// The first `max` lines of `text`, plus `… (N more lines)` when there are more.
pub fn clip_lines(text: &str, max: usize) -> String {
    let total = text.lines().count();
    if total <= max + 1 {
        return text.to_string();
    }
    let mut out: Vec<&str> = text.lines().take(max).collect();
    let more = format!("… ({} more lines)", total - max);
    out.push(&more);
    out.join("\n")
}

/// The handoff's writing turn runs: its text goes to the document, not the chat.
fn writing(state: &AppState) -> bool {
    matches!(state.running, Running::WritingHandoff { .. })
}

/// The stream's own states: a broken try's text is taken back (its replay streams anew after the
/// retry line); a long silence shows in the spinner.
fn on_stream(state: &mut AppState, s: StreamState, now: Instant) {
    match s {
        StreamState::Discarded { .. } => {
            if writing(state) {
                return;
            }
            while matches!(
                state.chat.last(),
                Some(
                    Cell::Assistant {
                        state: AssistantState::Streaming(_),
                        ..
                    } | Cell::Thinking { .. }
                )
            ) {
                state.chat.pop();
            }
            state.streamed = false;
        }
        StreamState::Silent { silent_ms } => {
            state.silent_since = now.checked_sub(Duration::from_millis(silent_ms));
        }
        StreamState::Resumed => state.silent_since = None,
    }
}

/// Apply one engine event.
pub(super) fn on_event(state: &mut AppState, ev: Event, now: Instant, fx: &mut Vec<Effect>) {
    match ev {
        Event::SessionStarted {
            session_id,
            generation,
            model,
            provider,
            thresholds,
            demo,
            ..
        } => {
            state.labels.model = model;
            state.labels.provider = provider;
            state.labels.demo = demo;
            on_session_started(state, session_id, generation, thresholds);
        }
        Event::TurnStarted { turn, kind, .. } => on_turn_started(state, turn, kind, now),
        Event::UserMessage { turn, origin, text } => on_user_message(state, turn, origin, text),
        Event::TextDelta { text } => on_text_delta(state, text, now),
        Event::ThinkingDelta { text } => on_thinking_delta(state, text),
        Event::AssistantDone { text, interrupted } => on_assistant_done(state, text, interrupted),
        Event::ToolCall {
            id, name, summary, ..
        } => on_tool_call(state, id, name, summary, now),
        Event::ToolResult {
            id,
            output,
            is_error,
            spilled,
            ..
        } => {
            let output = match spilled {
                Some(p) => format!("{output}\n[full output: {}]", p.display()),
                None => output,
            };
            on_tool_result(state, &id, output, is_error, now);
        }
        Event::ApprovalRequest {
            id, name, summary, ..
        } => on_approval_request(state, id, name, summary, now),
        Event::Usage {
            context,
            thresholds,
            estimated,
            session_cost_usd,
            ..
        } => on_usage(state, context, thresholds, estimated, session_cost_usd),
        Event::Handoff(phase) => on_handoff(state, phase, now, fx),
        Event::Compaction {
            before,
            after,
            trigger,
        } => state.notice(format!(
            "Context compacted ({trigger}): {} → {}",
            fmt_tokens(before),
            fmt_tokens(after)
        )),
        Event::Retry {
            attempt,
            max,
            reason,
            delay_ms,
        } => state.push_cell(Cell::Retry {
            attempt,
            max,
            reason,
            delay_ms,
        }),
        Event::Stream(s) => on_stream(state, s, now),
        // The engine's notice that follows says what was learned and where it is recorded.
        Event::WindowLearned { thresholds, .. } => {
            state.labels.window_source = "learned from an overflow message".into();
            state.set_thresholds(thresholds);
        }
        ev @ (Event::Pins { .. }
        | Event::Focus { .. }
        | Event::Todo { .. }
        | Event::MemoryRefused { .. }) => super::step_memory::on_event(state, ev),
        // Launch turns the changes worth a notice into notices; /mcp shows the states.
        Event::McpStatus(status) => {
            match state.mcp_servers.iter_mut().find(|s| s.name == status.name) {
                Some(known) => *known = status,
                None => state.mcp_servers.push(status),
            }
        }
        Event::Notice { message } => state.notice(message),
        Event::Warning { message } => state.notice(format!("warning: {message}")),
        Event::Error { kind, message } => state.error(format!("{kind}: {message}")),
        Event::TurnEnd {
            turn, kind, reason, ..
        } => on_turn_end(state, turn, kind, reason),
        Event::Result { .. } => {}
        // Another run (or the same one, continued): its step's pins, plan and focus follow in
        // their own events; what was shown of the run left behind goes.
        Event::Resumed { .. } => state.memory = Default::default(),
        // Issue 10's engine events: the TUI side renders them (until then they are ignored).
        Event::Permissions { .. }
        | Event::ToolOutputDelta { .. }
        | Event::SessionPrompt { .. }
        | Event::InitExists { .. }
        | Event::Cost { .. }
        | Event::Sessions { .. }
        | Event::Model { .. }
        | Event::Attachment { .. } => {}
    }
    state.sync_gauge_mode();
}

fn on_session_started(
    state: &mut AppState,
    session_id: String,
    generation: u32,
    thresholds: Thresholds,
) {
    state.set_thresholds(thresholds);
    state.gauge.context = 0;
    state.gauge.estimated = false;
    state.generation = generation;
    if state.tally.last().map(|c| c.session_id.as_str()) != Some(session_id.as_str()) {
        state.tally.push(GenerationCost {
            session_id,
            generation,
            cost_usd: 0.0,
            turns: 0,
            requests: 0,
        });
    }
}

fn on_turn_started(state: &mut AppState, turn: TurnId, kind: TurnKind, now: Instant) {
    state.engine_turn = Some(turn);
    // A message queued behind the last turn starts now: it runs (Esc aborts it).
    if kind == TurnKind::Message && state.running == Running::Idle {
        state.running = Running::Streaming { since: now };
    }
}

fn on_user_message(state: &mut AppState, turn: Option<TurnId>, origin: Origin, text: String) {
    // The user's own messages of this run are in the chat already (as typed, chips and all).
    // The others: one the engine wrote (the successor's handoff briefing, a summary) or one
    // replayed from an earlier run; long ones are shown by their head.
    let shown = origin == Origin::User && turn.is_some();
    if !shown {
        state.push_cell(Cell::User {
            text: clip_lines(&text, ENGINE_MESSAGE_LINES),
        });
    }
}

fn on_text_delta(state: &mut AppState, text: String, now: Instant) {
    if writing(state) {
        return; // the document lands in the side editor, not in the chat
    }
    if !matches!(state.running, Running::Streaming { .. }) {
        state.running = Running::Streaming { since: now };
    }
    state.streamed = true;
    let streaming = state.chat.last().is_some_and(Cell::is_streaming);
    match state.chat.last_mut() {
        Some(cell) if streaming => {
            cell.push_delta(&text);
        }
        _ => state.chat.push(Cell::streaming(text)),
    }
}

fn on_thinking_delta(state: &mut AppState, text: String) {
    if writing(state) {
        return;
    }
    if let Some(Cell::Thinking { text: t }) = state.chat.last_mut() {
        t.push_str(&text);
    } else {
        state.push_cell(Cell::Thinking { text });
    }
}

fn on_assistant_done(state: &mut AppState, text: String, interrupted: bool) {
    if writing(state) {
        return;
    }
    let streamed = std::mem::take(&mut state.streamed);
    let end = if interrupted {
        AssistantState::Interrupted
    } else {
        AssistantState::Done
    };
    match state.chat.last_mut() {
        Some(Cell::Assistant {
            markdown,
            state: cell_state @ AssistantState::Streaming(_),
        }) => {
            // Deltas that went missing: the complete text extends what streamed.
            if text.len() > markdown.len() && text.starts_with(markdown.as_str()) {
                *markdown = text;
            }
            *cell_state = end;
        }
        _ if !streamed && !text.is_empty() => state.chat.push(Cell::Assistant {
            markdown: text,
            state: end,
        }),
        _ => {}
    }
    state.flush_deferred();
}

fn on_tool_call(state: &mut AppState, id: String, name: String, summary: String, now: Instant) {
    if !writing(state) {
        state.running = Running::Tool {
            name: name.clone(),
            since: now,
        };
    }
    state.push_cell(Cell::Tool {
        id,
        name,
        summary,
        status: ToolStatus::Running,
        expanded: false,
    });
}

fn on_tool_result(state: &mut AppState, id: &str, output: String, is_error: bool, now: Instant) {
    if let Some(Cell::Tool { status, .. }) = state.chat.find_tool_mut(id) {
        *status = if is_error {
            ToolStatus::Failed(output)
        } else {
            ToolStatus::Succeeded(output)
        };
    }
    if matches!(state.running, Running::Tool { .. }) {
        state.running = Running::Streaming { since: now };
    }
}

fn on_approval_request(
    state: &mut AppState,
    id: String,
    name: String,
    summary: String,
    now: Instant,
) {
    state.push_cell(Cell::Approval {
        name: name.clone(),
        summary: summary.clone(),
        answer: None,
    });
    let cell = state.chat.len().saturating_sub(1);
    state.approvals.push_back(PendingApproval {
        id,
        name,
        summary,
        cell,
    });
    if state.focus != Focus::Approval {
        state.focus_before_approval = state.focus;
        state.focus = Focus::Approval;
        state.approval_shown_at = Some(now);
    }
}

fn on_usage(
    state: &mut AppState,
    context: u64,
    thresholds: Thresholds,
    estimated: bool,
    session_cost_usd: f64,
) {
    state.gauge.context = context;
    state.gauge.estimated = estimated;
    if thresholds != state.thresholds {
        state.set_thresholds(thresholds);
    }
    if let Some(c) = state.current_cost_mut() {
        c.cost_usd = session_cost_usd;
        if !estimated {
            c.requests += 1;
        }
    }
}

fn on_turn_end(state: &mut AppState, turn: TurnId, kind: TurnKind, reason: ExitReason) {
    if state.engine_turn == Some(turn) {
        state.engine_turn = None;
    }
    if kind == TurnKind::Handoff {
        // A `/handoff` turn: its `Event::Handoff` phases said everything.
        return;
    }
    state.finish_streaming();
    state.flush_deferred();
    if matches!(
        state.running,
        Running::Streaming { .. } | Running::Tool { .. }
    ) {
        state.running = Running::Idle;
    }
    if let Some(c) = state.current_cost_mut() {
        c.turns += 1;
    }
    match reason {
        ExitReason::MaxIterations { n, max } => state.notice(format!(
            "Stopped: the iteration budget is spent ({n}/{max})"
        )),
        ExitReason::Interrupted => {
            let marked = matches!(
                state.chat.last(),
                Some(Cell::Assistant {
                    state: AssistantState::Interrupted,
                    ..
                })
            );
            if !marked {
                state.notice("Interrupted");
            }
        }
        ExitReason::Completed
        | ExitReason::Handoff
        | ExitReason::Unchanged
        | ExitReason::Error(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_engine_messages_are_clipped() {
        assert_eq!(
            clip_lines("a\nb", 1),
            "a\nb",
            "one extra line is not worth a marker"
        );
        assert_eq!(clip_lines("a\nb\nc\nd", 2), "a\nb\n… (2 more lines)");
    }
}
