//! What a hostile daily user found wrong in the engine, each through the real binary
//! (headless, or in a pseudo-terminal where the TUI is involved) against the loopback fake.

mod handoff_cause;
mod runs_elsewhere;
mod unknown_tool;
