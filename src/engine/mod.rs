//! The agent engine. Nothing below this module imports ratatui, crossterm or the textarea crate.

pub mod approvals;
pub mod compact;
pub mod context;
pub mod demo;
pub mod diff;
pub mod error;
pub mod files;
pub mod fsutil;
pub mod handoff;
pub mod instructions;
pub mod ledger;
pub mod mcp;
pub mod mentions;
pub mod policy;
pub mod pricing;
pub mod protocol;
pub mod provider;
pub mod replace;
pub mod secrets;
pub mod session;
pub mod sessions;
pub mod sysprompt;
pub mod tools;
pub mod types;
pub mod windows;
