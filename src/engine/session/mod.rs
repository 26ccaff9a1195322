//! The session engine: owns the conversation, runs turns, hands off, and keeps the ledger.
//!
//! Front ends talk to it through the queue pair of [`super::protocol`]: `spawn` returns an
//! [`EngineHandle`] with a bounded `Op` sender and an `Event` receiver. The engine is one task;
//! its state is a few owned parts, each in its own file: what the run was started with
//! ([`RunContext`]), the model settings in force, the op inbox, the step's ledger
//! ([`step_ledger`]), the current session ([`conversation`]), the active turn, the handoff
//! runner ([`handoff`]), the session's approvals, the user's hooks ([`user_hooks`]), the run's
//! counters (requests, and the model's token ratio they teach), the workspace's checkpoints
//! ([`undo`]) and the working mode ([`plan_mode`]). This file holds the
//! parts, starting sessions and turns, and the one way out for events (`emit`).

mod command_turn;
mod conversation;
mod handoff;
mod idle;
mod input;
mod local;
mod log;
mod masking;
mod memory_ops;
mod params;
mod plan_mode;
mod request;
mod restore;
mod rewind;
mod sandbox_ops;
mod slash_ops;
mod startup;
mod step_claim;
mod step_ledger;
mod tasks;
mod tools_exec;
mod turn;
mod undo;
mod user_hooks;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc;

use super::approvals::Allowances;
use super::context::strategy::ContextStrategy;
use super::error::Error;
use super::fsutil::{new_id, now_unix, rfc3339};
use super::ledger::{
    GenerationStart, SessionHeader, StepFigures, StepRecord, Transcript, TranscriptLine,
};
use super::mcp::McpManager;
use super::policy::FrontEnd;
use super::protocol::{Event, ExitReason, Op, TurnId, TurnKind};
use super::sysprompt::{self, SessionPrompt};
use super::types::Message;
use conversation::{Identity, SessionState};
use handoff::Handoffs;
use step_ledger::{StepLedger, step_name_from_task};

pub use params::{
    EngineHandle, EngineParams, Extensions, HandoffParams, HookParams, ModelSettings, Places,
    PromptParams, ProviderParams, Resume, StartParams, ToolParams,
};
pub use startup::repair_dangling_tool_uses;

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

/// What the run was started with: fixed until it ends, and the one way out for events.
pub(super) struct RunContext {
    provider: ProviderParams,
    places: Places,
    /// The base prompt and where the project instructions come from.
    prompt: PromptParams,
    handoff: HandoffParams,
    tools: ToolParams,
    front_end: FrontEnd,
    /// `--step NAME`, if given.
    step: Option<String>,
    mcp: Option<Arc<McpManager>>,
    /// The strategies in force, in order: handoff (default), compaction (`--no-handoff`), or
    /// both when the config asks for both explicitly.
    strategies: Vec<Box<dyn ContextStrategy + Send>>,
    /// Old tool output in the main thread's requests: masked (default) or sent as it is.
    masking: super::mask::MaskSettings,
    /// The custom slash commands and the skills.
    extensions: Extensions,
    events: mpsc::UnboundedSender<Event>,
}

/// Ops in: the engine owns the one receiver.
pub(super) struct Inbox {
    ops: mpsc::Receiver<Op>,
    /// Ops that arrived while something ran, for the idle loop (in order).
    pending: VecDeque<Op>,
    /// `Op::Shutdown` came, or the front end is gone.
    shutdown: bool,
}

/// The approvals of this session.
#[derive(Debug, Default)]
pub(super) struct ApprovalState {
    /// What "always" allowed (`/new` clears it).
    granted: Allowances,
    /// An approval was asked (and answered): `ApprovalPolicy::AskOnce` asks no more.
    asked_once: bool,
}

