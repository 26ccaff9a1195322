mod cli;
mod engine;
mod handoff;
