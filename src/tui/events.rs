//! Engine events → state changes and chat cells (part of the pure reducer).

use std::time::Instant;

use serde_json::Value;

use crate::engine::context::{fmt_tokens, fmt_window};
use crate::engine::protocol::{Event, ExitReason, HandoffPhase, Op, Origin, TurnKind};

use super::editor::SideEditor;
use super::render::cell::Cell;
use super::state::{
    AppState, Fingerprint, Focus, GenerationCost, HandoffKind, PendingApproval, Running,
};
use super::update::Effect;

/// Longest tool summary kept for a tool cell's header.
const SUMMARY_CHARS: usize = 200;

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

/// The one-line summary of a tool call's input for its cell header.
pub fn tool_summary(name: &str, input: &Value) -> String {
    let field = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_string);
    let summary = match name {
        "bash" => field("command"),
        "grep" => field("pattern").map(|p| match field("path") {
            Some(dir) => format!("{p} in {dir}"),
            None => p,
        }),
        "glob" => field("pattern"),
        _ => field("path").or_else(|| field("file_path")),
    }
    .unwrap_or_else(|| match input {
        Value::Object(m) if m.is_empty() => String::new(),
        other => other.to_string(),
    });
    let first = summary.lines().next().unwrap_or_default();
    let mut out: String = first.chars().take(SUMMARY_CHARS).collect();
    if out.len() < summary.len() {
        out.push('…');
    }
    out
}

/// The streaming assistant cell (if it is the last cell) stops streaming.
pub(super) fn finish_streaming(state: &mut AppState) {
    if let Some(Cell::Assistant { streaming, .. }) = state.chat.last_mut()
        && *streaming
    {
        *streaming = false;
        state.chat.invalidate_last();
    }
}

/// Push a cell after closing the streaming one.
fn push(state: &mut AppState, cell: Cell) {
    finish_streaming(state);
    state.chat.push(cell);
}

fn notice(state: &mut AppState, message: impl Into<String>) {
    push(
        state,
        Cell::Notice {
            message: message.into(),
        },
    );
}

fn error(state: &mut AppState, message: impl Into<String>) {
    push(
        state,
        Cell::Error {
            message: message.into(),
        },
    );
}

