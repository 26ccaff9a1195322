//! Enter in the input box: slash commands and sending a message (part of the pure reducer).

use std::time::Instant;

use crate::engine::checkpoint::UndoAction;
use crate::engine::context::fmt_window;
use crate::engine::protocol::{Effort, Op};

use super::input::Pastes;
use super::keymap;
use super::model_picker::ModelPicker;
use super::msg::Effect;
use super::queue;
use super::slash::{self, Parsed, SlashCommand};
use super::state::{AppState, Focus, Picker};

/// A sent message longer than this stays out of the history file (a big paste).
pub(crate) const HISTORY_ENTRY_MAX: usize = 64 * 1024;

/// Enter in the input box: run the slash command or send the message.
pub(super) fn submit(state: &mut AppState, now: Instant, fx: &mut Vec<Effect>) {
    let raw = state.input.text();
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
            // Said once and cleared, so the next command is not typed onto it; the history
            // keeps it (Up brings it back to correct).
            None => {
                let pastes = state.input.take_sent(now);
                state.input.remember(&raw, pastes);
                return state.chat.error(format!(
                    "Unknown command /{word} (/help lists commands; Up brings it back)"
                ));
            }
        },
        p => p,
    };
    let sends = matches!(parsed, Parsed::Message | Parsed::Custom { .. });
    if sends && state.turns.engine_closed() {
        return state
            .chat
            .error("The engine is not running; /quit to leave");
    }
    // The chips go with the history entry, so a recalled message sends what was pasted. Sent:
    // the input changed (an approval prompt waits again), and nobody is typing now.
    let pastes = state.input.take_sent(now);
    match parsed {
        Parsed::Message => {
            remember(state, &raw, &pastes, fx);
            state.input.remember(&raw, pastes.clone());
            queue::send_or_queue(state, raw, pastes, now, fx);
        }
        // A custom command goes (or waits) as a message does; sending it runs it.
        Parsed::Custom { name, args } => {
            remember(state, &raw, &pastes, fx);
            state.input.remember(&raw, pastes.clone());
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
            state.input.remember(&raw, pastes);
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

/// `/model` alone: the picker, on the model in use and those the custom commands name; the
/// engine is asked for the provider's.
fn open_model_picker(state: &mut AppState, fx: &mut Vec<Effect>) {
    let known: Vec<String> = state
        .settings
        .extensions
        .commands
        .commands()
        .filter_map(|c| c.model.clone())
        .collect();
    let (picker, op) = ModelPicker::open(&state.status.labels().model, known);
    state.picker = Some(Picker::Models(picker));
    fx.push(Effect::SendOp(op));
}

fn run_command(state: &mut AppState, cmd: SlashCommand, arg: Option<String>, fx: &mut Vec<Effect>) {
    match cmd {
        // The engine decides whether there is something to hand off (and says why not).
        SlashCommand::Handoff => {
            let turn = state.turns.send();
            fx.push(Effect::SendOp(Op::Handoff { turn, focus: arg }));
        }
        SlashCommand::EditHandoff => {
            if state.editor.is_open() {
                state.focus = Focus::Editor;
            } else if let Some(p) = state.editor.latest_handoff() {
                fx.push(Effect::LoadEditor(p.to_path_buf()));
            } else {
                state.chat.notice("No handoff document yet");
            }
        }
        // The engine says when the new session started.
        SlashCommand::New => fx.push(Effect::SendOp(Op::NewSession)),
        SlashCommand::Window if arg.as_deref().is_none_or(|a| a.trim().is_empty()) => {
            state.chat.notice(format!(
                "Context window {} ({}) · /window N sets it",
                fmt_window(state.status.thresholds().window),
                state.status.labels().window_source
            ))
        }
        SlashCommand::Window => match slash::parse_window(arg.as_deref()) {
            // The engine confirms it with a notice, and its next usage event carries the
            // thresholds of the new window.
            Ok(window) => {
                state.status.window_asked();
                fx.push(Effect::SendOp(Op::SetWindow { window }));
            }
            Err(e) => state.chat.error(e.to_string()),
        },
        SlashCommand::Pin => super::memory_commands::pin(state, arg, fx),
        SlashCommand::Pins => super::memory_commands::pins(state, arg, fx),
        SlashCommand::Focus => super::memory_commands::focus(state, arg, fx),
        // The engine answers from the ledger (earlier processes of the run included).
        SlashCommand::Cost => fx.push(Effect::SendOp(Op::Cost)),
        SlashCommand::Resume => fx.push(Effect::SendOp(Op::ListSessions)),
        SlashCommand::Model => match arg.filter(|a| !a.trim().is_empty()) {
            Some(model) => fx.push(Effect::SendOp(Op::SetModel { model })),
            None => open_model_picker(state, fx),
        },
        SlashCommand::Effort => match arg.as_deref().map(Effort::parse) {
            Some(Ok(effort)) => fx.push(Effect::SendOp(Op::SetEffort { effort })),
            Some(Err(e)) => state.chat.error(format!("/effort: {e}")),
            None => {
                let now = state.status.labels().effort.map_or("off", Effort::as_str);
                state.chat.notice(format!(
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
                    return state
                        .chat
                        .error(format!("/init: `{other}`? (usage: /init [overwrite])"));
                }
            };
            let turn = state.turns.send();
            fx.push(Effect::SendOp(Op::Init { turn, overwrite }));
        }
        SlashCommand::Undo => {
            super::undo_commands::command(state, UndoAction::Undo, arg.as_deref(), fx)
        }
        SlashCommand::Redo => {
            super::undo_commands::command(state, UndoAction::Redo, arg.as_deref(), fx)
        }
        SlashCommand::Rewind => fx.push(Effect::SendOp(state.rewind.open())),
        SlashCommand::Copy => copy_last_reply(state, fx),
        SlashCommand::Mcp => match arg.as_deref().map(str::split_whitespace) {
            None => {
                let text = state.mcp.report();
                state.chat.notice(text);
            }
            Some(mut words) => match (words.next(), words.next(), words.next()) {
                (Some("restart"), Some(name), None) => fx.push(Effect::SendOp(Op::McpRestart {
                    name: name.to_string(),
                })),
                _ => state.chat.error("usage: /mcp, or /mcp restart NAME"),
            },
        },
        SlashCommand::Lsp => fx.push(Effect::SendOp(Op::LspStatus)),
        SlashCommand::Jobs => super::job_events::command(state, arg.as_deref(), fx),
        SlashCommand::Skills => {
            let text = state.settings.extensions.skills.report();
            state.chat.notice(text.trim_end().to_string());
        }
        SlashCommand::Status => state.chat.notice(super::info_commands::status(state)),
        SlashCommand::Memory => state.chat.notice(super::info_commands::memory(state)),
        SlashCommand::Config => {
            let text = state.settings.config_report.clone();
            state.chat.notice(text)
        }
        SlashCommand::Context => fx.push(Effect::SendOp(Op::Context)),
        SlashCommand::Hooks => fx.push(Effect::SendOp(Op::Hooks)),
        SlashCommand::Export => super::info_commands::export(state, arg, fx),
        SlashCommand::Help => {
            let mut lines = slash::help_lines(&state.settings.extensions.commands);
            lines.push(String::new());
            lines.extend(keymap::help_lines());
            state.chat.notice(lines.join("\n"));
        }
        SlashCommand::Quit => request_quit(state, fx),
    }
}

/// Past this size a terminal may cut or refuse an OSC 52 copy (xterm's default limit is lower).
const COPY_WARN_BYTES: usize = 100_000;

/// `/copy`: the newest assistant reply, as markdown, to the terminal's clipboard.
fn copy_last_reply(state: &mut AppState, fx: &mut Vec<Effect>) {
    let Some(text) = state.chat.last_reply() else {
        return state.chat.notice("Nothing to copy yet (no reply)");
    };
    let chars = text.chars().count();
    let warn = if text.len() > COPY_WARN_BYTES {
        " · it is large: your terminal may cut it"
    } else {
        ""
    };
    fx.push(Effect::CopyToClipboard(text));
    state.chat.notice(format!(
        "Copied the last reply ({chars} characters) through the terminal (OSC 52; tmux needs set-clipboard on){warn}"
    ));
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
                .and_then(|i| state.questions.allowance_rule(i));
            match rule {
                Some(rule) => fx.push(Effect::SendOp(Op::Revoke { rule: Some(rule) })),
                None => state.chat.error(format!(
                    "/permissions: no grant number {n} (/permissions lists them)"
                )),
            }
        }
        _ => state.chat.error(usage),
    }
}

/// Ctrl-C twice or `/quit`: quit. Unsaved side-editor edits are kept in a file beside the
/// document, as on SIGTERM, and the way out says where.
pub(super) fn request_quit(state: &mut AppState, fx: &mut Vec<Effect>) {
    super::unsaved::keep_and_quit(state, fx);
}
