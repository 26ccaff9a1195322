//! The integration suite, one module per area.

mod background;
mod background_e2e;
mod cli;
mod continuity;
mod continuity_e2e;
mod e2e;
mod engine;
mod handoff;
mod protocol;
mod provider;
mod rescue;
