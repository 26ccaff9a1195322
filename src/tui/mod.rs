//! The full-screen terminal front end: an Elm-style shell around the engine's queue pair. The app
//! (`app`) owns the terminal, the channels and the I/O; the state (`state`) is model only, made
//! of parts that each own their behaviour (`chat`, `input_box`, `mention`, `turns`, `activity`,
//! `status_line`, `questions`, `session_picker`, `model_picker`, `rewind_state`, `editor_pane`,
//! `handoff_state`, …); the pure reducer (`update`, with one module per concern: keys and commands, the engine's
//! turn, handoff, session, memory, subagent and MCP events, the queue, the side editor) turns
//! messages into calls on the parts and effects; the view (`view`, with the approval prompt and
//! the overlays) draws the state with the renderer in [`render`]. Keys are one table (`keymap`).

pub(crate) mod activity;
pub(crate) mod app;
pub(crate) mod approval_view;
pub(crate) mod chat;
pub(crate) mod commands;
pub(crate) mod editor;
pub(crate) mod editor_pane;
pub(crate) mod editor_review;
pub(crate) mod editor_update;
pub(crate) mod events;
pub(crate) mod export_file;
pub(crate) mod file_queries;
pub(crate) mod file_watch;
pub(crate) mod frame;
pub(crate) mod handoff_events;
pub(crate) mod handoff_state;
pub(crate) mod history_file;
pub(crate) mod hook_events;
pub(crate) mod info_commands;
#[cfg(test)]
mod info_commands_tests;
pub(crate) mod input;
pub(crate) mod input_box;
pub(crate) mod interrupt_keys;
pub(crate) mod job_events;
pub(crate) mod jobs_overlay;
#[cfg(test)]
mod jobs_tests;
pub(crate) mod jobs_view;
pub(crate) mod key_actions;
pub(crate) mod keymap;
pub(crate) mod mcp_events;
pub(crate) mod mcp_servers;
pub(crate) mod memory_commands;
pub(crate) mod memory_view;
pub(crate) mod mention;
pub(crate) mod model_picker;
pub(crate) mod msg;
pub(crate) mod overlay_view;
pub(crate) mod paste_and_mouse;
pub(crate) mod plan_review;
pub(crate) mod plan_state;
pub(crate) mod question_answers;
pub(crate) mod questions;
pub(crate) mod queue;
pub(crate) mod quit_arm;
pub mod render;
pub(crate) mod rewind_picker;
pub(crate) mod rewind_state;
pub(crate) mod search;
pub(crate) mod select;
pub(crate) mod session_events;
pub(crate) mod session_info;
pub(crate) mod session_picker;
pub(crate) mod slash;
pub(crate) mod state;
pub(crate) mod status_line;
pub(crate) mod subagent_events;
pub(crate) mod term_in;
pub(crate) mod term_out;
pub(crate) mod terminal;
pub(crate) mod turn_events;
pub(crate) mod turns;
pub(crate) mod undo_commands;
pub(crate) mod unsaved;
pub(crate) mod unsaved_copy;
pub(crate) mod update;
pub(crate) mod view;

#[cfg(test)]
mod background_handoff_tests;
#[cfg(test)]
mod commands_tests;
#[cfg(test)]
mod custom_commands_tests;
#[cfg(test)]
mod editor_escape_tests;
#[cfg(test)]
mod editor_tests;
#[cfg(test)]
mod hook_tests;
#[cfg(test)]
mod image_paste_tests;
#[cfg(test)]
mod input_tests;
#[cfg(test)]
mod keys_tests;
#[cfg(test)]
mod mcp_tests;
#[cfg(test)]
mod memory_commands_tests;
#[cfg(test)]
mod plan_review_tests;
#[cfg(test)]
mod queue_tests;
#[cfg(test)]
mod reducer_tests;
#[cfg(test)]
mod screens_input_tests;
#[cfg(test)]
mod screens_tests;
#[cfg(test)]
mod screens_tools_tests;
#[cfg(test)]
mod session_events_tests;
#[cfg(test)]
mod stream_states_tests;
#[cfg(test)]
mod subagent_tests;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tool_cell_events_tests;
#[cfg(test)]
mod unsaved_tests;
#[cfg(test)]
mod wide_chars_tests;

use tokio::sync::mpsc;

use crate::engine::context::{Thresholds, WindowSource};
use crate::engine::protocol::{Event, Op};

/// Everything the TUI needs from `main`.
pub(crate) struct TuiParams {
    /// Called once the first frame is drawn (the MCP servers are released to start then).
    pub(crate) on_first_frame: Option<Box<dyn FnOnce() + Send>>,
    /// Ops to the engine (bounded; the UI never awaits a send).
    pub(crate) ops: mpsc::Sender<Op>,
    /// Events from the engine.
    pub(crate) events: mpsc::UnboundedReceiver<Event>,
    /// The model name for the status line (until the engine reports its session).
    pub(crate) model: String,
    /// The provider label (`anthropic`, `openai`, `demo`).
    pub(crate) provider: String,
    /// The built-in demo model runs (no provider, no key).
    pub(crate) demo: bool,
    /// The review window in seconds (how long the side editor waits before the successor
    /// starts); `None` = `--review off`.
    pub(crate) review: Option<u64>,
    /// Theme name: `dark`, `light` or a user theme.
    pub(crate) theme: String,
    /// `NO_COLOR`: modifiers only.
    pub(crate) no_color: bool,
    /// `$EDITOR`, for Ctrl-E.
    pub(crate) editor_cmd: Option<String>,
    /// The thresholds the gauge starts with.
    pub(crate) thresholds: Thresholds,
    /// Where the window came from (`--window`, learned, the model table, the default).
    pub(crate) window_source: WindowSource,
    /// A first chat line (the demo banner).
    pub(crate) banner: Option<String>,
    /// How a long turn's end is signalled.
    pub(crate) notify: crate::config::Notify,
    /// This workspace's input history file (`None`: history is not kept across runs).
    pub(crate) history_file: Option<std::path::PathBuf>,
    /// The run this process records to (`--resume RUN_ID` continues it).
    pub(crate) run_id: String,
    /// The reasoning effort asked for at start.
    pub(crate) effort: Option<crate::engine::protocol::Effort>,
    /// The workspace (its files are offered after `@`).
    pub(crate) workspace: std::path::PathBuf,
    /// The custom commands and skills the engine was started with.
    pub(crate) extensions: crate::engine::session::Extensions,
    /// `/config`: the settings the run started with.
    pub(crate) config_report: String,
    /// Capture the mouse from the start (config `mouse_capture`; Alt-M toggles it).
    pub(crate) mouse_capture: bool,
}

/// What the user leaves behind: the session to come back to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// The session the TUI talked to last, if one started.
    pub session_id: Option<String>,
    /// Its generation in the step.
    pub generation: u32,
    /// Its run (what `--resume RUN_ID` takes).
    pub run_id: Option<String>,
    /// The conversation as Markdown, for the terminal's scrollback once the app has left.
    pub conversation: String,
    /// The latest handoff document, if one was written.
    pub latest_handoff: Option<std::path::PathBuf>,
}

/// Run the TUI until the user quits. The terminal is restored on every way out.
pub(crate) async fn run(params: TuiParams) -> anyhow::Result<Outcome> {
    app::run(params).await
}
