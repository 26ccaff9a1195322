//! The queue pair between the engine and its front ends (TUI, headless): `Op`s in, `Event`s out.
//!
//! Correlation: every piece of work a front end starts (a user message, `/handoff`) is a *turn*
//! with a [`TurnId`] the front end chooses ([`TurnId::next`]); the engine answers with
//! `TurnStarted` when it begins the turn and exactly one `TurnEnd` when it is over (also for a turn
//! refused or cancelled before it started). `Op::Abort` names the turn it means: an abort of a turn
//! that already ended is ignored, an abort of a turn still queued drops it. A handoff has a
//! [`HandoffId`] the engine chooses; `Op::ReviewDone` names the handoff whose review it ends.
//!
//! Extending it: new work gets a new `Op` with a `TurnId` and a new `TurnKind`; new facts get new
//! `Event` variants (headless prints every event as one JSON line with a `"type"`, so a variant is
//! never renamed and a field never changes meaning).

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

use super::context::Thresholds;
use super::types::Usage;

pub use super::error::ErrorKind;

/// One turn, numbered by the front end that starts it (from [`TurnId::FIRST`] up, never reused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct TurnId(pub u64);

impl TurnId {
    /// The first turn of a front end.
    pub const FIRST: TurnId = TurnId(1);

    /// The id after this one.
    pub fn next(self) -> TurnId {
        TurnId(self.0.saturating_add(1))
    }
}

impl fmt::Display for TurnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "turn {}", self.0)
    }
}

/// One handoff (automatic or manual), numbered by the engine from 1 in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct HandoffId(pub u64);

impl fmt::Display for HandoffId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "handoff {}", self.0)
    }
}

/// Who wrote a message or started a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// The person at the front end (typed, or `-p`).
    User,
    /// The engine itself (e.g. the successor's handoff briefing).
    Engine,
}

/// What a turn does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnKind {
    /// A user message: the agent loop of requests and tools (SPEC §4).
    Message,
    /// `/handoff [focus]` (SPEC §7).
    Handoff,
}

/// What a front end asks of the engine.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// A user message: runs one turn.
    UserTurn {
        turn: TurnId,
        text: String,
    },
    /// Abort what runs in `turn` (a stream, a tool, an approval wait, a handoff being written),
    /// or drop `turn` if it is still queued. Ignored when `turn` is over.
    Abort {
        turn: TurnId,
    },
    /// `/handoff [focus]`: a turn of its own.
    Handoff {
        turn: TurnId,
        focus: Option<String>,
    },
    /// The answer to an `Event::ApprovalRequest`.
    Approval {
        id: String,
        decision: Approval,
    },
    /// The review window (SPEC §8) of `handoff` is over: start the successor from the file on disk.
    /// Ignored unless that handoff awaits its review.
    ReviewDone {
        handoff: HandoffId,
    },
    /// Stop writing the document of `handoff`, a handoff running in the background (SPEC §6.16):
    /// the main turn goes on, the session is unchanged. Ignored once the document is frozen.
    CancelHandoff {
        handoff: HandoffId,
    },
    /// The review of `handoff` ends with the front end going away (a signal, a closed terminal)
    /// while the side editor held unsaved edits, which it kept in `path`: the engine records them
    /// with the frozen handoff, so the next start offers them when it reopens the review.
    UnsavedEdits {
        handoff: HandoffId,
        path: PathBuf,
    },
    /// `/new`: a fresh session with no handoff.
    NewSession,
    /// `/window N`: a new context window for the rest of the run.
    SetWindow {
        window: u64,
    },
    Shutdown,
}

impl Op {
    /// The turn this op starts, if it starts one.
    pub fn starts_turn(&self) -> Option<TurnId> {
        match self {
            Op::UserTurn { turn, .. } | Op::Handoff { turn, .. } => Some(*turn),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    Once,
    Always,
    Deny,
}

/// Why a turn ended (SPEC §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitReason {
    Completed,
    Interrupted,
    /// The session was replaced by a successor (a `/handoff` turn that succeeded).
    Handoff,
    /// The turn ended without touching the session (a `/handoff` refused or failed; its
    /// `Event::Handoff` says why).
    Unchanged,
    MaxIterations {
        n: u32,
        max: u32,
    },
    Error(ErrorKind),
}

impl fmt::Display for ExitReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExitReason::Completed => f.write_str("completed"),
            ExitReason::Interrupted => f.write_str("interrupted"),
            ExitReason::Handoff => f.write_str("handoff"),
            ExitReason::Unchanged => f.write_str("unchanged"),
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

/// Why the engine declined a `/handoff` (the guard of SPEC §7, kept in one place: here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HandoffRefusal {
    /// Fewer than 2 messages in the session.
    NoMessages,
    /// A handoff is being written already.
    AlreadyWriting,
    /// A handoff written in the background is in its review; its successor starts when it ends.
    Reviewing,
}

impl fmt::Display for HandoffRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HandoffRefusal::NoMessages => "Nothing to hand off (no messages yet)",
            HandoffRefusal::AlreadyWriting => "A handoff is already being written (Esc cancels it)",
            HandoffRefusal::Reviewing => {
                "A handoff is under review: its successor starts when the review ends"
            }
        })
    }
}

/// What set off a compaction (SPEC §9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionTrigger {
    /// ctx reached 0.8 × window before a request.
    Pressure,
    /// The provider said the context window was exceeded.
    Overflow,
}

impl fmt::Display for CompactionTrigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CompactionTrigger::Pressure => "pressure",
            CompactionTrigger::Overflow => "overflow",
        })
    }
}

