//! The integration suite, one module per area.

mod cli;
mod e2e;
mod engine;
mod handoff;
mod mcp;
mod protocol;
mod provider;
