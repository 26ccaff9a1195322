//! The agent engine: everything flower-tui does without a terminal. Nothing below this module
//! imports ratatui, crossterm or the textarea crate, nor anything of the crate outside
//! `src/engine`; headless mode and the TUI drive it through the queue pair in [`protocol`].

pub(crate) mod approvals;
pub(crate) mod compact;
pub mod context;
pub mod demo;
pub mod diff;
pub(crate) mod error;
pub mod files;
pub mod fsutil;
pub mod handoff;
pub mod instructions;
pub(crate) mod learned_windows;
pub mod ledger;
pub mod mcp;
pub(crate) mod mentions;
pub mod policy;
pub mod pricing;
pub mod protocol;
pub mod provider;
pub(crate) mod replace;
pub mod secrets;
pub mod session;
pub mod step_memory;
pub mod subagent;
pub(crate) mod sysprompt;
pub(crate) mod text;
pub mod tools;
pub mod types;