/// Which path produced a handoff document (SPEC §6.17), as the ledger records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DocumentSource {
    /// The model wrote it from the whole history.
    #[default]
    Written,
    /// The model wrote it from a reduced copy of the history (old tool results as stubs, maybe
    /// the oldest turns dropped), after a request overflowed or a background writing failed.
    Rescued,
    /// Assembled mechanically: no writing turn produced a document.
    Degraded,
}

impl DocumentSource {
    /// `written`, `rescued` or `degraded`.
    pub fn as_str(self) -> &'static str {
        match self {
            DocumentSource::Written => "written",
            DocumentSource::Rescued => "rescued",
            DocumentSource::Degraded => "degraded",
        }
    }
}

impl fmt::Display for DocumentSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The handoff's visible phases (SPEC §6, §7).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum HandoffPhase {
    /// `ctx >= warn_at`, once per generation.
    Near { context: u64, at: u64, window: u64 },
    /// The writing turn started. `background`: it runs beside the main thread, which keeps
    /// working (SPEC §6.16); otherwise the main thread waits for it.
    Writing {
        handoff: HandoffId,
        manual: bool,
        focus: Option<String>,
        background: bool,
    },
    /// The writing turn runs (again) on a reduced copy of the history (SPEC §6.17): `reason` says
    /// what failed; `stubbed` tool results became one-line stubs, `dropped` old messages went.
    Rescuing {
        handoff: HandoffId,
        reason: String,
        stubbed: usize,
        dropped: usize,
        background: bool,
    },
    /// The main thread stops until the background document is ready (and reviewed): its context
    /// reached `limit`, the window minus the writing reserve.
    Waiting {
        handoff: HandoffId,
        context: u64,
        limit: u64,
    },
    /// The document is on disk (or, with no workbench, in memory). When `awaits_review`, the engine
    /// waits for `Op::ReviewDone { handoff }` before it starts the successor. `background`: the
    /// main thread keeps working during the review; the successor starts at the first message
    /// boundary after it.
    Frozen {
        handoff: HandoffId,
        path: Option<PathBuf>,
        degraded: bool,
        markdown: String,
        awaits_review: bool,
        background: bool,
    },
    /// A handoff frozen by an earlier process and never turned over (it ended during the review:
    /// a signal, a closed terminal, `kill -9`) is reviewed again: a `Frozen` for it follows.
    /// `unsaved` is where that process kept the side editor's unsaved edits, if it did and the
    /// file is still there: the front end offers to restore them.
    Reopened {
        handoff: HandoffId,
        path: Option<PathBuf>,
        /// When it was frozen (RFC 3339).
        frozen_at: String,
        unsaved: Option<PathBuf>,
    },
    /// The successor session started. `source`: which path produced the document; `tail`: the
    /// messages after the cut its briefing records (a background handoff's).
    Done {
        handoff: HandoffId,
        context: u64,
        window: u64,
        degraded: bool,
        path: Option<PathBuf>,
        sections: Vec<String>,
        generation: u32,
        source: DocumentSource,
        tail: usize,
    },
    /// Esc (or `Op::CancelHandoff`) while the document was written: the session is unchanged.
    Cancelled { handoff: HandoffId },
    /// A manual handoff failed; the session is unchanged.
    Failed { handoff: HandoffId, message: String },
    /// A `/handoff` was declined before it started; `message` is what to show.
    Refused {
        reason: HandoffRefusal,
        message: String,
    },
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
        /// `window`, `headroom`, `at`, `warn_at` (flat on the wire).
        #[serde(flatten)]
        thresholds: Thresholds,
        demo: bool,
    },
    /// The engine began working on `turn`.
    TurnStarted {
        turn: TurnId,
        kind: TurnKind,
        origin: Origin,
    },
    /// A user message the engine put into the conversation (echo, for transcripts and the chat
    /// pane). `turn` is the turn it belongs to; None for a message replayed from an earlier run
    /// (`--continue`).
    UserMessage {
        turn: Option<TurnId>,
        origin: Origin,
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
        /// One line for the UI (`tools::summary`): `bash: cargo test`, `read_file: a.rs:1-40`.
        summary: String,
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
        /// The call leaves the workspace: "always" does not cover it (SPEC §14).
        outside_workspace: bool,
    },
    /// Context accounting after a response (or an estimate between responses), with the
    /// thresholds in force.
    Usage {
        context: u64,
        /// `window`, `headroom`, `at`, `warn_at` (flat on the wire).
        #[serde(flatten)]
        thresholds: Thresholds,
        estimated: bool,
        usage: Usage,
        /// This response's cost (0 for an estimate).
        cost_usd: f64,
        /// The session's cost so far (writing turns and summaries included).
        session_cost_usd: f64,
    },
    Handoff(HandoffPhase),
    /// A compaction (`--no-handoff`) replaced older history with a summary.
    Compaction {
        before: u64,
        after: u64,
        trigger: CompactionTrigger,
    },
    Retry {
        attempt: u32,
        max: u32,
        reason: String,
        delay_ms: u64,
    },
    /// The provider's stream between the request and its reply (SPEC §3).
    Stream(StreamState),
    /// A window learned from an overflow message, now recorded for the model, with the thresholds
    /// now in force.
    WindowLearned {
        model: String,
        #[serde(flatten)]
        thresholds: Thresholds,
    },
    Notice {
        message: String,
    },
    Warning {
        message: String,
    },
    Error {
        kind: ErrorKind,
        message: String,
    },
    TurnEnd {
        turn: TurnId,
        kind: TurnKind,
        origin: Origin,
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

#[cfg(test)]
#[path = "protocol_tests.rs"]
mod tests;
