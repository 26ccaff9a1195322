//! Enter in the input box: slash commands and sending a message (part of the pure reducer).

use std::time::Instant;

use crate::engine::checkpoint::UndoAction;
use crate::engine::context::{WindowSource, fmt_window};
use crate::engine::protocol::{Effort, Op};

use super::input::Pastes;
use super::keymap;
use super::msg::Effect;
use super::queue;
use super::render::cell::Cell;
use super::slash::{self, Parsed, SlashCommand};
use super::state::{AppState, EngineLink, Focus, HISTORY_ENTRY_MAX, Popup, new_input};

/// Enter in the input box: run the slash command or send the message.
pub(super) fn submit(state: &mut AppState, now: Instant, fx: &mut Vec<Effect>) {
    let raw = state.input_text();
    if raw.trim().is_empty() {
        return;
    }
    let parsed = match slash::parse(&raw, &state.settings.extensions.commands) {
        Parsed::Unknown(word) => match state.popup_items().get(state.popup_selected()) {
            Some(item) => match item.cmd {
                Some(cmd) => Parsed::Command { cmd, arg: None },
                None => Parsed::Custom {
                    name: item.name.clone(),
                    args: String::new(),
                },
            },
            None => {
                return state.error(format!("Unknown command /{word} (/help lists commands)"));
            }
        },
        p => p,
    };
    let sends = matches!(parsed, Parsed::Message | Parsed::Custom { .. });
    if sends && state.link == EngineLink::Closed {
        return state.error("The engine is not running; /quit to leave");
    }
    // The chips go with the history entry, so a recalled message sends what was pasted.
    let pastes = std::mem::take(&mut state.pastes);
    state.input = new_input();
    // Sent: the input changed (an approval prompt waits again), and nobody is typing now.
    state.input_edited(now);
    state.typed_at = None;
    state.popup = Popup::Auto { selected: 0 };
    match parsed {
        Parsed::Message => {
            remember(state, &raw, &pastes, fx);
            state.history.push(&raw, pastes.clone());
            queue::send_or_queue(state, raw, pastes, now, fx);
        }
        // A custom command goes (or waits) as a message does; sending it runs it.
        Parsed::Custom { name, args } => {
            remember(state, &raw, &pastes, fx);
            state.history.push(&raw, pastes.clone());
            let raw = if args.is_empty() {
                format!("/{name}")
            } else {
                raw
            };
            queue::send_or_queue(state, raw, pastes, now, fx);
        }
        Parsed::Command { cmd, arg } => {
            remember(state, &raw, &pastes, fx);
            // A pasted chip in a command's text is what was pasted (a pin, a focus).
            let arg = arg.map(|a| pastes.expand(&a));
            state.history.push(&raw, pastes);
            run_command(state, cmd, arg, fx);
        }
        Parsed::Unknown(_) => {}
    }
}

/// The history file keeps what was sent: the text with its chips expanded, unless a chip holds
/// more than [`HISTORY_ENTRY_MAX`] (then the entry stays in this run's memory only).
fn remember(state: &AppState, raw: &str, pastes: &Pastes, fx: &mut Vec<Effect>) {
    if state.settings.history_file.is_none() {
        return;
    }
    let text = pastes.expand(raw);
    if text.len() <= HISTORY_ENTRY_MAX {
        fx.push(Effect::AppendHistory(text));
    }
}

fn run_command(state: &mut AppState, cmd: SlashCommand, arg: Option<String>, fx: &mut Vec<Effect>) {
    match cmd {
        // The engine decides whether there is something to hand off (and says why not).
        SlashCommand::Handoff => {
            let turn = state.new_turn();
            state.in_flight.push(turn);
            fx.push(Effect::SendOp(Op::Handoff { turn, focus: arg }));
        }
        SlashCommand::EditHandoff => {
            if state.editor.is_some() {
                state.focus = Focus::Editor;
            } else if let Some(p) = state.latest_handoff.clone() {
                fx.push(Effect::LoadEditor(p));
            } else {
                state.notice("No handoff document yet");
            }
        }
        // The engine says when the new session started.
        SlashCommand::New => fx.push(Effect::SendOp(Op::NewSession)),
        SlashCommand::Window if arg.as_deref().is_none_or(|a| a.trim().is_empty()) => {
            state.notice(format!(
                "Context window {} ({}) · /window N sets it",
                fmt_window(state.thresholds.window),
                state.labels.window_source
            ))
        }
        SlashCommand::Window => match slash::parse_window(arg.as_deref()) {
            // The engine confirms it with a notice, and its next usage event carries the
            // thresholds of the new window.
            Ok(window) => {
                state.labels.window_source = WindowSource::Command;
                fx.push(Effect::SendOp(Op::SetWindow { window }));
            }
            Err(e) => state.error(e.to_string()),
        },
        SlashCommand::Pin => super::memory_commands::pin(state, arg, fx),
        SlashCommand::Pins => super::memory_commands::pins(state, arg, fx),
        SlashCommand::Focus => super::memory_commands::focus(state, arg, fx),
        // The engine answers from the ledger (earlier processes of the run included).
        SlashCommand::Cost => fx.push(Effect::SendOp(Op::Cost)),
        SlashCommand::Resume => fx.push(Effect::SendOp(Op::ListSessions)),
        SlashCommand::Model => fx.push(Effect::SendOp(Op::SetModel {
            model: arg.unwrap_or_default(),
        })),
        SlashCommand::Effort => match arg.as_deref().map(Effort::parse) {
            Some(Ok(effort)) => fx.push(Effect::SendOp(Op::SetEffort { effort })),
            Some(Err(e)) => state.error(format!("/effort: {e}")),
            None => {
                let now = state.labels.effort.map_or("off", Effort::as_str);
                state.notice(format!(
                    "Effort {now} · /effort low|medium|high|off changes it from the next turn"
                ));
            }
        },
        SlashCommand::Permissions => permissions(state, arg.as_deref(), fx),
        SlashCommand::Init => {
            let overwrite = match arg.as_deref() {
                None => false,
                Some("overwrite") => true,
                Some(other) => {
                    return state.error(format!("/init: `{other}`? (usage: /init [overwrite])"));
                }
            };
            let turn = state.new_turn();
            state.in_flight.push(turn);
            fx.push(Effect::SendOp(Op::Init { turn, overwrite }));
        }
        SlashCommand::Undo => {
            super::undo_commands::command(state, UndoAction::Undo, arg.as_deref(), fx)
        }
        SlashCommand::Redo => {
            super::undo_commands::command(state, UndoAction::Redo, arg.as_deref(), fx)
        }
        SlashCommand::Rewind => super::rewind_picker::open(state, fx),
        SlashCommand::Copy => copy_last_reply(state, fx),
        SlashCommand::Mcp => match arg.as_deref().map(str::split_whitespace) {
            None => {
                let text = mcp_report(state);
                state.notice(text);
            }
            Some(mut words) => match (words.next(), words.next(), words.next()) {
                (Some("restart"), Some(name), None) => fx.push(Effect::SendOp(Op::McpRestart {
                    name: name.to_string(),
                })),
                _ => state.error("usage: /mcp, or /mcp restart NAME"),
            },
        },
        SlashCommand::Lsp => fx.push(Effect::SendOp(Op::LspStatus)),
        SlashCommand::Skills => {
            let text = state.settings.extensions.skills.report();
            state.notice(text.trim_end().to_string());
        }
        SlashCommand::Help => {
            let mut lines = slash::help_lines(&state.settings.extensions.commands);
            lines.push(String::new());
            lines.extend(keymap::help_lines());
            state.notice(lines.join("\n"));
        }
        SlashCommand::Quit => request_quit(state, fx),
    }
}

