//! Engine events → state changes and chat cells (part of the pure reducer).

use std::time::Instant;

use crate::engine::context::{fmt_tokens, fmt_window};
use crate::engine::protocol::{Event, ExitReason, HandoffPhase, Op, Origin, TurnKind};

use super::editor::SideEditor;
use super::msg::Effect;
use super::render::cell::{AssistantState, Cell, ToolStatus};
use super::state::{AppState, Focus, GenerationCost, HandoffKind, PendingApproval, Running};

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
        Event::TurnStarted { turn, kind, .. } => {
            state.engine_turn = Some(turn);
            // A message queued behind the last turn starts now: it runs (Esc aborts it).
            if kind == TurnKind::Message && state.running == Running::Idle {
                state.running = Running::Streaming { since: now };
            }
        }
        Event::UserMessage { turn, origin, text } => {
            // The user's own messages of this run are in the chat already (as typed, chips and
            // all). The others: one the engine wrote (the successor's handoff briefing, a
            // summary) or one replayed from an earlier run; long ones are shown by their head.
            let shown = origin == Origin::User && turn.is_some();
            if !shown {
                state.push_cell(Cell::User {
                    text: clip_lines(&text, ENGINE_MESSAGE_LINES),
                });
            }
        }
        Event::TextDelta { text } => {
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
        Event::ThinkingDelta { text } => {
            if writing(state) {
                return;
            }
            if let Some(Cell::Thinking { text: t }) = state.chat.last_mut() {
                t.push_str(&text);
            } else {
                state.push_cell(Cell::Thinking { text });
            }
        }
        Event::AssistantDone { text, interrupted } => {
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
        }
        Event::ToolCall {
            id, name, summary, ..
        } => {
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
            if let Some(Cell::Tool { status, .. }) = state.chat.find_tool_mut(&id) {
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
        Event::ApprovalRequest {
            id, name, summary, ..
        } => {
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
        // The engine's notice that follows says what was learned and where it is recorded.
        Event::WindowLearned { thresholds, .. } => state.set_thresholds(thresholds),
        Event::Notice { message } => state.notice(message),
        Event::Warning { message } => state.notice(format!("warning: {message}")),
        Event::Error { kind, message } => state.error(format!("{kind}: {message}")),
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
            state.finish_streaming();
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
                state.notice(format!(
                    "Context at {}/{}: a handoff will be written at {}",
                    fmt_tokens(context),
                    fmt_window(window),
                    fmt_tokens(at)
                ));
            }
        }
        HandoffPhase::Writing { manual, .. } => {
            state.finish_streaming();
            state.running = Running::WritingHandoff { since: now };
            state.handoff = Some(if manual {
                HandoffKind::Manual
            } else {
                HandoffKind::Automatic
            });
            if !manual {
                state.notice("Context reached the handoff line: writing a handoff document");
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
                state.notice("warning: the handoff is degraded (the writing turn failed); a mechanical document was saved",
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
                    state.notice(format!(
                        "Handoff saved to {} (review off; /edit-handoff opens it)",
                        path.display()
                    ));
                    state.latest_handoff = Some(path);
                    state.review_handoff = None;
                    fx.push(Effect::SendOp(Op::ReviewDone { handoff }));
                }
                (None, _) => {
                    state.notice("Handoff written (no workbench: not saved to disk)");
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
            state.push_cell(Cell::Divider {
                generation,
                context,
                window,
                path: path.map(|p| p.display().to_string()),
                degraded,
            });
            if state.handoff.take() == Some(HandoffKind::Manual) {
                state.notice("New session started with handoff context");
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
            state.notice("Handoff cancelled");
        }
        HandoffPhase::Failed { message, .. } => {
            state.handoff = None;
            state.running = Running::Idle;
            state.error(format!("Handoff failed: {message}"));
        }
        HandoffPhase::Refused { message, .. } => state.notice(message),
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
