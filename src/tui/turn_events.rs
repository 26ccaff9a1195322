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
use super::questions::{Asked, PendingApproval};
use super::queue;
use super::render::cell::Cell;
use super::render::tool_cell::ToolStatus;
use super::state::{AppState, NOTIFY_AFTER};

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
    state.activity.writing_handoff()
}

/// The stream's own states: a broken try's text is taken back (its replay streams anew after the
/// retry line); a long silence shows in the spinner.
fn on_stream(state: &mut AppState, s: StreamState, now: Instant) {
    match s {
        StreamState::Discarded { .. } => {
            if !writing(state) {
                state.chat.discard_broken_try();
            }
        }
        StreamState::Silent { silent_ms } => {
            state.activity.silent(Duration::from_millis(silent_ms), now);
        }
        StreamState::Resumed => state.activity.resumed(),
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
                state.mention.call_may_change_files(id.clone());
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
            state.mention.call_done(&id);
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
            fx,
        ),
        Event::Retry {
            attempt,
            max,
            reason,
            delay_ms,
        } => state.chat.push_cell(Cell::Retry {
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
    turn.is_some_and(|t| !state.turns.is_current(t))
}

fn on_turn_started(state: &mut AppState, turn: TurnId, kind: TurnKind, now: Instant) {
    state.turns.started(turn, now);
    // A message queued behind the last turn starts now: it runs (Esc aborts it).
    if kind == TurnKind::Message {
        state.activity.message_sent(now);
    }
}

fn on_user_message(state: &mut AppState, turn: Option<TurnId>, origin: Origin, text: String) {
    // The user's own messages of this run are in the chat already (as typed, chips and all).
    // The others: one the engine wrote (the successor's handoff briefing, a summary) or one
    // replayed from an earlier run; long ones are shown by their head.
    let shown = origin == Origin::User && turn.is_some();
    if !shown {
        state.chat.push_cell(Cell::User {
            text: clip_lines(&text, ENGINE_MESSAGE_LINES),
        });
    }
}

fn on_text_delta(state: &mut AppState, text: String, now: Instant) {
    if writing(state) {
        return; // the document lands in the side editor, not in the chat
    }
    state.activity.streaming(now);
    state.chat.text_delta(text);
}

fn on_thinking_delta(state: &mut AppState, text: String) {
    if !writing(state) {
        state.chat.thinking_delta(text);
    }
}

fn on_assistant_done(state: &mut AppState, text: String, interrupted: bool) {
    if !writing(state) {
        state.chat.assistant_done(text, interrupted);
    }
}

fn on_tool_call(state: &mut AppState, id: String, name: String, summary: String, now: Instant) {
    state.activity.tool_started(name.clone(), now);
    state.chat.tool_call(id, name, summary, now);
}

fn on_tool_result(
    state: &mut AppState,
    id: &str,
    output: String,
    is_error: bool,
    outcome: (Option<Box<FileDiff>>, Option<CommandExit>),
    now: Instant,
) {
    let result = if is_error {
        ToolStatus::Failed(output)
    } else {
        ToolStatus::Succeeded(output)
    };
    state.chat.tool_result(id, result, outcome);
    state.activity.tool_done(now);
}

/// A tool call waits for the user's answer: its prompt, and the terminal notified (bell or
/// desktop notification, as configured) when nothing was waiting already: the user may be
/// elsewhere while the turn stands still.
fn on_approval_request(
    state: &mut AppState,
    mut p: PendingApproval,
    now: Instant,
    fx: &mut Vec<Effect>,
) {
    if state.settings.notify && state.questions.is_empty() {
        fx.push(Effect::Notify(format!(
            "flower-tui: allow {}? (waiting for your answer)",
            p.name
        )));
    }
    // Its tool cell waits for the answer; it runs (and counts its seconds) once allowed.
    if let Asked::Tool { id } = &p.asked {
        state.chat.awaits_approval(id);
    }
    let summary = match p.unsandboxed {
        Some(_) => format!("{} once more, outside the sandbox", p.summary),
        None => p.summary.clone(),
    };
    state.chat.push_cell(Cell::Approval {
        name: p.name.clone(),
        summary,
        always: p.always.is_some(),
        answer: None,
    });
    p.cell = state.chat.last_index();
    state.questions.enqueue(p, now);
}

fn on_turn_end(
    state: &mut AppState,
    turn: TurnId,
    kind: TurnKind,
    reason: ExitReason,
    now: Instant,
    fx: &mut Vec<Effect>,
) {
    if state.turns.ends_current(turn) {
        state.chat.close_running_tools();
    }
    if let Some(started) = state.turns.ended(turn)
        && state.settings.notify
        && now.saturating_duration_since(started) >= NOTIFY_AFTER
    {
        let secs = now.saturating_duration_since(started).as_secs();
        fx.push(Effect::Notify(format!(
            "flower-tui: turn {reason} after {secs}s"
        )));
    }
    state.activity.turn_over();
    if kind == TurnKind::Handoff {
        // A `/handoff` turn: its `Event::Handoff` phases said everything.
        queue::on_turn_over(state, turn, reason, now, fx);
        return;
    }
    state.chat.finish_streaming();
    state.chat.flush_deferred();
    state.activity.message_over();
    match reason {
        ExitReason::MaxIterations { n, max } => state.chat.notice(format!(
            "Stopped: the iteration budget is spent ({n}/{max})"
        )),
        ExitReason::Interrupted => {
            if !state.chat.ends_interrupted() {
                state.chat.notice("Interrupted");
            }
        }
        ExitReason::Completed
        | ExitReason::Handoff
        | ExitReason::Unchanged
        | ExitReason::Error(_) => {}
    }
    queue::on_turn_over(state, turn, reason, now, fx);
}

/// The user allowed the call `id`: its cell runs from now (a denied call gets its result).
pub(super) fn approval_allowed(state: &mut AppState, id: &str, now: Instant) {
    state.chat.tool_allowed(id, now);
    state.activity.tool_allowed(now);
}

/// A piece of a running command's output: into its cell.
fn on_tool_output(state: &mut AppState, id: &str, text: &str) {
    state.chat.tool_output(id, text);
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
