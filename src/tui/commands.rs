//! Enter in the input box: slash commands and sending a message (part of the pure reducer).

use std::time::Instant;

use crate::engine::context::fmt_window;
use crate::engine::protocol::Op;

use super::keymap::{self, Action};
use super::msg::{ChatScroll, Effect};
use super::render::cell::Cell;
use super::slash::{self, Parsed, SlashCommand};
use super::state::{AppState, EngineLink, Focus, Popup, Running, new_input};

/// Enter in the input box: run the slash command or send the message.
pub(super) fn submit(state: &mut AppState, now: Instant, fx: &mut Vec<Effect>) {
    let raw = state.input_text();
    if raw.trim().is_empty() {
        return;
    }
    let parsed = match slash::parse(&raw) {
        Parsed::Unknown(word) => match state.popup_items().get(state.popup_selected()) {
            Some(spec) => Parsed::Command {
                cmd: spec.cmd,
                arg: None,
            },
            None => {
                return state.error(format!("Unknown command /{word} (/help lists commands)"));
            }
        },
        p => p,
    };
    if parsed == Parsed::Message && state.link == EngineLink::Closed {
        return state.error("The engine is not running; /quit to leave");
    }
    // The chips go with the history entry, so a recalled message sends what was pasted.
    let pastes = std::mem::take(&mut state.pastes);
    state.input = new_input();
    state.popup = Popup::Auto { selected: 0 };
    match parsed {
        Parsed::Message => {
            let text = pastes.expand(&raw);
            state.history.push(&raw, pastes);
            send_message(state, raw, text, now, fx);
        }
        Parsed::Command { cmd, arg } => {
            // A pasted chip in a command's text is what was pasted (a pin, a focus).
            let arg = arg.map(|a| pastes.expand(&a));
            state.history.push(&raw, pastes);
            run_command(state, cmd, arg, fx);
        }
        Parsed::Unknown(_) => {}
    }
}

/// Send `text` (the input with its chips expanded); the chat shows `raw`, chips and all.
fn send_message(
    state: &mut AppState,
    raw: String,
    text: String,
    now: Instant,
    fx: &mut Vec<Effect>,
) {
    push_user(state, raw);
    fx.push(Effect::ScrollChat(ChatScroll::Bottom));
    if state.running == Running::Idle {
        state.running = Running::Streaming { since: now };
    }
    state.streamed = false;
    let turn = state.new_turn();
    fx.push(Effect::SendOp(Op::UserTurn { turn, text }));
}

/// The user's message in the chat, as typed (chips stay chips: the chat never holds 10 MB).
fn push_user(state: &mut AppState, raw: String) {
    state.finish_streaming();
    state.chat.push(Cell::User { text: raw });
}

fn run_command(state: &mut AppState, cmd: SlashCommand, arg: Option<String>, fx: &mut Vec<Effect>) {
    match cmd {
        // The engine decides whether there is something to hand off (and says why not).
        SlashCommand::Handoff => {
            let turn = state.new_turn();
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
                state.labels.window_source = "/window".into();
                fx.push(Effect::SendOp(Op::SetWindow { window }));
            }
            Err(e) => state.error(e),
        },
        SlashCommand::Pin => super::step_memory::pin(state, arg, fx),
        SlashCommand::Pins => super::step_memory::pins(state, arg, fx),
        SlashCommand::Focus => super::step_memory::focus(state, arg, fx),
        SlashCommand::Cost => {
            let text = cost_report(state);
            state.notice(text);
        }
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
        SlashCommand::Help => {
            let mut lines = slash::help_lines();
            lines.push(String::new());
            lines.extend(keymap::help_lines());
            state.notice(lines.join("\n"));
        }
        SlashCommand::Quit => request_quit(state, fx),
    }
}

/// The `/mcp` notice: one line per server (state, then command or URL), and how to restart one.
pub fn mcp_report(state: &AppState) -> String {
    if state.mcp_servers.is_empty() {
        return "No MCP servers: add [mcp_servers.NAME] to config.toml, or a .mcp.json to the \
                workspace"
            .to_string();
    }
    let mut lines = vec!["MCP servers:".to_string()];
    for s in &state.mcp_servers {
        lines.push(format!("  {} · {} · {}", s.name, s.state, s.transport));
        if let Some(e) = &s.last_error {
            lines.push(format!("    last error: {e}"));
        }
    }
    lines.push("/mcp restart NAME restarts one".to_string());
    lines.join("\n")
}

/// The `/cost` notice: one line per generation, then the total.
pub fn cost_report(state: &AppState) -> String {
    if state.tally.is_empty() {
        return "No cost yet (no session has started)".into();
    }
    let mut lines = vec!["Cost by generation:".to_string()];
    let (mut total, mut turns) = (0.0, 0);
    for c in &state.tally {
        let short: String = c.session_id.chars().take(8).collect();
        lines.push(format!(
            "  gen {} ({short}): ${:.4} · {} turn{} · {} request{}",
            c.generation,
            c.cost_usd,
            c.turns,
            if c.turns == 1 { "" } else { "s" },
            c.requests,
            if c.requests == 1 { "" } else { "s" },
        ));
        total += c.cost_usd;
        turns += c.turns;
    }
    lines.push(format!("  total: ${total:.4} · {turns} turns"));
    lines.join("\n")
}

/// Ctrl-C twice or `/quit`: quit, unless the side editor holds edits nobody was warned about;
/// then say so once, and quit on the next request.
pub(super) fn request_quit(state: &mut AppState, fx: &mut Vec<Effect>) {
    let unsaved = state
        .editor
        .as_ref()
        .filter(|ed| ed.is_dirty())
        .map(|ed| ed.text());
    if let Some(text) = unsaved
        && state.quit_warned.as_ref() != Some(&text)
    {
        state.quit_warned = Some(text);
        state.ctrl_c_at = None; // a third Ctrl-C in a row is not the answer to this question
        state.notice(format!(
            "unsaved handoff edits: {} to save, or quit again to discard",
            keymap::label_for(Action::Save)
        ));
        return;
    }
    fx.push(Effect::Quit);
}
