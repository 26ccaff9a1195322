//! A row of `/cost`: one generation's figures, as `Event::Cost` lists them.

use serde::Serialize;

use super::GenerationStart;

/// One generation in `/cost`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostRow {
    pub generation: u32,
    pub start: GenerationStart,
    /// `gen 1`, `gen 2 · handoff`, `gen 3 · /new`.
    pub label: String,
    pub session_id: String,
    pub cost_usd: f64,
    pub num_turns: u32,
    /// The generation's last context reading.
    pub context: u64,
    /// This is the session running now.
    pub current: bool,
    /// The part of `cost_usd` its subagents spent.
    pub subagents_usd: f64,
}
