//! The integration suite, one module per area.

mod cli;
mod e2e;
mod engine;
mod faults;
mod handoff;
mod protocol;
mod provider;
