//! The full-screen terminal front end (SPEC §11): an Elm-style shell (state, pure reducer, view)
//! around the engine's queue pair, with the renderer in [`render`].

pub mod agents;
pub mod app;
pub mod commands;
pub mod daily_events;
pub mod editor;
pub mod editor_update;
pub mod events;
pub mod frame;
pub mod handoff_events;
pub mod history_file;
pub mod input;
pub mod keymap;
pub mod mention;
pub mod msg;
pub mod overlay_view;
pub mod queue;
pub mod render;
pub mod rescue;
pub mod search;
pub mod select;
pub mod slash;
pub mod state;
pub mod step_memory;
pub mod term_out;
pub mod terminal;
pub mod unsaved;
pub mod update;
pub mod view;

#[cfg(test)]
mod agents_tests;
#[cfg(test)]
mod background_tests;
#[cfg(test)]
mod commands_tests;
#[cfg(test)]
mod daily_screens_tests;
#[cfg(test)]
mod daily_tests;
#[cfg(test)]
mod editor_tests;
#[cfg(test)]
mod input_tests;
#[cfg(test)]
mod keys_tests;
#[cfg(test)]
mod memory_tests;
#[cfg(test)]
mod queue_tests;
#[cfg(test)]
mod reducer_tests;
#[cfg(test)]
mod screens_tests;
#[cfg(test)]
mod stream_tests;
#[cfg(test)]
mod unsaved_tests;

use tokio::sync::mpsc;

use crate::engine::context::Thresholds;
use crate::engine::protocol::{Event, Op};

/// Everything the TUI needs from `main`.
pub struct TuiParams {
    /// Called once the first frame is drawn (the MCP servers are released to start then).
    pub on_first_frame: Option<Box<dyn FnOnce() + Send>>,
    /// Ops to the engine (bounded; the UI never awaits a send).
    pub ops: mpsc::Sender<Op>,
    /// Events from the engine.
    pub events: mpsc::UnboundedReceiver<Event>,
    /// The model name for the status line (until the engine reports its session).
    pub model: String,
    /// The provider label (`anthropic`, `openai`, `demo`).
    pub provider: String,
    /// The built-in demo model runs (SPEC §15).
    pub demo: bool,
    /// The review window in seconds (SPEC §8); `None` = `--review off`.
    pub review: Option<u64>,
    /// Theme name: `dark`, `light` or a user theme.
    pub theme: String,
    /// `NO_COLOR`: modifiers only.
    pub no_color: bool,
    /// `$EDITOR`, for Ctrl-E.
    pub editor_cmd: Option<String>,
    /// The thresholds the gauge starts with.
    pub thresholds: Thresholds,
    /// Where the window came from (`--window`, learned, the model table, the default).
    pub window_source: String,
    /// A first chat line (the demo banner).
    pub banner: Option<String>,
    /// How a long turn's end is signalled.
    pub notify: crate::config::Notify,
    /// This workspace's input history file (`None`: history is not kept across runs).
    pub history_file: Option<std::path::PathBuf>,
    /// The run this process records to (`--resume RUN_ID` continues it).
    pub run_id: String,
    /// The reasoning effort asked for at start.
    pub effort: Option<crate::engine::protocol::Effort>,
    /// The workspace (its files are offered after `@`).
    pub workspace: std::path::PathBuf,
}

/// What the user leaves behind: the session to come back to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The session the TUI talked to last, if one started.
    pub session_id: Option<String>,
    /// Its generation in the step.
    pub generation: u32,
    /// Its run (what `--resume RUN_ID` takes).
    pub run_id: Option<String>,
}

/// Run the TUI until the user quits. The terminal is restored on every way out.
pub async fn run(params: TuiParams) -> anyhow::Result<Outcome> {
    app::run(params).await
}
