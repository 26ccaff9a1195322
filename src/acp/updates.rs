//! The engine's events as the editor's `session/update`s, decided in one pure place: the reply
//! and the thinking as chunks, each tool call and its progress (kind, title, locations, the diff
//! of an edit, a command's live output or the editor's terminal it ran in), the plan of the `todo`
//! tool, the context fill with the handoff line, the working mode, the latest generation replayed
//! by `session/load` when the ledger cannot give the whole thread ([`super::thread`]), and the
//! handoff as a tool call of its own ([`super::handoff`]). Approvals and the review window are
//! requests, not updates: the session asks them ([`super::permission`]).

use std::collections::HashMap;
use std::path::PathBuf;

use agent_client_protocol::v1::schema::{
    Cost, CurrentModeUpdate, Meta, Notice, NoticeSeverity, Plan, PlanEntry, PlanEntryPriority,
    PlanEntryStatus, SessionUpdate, Terminal, ToolCall, ToolCallContent, ToolCallStatus,
    ToolCallUpdateFields, UsageUpdate,
};
use serde_json::json;

use super::terminal::TerminalCalls;
use super::tool_calls::{self, agent_text, chunk, tool_update};
use crate::engine::protocol::{Event, Origin, StreamState, TodoItem, TodoStatus};

/// A command's live output shown in the editor keeps its last this many characters.
const LIVE_TAIL_CHARS: usize = 16_000;

/// The mapping's state: the workspace (paths are shown absolute), the live output of running
/// commands, and whether the editor takes notices.
#[derive(Debug)]
pub(super) struct Mapper {
    workspace: PathBuf,
    notices: bool,
    live: HashMap<String, String>,
    /// Commands running in the editor's terminals: their calls keep the terminal as content.
    terminals: TerminalCalls,
}

impl Mapper {
    /// `notices`: the client said it shows notices (else they stay in the log).
    pub(super) fn new(workspace: PathBuf, notices: bool) -> Mapper {
        Mapper {
            workspace,
            notices,
            live: HashMap::new(),
            terminals: TerminalCalls::default(),
        }
    }

    /// The mapping for a session whose commands may run in the editor's `terminals`.
    pub(super) fn showing_terminals(self, terminals: TerminalCalls) -> Mapper {
        Mapper { terminals, ..self }
    }