fn writing(state: &AppState) -> bool {
    matches!(state.running, Running::WritingHandoff { .. })
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
            state.set_thresholds(thresholds);
            state.gauge.context = 0;
            state.gauge.estimated = false;
            state.generation = generation;
            state.session_messages = 0;
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
        Event::TurnStarted { turn, .. } => state.engine_turn = Some(turn),
        Event::UserMessage { turn, origin, text } => {
            // The echo of a message typed here names its turn: it is in the chat already, as
            // typed, even when the engine masked a key in it or spilled it to a file.
            let own = origin == Origin::User && turn.is_some();
            if own || state.pending_echo.front() == Some(&Fingerprint::of(&text)) {
                state.pending_echo.pop_front();
            } else {
                // A message the engine wrote (e.g. the successor's handoff briefing): long ones
                // are shown by their head; the file holds the whole document.
                push(
                    state,
                    Cell::User {
                        text: clip_lines(&text, ENGINE_MESSAGE_LINES),
                    },
                );
            }
            state.session_messages += 1;
        }
        Event::TextDelta { text } => {
            if writing(state) {
                return; // the document lands in the side editor, not in the chat
            }
            if !matches!(state.running, Running::Streaming { .. }) {
                state.running = Running::Streaming { since: now };
            }
            state.streamed = true;
            if let Some(Cell::Assistant {
                markdown,
                streaming: true,
                ..
            }) = state.chat.last_mut()
            {
                markdown.push_str(&text);
                state.chat.invalidate_last();
            } else {
                state.chat.push(Cell::Assistant {
                    markdown: text,
                    streaming: true,
                    interrupted: false,
                });
            }
        }
        Event::ThinkingDelta { text } => {
            if writing(state) {
                return;
            }
            if let Some(Cell::Thinking { text: t }) = state.chat.last_mut() {
                t.push_str(&text);
                state.chat.invalidate_last();
            } else {
                push(state, Cell::Thinking { text });
            }
        }
        Event::AssistantDone { text, interrupted } => {
            if writing(state) {
                return;
            }
            state.session_messages += 1;
            let streamed = std::mem::take(&mut state.streamed);
            match state.chat.last_mut() {
                Some(Cell::Assistant {
                    markdown,
                    streaming,
                    interrupted: cut,
                }) if *streaming => {
                    // Deltas that went missing: the complete text extends what streamed.
                    if text.len() > markdown.len() && text.starts_with(markdown.as_str()) {
                        *markdown = text;
                    }
                    *streaming = false;
                    *cut = interrupted;
                    state.chat.invalidate_last();
                }
                _ if !streamed && !text.is_empty() => state.chat.push(Cell::Assistant {
                    markdown: text,
                    streaming: false,
                    interrupted,
                }),
                _ => {}
            }
        }
        Event::ToolCall {
            id, name, input, ..
        } => {
            let summary = tool_summary(&name, &input);
            if !writing(state) {
                state.running = Running::Tool {
                    name: name.clone(),
                    since: now,
                };
            }
            push(
                state,
                Cell::Tool {
                    id,
                    name,
                    summary,
                    output: None,
                    is_error: false,
                    expanded: false,
                },
            );
        }
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
            if let Some(Cell::Tool {
                output: o,
                is_error: e,
                ..
            }) = state.chat.find_tool_mut(&id)
            {
                *o = Some(output);
                *e = is_error;
            }
            if matches!(state.running, Running::Tool { .. }) {
                state.running = Running::Streaming { since: now };
            }
        }
        Event::ApprovalRequest {
            id, name, summary, ..
        } => {
            push(
                state,
                Cell::Approval {
                    name: name.clone(),
                    summary: summary.clone(),
                    answer: None,
                },
            );
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
        Event::Usage {
            context,
            thresholds,
            estimated,
            session_cost_usd,
            ..
        } => {
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
        Event::Handoff(phase) => on_handoff(state, phase, now, fx),
        Event::Compaction {
            before,
            after,
            trigger,
        } => notice(
            state,
            format!(
                "Context compacted ({trigger}): {} → {}",
                fmt_tokens(before),
                fmt_tokens(after)
            ),
        ),
        Event::Retry {
            attempt,
            max,
            reason,
            delay_ms,
        } => push(
            state,
            Cell::Retry {
                attempt,
                max,
                reason,
                delay_ms,
            },
        ),
        Event::WindowLearned { model, thresholds } => {
            let window = thresholds.window;
            state.set_thresholds(thresholds);
            notice(
                state,
                format!(
                    "Learned the context window of {model}: {}; using it from now on",
                    fmt_window(window)
                ),
            );
        }
        Event::Notice { message } => {
            // The engine and the UI may both announce the same thing (a manual handoff's success):
            // one line is enough.
            let repeat = state
                .chat
                .len()
                .checked_sub(1)
                .and_then(|i| state.chat.get(i))
                .is_some_and(|c| matches!(c, Cell::Notice { message: m } if *m == message));
            if !repeat {
                notice(state, message);
            }
        }
        Event::Warning { message } => notice(state, format!("warning: {message}")),
        Event::Error { kind, message } => error(state, format!("{kind}: {message}")),
        Event::TurnEnd {
            turn, kind, reason, ..
        } => {
            if state.engine_turn == Some(turn) {
                state.engine_turn = None;
            }
            if kind == TurnKind::Handoff {
                // A `/handoff` turn: its `Event::Handoff` phases said everything.
                state.sync_gauge_mode();
                return;
            }
            finish_streaming(state);
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
                ExitReason::MaxIterations { n, max } => notice(
                    state,
                    format!("Stopped: the iteration budget is spent ({n}/{max})"),
                ),
                ExitReason::Interrupted => {
                    let marked = matches!(
                        state.chat.last_mut(),
                        Some(Cell::Assistant {
                            interrupted: true,
                            ..
                        })
                    );
                    if !marked {
                        notice(state, "Interrupted");
                    }
                }
                ExitReason::Completed
                | ExitReason::Handoff
                | ExitReason::Unchanged
                | ExitReason::Error(_) => {}
            }
        }
        Event::Result { .. } => {}
    }
    state.sync_gauge_mode();
}

