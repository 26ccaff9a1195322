//! Engine events → the reducer: each event goes to the module that owns its concern (one turn's
//! events, the handoff's phases, the session's own events and the answers to commands, the
//! step's memory, subagents, MCP servers); notices, warnings and errors become chat lines here.
//! The gauge's mode follows whatever an event changed.

use std::time::Instant;

use crate::engine::protocol::Event;

use super::handoff_events::on_handoff;
use super::msg::Effect;
use super::state::{AppState, Picker};
use super::{
    hook_events, mcp_events, memory_commands, rewind_picker, session_events, subagent_events,
    turn_events, undo_commands,
};

/// Apply one engine event.
pub(super) fn on_event(state: &mut AppState, ev: Event, now: Instant, fx: &mut Vec<Effect>) {
    match ev {
        ev @ (Event::TurnStarted { .. }
        | Event::UserMessage { .. }
        | Event::TextDelta { .. }
        | Event::ThinkingDelta { .. }
        | Event::AssistantDone { .. }
        | Event::ToolCall { .. }
        | Event::ToolResult { .. }
        | Event::ToolOutputDelta { .. }
        | Event::ApprovalRequest { .. }
        | Event::Retry { .. }
        | Event::Stream(_)
        | Event::TurnEnd { .. }) => turn_events::on_turn_event(state, ev, now, fx),
        Event::Handoff(phase) => on_handoff(state, phase, now, fx),
        ev @ (Event::SessionStarted { .. }
        | Event::Usage { .. }
        | Event::WindowLearned { .. }
        | Event::Compaction { .. }
        | Event::Model { .. }
        | Event::Resumed { .. }
        | Event::Sessions { .. }
        | Event::Permissions { .. }
        | Event::SessionPrompt { .. }
        | Event::InitExists { .. }
        | Event::Cost { .. }
        | Event::Attachment { .. }) => session_events::on_session_event(state, ev),
        ev @ (Event::Pins { .. }
        | Event::Focus { .. }
        | Event::Todo { .. }
        | Event::MemoryRefused { .. }) => memory_commands::on_event(state, ev),
        Event::Subagent(phase) => subagent_events::on_subagent(state, phase, now),
        Event::Hook(note) => hook_events::on_hook(state, note),
        Event::Diagnostics { report, .. } => state
            .chat
            .push_cell(super::render::cell::Cell::Diagnostics(Box::new(report))),
        Event::HooksApproval(question) => hook_events::on_question(state, question, now),
        ev @ (Event::McpJsonApproval { .. } | Event::McpWaiting { .. } | Event::McpStatus(_)) => {
            mcp_events::on_mcp_event(state, ev, now)
        }
        Event::Restore(report) => undo_commands::on_restore(state, &report, now),
        Event::RewindConflict { turn, mode, files } => {
            undo_commands::on_rewind_conflict(state, turn, mode, &files, now)
        }
        Event::RewindPoints { points } => {
            if !state.rewind.on_points(points) {
                state.chat.notice("/rewind: no message of this step yet");
            }
        }
        Event::Rewound {
            turn,
            mode,
            files,
            kept,
            text,
            generation,
        } => {
            // The conversation went back: the turns it abandons leave the chat (the
            // transcript file keeps them).
            if text.is_some()
                && let Some(sent_as) = state.rewind.rewound(turn)
            {
                state.chat.drop_turns_from(sent_as);
            }
            state.chat.notice(rewind_picker::rewound_notice(
                turn, mode, &files, &kept, generation,
            ));
            if let Some(text) = text {
                undo_commands::put_back(state, &text, now);
            }
        }
        // The provider's models, for an open `/model` picker (else stale).
        Event::Models { models, error } => {
            if let Some(Picker::Models(p)) = state.picker.as_mut() {
                p.offered(models, error);
            }
        }
        Event::Mode { mode } => super::plan_review::on_mode(state, mode),
        Event::Plan { path, markdown, .. } => {
            fx.extend(super::plan_review::on_plan(state, path, &markdown, now))
        }
        Event::Notice { message } => state.chat.notice(message),
        Event::Warning { message } => state.chat.notice(format!("warning: {message}")),
        Event::Error { kind, message } => state.chat.error(format!("{kind}: {message}")),
        ev @ (Event::Jobs { .. } | Event::JobEnded { .. } | Event::JobOutput { .. }) => {
            super::job_events::on_event(state, ev, now)
        }
        // The headless result line: the TUI shows the turn's end by its own events.
        Event::Result { .. } => {}
    }
    state.sync_gauge_mode();
}