/// What the run counts and learns across sessions.
#[derive(Debug)]
pub(super) struct Counters {
    /// Model requests sent (numbers them in the log).
    requests: u64,
    /// Main-thread responses (for the `--handoff-after` hook).
    responses: u32,
    /// Overflow retries in a row (reset by a response).
    overflow_retries: u32,
    /// Token estimates calibrated for the model (learned from every main-thread response; a new
    /// model loads its own).
    tokens: super::tokens::Estimator,
}

impl Counters {
    /// Nothing counted yet; token estimates start from what `tokens` knows.
    fn new(tokens: super::tokens::Estimator) -> Counters {
        Counters {
            requests: 0,
            responses: 0,
            overflow_retries: 0,
            tokens,
        }
    }
}

/// The turn the engine works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ActiveTurn {
    pub id: TurnId,
    pub kind: TurnKind,
    pub started: Instant,
    /// The user cancelled a background handoff during this turn: none starts again before the
    /// next turn (unless the context reaches the hard limit).
    pub background_cancelled: bool,
}

impl ActiveTurn {
    /// `id` of `kind`, starting now.
    fn new(id: TurnId, kind: TurnKind) -> ActiveTurn {
        ActiveTurn {
            id,
            kind,
            started: Instant::now(),
            background_cancelled: false,
        }
    }
}

pub(crate) struct Engine {
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
    /// The workspace's checkpoint store and the running turn's first checkpoint.
    checkpoints: undo::Checkpointing,
    /// The user's hooks and what is due of them.
    hooks: user_hooks::Hooks,
    /// The working mode and the plans presented.
    planning: plan_mode::Planning,
}

impl Engine {
    fn emit(&self, mut ev: Event) {
        // Messages may quote paths, provider bodies or the user's words: never a key.
        if let Event::Notice { message } | Event::Warning { message } | Event::Error { message, .. } =
            &mut ev
            && let std::borrow::Cow::Owned(clean) = super::secrets::redact(message)
        {
            *message = clean;
        }
        log::event(&ev, self.handoff.clock());
        // The front end may be gone (quit); nothing to do then.
        let _ = self.run.events.send(ev);
    }

    /// Record an event in the transcript too.
    fn emit_logged(&mut self, ev: Event) {
        if let Ok(v) = serde_json::to_value(&ev) {
            self.s
                .transcript
                .append(&TranscriptLine::Event { event: v });
        }
        self.emit(ev);
        self.report_transcript_error();
    }

    /// A transcript that cannot be written (disk full, directory gone) is said once, not silently.
    fn report_transcript_error(&mut self) {
        if let Some(message) = self.s.transcript.take_error() {
            self.emit(Event::Warning {
                message: format!("{message}; the session goes on but is no longer recorded"),
            });
        }
    }

    fn save_manifest(&mut self) {
        if let Err(e) = self.ledger.save() {
            self.emit(Event::Warning {
                message: format!("could not write the ledger: {e}"),
            });
        }
    }

    fn save_manifest_if_any(&mut self) {
        if self.ledger.has_step() {
            self.save_manifest();
        }
    }

    /// The context the gauge shows: the last report plus an estimate of what was appended since
    /// (and of the session's floor, before its first report).
    fn ctx_estimate(&self) -> u64 {
        // Before the session's first response nothing has counted its prompt and tools yet.
        let floor = if self.s.ctx == 0 {
            self.estimate(self.floor_chars())
        } else {
            0
        };
        self.s.ctx + floor + self.estimate(self.s.appended_chars)
    }

    fn emit_usage_estimate(&self) {
        self.emit(Event::Usage {
            turn: self.turn_id(),
            context: self.ctx_estimate(),
            thresholds: self.settings.thresholds,
            estimated: true,
            usage: Default::default(),
            cost_usd: 0.0,
            session_cost_usd: self.s.cost_usd,
            masked_tokens: self.s.mask.saved_tokens,
        });
    }