fn on_handoff(state: &mut AppState, phase: HandoffPhase, now: Instant, fx: &mut Vec<Effect>) {
    match phase {
        HandoffPhase::Near {
            context,
            at,
            window,
        } => {
            if state.near_noticed != Some(state.generation) {
                state.near_noticed = Some(state.generation);
                notice(
                    state,
                    format!(
                        "Context at {}/{}: a handoff will be written at {}",
                        fmt_tokens(context),
                        fmt_window(window),
                        fmt_tokens(at)
                    ),
                );
            }
        }
        HandoffPhase::Writing { manual, .. } => {
            finish_streaming(state);
            state.running = Running::WritingHandoff { since: now, manual };
            state.handoff = Some(if manual {
                HandoffKind::Manual
            } else {
                HandoffKind::Automatic
            });
            if !manual {
                notice(
                    state,
                    "Context reached the handoff line: writing a handoff document",
                );
            }
        }
        HandoffPhase::Frozen {
            handoff,
            path,
            degraded,
            markdown,
            ..
        } => {
            state.running = Running::Idle;
            state.review_handoff = Some(handoff);
            if degraded {
                notice(
                    state,
                    "warning: the handoff is degraded (the writing turn failed); a mechanical document was saved",
                );
            }
            match (path, state.settings.review) {
                (Some(path), Some(review)) => {
                    if let Some(old) = state.editor.take().filter(|ed| ed.is_dirty()) {
                        // Never lose the user's words: the new document takes the editor, the
                        // edits go to a file of their own.
                        fx.push(Effect::KeepUnsaved {
                            path: old.path.clone(),
                            text: old.text(),
                        });
                    }
                    state.latest_handoff = Some(path.clone());
                    state.editor =
                        Some(SideEditor::open(path.clone(), &markdown, Some(review), now));
                    if state.focus == Focus::Approval {
                        state.focus_before_approval = Focus::Editor;
                    } else {
                        state.focus = Focus::Editor;
                    }
                    fx.push(Effect::WatchFile(path));
                }
                (Some(path), None) => {
                    notice(
                        state,
                        format!(
                            "Handoff saved to {} (review off; /edit-handoff opens it)",
                            path.display()
                        ),
                    );
                    state.latest_handoff = Some(path);
                    state.review_handoff = None;
                    fx.push(Effect::SendOp(Op::ReviewDone { handoff }));
                }
                (None, _) => {
                    notice(state, "Handoff written (no workbench: not saved to disk)");
                    state.review_handoff = None;
                    fx.push(Effect::SendOp(Op::ReviewDone { handoff }));
                }
            }
        }
        HandoffPhase::Done {
            context,
            window,
            degraded,
            path,
            generation,
            ..
        } => {
            if let Some(p) = &path {
                state.latest_handoff = Some(p.clone());
            }
            push(
                state,
                Cell::Divider {
                    generation,
                    context,
                    window,
                    path: path.map(|p| p.display().to_string()),
                    degraded,
                },
            );
            if state.handoff.take() == Some(HandoffKind::Manual) {
                notice(state, "New session started with handoff context");
            }
            if let Some(ed) = &mut state.editor
                && ed.in_review()
            {
                // The engine moved on (e.g. the review ended on its side): the countdown is moot.
                ed.review = super::editor::Review::Over;
            }
            if matches!(state.running, Running::WritingHandoff { .. }) {
                state.running = Running::Idle;
            }
        }
        HandoffPhase::Cancelled { .. } => {
            state.handoff = None;
            state.running = Running::Idle;
            notice(state, "Handoff cancelled");
        }
        HandoffPhase::Failed { message, .. } => {
            state.handoff = None;
            state.running = Running::Idle;
            error(state, format!("Handoff failed: {message}"));
        }
        HandoffPhase::Refused { message, .. } => notice(state, message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn long_engine_messages_are_clipped() {
        assert_eq!(
            clip_lines("a\nb", 1),
            "a\nb",
            "one extra line is not worth a marker"
        );
        assert_eq!(clip_lines("a\nb\nc\nd", 2), "a\nb\n… (2 more lines)");
    }

    #[test]
    fn tool_summaries() {
        assert_eq!(
            tool_summary("bash", &json!({"command": "make test\nmore"})),
            "make test…"
        );
        assert_eq!(
            tool_summary("read_file", &json!({"path": "src/a.rs", "start": 1})),
            "src/a.rs"
        );
        assert_eq!(
            tool_summary("grep", &json!({"pattern": "fn main", "path": "src"})),
            "fn main in src"
        );
        assert_eq!(
            tool_summary("glob", &json!({"pattern": "**/*.rs"})),
            "**/*.rs"
        );
        assert_eq!(tool_summary("mystery", &json!({"x": 1})), "{\"x\":1}");
        assert_eq!(tool_summary("list_dir", &json!({})), "");
        let long = "x".repeat(500);
        assert_eq!(
            tool_summary("bash", &json!({ "command": long }))
                .chars()
                .count(),
            SUMMARY_CHARS + 1
        );
    }
}
