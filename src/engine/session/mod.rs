//! The session engine: owns the conversation, runs turns, hands off, and keeps the ledger.
//!
//! Front ends talk to it through the queue pair of [`super::protocol`]: `spawn` returns an
//! [`EngineHandle`] with a bounded `Op` sender and an `Event` receiver. The engine is one task;
//! its state is a few owned parts, each in its own file: what the run was started with
//! ([`RunContext`]), the model settings in force, the op inbox, the step's ledger
//! ([`step_ledger`]), the current session ([`conversation`]), the active turn, the handoff
//! lifecycle ([`lifecycle`]), the session's approvals, the user's hooks ([`hook_ops`]), the run's
//! counters (requests, and the model's token ratio they teach), the workspace's checkpoints
//! ([`undo`]) and the working mode ([`plan_mode`]). This file holds the
//! parts, starting sessions and turns, and the one way out for events (`emit`).

mod active_turn;
mod approval_state;
mod checkpointing;
mod command_turns;
mod conversation;
mod counters;
mod dangling_calls;
mod handoff;
mod input;
mod log;
mod main_loop;
mod masked_history;
mod mcp_answers;
mod model_request;
mod model_settings;
mod outbox;
mod params;
mod planning;
mod run_context;
mod startup;
mod step_claim;
mod step_ledger;
mod task_calls;
mod tools_exec;
mod turn;
mod user_hooks;

use std::collections::VecDeque;

use tokio::sync::mpsc;

use super::error::Error;
use super::ledger::TranscriptLine;
use super::protocol::{Event, Op};
use super::types::Message;
use active_turn::ActiveTurn;
use approval_state::ApprovalState;
use checkpointing::Checkpointing;
use conversation::SessionState;
use counters::Counters;
use handoff::Handoffs;
use planning::Planning;
use run_context::RunContext;
use step_ledger::StepLedger;
use user_hooks::Hooks;

pub use dangling_calls::repair_dangling_tool_uses;
pub use params::{
    EngineHandle, EngineParams, Extensions, HandoffParams, HookParams, ModelSettings, Places,
    PromptParams, ProviderParams, Resume, StartParams, ToolParams,
};

/// How many ops may wait before `try_send` fails (the UI never awaits a send).
pub(crate) const OP_QUEUE: usize = 64;
/// At most this many overflow retries in a row.
pub(crate) const OVERFLOW_RETRY_CAP: u32 = 1;

/// Start the engine on the current tokio runtime.
pub fn spawn(mut params: EngineParams) -> Result<EngineHandle, Error> {
    let (op_tx, op_rx) = mpsc::channel(OP_QUEUE);
    let (ev_tx, ev_rx) = mpsc::unbounded_channel();
    if let Some(mut side) = params.side_events.take() {
        let tx = ev_tx.clone();
        tokio::spawn(async move {
            while let Some(ev) = side.recv().await {
                if tx.send(ev).is_err() {
                    break;
                }
            }
        });
    }
    let (mut engine, first) = Engine::new(params, op_rx, ev_tx)?;
    let task = tokio::spawn(async move { engine.run(first).await });
    Ok(EngineHandle {
        ops: op_tx,
        events: ev_rx,
        task,
    })
}

/// Ops in: the engine owns the one receiver.
pub(super) struct Inbox {
    ops: mpsc::Receiver<Op>,
    /// Ops that arrived while something ran, for the idle loop (in order).
    pending: VecDeque<Op>,
    /// `Op::Shutdown` came, or the front end is gone.
    shutdown: bool,
}

/// The engine: one owner of its parts, each with its own behaviour (see the module doc).
pub(super) struct Engine {
    run: RunContext,
    /// The model, effort and window in force.
    settings: ModelSettings,
    inbox: Inbox,
    ledger: StepLedger,
    /// The current session (one generation).
    s: SessionState,
    /// The turn running now (None when idle).
    turn: Option<ActiveTurn>,
    handoff: Handoffs,
    approvals: ApprovalState,
    counters: Counters,
    /// The workspace's checkpoint store and what the running turn's checkpoints could not hold.
    checkpoints: Checkpointing,
    /// The user's hooks and what is due of them.
    hooks: Hooks,
    /// The working mode, the sandbox it gives `bash`, and the plans presented.
    planning: Planning,
}

impl Engine {
    /// Say `ev` to the front end (masked, logged; a handoff's phases with the time since it
    /// began).
    fn emit(&self, ev: Event) {
        outbox::emit(&self.run.events, ev, self.handoff.clock());
    }

    /// Say `ev` and record it in the transcript too.
    fn emit_logged(&mut self, ev: Event) {
        if let Ok(v) = serde_json::to_value(&ev) {
            self.s
                .transcript
                .append(&TranscriptLine::Event { event: v });
        }
        self.emit(ev);
        if let Some(warning) = self.s.transcript_warning() {
            self.emit(warning);
        }
    }

    /// Append a message to the conversation and the transcript. Consecutive user messages merge.
    fn push_message(&mut self, msg: Message) {
        self.s.push(msg);
        if let Some(warning) = self.s.transcript_warning() {
            self.emit(warning);
        }
    }

    /// Book a request's cost: the step, its generation and the session.
    fn add_cost(&mut self, cost: f64) {
        self.s.cost_usd += cost;
        self.ledger.record(|rec| {
            rec.figures.cost_usd += cost;
            rec.current_generation().cost_usd += cost;
        });
    }

    /// The context the gauge shows: the last report plus an estimate of what was appended since
    /// (and of the session's floor, before its first report).
    fn ctx_estimate(&self) -> u64 {
        // Before the session's first response nothing has counted its prompt and tools yet.
        let floor = if self.s.ctx == 0 {
            self.counters.estimate(self.floor_chars())
        } else {
            0
        };
        self.s.ctx + floor + self.counters.estimate(self.s.appended_chars)
    }
}
