//! Enter in the input box: slash commands and sending a message (part of the pure reducer).

use std::time::Instant;

use crate::engine::context::{Thresholds, fmt_window};
use crate::engine::protocol::Op;

use super::events::finish_streaming;
use super::keymap;
use super::render::cell::Cell;
use super::slash::{self, Parsed, SlashCommand};
use super::state::{AppState, EngineLink, Fingerprint, Focus, Popup, Running, new_input};
use super::update::{Effect, error, notice, popup_items, popup_selected, request_quit};

/// Sent messages remembered for matching the engine's echo.
const MAX_PENDING_ECHO: usize = 8;

/// Enter in the input box: run the slash command or send the message.
pub(super) fn submit(state: &mut AppState, now: Instant, fx: &mut Vec<Effect>) {
    let raw = state.input_text();
    if raw.trim().is_empty() {
        return;
    }
    let parsed = match slash::parse(&raw) {
        Parsed::Unknown(word) => match popup_items(state).get(popup_selected(state)) {
            Some(spec) => Parsed::Command {
                cmd: spec.cmd,
                arg: None,
            },
            None => {
                return error(
                    state,
                    format!("Unknown command /{word} (/help lists commands)"),
                );
            }
        },
        p => p,
    };
    if parsed == Parsed::Message && state.link == EngineLink::Closed {
        return error(state, "The engine is not running; /quit to leave");
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
    // Remember what the engine may echo; if it never echoes, keep only the last few.
    state.pending_echo.push_back(Fingerprint::of(&text));
    while state.pending_echo.len() > MAX_PENDING_ECHO {
        state.pending_echo.pop_front();
    }
    // Counted when the engine echoes it: the first message opens the session, whose start resets
    // the count.
    if state.running == Running::Idle {
        state.running = Running::Streaming { since: now };
    }
    state.streamed = false;
    let turn = state.new_turn();
    fx.push(Effect::SendOp(Op::UserTurn { turn, text }));
}

/// The user's message in the chat, as typed (chips stay chips: the chat never holds 10 MB).
fn push_user(state: &mut AppState, raw: String) {
    finish_streaming(state);
    state.chat.push(Cell::User { text: raw });
    state.chat.scroll_to_bottom();
}

fn run_command(state: &mut AppState, cmd: SlashCommand, arg: Option<String>, fx: &mut Vec<Effect>) {
    match cmd {
        SlashCommand::Handoff => {
            if matches!(state.running, Running::WritingHandoff { .. }) {
                notice(state, "A handoff is already being written (Esc cancels it)");
            } else if state.session_messages < 2 {
                notice(state, "Nothing to hand off (no messages yet)");
            } else {
                let turn = state.new_turn();
                fx.push(Effect::SendOp(Op::Handoff { turn, focus: arg }));
            }
        }
        SlashCommand::EditHandoff => {
            if state.editor.is_some() {
                state.focus = Focus::Editor;
            } else if let Some(p) = state.latest_handoff.clone() {
                fx.push(Effect::LoadEditor(p));
            } else {
                notice(state, "No handoff document yet");
            }
        }
        SlashCommand::New => {
            fx.push(Effect::SendOp(Op::NewSession));
            notice(state, "Starting a new session (no handoff)");
        }
        SlashCommand::Window if arg.as_deref().is_none_or(|a| a.trim().is_empty()) => notice(
            state,
            format!(
                "Context window {} ({}) · /window N sets it",
                fmt_window(state.thresholds.window),
                state.labels.window_source
            ),
        ),
        SlashCommand::Window => match slash::parse_window(arg.as_deref()) {
            Ok(window) => {
                state.labels.window_source = "/window".into();
                state.set_thresholds(Thresholds::new(window, state.thresholds.headroom));
                // The engine confirms the new window with its own notice: one line is enough.
                fx.push(Effect::SendOp(Op::SetWindow { window }));
            }
            Err(e) => error(state, e),
        },
        SlashCommand::Cost => {
            let text = cost_report(state);
            notice(state, text);
        }
        SlashCommand::Help => {
            let mut lines = slash::help_lines();
            lines.push(String::new());
            lines.extend(keymap::help_lines());
            notice(state, lines.join("\n"));
        }
        SlashCommand::Quit => request_quit(state, fx),
    }
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
