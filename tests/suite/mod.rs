//! The integration suite, one module per area.

mod cli;
mod engine;
mod handoff;
mod provider;
