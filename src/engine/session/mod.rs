//! The session engine: owns the conversation, runs turns, hands off, and keeps the ledger.
//!
//! Front ends talk to it through the queue pair of [`super::protocol`]: `spawn` returns an
//! [`EngineHandle`] with a bounded `Op` sender and an `Event` receiver. The engine is one task,
//! one owner of its parts, each a type with private fields and its own behaviour in its own
//! module, given the other parts it needs: what the run was started with ([`run_context`]), the
//! model settings in force ([`model_settings`]), the op inbox, the step's ledger and memory
//! ([`step_ledger`]), the current generation's conversation ([`conversation`]), the active turn
//! ([`active_turn`]), the handoff runner ([`handoff`]), the session's approvals
//! ([`approval_state`]), the user's hooks ([`user_hooks`]), the run's counters ([`counters`]), the
//! workspace's checkpoints ([`checkpointing`]) and the working mode ([`planning`]). The engine's own methods hand each op
//! to the part it is about (`main_loop.rs`) and run the turns (`turn.rs`, `turn_loop.rs`,
//! `model_request.rs`, `tools_exec.rs`, `call_approval.rs`, `task_calls.rs`, `command_turns.rs`,
//! `gauge.rs`). This file holds the parts and the engine's ways in and out: the one way out for
//! events (`emit`, and `emit_logged` for the transcript too), and the work that runs beside the
//! op queue (the engine keeps answering ops while a future runs — an abort of the running turn
//! drops it, shutdown too —, while the user decides about an approval, while MCP servers start,
//! and while a `bash` command runs, which an abort stops so its partial output is kept; a
//! background handoff's answers are handled as they arrive, whatever runs).

mod active_turn;
mod approval_state;
mod call_approval;
mod checkpointing;
mod command_turns;
mod context_fill;
mod conversation;
mod counters;
mod dangling_calls;
mod fetch_approval;
mod gauge;
mod handoff;
mod input;
mod jobs;
mod language_servers;
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
mod turn_loop;
mod user_hooks;

use std::collections::VecDeque;

use serde_json::Value;
use tokio::sync::mpsc;

use super::error::Error;
use super::ledger::TranscriptLine;
use super::protocol::{Approval, Event, Op};
use super::tools::{self, ToolCtx, ToolOutput, names};
use super::types::Message;
use active_turn::ActiveTurn;
use approval_state::ApprovalState;
use checkpointing::Checkpointing;
use conversation::Conversation;
use counters::Counters;
use handoff::Handoffs;
use model_request::Stop;
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
const OP_QUEUE: usize = 64;

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
    let (mut engine, first) = startup::build(params, op_rx, ev_tx)?;
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

impl Inbox {
    /// Ops from `ops`, none waiting yet.
    fn new(ops: mpsc::Receiver<Op>) -> Inbox {
        Inbox {
            ops,
            pending: VecDeque::new(),
            shutdown: false,
        }
    }
}

