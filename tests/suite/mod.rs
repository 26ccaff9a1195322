//! The integration suite, one module per area.

mod cli;
mod continuity;
mod continuity_e2e;
mod daily;
mod e2e;
mod engine;
mod handoff;
mod mcp;
mod protocol;
mod provider;
