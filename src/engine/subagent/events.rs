//! What a subagent reports while it works. A child sends [`SubagentEvent`]s on a channel of its
//! own; the parent session turns each into a front-end event (`Event::Subagent(SubagentPhase)`,
//! one JSON line each in headless mode: `{"type":"subagent","phase":"start",…}`), so the subagent
//! never builds a wire event itself. Every phase names the subagent by `id`, the id of the
//! parent's `task` call (its `tool_call` event has the same id), so a front end attaches the
//! subagent to that call.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

use crate::engine::error::ErrorKind;
use crate::engine::types::Usage;

/// What a child sends its parent session while it works.
#[derive(Debug, Clone, PartialEq)]
pub enum SubagentEvent {
    /// One step of its life (the front ends get it as `Event::Subagent`).
    Phase(SubagentPhase),
    /// Something the user should know that is no phase: its transcript can no longer be written
    /// (the front ends get it as `Event::Warning`).
    Warning { message: String },
}

/// A phase as the child's transcript keeps it: the same JSON object the front ends get
/// (`{"type":"subagent","phase":…}`).
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum TranscriptEvent<'a> {
    Subagent(&'a SubagentPhase),
}

/// One step of a subagent's life.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum SubagentPhase {
    /// The child session started (its transcript is being written).
    Start {
        id: String,
        description: String,
        session_id: String,
        /// The main-thread session that started it.
        parent_session: String,
        model: String,
        /// The tools it may call.
        tools: Vec<String>,
        /// Its own window (it never counts in the main thread's).
        window: u64,
        transcript: PathBuf,
    },
    /// The text of one of its replies (the last one is its report).
    Text { id: String, text: String },
    /// It called a tool; `calls` counts its calls so far, this one included.
    ToolCall {
        id: String,
        call_id: String,
        name: String,
        /// One line for the UI (`tools::summary`).
        summary: String,
        calls: u32,
    },
    /// One of its calls returned (`output` is the start of what it was given, at most 400
    /// characters; `chars` the whole length).
    ToolResult {
        id: String,
        call_id: String,
        name: String,
        is_error: bool,
        output: String,
        chars: usize,
    },
    /// A response's usage: `context` is what this response saw (its gauge, against its own
    /// window), `cost_usd` what the subagent has cost so far.
    Usage {
        id: String,
        context: u64,
        usage: Usage,
        cost_usd: f64,
    },
    /// It is over; `usage` sums its responses. The report went back to the parent as the result
    /// of the `task` call.
    End {
        id: String,
        session_id: String,
        outcome: SubagentOutcome,
        usage: Usage,
        /// Its last context reading.
        context: u64,
        cost_usd: f64,
        tool_calls: u32,
        iterations: u32,
        elapsed_ms: u64,
        /// The length of the report the parent got.
        report_chars: usize,
    },
}

impl SubagentPhase {
    /// The `task` call this phase belongs to.
    pub fn id(&self) -> &str {
        match self {
            SubagentPhase::Start { id, .. }
            | SubagentPhase::Text { id, .. }
            | SubagentPhase::ToolCall { id, .. }
            | SubagentPhase::ToolResult { id, .. }
            | SubagentPhase::Usage { id, .. }
            | SubagentPhase::End { id, .. } => id,
        }
    }
}

/// How a subagent ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubagentOutcome {
    /// It answered without tool calls: that answer is its report.
    Completed,
    /// Its iteration budget was spent; it was asked for its report then.
    MaxIterations { n: u32, max: u32 },
    /// Its context reached its handoff line; it was asked for its report then (its mini handoff).
    ContextFull,
    /// The provider said its context overflowed: flower-tui wrote the report from what it did.
    Overflow,
    /// Esc (or shutdown) stopped it with the turn.
    Interrupted,
    /// A request failed for good (after its retries).
    Error(ErrorKind),
}

impl SubagentOutcome {
    /// Whether the parent's `task` call failed (it gets the report either way).
    pub fn is_error(self) -> bool {
        matches!(
            self,
            SubagentOutcome::Interrupted | SubagentOutcome::Error(_)
        )
    }
}

impl fmt::Display for SubagentOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SubagentOutcome::Completed => f.write_str("completed"),
            SubagentOutcome::MaxIterations { n, max } => {
                write!(f, "max_iterations_reached({n}/{max})")
            }
            SubagentOutcome::ContextFull => f.write_str("context_full"),
            SubagentOutcome::Overflow => f.write_str("overflow"),
            SubagentOutcome::Interrupted => f.write_str("interrupted"),
            SubagentOutcome::Error(kind) => write!(f, "error:{kind}"),
        }
    }
}

impl Serialize for SubagentOutcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