    /// The updates `ev` makes (none for an event the editor has no place for).
    pub(super) fn updates(&mut self, ev: &Event) -> Vec<SessionUpdate> {
        match ev {
            Event::TextDelta { text, .. } => vec![agent_text(text)],
            Event::ThinkingDelta { text } => {
                vec![SessionUpdate::AgentThoughtChunk(chunk(text))]
            }
            // A replayed conversation (`session/load`): the user's messages and the replies.
            // Live ones are the editor's own prompt and the streamed reply.
            Event::UserMessage {
                turn: None,
                origin: Origin::User,
                text,
            } => vec![SessionUpdate::UserMessageChunk(chunk(text))],
            Event::AssistantDone {
                turn: None, text, ..
            } => vec![agent_text(&format!("{text}\n\n"))],
            Event::Stream(StreamState::Discarded { chars }) if *chars > 0 => vec![agent_text(
                "\n\n(the reply above broke off; it is asked for again)\n\n",
            )],
            Event::ToolCall {
                id,
                name,
                input,
                summary,
                ..
            } => vec![SessionUpdate::ToolCall(
                ToolCall::new(id.clone(), summary.as_str())
                    .kind(tool_calls::kind(name))
                    .status(ToolCallStatus::InProgress)
                    .locations(tool_calls::locations(&self.workspace, input))
                    .raw_input(input.clone()),
            )],
            Event::ToolOutputDelta { id, text } => self.live_output(id, text),
            Event::ToolResult {
                id,
                output,
                is_error,
                diff,
                exit,
                ..
            } => {
                let live = self.live.remove(id);
                let content = match (diff, live) {
                    // The command ran in the editor's terminal: the call keeps showing it.
                    _ if let Some(terminal) = self.terminals.take(id) => {
                        ToolCallContent::Terminal(Terminal::new(terminal))
                    }
                    (Some(d), _) => tool_calls::diff_content(&self.workspace, d),
                    (None, Some(_)) => tool_calls::output_content(output),
                    (None, None) if exit.is_some() => tool_calls::output_content(output),
                    (None, None) => tool_calls::text_content(output),
                };
                let status = if *is_error {
                    ToolCallStatus::Failed
                } else {
                    ToolCallStatus::Completed
                };
                let raw = json!({
                    "output": output,
                    "exit": exit.as_ref().map(|e| e.summary.clone()),
                });
                vec![tool_update(
                    id,
                    ToolCallUpdateFields::new()
                        .status(status)
                        .content(vec![content])
                        .raw_output(raw),
                )]
            }
            Event::Todo { items } => vec![plan(items)],
            Event::Usage {
                context,
                thresholds,
                estimated,
                session_cost_usd,
                ..
            } => {
                let mut meta = Meta::new();
                meta.insert(
                    "flower".into(),
                    json!({
                        "handoffAt": thresholds.at,
                        "warnAt": thresholds.warn_at,
                        "estimated": estimated,
                    }),
                );
                vec![SessionUpdate::UsageUpdate(
                    UsageUpdate::new(*context, thresholds.window)
                        .cost(Cost::new(*session_cost_usd, "USD"))
                        .meta(meta),
                )]
            }
            Event::Mode { mode } => vec![SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                super::modes::id(*mode),
            ))],
            Event::Handoff(phase) => super::handoff::updates(phase),
            Event::Plan { path, markdown, .. } => super::handoff::presented_plan(path, markdown),
            Event::Error { message, .. } => vec![agent_text(&format!("\n\nError: {message}\n"))],
            Event::Warning { message } => self.notice(NoticeSeverity::Warning, message),
            Event::Notice { message } => self.notice(NoticeSeverity::Info, message),
            _ => Vec::new(),
        }
    }

    /// A notice, when the editor shows them.
    fn notice(&self, severity: NoticeSeverity, message: &str) -> Vec<SessionUpdate> {
        if self.notices {
            vec![SessionUpdate::Notice(Notice::new(severity, message))]
        } else {
            Vec::new()
        }
    }

    /// The running command `id` printed `text`: its whole output so far (the tail of a long one,
    /// cleaned of terminal escapes) replaces what the editor showed.
    fn live_output(&mut self, id: &str, text: &str) -> Vec<SessionUpdate> {
        let so_far = self.live.entry(id.to_string()).or_default();
        so_far.push_str(text);
        let count = so_far.chars().count();
        if count > LIVE_TAIL_CHARS * 2 {
            *so_far = so_far.chars().skip(count - LIVE_TAIL_CHARS).collect();
        }
        let clean = crate::engine::text::clean_terminal_output(so_far);
        vec![tool_update(
            id,
            ToolCallUpdateFields::new().content(vec![tool_calls::output_content(&clean)]),
        )]
    }
}

/// The `todo` list as the editor's plan (every entry of the same priority: the list has none).
fn plan(items: &[TodoItem]) -> SessionUpdate {
    SessionUpdate::Plan(Plan::new(
        items
            .iter()
            .map(|i| {
                let status = match i.status {
                    TodoStatus::Pending => PlanEntryStatus::Pending,
                    TodoStatus::InProgress => PlanEntryStatus::InProgress,
                    TodoStatus::Done => PlanEntryStatus::Completed,
                };
                PlanEntry::new(i.text.as_str(), PlanEntryPriority::Medium, status)
            })
            .collect(),
    ))
}

#[cfg(test)]
#[path = "updates_tests.rs"]
mod tests;
