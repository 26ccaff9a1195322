//! What a front end asks of the engine: the `Op`s (a turn to run, an abort naming its turn, a
//! review ended, a setting, a question answered at once, an undo or a rewind, the working mode and
//! what to do with a presented plan) and the answer to an approval request.

use std::path::PathBuf;

use serde::Serialize;

use super::{AllowRule, Effort, HandoffId, PinRef, TurnId};
use crate::engine::checkpoint::{OnConflict, UndoAction};
use crate::engine::ledger::RewindMode;

/// What a front end asks of the background jobs (answered at once, also during a turn).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobsOp {
    /// The list: answered with `Event::Jobs`.
    List,
    /// A job's last lines: answered with `Event::JobOutput`.
    Output { id: u32 },
    /// Stop a job (`SIGTERM`, then `SIGKILL` after the grace period); `Event::JobEnded` follows.
    Stop { id: u32 },
    /// The run ends (headless, at its end): stop every job and answer with the list once they
    /// have ended; the run's record lists them gone, as a later process must not trust them.
    StopAll,
}

/// What a front end asks of the engine.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// `/jobs` and its keys, and headless at its end: the background jobs.
    Jobs(JobsOp),
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
    /// `/init`: draft `<workspace>/AGENTS.md` through the model (a normal turn with the engine's
    /// own prompt). When the file exists and `overwrite` is false, nothing runs: the engine
    /// answers `Event::InitExists` and ends the turn unchanged, and the front end asks the user
    /// before it sends `Init { overwrite: true }` in a new turn.
    Init {
        turn: TurnId,
        overwrite: bool,
    },
    /// `/name args`: run the custom command `name` (without its slash) with what the user typed
    /// after it. Its `` !`command` `` lines run first as `bash` calls of this turn (asked for
    /// and confined as the model's would be); the expanded text is then the user's message.
    Command {
        turn: TurnId,
        name: String,
        args: String,
    },
    /// `!command`: the user runs `command` in the sandbox themselves, a turn of its own with no
    /// model request: one `bash` call (its tool events, never asked for), stopped by an abort
    /// as the model's are. Its output goes with the next message to the model, as context.
    Shell {
        turn: TurnId,
        command: String,
    },
    /// The answer to an `Event::ApprovalRequest`.
    Approval {
        id: String,
        decision: Approval,
    },
    /// The review window of `handoff` is over: start the successor from the file on disk.
    /// Ignored unless that handoff awaits its review.
    ReviewDone {
        handoff: HandoffId,
    },
    /// Stop writing the document of `handoff`, a handoff running in the background:
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
    /// `/new`: a fresh session with no handoff ("always" grants are reset too).
    NewSession,
    /// `/permissions`: answered by `Event::Permissions` (at once, also during a turn).
    Permissions,
    /// `/cost`: answered by `Event::Cost` (at once, also during a turn).
    Cost,
    /// `/context`: what fills the context window, answered by `Event::Notice` (at once, also
    /// during a turn).
    Context,
    /// `/hooks`: the hooks in force and those waiting for approval, answered by `Event::Notice`
    /// (at once, also during a turn).
    Hooks,
    /// `/resume`: answered by `Event::Sessions` (at once, also during a turn).
    ListSessions,
    /// Continue another run of this workspace at its latest successor (`run_id` or a unique
    /// prefix). Waits for the running turn; answered by `Resumed`, `SessionStarted`,
    /// `SessionPrompt`, the replayed conversation and a usage estimate — or an `Error`.
    Resume {
        run_id: String,
    },
    /// `/model NAME`: the model of the next request (after the running turn); answered by
    /// `Event::Model`. An empty name only asks.
    SetModel {
        model: String,
    },
    /// `/model` with no name: the models the provider offers, answered by `Event::Models` when
    /// its server has said (at once, also during a turn; the question runs beside the engine).
    ListModels,
    /// `/effort LEVEL|off`: extended thinking / reasoning effort from the next turn on; answered
    /// by `Event::Model`.
    SetEffort {
        effort: Option<Effort>,
    },
    /// Revoke one "always" grant, or all of them (None); answered by `Event::Permissions`.
    Revoke {
        rule: Option<AllowRule>,
    },
    /// `/window N`: a new context window for the rest of the run.
    SetWindow {
        window: u64,
    },
    /// `/pin TEXT`: pin a line for the rest of the step (sent before the first message, it is
    /// kept for the step that message starts). Applied at once, also while a turn runs; answered
    /// by `Event::Pins` or `Event::MemoryRefused`.
    Pin {
        text: String,
    },
    /// `/pins rm N`, `/pins clear`. Answered like `Pin`.
    Unpin {
        pin: PinRef,
    },
    /// `/focus [TEXT]`: the focus every later handoff of the step appends to its prompt; None
    /// clears it. Answered by `Event::Focus` or `Event::MemoryRefused`.
    SetFocus {
        focus: Option<String>,
    },
    /// `/lsp`: the language servers, their state and the files they watch; answered by a
    /// `Notice` (at once, also during a turn).
    LspStatus,
    /// `/mcp restart NAME`: stop that MCP server and start it again (at once, even mid-turn).
    McpRestart {
        name: String,
    },
    /// The answer to `Event::McpJsonApproval` (at once, even mid-turn): record it for this
    /// workspace and this version of the file (`sha256`), then start its servers or leave them
    /// declined. Ignored when that version is not the one pending.
    McpJsonDecision {
        sha256: String,
        approve: bool,
    },
    /// The answer to `Event::HooksApproval` (at once, even mid-turn): record it for this
    /// workspace and this version of the settings file (`sha256`); approved hooks run from now
    /// on. Ignored when no file of that version is pending.
    HooksDecision {
        sha256: String,
        approve: bool,
    },
    /// `/undo` and `/redo` (between turns): restore the files of the newest turn on that side
    /// of the step's undo stack; `on_conflict` says what to do with files the user changed since
    /// (`Stop` first, so the front end can ask). Answered by `Event::Restore`.
    Restore {
        action: UndoAction,
        on_conflict: OnConflict,
    },
    /// Shift-Tab / `--mode`: the working mode from the next request on (applied at once, also
    /// mid-turn: a call the model makes after a switch to plan mode is refused unless plan mode
    /// offers it). Answered by `Event::Mode`.
    SetMode {
        mode: super::Mode,
    },
    /// The user's choice after reviewing the latest presented plan: a turn of its own that
    /// implements the plan as read back from its file (here, or in a fresh session briefed with
    /// it). The mode goes back to normal first. Refused (`Notice`, `TurnEnd` unchanged) when no
    /// plan was presented or its file cannot be read.
    ImplementPlan {
        turn: TurnId,
        choice: PlanChoice,
    },
    /// `/rewind`: the step's user messages (answered by `Event::RewindPoints`).
    RewindPoints,
    /// Rewind to before the user message of step turn `turn` (between turns). Answered by
    /// `Event::Rewound`, or, when the code part would write over files changed since (and
    /// `on_conflict` is `Stop`), by `Event::RewindConflict` with nothing done.
    Rewind {
        turn: u64,
        mode: RewindMode,
        on_conflict: OnConflict,
    },
    Shutdown,
}

impl Op {
    /// The turn this op starts, if it starts one.
    pub fn starts_turn(&self) -> Option<TurnId> {
        match self {
            Op::UserTurn { turn, .. }
            | Op::Command { turn, .. }
            | Op::Shell { turn, .. }
            | Op::Handoff { turn, .. }
            | Op::Init { turn, .. }
            | Op::ImplementPlan { turn, .. } => Some(*turn),
            _ => None,
        }
    }
}

/// Where a reviewed plan is carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanChoice {
    /// In this session: the plan is the next message.
    Here,
    /// In a fresh session whose briefing is the plan file, recorded like a handoff.
    FreshSession,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    Once,
    Always,
    Deny,
}