    /// Book a request's cost: the step, its generation and the session.
    fn add_cost(&mut self, cost: f64) {
        self.s.cost_usd += cost;
        self.ledger.record(|rec| {
            rec.figures.cost_usd += cost;
            rec.current_generation().cost_usd += cost;
        });
    }

    /// The `SessionStarted` event of the current session.
    fn session_started(&self) -> Event {
        Event::SessionStarted {
            session_id: self.s.id.clone(),
            parent_session: self.s.parent.clone(),
            generation: self.s.generation,
            model: self.settings.model.clone(),
            provider: self.run.provider.client.name().to_string(),
            thresholds: self.settings.thresholds,
            demo: self.run.provider.demo,
        }
    }

    /// The one end of a turn: `TurnEnd`, recorded in the transcript for message turns.
    fn end_turn(&mut self, turn: ActiveTurn, reason: ExitReason) {
        tracing::info!(
            turn = turn.id.0,
            kind = ?turn.kind,
            ms = turn.started.elapsed().as_millis(),
            session = %self.s.id,
            "turn ended: {reason}"
        );
        let ev = Event::TurnEnd {
            turn: turn.id,
            kind: turn.kind,
            origin: turn.id.origin(),
            reason,
        };
        match turn.kind {
            TurnKind::Message | TurnKind::Init => self.emit_logged(ev),
            TurnKind::Handoff => self.emit(ev),
        }
    }

    /// The id of the turn running now (None when idle): the turn its events belong to.
    fn turn_id(&self) -> Option<TurnId> {
        self.turn.map(|t| t.id)
    }

    /// Begin `turn`: it becomes the one `Op::Abort` may name.
    fn begin_turn(&mut self, id: TurnId, kind: TurnKind) -> ActiveTurn {
        let turn = ActiveTurn::new(id, kind);
        self.turn = Some(turn);
        self.emit(Event::TurnStarted {
            turn: id,
            kind,
            origin: id.origin(),
        });
        turn
    }

    /// A turn that ends as it starts, the session unchanged: `ev` says why.
    fn turn_ends_at_once(&mut self, id: TurnId, kind: TurnKind, ev: Event) {
        let turn = self.begin_turn(id, kind);
        self.emit(ev);
        self.turn = None;
        self.end_turn(turn, ExitReason::Unchanged);
    }

    /// Start the step on its first task: name it, record it in the ledger.
    fn ensure_step(&mut self, task: &str) {
        if self.ledger.has_step() {
            return;
        }
        let name = self
            .run
            .step
            .clone()
            .unwrap_or_else(|| step_name_from_task(task));
        let workbench = self.run.places.workbench.as_deref();
        let (name, claim) = step_claim::claim_step(workbench, name, |ev| self.emit(ev));
        if claim.is_some() {
            self.ledger.claim = claim;
        }
        let rec = StepRecord {
            name,
            task: input::task_excerpt(task),
            figures: StepFigures {
                window: self.settings.thresholds.window,
                ..Default::default()
            },
            memory: std::mem::take(&mut self.ledger.unborn),
            ..Default::default()
        };
        // The name this process claimed in a joined run directory (a record without a session;
        // the workspace's step claim may have renamed it since, `<step>-2`).
        let me = std::process::id();
        let steps = &mut self.ledger.manifest.steps;
        let claimed = steps.iter().position(|s| {
            s.session_id.is_empty() && (s.name == rec.name || s.claimed_by == Some(me))
        });
        match claimed.and_then(|i| steps.get_mut(i).map(|slot| (i, slot))) {
            Some((i, slot)) => {
                *slot = rec;
                self.ledger.step = Some(i);
            }
            None => {
                self.ledger.step = Some(steps.len());
                steps.push(rec);
            }
        }
        // A step started in another mode than normal records it, so `--continue` keeps it.
        if self.planning.mode != super::policy::Mode::Normal {
            self.note_setting();
        }
    }

