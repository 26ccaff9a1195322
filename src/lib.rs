//! flower-tui: a terminal coding agent whose context handoffs are visible, editable files.
//!
//! Two layers: [`engine`] (providers, tools, sessions, handoff, ledger — no terminal code) and
//! [`tui`] (the full-screen front end). [`headless`] drives the engine without a terminal.

pub mod config;
pub mod engine;
pub mod harden;
pub mod headless;
pub mod launch;
pub mod logging;
pub mod server_window;
pub mod tui;
pub mod tui_main;
