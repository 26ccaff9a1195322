//! The agent engine. Nothing below this module imports ratatui, crossterm or the textarea crate.

pub mod compact;
pub mod context;
pub mod demo;
pub mod error;
pub mod fsutil;
pub mod handoff;
pub mod ledger;
pub mod memory;
pub mod policy;
pub mod pricing;
pub mod protocol;
pub mod provider;
pub mod replace;
pub mod secrets;
pub mod session;
pub mod tools;
pub mod types;
pub mod windows;
