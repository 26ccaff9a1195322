//! One turn's events in the reducer: the turn starting and ending (and the queue moving on), the
//! user messages it shows (the engine's own clipped to their head), the reply streamed into its
//! cell, thinking, tool calls with their live output and results, approval requests (the call's
//! cell waits for the answer, then runs), retries and the stream's own states. The handoff's
//! writing turn sends its text to the document, never to the chat. A reply's event names its
//! turn: one of a turn other than the running one (a late delta or result of an aborted turn) is
//! dropped, and a tool cell still running when its turn ends is closed as interrupted.

use std::time::{Duration, Instant};

use crate::engine::protocol::{
    CommandExit, Event, ExitReason, FileDiff, Origin, StreamState, TurnId, TurnKind,
};

use super::msg::Effect;
use super::questions;
use super::queue;
use super::render::cell::{AssistantState, Cell};
use super::render::tool_cell::ToolStatus;
use super::state::{AppState, Asked, NOTIFY_AFTER, PendingApproval, Running};

/// Lines of an engine-written user message shown in the chat.
const ENGINE_MESSAGE_LINES: usize = 8;

/// The first `max` lines of `text`, plus `… (N more lines)` when there are more.
fn clip_lines(text: &str, max: usize) -> String {
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
            state.reply = None;
        }
        StreamState::Silent { silent_ms } => {
            state.silent_since = now.checked_sub(Duration::from_millis(silent_ms));
        }
        StreamState::Resumed => state.silent_since = None,
    }
}

/// Apply one event of a turn: its start, the messages it shows, the streamed reply, its tool
/// calls and their approvals, the stream's own states, its end.
pub(super) fn on_turn_event(state: &mut AppState, ev: Event, now: Instant, fx: &mut Vec<Effect>) {
    if stale(state, &ev) {
        return;
    }
    match ev {
        Event::TurnStarted { turn, kind, .. } => on_turn_started(state, turn, kind, now),
        Event::UserMessage { turn, origin, text } => on_user_message(state, turn, origin, text),
        Event::TextDelta { text, .. } => on_text_delta(state, text, now),
        Event::ThinkingDelta { text } => on_thinking_delta(state, text),
        Event::AssistantDone {
            text, interrupted, ..
        } => on_assistant_done(state, text, interrupted),
        Event::ToolCall {
            id,
            name,
            summary,
            changes_files,
            ..
        } => {
            if changes_files {
                state.changing_calls.push(id.clone());
            }
            on_tool_call(state, id, name, summary, now)
        }
        Event::ToolResult {
            id,
            output,
            is_error,
            spilled,
            diff,
            exit,
            // The output ends with the sandbox's note already.
            sandbox: _,
            ..
        } => {
            let output = match spilled {
                Some(p) => format!("{output}\n[full output: {}]", p.display()),
                None => output,
            };
            // The engine said the call may change files: the @ index walks again before its
            // next answer.
            if let Some(i) = state.changing_calls.iter().position(|c| *c == id) {
                state.changing_calls.swap_remove(i);
                state.files_stale = true;
            }
            on_tool_result(state, &id, output, is_error, (diff, exit), now);
        }
        Event::ToolOutputDelta { id, text } => on_tool_output(state, &id, &text),
        Event::ApprovalRequest {
            id,
            name,
            summary,
            outside_workspace,
            command,
            diff,
            always,
            unsandboxed,
        } => on_approval_request(
            state,
            PendingApproval {
                asked: Asked::Tool { id },
                name,
                summary,
                cell: 0,
                outside_workspace,
                command,
                diff,
                always,
                unsandboxed,
            },
            now,
        ),
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
        Event::TurnEnd {
            turn, kind, reason, ..
        } => on_turn_end(state, turn, kind, reason, now, fx),
        _ => {}
    }
}

/// An event of a turn that is not the one the engine runs now (a late delta or result of a turn
/// that was aborted, arriving after the next one started): nothing of it is drawn. An event with
/// no turn (a reply replayed from an earlier run) belongs to none and is shown.
fn stale(state: &AppState, ev: &Event) -> bool {
    let turn = match ev {
        Event::TextDelta { turn, .. }
        | Event::AssistantDone { turn, .. }
        | Event::ToolCall { turn, .. }
        | Event::ToolResult { turn, .. } => *turn,
        _ => None,
    };
    turn.is_some_and(|t| state.engine_turn != Some(t))
}

fn on_turn_started(state: &mut AppState, turn: TurnId, kind: TurnKind, now: Instant) {
    state.engine_turn = Some(turn);
    // A turn the engine started itself (the demo's first message) runs too: what is typed now
    // waits for it like for any other.
    if !state.in_flight.contains(&turn) {
        state.in_flight.push(turn);
    }
    state.turn_started_at = Some(now);
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
    let streaming = state.chat.last().is_some_and(Cell::is_streaming);
    match state.chat.last_mut() {
        Some(cell) if streaming => {
            cell.push_delta(&text);
        }
        _ => {
            state.chat.push(Cell::streaming(text));
            state.reply = Some(state.chat.len().saturating_sub(1));
        }
    }
}

fn on_thinking_delta(state: &mut AppState, text: String) {
    if writing(state) {
        return;
    }
    if let Some(Cell::Thinking { text: t, .. }) = state.chat.last_mut() {
        t.push_str(&text);
    } else {
        state.push_cell(Cell::Thinking {
            text,
            expanded: false,
        });
    }
}