    /// Make sure the workbench exists with its `.gitignore` (notes and spills stay out of git).
    /// Said once if it cannot be made; the tools and the handoff store report their own failures.
    fn ensure_workbench(&mut self) {
        let Some(dir) = self.run.places.workbench.clone() else {
            return;
        };
        if let Err(e) = super::fsutil::ensure_workbench(&dir) {
            self.emit(Event::Warning {
                message: format!("cannot prepare the workbench {}: {e}", dir.display()),
            });
        }
    }

    /// Build a new session's system prompt: the base, the environment and the project
    /// instructions read from disk now. It stays as it is for the whole session.
    fn prepare_prompt(&mut self) -> SessionPrompt {
        let prompt = sysprompt::build(
            &self.run.prompt.system_prompt,
            &self.run.places.workspace,
            &self.run.prompt.instructions,
        );
        for f in &prompt.instructions {
            if let Some(e) = &f.error {
                self.emit(Event::Warning {
                    message: format!("cannot read the instructions in {}: {e}", f.path.display()),
                });
            }
        }
        prompt
    }

    /// What the session's prompt holds, for front ends (after `SessionStarted`).
    fn emit_prompt(&mut self, prompt: SessionPrompt) {
        self.emit_logged(Event::SessionPrompt {
            session_id: self.s.id.clone(),
            environment: prompt.environment,
            instructions: prompt.instructions,
        });
    }

    /// Open a new session (the first, a successor or `/new`), with its transcript and header.
    /// The request in progress goes on in it (`/new` clears it first).
    fn start_session(&mut self, parent: Option<String>, generation: u32, first: Vec<Message>) {
        self.ensure_workbench();
        let prompt = self.prepare_prompt();
        let id = new_id();
        let header = SessionHeader {
            session_id: id.clone(),
            parent_session: parent.clone(),
            generation,
            step: self.ledger.step_name(),
            model: self.settings.model.clone(),
            provider: self.run.provider.client.name().to_string(),
            started: rfc3339(now_unix().0),
            workspace: self.run.places.workspace.clone(),
            subagent: None,
        };
        let mut transcript = Transcript::create(self.ledger.transcript_path(&id), &header);
        for m in &first {
            transcript.append(&TranscriptLine::Message { message: m.clone() });
        }
        if let Some(err) = transcript.take_error() {
            self.emit(Event::Warning { message: err });
        }
        let start = match (parent.is_some(), self.s.is_none()) {
            (true, _) => GenerationStart::Handoff,
            (false, true) => GenerationStart::First,
            (false, false) => GenerationStart::New,
        };
        // `SessionStart` runs before the new session's first request.
        self.hooks.start_due(match start {
            GenerationStart::Handoff => super::hooks::StartSource::Handoff,
            GenerationStart::First => super::hooks::StartSource::Startup,
            GenerationStart::New => super::hooks::StartSource::Clear,
        });
        let who = Identity {
            id: id.clone(),
            parent,
            generation,
        };
        let request = std::mem::take(&mut self.s.request);
        // The old session's history is dropped here: retired histories are freed.
        self.s = SessionState::new(who, first, transcript, &prompt.text);
        self.s.request = request;
        let window = self.settings.thresholds.window;
        let estimate = self.ctx_estimate();
        self.ledger.record(|rec| {
            rec.session_id = id.clone();
            rec.figures.context = estimate;
            rec.generations = generation;
            rec.figures.window = window;
            let row = rec.current_generation();
            row.generation = generation;
            row.start = Some(start);
        });
        self.save_manifest();
        self.emit(self.session_started());
        self.emit_prompt(prompt);
    }

    /// Append a message to the conversation and the transcript. Consecutive user messages merge.
    fn push_message(&mut self, msg: Message) {
        self.s.push(msg);
        self.report_transcript_error();
    }

    /// The one place the replace generation advances: after a replacement is persisted.
    fn commit_replacement(&mut self) -> u64 {
        self.ledger.replace.advance()
    }
}
