//! The queue pair between the engine and its front ends (TUI, headless): `Op`s in, `Event`s out.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

use super::types::Usage;

/// What a front end asks of the engine.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// A user message: runs one turn.
    UserTurn {
        text: String,
    },
    /// Abort what is running: a stream, a tool, a handoff being written.
    Abort,
    /// `/handoff [focus]`.
    Handoff {
        focus: Option<String>,
    },
    /// The answer to an `Event::ApprovalRequest`.
    Approval {
        id: String,
        decision: Approval,
    },
    /// The review window (SPEC §8) is over: start the successor from the file on disk.
    ReviewDone,
    /// `/new`: a fresh session with no handoff.
    NewSession,
    /// `/window N`: a new context window for the rest of the run.
    SetWindow {
        window: u64,
    },
    Shutdown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    Once,
    Always,
    Deny,
}

/// Why a turn ended (SPEC §4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitReason {
    Completed,
    Interrupted,
    Handoff,
    MaxIterations { n: u32, max: u32 },
    Error(String),
}

impl std::fmt::Display for ExitReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExitReason::Completed => f.write_str("completed"),
            ExitReason::Interrupted => f.write_str("interrupted"),
            ExitReason::Handoff => f.write_str("handoff"),
            ExitReason::MaxIterations { n, max } => write!(f, "max_iterations_reached({n}/{max})"),
            ExitReason::Error(kind) => write!(f, "error:{kind}"),
        }
    }
}

impl Serialize for ExitReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The handoff's visible phases (SPEC §6, §7).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum HandoffPhase {
    /// `ctx >= warn_at`, once per generation.
    Near { context: u64, at: u64, window: u64 },
    /// The writing turn started.
    Writing { manual: bool, focus: Option<String> },
    /// The document is on disk (or, with no workbench, in memory) and the review window is open.
    Frozen {
        path: Option<PathBuf>,
        degraded: bool,
        markdown: String,
    },
    /// The successor session started.
    Done {
        context: u64,
        window: u64,
        degraded: bool,
        path: Option<PathBuf>,
        sections: Vec<String>,
        generation: u32,
    },
    /// Esc during a manual handoff: the session is unchanged.
    Cancelled,
    /// A manual handoff failed; the session is unchanged.
    Failed { message: String },
}

/// What a request's stream is doing, when it is not simply streaming (SPEC §3).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum StreamState {
    /// The try broke after part of its answer was shown (`chars` characters of text, maybe thinking
    /// too): that part is void; the `retry` event that follows replays the request from scratch.
    Discarded { chars: usize },
    /// No byte from the provider for `silent_ms` (sent once a silence passes 15 s).
    Silent { silent_ms: u64 },
    /// The silence is over: bytes arrive again, or the silent try ended.
    Resumed,
}

/// What the engine tells its front ends. Serialised as one JSON object a line in headless mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    SessionStarted {
        session_id: String,
        parent_session: Option<String>,
        generation: u32,
        model: String,
        provider: String,
        window: u64,
        at: u64,
        warn_at: u64,
        demo: bool,
    },
    /// A user message the engine put into the conversation (echo, for transcripts and the chat pane).
    UserMessage {
        text: String,
    },
    TextDelta {
        text: String,
    },
    ThinkingDelta {
        text: String,
    },
    /// The assistant message is complete.
    AssistantDone {
        text: String,
        interrupted: bool,
    },
    ToolCall {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        id: String,
        name: String,
        output: String,
        is_error: bool,
        spilled: Option<PathBuf>,
    },
    ApprovalRequest {
        id: String,
        name: String,
        summary: String,
    },
    /// Context accounting after a response (or an estimate between responses).
    Usage {
        context: u64,
        window: u64,
        estimated: bool,
        usage: Usage,
        cost_usd: f64,
    },
    Handoff(HandoffPhase),
    /// A compaction (`--no-handoff`) replaced older history with a summary.
    Compaction {
        before: u64,
        after: u64,
        trigger: String,
    },
    Retry {
        attempt: u32,
        max: u32,
        reason: String,
        delay_ms: u64,
    },
    /// The provider's stream between the request and its reply (SPEC §3).
    Stream(StreamState),
    /// A window learned from an overflow message, now recorded for the model.
    WindowLearned {
        model: String,
        window: u64,
    },
    Notice {
        message: String,
    },
    Warning {
        message: String,
    },
    Error {
        kind: String,
        message: String,
    },
    TurnEnd {
        reason: ExitReason,
    },
    /// The final answer of a headless run.
    Result {
        text: String,
        is_error: bool,
        num_turns: u32,
        cost_usd: f64,
        session_id: String,
    },
}
