//! Shared test support: the fake model server and the scripts of its replies, the engine harness,
//! the real binary headless and in a pseudo-terminal, and the checks the suites repeat.
// Each test module uses a different part of the support code.
#![allow(dead_code)]

pub mod check;
pub mod fake;
pub mod files;
pub mod harness;
pub mod headless;
pub mod lsp_setup;
pub mod mcp_server;
pub mod mcp_setup;
pub mod pty;
pub mod registry;
pub mod requests;
pub mod script;