fn on_assistant_done(state: &mut AppState, text: String, interrupted: bool) {
    if writing(state) {
        return;
    }
    let end = if interrupted {
        AssistantState::Interrupted
    } else {
        AssistantState::Done
    };
    // The reply's own cell gets its end, wherever it is now (a notice may have come after it);
    // a reply that never streamed is drawn once, here. Never both: that drew an interrupted
    // reply twice.
    match state.reply.take() {
        Some(idx) => {
            if let Some(Cell::Assistant {
                markdown,
                state: cell_state,
            }) = state.chat.get_mut(idx)
            {
                // Deltas that went missing: the complete text extends what streamed.
                if text.len() > markdown.len() && text.starts_with(markdown.as_str()) {
                    *markdown = text;
                }
                *cell_state = end;
            }
        }
        None if !text.is_empty() => state.push_cell(Cell::Assistant {
            markdown: text,
            state: end,
        }),
        None => {}
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
        status: ToolStatus::running(),
        expanded: false,
        diff: None,
        exit: None,
    });
    state.running_tool = Some((state.chat.len().saturating_sub(1), now));
}

fn on_tool_result(
    state: &mut AppState,
    id: &str,
    output: String,
    is_error: bool,
    (new_diff, new_exit): (Option<Box<FileDiff>>, Option<CommandExit>),
    now: Instant,
) {
    state.running_tool = None;
    let result = if is_error {
        ToolStatus::Failed(output)
    } else {
        ToolStatus::Succeeded(output)
    };
    match state.chat.find_tool_mut(id) {
        Some(Cell::Tool {
            status, diff, exit, ..
        }) => {
            *status = result;
            *diff = new_diff;
            *exit = new_exit;
        }
        Some(Cell::Subagent(agent)) => agent.report = result,
        _ => {}
    }
    if matches!(state.running, Running::Tool { .. }) {
        state.running = Running::Streaming { since: now };
    }
}

fn on_approval_request(state: &mut AppState, mut p: PendingApproval, now: Instant) {
    // Its tool cell waits for the answer; it runs (and counts its seconds) once allowed.
    if let Asked::Tool { id } = &p.asked
        && let Some(Cell::Tool { status, .. }) = state.chat.find_tool_mut(id)
        && matches!(status, ToolStatus::Running { .. })
    {
        *status = ToolStatus::AwaitsApproval;
    }
    let summary = match p.unsandboxed {
        Some(_) => format!("{} once more, outside the sandbox", p.summary),
        None => p.summary.clone(),
    };
    state.push_cell(Cell::Approval {
        name: p.name.clone(),
        summary,
        always: p.always.is_some(),
        answer: None,
    });
    p.cell = state.chat.len().saturating_sub(1);
    questions::enqueue(state, p, now);
}

fn on_turn_end(
    state: &mut AppState,
    turn: TurnId,
    kind: TurnKind,
    reason: ExitReason,
    now: Instant,
    fx: &mut Vec<Effect>,
) {
    if state.engine_turn.is_none_or(|t| t == turn) {
        close_running_tools(state);
    }
    if state.engine_turn == Some(turn) {
        state.engine_turn = None;
        if let Some(started) = state.turn_started_at.take()
            && state.settings.notify
            && now.saturating_duration_since(started) >= NOTIFY_AFTER
        {
            let secs = now.saturating_duration_since(started).as_secs();
            fx.push(Effect::Notify(format!(
                "flower-tui: turn {reason} after {secs}s"
            )));
        }
    }
    state.mcp_waiting = None;
    // The engine answers every `task` call before a turn ends: none of its subagents runs on.
    state.agents.clear();
    if kind == TurnKind::Handoff {
        // A `/handoff` turn: its `Event::Handoff` phases said everything.
        queue::on_turn_over(state, turn, reason, now, fx);
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
    queue::on_turn_over(state, turn, reason, now, fx);
}

/// What a tool cell says when its turn ended before its result: the result of an aborted call
/// may arrive after the next turn started, and is dropped then.
const TOOL_INTERRUPTED: &str = "interrupted: its turn ended before the result";

/// The running turn is over: its tool cells with no result yet are closed as interrupted, so none
/// stays running on screen.
fn close_running_tools(state: &mut AppState) {
    let open: Vec<usize> = (0..state.chat.len())
        .filter(|&i| {
            matches!(
                state.chat.get(i),
                Some(Cell::Tool {
                    status: ToolStatus::Running { .. } | ToolStatus::AwaitsApproval,
                    ..
                })
            )
        })
        .collect();
    for i in &open {
        if let Some(Cell::Tool { status, .. }) = state.chat.get_mut(*i) {
            *status = ToolStatus::Failed(TOOL_INTERRUPTED.to_string());
        }
    }
    if !open.is_empty() {
        state.running_tool = None;
    }
}

/// The user allowed the call `id`: its cell runs from now (a denied call gets its result).
pub(super) fn approval_allowed(state: &mut AppState, id: &str, now: Instant) {
    if let Some(Cell::Tool { status, .. }) = state.chat.find_tool_mut(id)
        && *status == ToolStatus::AwaitsApproval
    {
        *status = ToolStatus::running();
    }
    if let Some((_, since)) = state.running_tool.as_mut() {
        *since = now;
    }
    if let Running::Tool { since, .. } = &mut state.running {
        *since = now;
    }
}

/// A piece of a running command's output: into its cell.
fn on_tool_output(state: &mut AppState, id: &str, text: &str) {
    if let Some(Cell::Tool {
        status: ToolStatus::Running { live, .. },
        ..
    }) = state.chat.find_tool_mut(id)
    {
        live.push(text);
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
