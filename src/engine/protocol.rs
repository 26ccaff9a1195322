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

mod cost;
mod op;
mod refusal;

pub use super::approvals::{AllowOffer, AllowRule, Allowance};
use super::checkpoint::RestoreReport;
use super::context::Thresholds;
pub(crate) use super::context::WindowSource;
pub use super::diff::{DiffLine, FileChange, FileDiff, Hunk, LineKind};
pub(crate) use super::instructions::InstructionFile;
pub use super::jobs::{JobInfo, JobState};
pub(crate) use super::ledger::SubagentRecord;
pub use super::ledger::{DocumentSource, GenerationStart, SessionSummary};
use super::ledger::{RewindMode, RewindPoint};
pub use super::permissions::ListedRule;
pub(crate) use super::policy::ApprovalPolicy;
pub use super::policy::Mode;
pub use super::subagent::{SubagentOutcome, SubagentPhase};
pub(crate) use super::tools::CommandExit;
pub use super::tools::sandbox::{Certainty, SandboxStopped, StopKind};
pub use super::types::Effort;
use super::types::Usage;
pub use cost::CostRow;
pub use op::{Approval, JobsOp, Op, PlanChoice};
pub use refusal::HandoffRefusal;

pub use super::error::ErrorKind;
pub(crate) use super::ledger::Held;
pub use super::step_memory::{MemoryRefusal, PinRef, TodoItem, TodoStatus};

/// One turn, numbered by the front end that starts it (from [`TurnId::FIRST`] up, never reused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct TurnId(pub u64);

impl TurnId {
    /// The first turn of a front end.
    pub const FIRST: TurnId = TurnId(1);
    /// The one turn the engine starts itself (the demo types its own first message): its
    /// `TurnStarted`/`TurnEnd` say `origin: engine`; front ends never number a turn 0.
    pub const ENGINE: TurnId = TurnId(0);

    /// Who started the turn.
    pub fn origin(self) -> Origin {
        if self == TurnId::ENGINE {
            Origin::Engine
        } else {
            Origin::User
        }
    }

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
    /// A user message: the agent loop of requests and tools.
    Message,
    /// `/handoff [focus]`.
    Handoff,
    /// `/init`: a message turn with the engine's own prompt, drafting `AGENTS.md`.
    Init,
}

/// Why a turn ended.
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

/// What changed the step's pins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PinChange {
    /// `/pin TEXT`.
    Added,
    /// `/pins rm N` or `/pins clear`.
    Removed,
    /// A `Pinned` section the user typed into the handoff document during its review.
    FromEditor,
    /// `--continue`: the pins the ledger kept.
    Restored,
}

/// What set off a compaction.
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