/// The engine: one owner of its parts, each with its own behaviour (see the module doc).
pub(super) struct Engine {
    run: RunContext,
    /// The model, effort and window in force.
    settings: ModelSettings,
    inbox: Inbox,
    ledger: StepLedger,
    /// The current generation's conversation: its messages, transcript, prompt and counters.
    conversation: Conversation,
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
            self.conversation
                .transcript
                .append(&TranscriptLine::Event { event: v });
        }
        self.emit(ev);
        if let Some(warning) = self.conversation.transcript_warning() {
            self.emit(warning);
        }
    }

    /// Append a message to the conversation and the transcript. Consecutive user messages merge.
    fn push_message(&mut self, msg: Message) {
        self.conversation.push(msg);
        if let Some(warning) = self.conversation.transcript_warning() {
            self.emit(warning);
        }
    }

    /// Shutdown came, or the front end is gone: nothing more runs.
    pub(in crate::engine::session) fn shutting_down(&self) -> bool {
        self.inbox.shutdown
    }

    /// Run `fut` while listening for ops: an abort of the running turn drops it (None), as does
    /// shutdown (which is remembered); other ops are sorted by [`Engine::triage`]. A background
    /// handoff's writing result is handled as it arrives (frozen, rescued), never dropping `fut`.
    pub(in crate::engine::session) async fn abortable<F: std::future::Future>(
        &mut self,
        fut: F,
    ) -> Option<F::Output> {
        tokio::pin!(fut);
        loop {
            tokio::select! {
                out = &mut fut => return Some(out),
                op = self.inbox.ops.recv() => if self.triage(op).is_some() {
                    return None;
                },
                Some(w) = self.handoff.next_reply() => self.on_background(w),
            }
        }
    }

    /// The user's answer to the approval request `id`; None when the turn was stopped meanwhile.
    pub(in crate::engine::session) async fn answer(&mut self, id: &str) -> Option<Approval> {
        loop {
            let op = tokio::select! {
                op = self.inbox.ops.recv() => op,
                Some(w) = self.handoff.next_reply() => {
                    // A background handoff's document arrived while the user decides.
                    self.on_background(w);
                    continue;
                }
            };
            match op {
                Some(Op::Approval { id: got, decision }) if got == id => return Some(decision),
                // An answer to another request: stale.
                Some(Op::Approval { .. }) => {}
                other => {
                    if self.triage(other).is_some() {
                        return None;
                    }
                }
            }
        }
    }

    /// Before a request: wait for MCP servers still starting, each at most until its
    /// `startup_timeout` (a later one is offered from a later request). The front end is told
    /// which ones it waits for as that changes. False: the user aborted.
    pub(in crate::engine::session) async fn wait_for_mcp(&mut self) -> bool {
        let Some(mcp) = self.run.mcp.clone() else {
            return true;
        };
        let starting = mcp.starting();
        if starting.is_empty() {
            return true;
        }
        let names: Vec<String> = starting
            .iter()
            .map(|s| format!("{} (up to {} s)", s.name, s.timeout.as_secs_f64().ceil()))
            .collect();
        self.emit_logged(Event::Notice {
            message: format!("Waiting for MCP servers to start: {}", names.join(", ")),
        });
        let mut shown: Vec<String> = Vec::new();
        loop {
            let waiting: Vec<String> = mcp.starting().into_iter().map(|s| s.name).collect();
            if waiting != shown {
                self.emit(Event::McpWaiting {
                    servers: waiting.clone(),
                });
                shown.clone_from(&waiting);
            }
            if waiting.is_empty() {
                return true;
            }
            let next = mcp.clone();
            if self
                .abortable(async move { next.startup_progress().await })
                .await
                .is_none()
            {
                self.emit(Event::McpWaiting {
                    servers: Vec::new(),
                });
                return false;
            }
        }
    }

    /// bash with live output and a graceful stop: an abort of the turn stops the command and
    /// waits for its partial result; shutdown drops it (the process group dies).
    pub(in crate::engine::session) async fn run_bash(
        &mut self,
        id: &str,
        input: &Value,
        ctx: &ToolCtx,
    ) -> Option<ToolOutput> {
        let events = self.run.events.clone();
        let call = id.to_string();
        let mut on_output = move |text: String| {
            let _ = events.send(Event::ToolOutputDelta {
                id: call.clone(),
                text,
            });
        };
        let (stop, interrupt) = tokio::sync::oneshot::channel();
        let mut stop = Some(stop);
        let terminals = self.run.tools.terminals.clone();
        let live = tools::Live {
            on_output: &mut on_output,
            interrupt: Some(interrupt),
            terminal: terminals.get().map(|terminals| tools::FrontTerminal {
                terminals,
                call: id,
            }),
        };
        let run = tools::run_live(names::BASH, input, ctx, live);
        tokio::pin!(run);
        loop {
            tokio::select! {
                out = &mut run => return Some(out),
                op = self.inbox.ops.recv(), if stop.is_some() => match self.triage(op) {
                    Some(Stop::Abort) => {
                        if let Some(tx) = stop.take() {
                            let _ = tx.send(());
                        }
                    }
                    Some(Stop::Shutdown) => return None,
                    None => {}
                },
                // A background handoff's document that arrives while the command runs is frozen
                // (and its review opened) now, not when the command ends.
                Some(w) = self.handoff.next_reply() => self.on_background(w),
            }
        }
    }
}
