//! The integration suite, one module per area.

mod background;
mod background_e2e;
mod cli;
mod continuity;
mod continuity_e2e;
mod daily;
mod demo_e2e;
mod e2e;
mod echo;
mod engine;
mod extensions;
mod faults;
mod handoff;
mod hangup_e2e;
mod hostile;
mod layers;
mod local;
mod masking;
mod mcp;
mod memory;
mod memory_e2e;
mod protocol;
mod provider;
mod rescue;
mod sandbox;
mod subagents;
