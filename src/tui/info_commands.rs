//! The commands that say where things stand, answered from the UI's own state (part of the pure
//! reducer): `/status` (model, session, mode, context, run), `/memory` (what every generation of
//! the step keeps), `/export` (the conversation as Markdown, written by the app), and the
//! conversation as plain Markdown for `/export` and for the terminal's scrollback on leaving.

use std::path::PathBuf;

use crate::engine::context::{fmt_tokens, fmt_window};
use crate::engine::protocol::Effort;

use super::msg::{Effect, FileError};
use super::render::cell::{AssistantState, Cell};
use super::state::AppState;

/// `/status`: one line each.
pub(crate) fn status(state: &AppState) -> String {
    let labels = state.status.labels();
    let gauge = state.status.gauge();
    let t = state.status.thresholds();
    let session = match state.session.session_id() {
        Some(id) => format!("{id} (generation {})", state.session.generation()),
        None => "none yet (the first message starts one)".to_string(),
    };
    let estimated = if gauge.estimated { "~" } else { "" };
    let lines = [
        format!("model: {} ({})", labels.model, labels.provider),
        format!("effort: {}", labels.effort.map_or("off", Effort::as_str)),
        format!("mode: {}", state.plan.mode().as_str()),
        format!("session: {session}"),
        format!("run: {}", state.session.run_id().unwrap_or("-")),
        format!(
            "context: {estimated}{} of {} · handoff at {} · window from {}",
            fmt_tokens(gauge.context),
            fmt_window(t.window),
            fmt_window(t.at),
            labels.window_source
        ),
        format!(
            "latest handoff: {}",
            state
                .editor
                .latest_handoff()
                .map_or("none".to_string(), |p| p.display().to_string())
        ),
        format!(
            "turn: {} · queued messages: {}",
            if state.turns.busy() {
                "running"
            } else {
                "idle"
            },
            state.input.queued().len()
        ),
    ];
    lines.join("\n")
}

/// `/memory`: the pins, the standing focus and the plan, as the engine last said.
pub(crate) fn memory(state: &AppState) -> String {
    let m = &state.memory;
    let mut lines = vec![super::memory_view::pins_report(m)];
    lines.push(match m.focus() {
        Some(f) => format!("Focus: {f} · /focus alone clears it"),
        None => "No focus · /focus TEXT keeps one in view of every later handoff".to_string(),
    });
    if m.plan().is_empty() {
        lines.push("No plan (the model's todo list)".to_string());
    } else {
        lines.push(format!("Plan ({} items):", m.plan().len()));
        for item in m.plan() {
            lines.push(format!("  [{}] {}", item.status.label(), item.text));
        }
    }
    lines.join("\n")
}

/// `/export [PATH]`: the conversation as Markdown to PATH (relative to the workspace), or to a
/// new file in the workspace; the app writes it and says where.
pub(crate) fn export(state: &mut AppState, arg: Option<String>, fx: &mut Vec<Effect>) {
    let markdown = conversation_markdown(state.chat.cells().iter());
    if markdown.trim().is_empty() {
        return state.chat.notice("Nothing to export yet (no messages)");
    }
    fx.push(Effect::Export {
        path: arg.map(PathBuf::from),
        markdown,
    });
}

/// The app's answer to [`Effect::Export`].
pub(crate) fn exported(state: &mut AppState, path: PathBuf, result: Result<(), FileError>) {
    match result {
        Ok(()) => state
            .chat
            .notice(format!("Exported the conversation to {}", path.display())),
        Err(e) => state.chat.error(format!(
            "/export: cannot write {}: {e} (/export PATH writes elsewhere)",
            path.display()
        )),
    }
}

/// The conversation as Markdown: the user's messages and the replies whole, a line per tool
/// call and per question asked, a rule where a generation ended (the app's own notices stay
/// out).
pub(crate) fn conversation_markdown<'a>(cells: impl Iterator<Item = &'a Cell>) -> String {
    let mut out = String::new();
    for cell in cells {
        let block = match cell {
            Cell::User { text } => format!("**You:** {}", text.trim_end()),
            Cell::Assistant { markdown, state } => {
                let cut = if *state == AssistantState::Interrupted {
                    " [interrupted]"
                } else {
                    ""
                };
                format!("{}{cut}", markdown.trim_end())
            }
            Cell::Tool {
                name,
                summary,
                exit,
                ..
            } => {
                let ended = exit
                    .as_ref()
                    .map(|e| format!(" ({})", e.summary))
                    .unwrap_or_default();
                format!("- `{name}` {summary}{ended}")
            }
            Cell::Divider {
                generation, path, ..
            } => {
                let doc = path
                    .as_deref()
                    .map(|p| format!(", briefed by {p}"))
                    .unwrap_or_default();
                format!("---\n\n*generation {generation}{doc}*")
            }
            Cell::Approval {
                name,
                summary,
                answer,
                ..
            } => format!(
                "- asked: `{name}` {summary} → {}",
                answer.as_deref().unwrap_or("unanswered")
            ),
            _ => continue,
        };
        out.push_str(&block);
        out.push_str("\n\n");
    }
    out
}
