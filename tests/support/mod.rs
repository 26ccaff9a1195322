//! Shared test support: the fake model server, its reply builders, and the engine harness.
// Each test module uses a different part of the support code.
#![allow(dead_code)]

pub mod fake;
pub mod harness;
pub mod lsp_setup;
pub mod mcp_server;
pub mod mcp_setup;
pub mod pty;
pub mod registry;