/// The handoff's visible phases.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum HandoffPhase {
    /// `ctx >= warn_at`, once per generation.
    Near { context: u64, at: u64, window: u64 },
    /// The writing turn started. `background`: it runs beside the main thread, which keeps
    /// working; otherwise the main thread waits for it.
    Writing {
        handoff: HandoffId,
        manual: bool,
        focus: Option<String>,
        background: bool,
    },
    /// The writing turn runs (again) on a reduced copy of the history: `reason` says
    /// what failed; `stubbed` tool results became one-line stubs, `dropped` old messages went.
    Rescuing {
        handoff: HandoffId,
        reason: String,
        stubbed: usize,
        dropped: usize,
        background: bool,
    },
    /// The document restated its instructions (`reason`, see `handoff::echo`): it is written
    /// once more, with the short prompt that shows a filled-in example.
    Retrying {
        handoff: HandoffId,
        reason: String,
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
        /// Why the writing failed, when `degraded`.
        degraded_reason: Option<String>,
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
        /// Why the writing failed, when `degraded`.
        degraded_reason: Option<String>,
        path: Option<PathBuf>,
        sections: Vec<String>,
        generation: u32,
        source: DocumentSource,
        tail: usize,
        /// What the retired session held, and where its transcript is.
        held: Held,
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

/// What a request's stream is doing, when it is not simply streaming.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum StreamState {
    /// The try broke after part of its answer was shown (`chars` characters of text, maybe thinking
    /// too): that part is void; the `retry` event that follows replays the request from scratch.
    /// Also sent when a whole reply's text stands for something else: tool calls the model wrote
    /// as text (the calls follow), or a reply cut off by a full window (a handoff follows).
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
    /// What the session's system prompt holds besides the base prompt: the environment block
    /// and the project instructions read for it (after `SessionStarted`, for every session).
    SessionPrompt {
        session_id: String,
        environment: String,
        instructions: Vec<InstructionFile>,
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
    /// An `@path` of the user's message of `turn`: attached to it (the model gets the file's
    /// first page under its path) or, with `attached: false`, why not. `summary` is the line to
    /// show (`src/main.rs: 120 lines attached`).
    Attachment {
        turn: TurnId,
        path: String,
        attached: bool,
        summary: String,
    },
    /// A piece of the reply of `turn` (None: outside any turn), as it streams.
    TextDelta {
        turn: Option<TurnId>,
        text: String,
    },
    ThinkingDelta {
        text: String,
    },
    /// The assistant message of `turn` is complete (None: replayed from an earlier run).
    AssistantDone {
        turn: Option<TurnId>,
        text: String,
        interrupted: bool,
    },
    /// A tool call the model made in `turn` (None: outside any turn).
    ToolCall {
        turn: Option<TurnId>,
        id: String,
        name: String,
        input: Value,
        /// One line for the UI (`tools::summary`): `bash: cargo test`, `read_file: a.rs:1-40`.
        summary: String,
        /// The call may change files in the workspace (a file tool that writes, a command): a
        /// front end refreshes what it knows of the files after its result.
        changes_files: bool,
    },
    /// The result of the tool call `id` of `turn` (None: outside any turn).
    ToolResult {
        turn: Option<TurnId>,
        id: String,
        name: String,
        /// What the model is given (a spilled result: its preview), but for the diagnostics of
        /// a `Diagnostics` event just before it, which the model gets after this text.
        output: String,
        is_error: bool,
        spilled: Option<PathBuf>,
        /// `edit_file` / `write_file`: the change made, as a unified diff with line numbers.
        diff: Option<Box<FileDiff>>,
        /// `bash`: how the command ended (exit code, signal, timeout, interrupt, elapsed time).
        exit: Option<CommandExit>,
        /// `bash`: the sandbox stopped (or may have stopped) the command, and why in words.
        sandbox: Option<SandboxStopped>,
    },
    /// What the language servers said about the files the tool call `id` of `turn` changed: the
    /// problems it introduced and fixed (just before the call's `ToolResult`).
    Diagnostics {
        turn: Option<TurnId>,
        id: String,
        report: super::lsp::ChangeReport,
    },
    /// Output of the running tool call `id` (bash), while it runs: throttled to at most 20 events
    /// a second, redacted, raw terminal text (`\r`, colours) that the front end cleans for its
    /// cell; it stops after 4 MiB. The `ToolResult` that follows has the whole (cleaned) output.
    ToolOutputDelta {
        id: String,
        text: String,
    },
    ApprovalRequest {
        id: String,
        name: String,
        summary: String,
        /// The call leaves the workspace: "always" does not cover it.
        outside_workspace: bool,
        /// `bash`: the whole command, exactly as it will run.
        command: Option<String>,
        /// `edit_file` / `write_file`: the change the call would make (the preview).
        diff: Option<Box<FileDiff>>,
        /// What answering [`Approval::Always`] grants, with the sentence to show; None when
        /// "always" is not offered (a call leaving the workspace is approved call by call).
        always: Option<AllowOffer>,
        /// Set when the sandbox stopped this `bash` command: why, in words. Allowing runs the
        /// command once more, outside the sandbox; denying keeps the sandboxed result.
        unsandboxed: Option<String>,
    },
    /// Context accounting after a response (or an estimate between responses), with the
    /// thresholds in force. `turn` is the turn whose request it follows (None: between turns).
    Usage {
        turn: Option<TurnId>,
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
        /// Tokens (estimated) that masking old tool output kept out of the last request.
        masked_tokens: u64,
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
    /// The provider's stream between the request and its reply.
    Stream(StreamState),
    /// A window learned from an overflow message, now recorded for the model, with the thresholds
    /// now in force.
    WindowLearned {
        model: String,
        #[serde(flatten)]
        thresholds: Thresholds,
    },
    /// The step's pins after a change (or as `--continue` restored them): all of them, oldest
    /// first, and the ones `change` added or removed. `step` is None before the first message
    /// named the step (the pins wait for it).
    Pins {
        pins: Vec<String>,
        change: PinChange,
        changed: Vec<String>,
        step: Option<String>,
    },
    /// The standing focus after `/focus` (None: cleared), or as `--continue` restored it.
    Focus {
        focus: Option<String>,
        step: Option<String>,
    },
    /// The plan as the `todo` tool last wrote it (or as `--continue` restored it).
    Todo {
        items: Vec<TodoItem>,
    },
    /// A `/pin`, `/pins rm` or `/focus` the engine declined; nothing changed.
    MemoryRefused {
        reason: MemoryRefusal,
        message: String,
    },
    /// An MCP server's state changed: starting, ready with N tools, failed with the reason,
    /// stopped (headless: `mcp_status`).
    McpStatus(crate::engine::mcp::ServerStatus),
    /// The workspace's `.mcp.json` names servers the user never approved (this version of the
    /// file): they are held, not started. The front end asks (approve / deny / view them) and
    /// answers with `Op::McpJsonDecision`. Only sent to a front end that can ask (the TUI).
    McpJsonApproval {
        path: PathBuf,
        sha256: String,
        /// The held servers (name, command or URL; never `env` or header values).
        servers: Vec<crate::engine::mcp::ServerStatus>,
    },
    /// A hook ran (headless: `hook`): its event, command, how it ended, the start of its output.
    Hook(crate::engine::hooks::HookNote),
    /// A workspace settings file names hooks the user never approved (this version of the
    /// file): they do not run until the front end's answer, `Op::HooksDecision`. Only sent to a
    /// front end that can ask (the TUI).
    HooksApproval(crate::engine::hooks::HooksQuestion),
    /// The request about to be sent waits for these MCP servers to finish starting (each at most
    /// its `startup_timeout`); sent again as they become ready, and with none when the wait is
    /// over. The front end's spinner shows it (`waiting for MCP servers: a, b… 3s`).
    McpWaiting {
        servers: Vec<String>,
    },
    /// A subagent (a `task` call) started, called a tool, replied, used tokens, or ended
    /// (headless: `subagent` with its `phase`). Its `id` is the `task` call's.
    Subagent(SubagentPhase),
    /// The answer to `Op::Cost`: the step's cost per generation and in total, as the ledger has
    /// them (every response of every generation, writing turns and summaries included, also
    /// those of earlier processes of the run).
    Cost {
        step: String,
        rows: Vec<CostRow>,
        /// The step's subagents, in the order they ended (their cost is in the rows too).
        subagents: Vec<SubagentRecord>,
        total_usd: f64,
        num_turns: u32,
        /// The provider's web searches the step ran (their cost is in the rows too).
        web_searches: u64,
    },
    /// The answer to `Op::ListModels`: the models the provider offers, in its order (empty
    /// with `error` when it could not say).
    Models {
        models: Vec<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// The answer to `Op::ListSessions`: this workspace's runs, newest first (`current_run` is
    /// the one running now).
    Sessions {
        current_run: String,
        sessions: Vec<SessionSummary>,
    },
    /// The engine now continues `run_id` at `session_id` (`--continue`, `--resume`,
    /// `Op::Resume`): the conversation replayed from it follows (`UserMessage { turn: None }`,
    /// `AssistantDone`), so a front end clears what it showed of the run it left.
    Resumed {
        run_id: String,
        session_id: String,
        generation: u32,
        messages: usize,
        /// The step's latest handoff document (the one that briefed this session, or a later
        /// one), for a front end that opens it; None when the step has none on disk.
        latest_handoff: Option<PathBuf>,
    },
    /// The model, effort and window in force (the answer to `Op::SetModel` / `Op::SetEffort`).
    Model {
        model: String,
        effort: Option<Effort>,
        /// `window`, `headroom`, `at`, `warn_at` (flat on the wire).
        #[serde(flatten)]
        thresholds: Thresholds,
        /// Where the window comes from (`--window`, the model table, learned, …); on the wire as
        /// its words.
        window_source: WindowSource,
    },
    /// `/init` found `path` already there: nothing was changed. Ask the user, then send
    /// `Op::Init { overwrite: true }` to have it replaced.
    InitExists {
        turn: TurnId,
        path: PathBuf,
    },
    /// The approval policy, the "always" grants and the settings files' rules in force (the
    /// answer to `Op::Permissions` and `Op::Revoke`).
    Permissions {
        policy: ApprovalPolicy,
        allowances: Vec<Allowance>,
        /// The sandbox of `bash` commands, in one line.
        sandbox: String,
        /// The settings files' permission rules in force, with the file each came from.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        rules: Vec<ListedRule>,
    },
    /// What an `Op::Restore` did (or why it did nothing).
    Restore(RestoreReport),
    /// The step's user messages, newest first (the answer to `Op::RewindPoints`).
    RewindPoints {
        points: Vec<RewindPoint>,
    },
    /// A rewind's code part would write over files changed since the turns it undoes (by the
    /// user, or by someone else while they ran): nothing was done. The front end asks and sends
    /// the rewind again with the answer.
    RewindConflict {
        turn: u64,
        mode: RewindMode,
        files: Vec<String>,
    },
    /// A rewind ran: the files put back (and kept as the user changed them), and the message
    /// to put back in the input box when the conversation went back.
    Rewound {
        turn: u64,
        mode: RewindMode,
        files: Vec<String>,
        kept: Vec<String>,
        text: Option<String>,
        /// A session started for it (an earlier generation's message).
        generation: Option<u32>,
    },
    /// The working mode in force (the answer to `Op::SetMode`, and at start when not normal).
    Mode {
        mode: Mode,
    },
    /// Plan mode presented its plan: saved as `path` (a new file, never over an earlier plan),
    /// for the user to edit and decide on (`Op::ImplementPlan`). The turn ends after it.
    Plan {
        turn: Option<TurnId>,
        path: PathBuf,
        markdown: String,
    },
    /// The background jobs, oldest first: when one starts or ends, and the answer to
    /// `JobsOp::List` and `JobsOp::StopAll`.
    Jobs {
        jobs: Vec<JobInfo>,
    },
    /// A background job ended (by itself, stopped, or killed); its last lines are in `job`.
    JobEnded {
        job: JobInfo,
    },
    /// The answer to `JobsOp::Output`: the job's last lines.
    JobOutput {
        id: u32,
        text: String,
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
        /// The plan file a plan-mode run presented, if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        plan: Option<PathBuf>,
        /// The background jobs the run started, as they ended (stopped at the end of the run).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        jobs: Vec<JobInfo>,
    },
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod wire_table;