/// Past this size a terminal may cut or refuse an OSC 52 copy (xterm's default limit is lower).
const COPY_WARN_BYTES: usize = 100_000;

/// `/copy`: the newest assistant reply, as markdown, to the terminal's clipboard.
fn copy_last_reply(state: &mut AppState, fx: &mut Vec<Effect>) {
    let last = state.chat.iter().rev().find_map(|c| match c {
        Cell::Assistant { markdown, .. } if !markdown.trim().is_empty() => Some(markdown.clone()),
        _ => None,
    });
    let Some(text) = last else {
        return state.notice("Nothing to copy yet (no reply)");
    };
    let chars = text.chars().count();
    let warn = if text.len() > COPY_WARN_BYTES {
        " · it is large: your terminal may cut it"
    } else {
        ""
    };
    fx.push(Effect::CopyToClipboard(text));
    state.notice(format!(
        "Copied the last reply ({chars} characters) through the terminal (OSC 52; tmux needs set-clipboard on){warn}"
    ));
}

/// The `/mcp` notice: one line per server (state, then command or URL), and how to restart one.
pub(crate) fn mcp_report(state: &AppState) -> String {
    if state.mcp_servers.is_empty() {
        return "No MCP servers: add [mcp_servers.NAME] to config.toml, or a .mcp.json to the \
                workspace"
            .to_string();
    }
    let mut lines = vec!["MCP servers:".to_string()];
    for s in &state.mcp_servers {
        lines.push(format!(
            "  {} ({}) · {} · {}",
            s.name,
            s.origin.as_str(),
            s.state,
            s.transport
        ));
        if !s.tools.is_empty() {
            lines.push(format!("    tools: {}", s.tools.join(", ")));
        }
        if let Some(e) = &s.last_error {
            lines.push(format!("    last error: {e}"));
        }
        for w in &s.warnings {
            lines.push(format!("    note: {w}"));
        }
    }
    lines.push("/mcp restart NAME restarts one".to_string());
    lines.join("\n")
}

/// `/permissions`: list the grants; `/permissions revoke N` or `… revoke all` takes some back
/// (N as the last listing numbered them).
fn permissions(state: &mut AppState, arg: Option<&str>, fx: &mut Vec<Effect>) {
    let words: Vec<&str> = arg.unwrap_or_default().split_whitespace().collect();
    let usage = "usage: /permissions, /permissions revoke N, /permissions revoke all";
    match words.as_slice() {
        [] => fx.push(Effect::SendOp(Op::Permissions)),
        ["revoke", "all"] => fx.push(Effect::SendOp(Op::Revoke { rule: None })),
        ["revoke", n] => {
            let rule = n
                .parse::<usize>()
                .ok()
                .and_then(|i| i.checked_sub(1))
                .and_then(|i| state.allowances.get(i))
                .map(|a| a.rule.clone());
            match rule {
                Some(rule) => fx.push(Effect::SendOp(Op::Revoke { rule: Some(rule) })),
                None => state.error(format!(
                    "/permissions: no grant number {n} (/permissions lists them)"
                )),
            }
        }
        _ => state.error(usage),
    }
}

/// Ctrl-C twice or `/quit`: quit. Unsaved side-editor edits are kept in a file beside the
/// document, as on SIGTERM, and the way out says where.
pub(super) fn request_quit(state: &mut AppState, fx: &mut Vec<Effect>) {
    super::unsaved::keep_and_quit(state, fx);
}
