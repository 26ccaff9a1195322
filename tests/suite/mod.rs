//! The integration suite, one module per area.

mod cli;
mod daily;
mod e2e;
mod engine;
mod handoff;
mod protocol;
mod provider;
