//! The full-screen terminal front end (SPEC §11): an Elm-style shell (state, pure reducer, view)
//! around the engine's queue pair, with the renderer in [`render`].

pub mod app;
pub mod commands;
pub mod editor;
pub mod editor_update;
pub mod events;
pub mod frame;
pub mod handoff_events;
pub mod input;
pub mod keymap;
pub mod msg;
pub mod render;
pub mod rescue;
pub mod select;
pub mod slash;
pub mod state;
pub mod step_memory;
pub mod terminal;
pub mod unsaved;
pub mod update;
pub mod view;

#[cfg(test)]
mod background_tests;
#[cfg(test)]
mod commands_tests;
#[cfg(test)]
mod editor_tests;
#[cfg(test)]
mod input_tests;
#[cfg(test)]
mod memory_tests;
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
}

/// Run the TUI until the user quits. The terminal is restored on every way out.
pub async fn run(params: TuiParams) -> anyhow::Result<()> {
    app::run(params).await
}
