//! MCP servers: the tools people already run, through the official Rust SDK
//! (`rmcp`, client side only). Configuration in `config.toml` and a workspace's `.mcp.json`
//! ([`config`]), the `.mcp.json` approval store ([`approval`]), and the [`McpManager`] that runs the
//! servers, offers their tools as `mcp__<server>__<tool>` and calls them.
//!
//! Nothing here blocks its caller: servers start in the background, and every failure of a server
//! (it crashes, hangs, answers garbage, times out) becomes a tool error and a state change, never a
//! panic or a hang of flower-tui.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

pub mod approval;
mod client;
pub mod config;
mod convert;
pub mod env;
mod manager;
pub mod names;
pub(crate) mod process;
pub(crate) mod project;
mod status;

pub use approval::{ApprovalStore, Decision};
pub use config::{Origin, ServerConfig, Transport};
pub use manager::{GATE_WAIT, ManagerParams, McpManager, ProjectApproval};
pub use project::{McpJsonPolicy, ProjectServers, project_servers};

pub(crate) use project::headless_notice;
pub use status::{ServerState, ServerStatus};
