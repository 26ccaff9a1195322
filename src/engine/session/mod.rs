//! The session engine: owns the conversation, runs turns, hands off, and keeps the ledger.
//!
//! Front ends talk to it through the queue pair of [`super::protocol`]: `spawn` returns an
//! [`EngineHandle`] with a bounded `Op` sender and an `Event` receiver.

mod background;
mod background_retry;
mod continuity;
mod handoff_run;
mod input;
mod local;
mod log;
mod masking;
mod memory_ops;
mod request;
mod rewind;
mod sandbox_ops;
mod slash_ops;
mod tail;
mod tasks;
mod tool_log;
mod tools_exec;
mod turn;
mod turnover;
mod undo;
mod writing_request;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::approvals::Allowances;
use super::context::strategy::ContextStrategy;
use super::context::{self, Thresholds, WindowSource};
use super::error::{Error, ResumeError};
use super::fsutil::{new_id, now_unix, rfc3339};
use super::instructions::InstructionSources;
use super::ledger::{
    GenerationStart, Manifest, RunDir, SessionHeader, StepRecord, Transcript, TranscriptLine,
    read_transcript,
};
use super::policy::{ApprovalPolicy, ContextPolicy, FrontEnd, HandoffMode};
use super::protocol::{Event, ExitReason, HandoffId, Op, Origin, TurnId, TurnKind};
use super::provider::Provider;
use super::provider::retry::RetryPolicy;
use super::replace::ReplaceGeneration;
use super::sysprompt::{self, SessionPrompt};
use super::tools::Spiller;
use super::types::{Effort, Message, Role, append_message};

/// How many ops may wait before `try_send` fails (the UI never awaits a send).
pub(crate) const OP_QUEUE: usize = 64;
/// At most this many overflow retries in a row.
pub(crate) const OVERFLOW_RETRY_CAP: u32 = 1;

/// Everything the engine needs to start.
pub struct EngineParams {
    pub provider: Arc<dyn Provider>,
    pub model: String,
    /// The base system prompt. Each session sends it with the environment block and the project
    /// instructions appended ([`crate::engine::sysprompt`]); while the engine runs, this field
    /// holds the current session's whole prompt, unchanged for the session's every request.
    pub system_prompt: String,
    /// Where the project instructions come from (read again at the start of every session).
    pub instructions: InstructionSources,
    pub workspace: PathBuf,
    /// `<workspace>/.flower`, or None with `--no-workbench`.
    pub workbench: Option<PathBuf>,
    pub run_dir: RunDir,
    pub data_dir: PathBuf,
    pub thresholds: Thresholds,
    /// Where the window came from (`--window` beats a window learned from an overflow message).
    pub window_source: WindowSource,
    /// Handoff, compaction, or both.
    pub context: ContextPolicy,
    /// The writing turn in the background (default) or blocking the main thread.
    pub handoff_mode: HandoffMode,
    pub max_generations: u32,
    pub max_iterations: u32,
    /// `--yes` or not.
    pub approvals: ApprovalPolicy,
    /// How `bash` commands are confined (`--sandbox`, `--sandbox-network`, `[sandbox]`).
    pub sandbox: crate::engine::tools::sandbox::SandboxPolicy,
    /// Whether a command the sandbox confines is still asked for.
    pub sandbox_approval: crate::engine::policy::SandboxApproval,
    /// The TUI (asks, reviews, replays) or headless.
    pub front_end: FrontEnd,
    pub step: Option<String>,
    pub retry: RetryPolicy,
    pub max_tokens: u32,
    /// `--effort`: extended thinking / reasoning effort (`/effort` changes it between turns).
    pub effort: Option<Effort>,
    pub bash_timeout: Duration,
    /// `--continue`: attach to the last run's latest session.
    pub resume: Option<Resume>,
    /// A first message the engine sends itself when it starts (the demo plays by itself); not
    /// used when continuing a run.
    pub autostart: Option<String>,
    /// Headless test hook: a manual handoff after this many main-thread responses.
    pub handoff_after: Option<u32>,
    pub demo: bool,
    /// MCP servers whose tools are offered beside the built-in ones; `None`: none.
    pub mcp: Option<Arc<crate::engine::mcp::McpManager>>,
    /// Events from outside the turn loop (MCP statuses and notices), passed on to the front end.
    pub side_events: Option<mpsc::UnboundedReceiver<Event>>,
    /// How the `task` tool's subagents run (their model, their iteration budget).
    pub subagent: crate::engine::subagent::SubagentSettings,
    /// The full prompt and tool descriptions, or the lean ones of a small window.
    pub prompt_style: crate::engine::lean::PromptStyle,
    /// Old tool output in the main thread's requests: masked (default) or sent as it is.
    pub masking: crate::engine::mask::MaskSettings,
}

/// Where `--continue` attaches.
#[derive(Debug, Clone)]
pub struct Resume {
    pub run_dir: RunDir,
    /// What the front end should hear before the conversation goes on (e.g. that a newer run
    /// could not be read and this older one is continued instead).
    pub warnings: Vec<String>,
}

impl Resume {
    /// Continue the run in `run_dir`, with nothing to warn about.
    pub fn at(run_dir: RunDir) -> Resume {
        Resume {
            run_dir,
            warnings: Vec::new(),
        }
    }
}

/// The front end's side of the queue pair.
pub struct EngineHandle {
    pub ops: mpsc::Sender<Op>,
    pub events: mpsc::UnboundedReceiver<Event>,
    pub task: tokio::task::JoinHandle<()>,
}

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
    let mut engine = Engine::new(params, op_rx, ev_tx)?;
    let task = tokio::spawn(async move { engine.run().await });
    Ok(EngineHandle {
        ops: op_tx,
        events: ev_rx,
        task,
    })
}

/// The state of the current session (one generation).
struct SessionState {
    id: String,
    parent: Option<String>,
    generation: u32,
    messages: Vec<Message>,
    transcript: Transcript,
    /// Last main-thread ctx the provider reported for this session.
    ctx: u64,
    /// Characters appended since that report (estimated into the gauge).
    appended_chars: usize,
    near_fired: bool,
    /// What this session's requests cost so far.
    cost_usd: f64,
}

/// The user request in progress: the running message turn's user messages, kept
/// after the turn when it did not complete (interrupted, failed, out of iterations), so a handoff
/// made then still carries it. A completed turn closes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Request {
    messages: Vec<String>,
    open: bool,
}

impl Request {
    /// A new request opened by a user turn.
    fn opened(text: String) -> Request {
        Request {
            messages: vec![text],
            open: true,
        }
    }

    /// The messages a successor gets after its briefing: none when no request is open.
    fn in_flight(&self) -> Vec<String> {
        if self.open {
            self.messages.clone()
        } else {
            Vec::new()
        }
    }
}

/// The turn the engine works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ActiveTurn {
    pub id: TurnId,
    pub kind: TurnKind,
    pub started: Instant,
}

pub(crate) struct Engine {
    p: EngineParams,
    /// `EngineParams::system_prompt` as given: every session's prompt starts with it.
    base_prompt: String,
    ops: mpsc::Receiver<Op>,
    events: mpsc::UnboundedSender<Event>,
    pending: VecDeque<Op>,
    s: SessionState,
    thresholds: Thresholds,
    manifest: Manifest,
    /// Index of the current step in the manifest; None until the first task names it.
    step: Option<usize>,
    replace: ReplaceGeneration,
    overflow_retries: u32,
    /// Compactions so far (head protection only until the first).
    compactions: u32,
    /// What "always" allowed in this session (`/new` clears it).
    allowances: Allowances,
    /// An approval was asked (and answered): `ApprovalPolicy::AskOnce` asks no more.
    asked_once: bool,
    /// The strategies in force, in order: handoff (default), compaction (`--no-handoff`), or both when
    /// the config asks for both explicitly.
    strategies: Vec<Box<dyn ContextStrategy + Send>>,
    spiller: Spiller,
    /// Main-thread responses across the run (for `handoff_after`).
    total_responses: u32,
    manual_hook_fired: bool,
    shutdown: bool,
    /// The turn running now (None when idle).
    turn: Option<ActiveTurn>,
    /// Model requests sent in this run (numbers them in the log).
    requests: u64,
    /// The handoff in progress and when it began (phase timings in the log).
    handoff_clock: Option<(HandoffId, Instant)>,
    /// The last handoff id given out.
    handoffs_started: u64,
    /// The handoff whose document is being written, if any (a second `/handoff` is refused).
    writing: Option<HandoffId>,
    /// Said once the front end listens (torn transcript lines, a run skipped by `--continue`).
    startup_warnings: Vec<String>,
    /// The user request in progress, for the successor and the degraded document.
    request: Request,
    /// The document the current session was briefed with (a degraded one carries it forward).
    briefed: Option<super::handoff::HandoffDoc>,
    /// This process's claim on the step name in the workspace.
    claim: Option<super::handoff::lock::StepClaim>,
    /// What the document lock cost the handoff in progress.
    handoff_lock: Duration,
    /// The handoff running beside the main thread, if any.
    bg: Option<background::Background>,
    /// Where background writing requests send their result.
    bg_tx: mpsc::UnboundedSender<background::Written>,
    bg_rx: mpsc::UnboundedReceiver<background::Written>,
    /// The user cancelled a background handoff during this turn: none starts again before the
    /// next user turn (unless the context reaches the hard limit).
    bg_cancelled: bool,
    /// Pins (and focus) given before the first message named the step: they move into its
    /// record when it starts (`memory()` reads the record's from then on).
    unborn: super::step_memory::StepMemory,
    /// The line counts of this session's file changes, for the handoff's `Touched` section.
    call_counts: tool_log::CallCounts,
    /// Where masking of the current session's requests stands.
    mask: masking::MaskState,
    /// The workspace's checkpoint store and the running turn's first checkpoint.
    checkpoints: undo::Checkpointing,
    /// Token estimates calibrated for the model (learned from every main-thread response).
    tokens: super::tokens::Estimator,
}

impl Engine {
    fn new(
        p: EngineParams,
        ops: mpsc::Receiver<Op>,
        events: mpsc::UnboundedSender<Event>,
    ) -> Result<Engine, Error> {
        // The handoff line keeps the requests' output cap free below the window.
        let thresholds =
            Thresholds::with_output(p.thresholds.window, p.thresholds.headroom, p.max_tokens);
        let strategies = p.context.strategies(thresholds.headroom, p.max_tokens);
        let tokens = super::tokens::Estimator::load(&p.data_dir, &p.model);
        let mut startup_warnings = Vec::new();
        let support = crate::engine::tools::sandbox::Support::current();
        startup_warnings.extend(support.notice(&p.sandbox));
        let (manifest, step, session) = match &p.resume {
            Some(r) => {
                startup_warnings.extend(r.warnings.iter().cloned());
                Self::resume_state(r, p.step.as_deref(), &mut startup_warnings)?
            }
            // A run directory joined with a new step keeps the steps it has.
            None => match Manifest::load(&p.run_dir.manifest_path()) {
                Ok(joined) => (joined, None, None),
                Err(_) => {
                    let manifest = Manifest {
                        run_id: p.run_dir.run_id.clone(),
                        created: rfc3339(now_unix().0),
                        workspace: p.workspace.clone(),
                        provider: p.provider.name().to_string(),
                        model: p.model.clone(),
                        steps: Vec::new(),
                    };
                    (manifest, None, None)
                }
            },
        };
        let s = match session {
            Some(s) => s,
            None => SessionState {
                id: String::new(),
                parent: None,
                generation: 1,
                messages: Vec::new(),
                transcript: Transcript::disabled(),
                ctx: 0,
                appended_chars: 0,
                near_fired: false,
                cost_usd: 0.0,
            },
        };
        let claim = Self::claim_resumed(&p, step.and_then(|i| manifest.steps.get(i)))?;
        let (replace, compactions) = replace_state(step.and_then(|i| manifest.steps.get(i)));
        let (bg_tx, bg_rx) = mpsc::unbounded_channel();
        Ok(Engine {
            base_prompt: p.system_prompt.clone(),
            p,
            ops,
            events,
            pending: VecDeque::new(),
            s,
            thresholds,
            manifest,
            step,
            replace,
            overflow_retries: 0,
            compactions,
            allowances: Allowances::default(),
            asked_once: false,
            strategies,
            spiller: Spiller::new(),
            total_responses: 0,
            manual_hook_fired: false,
            shutdown: false,
            turn: None,
            requests: 0,
            handoff_clock: None,
            handoffs_started: 0,
            writing: None,
            startup_warnings,
            request: Request::default(),
            briefed: None,
            claim,
            handoff_lock: Duration::ZERO,
            bg: None,
            bg_tx,
            bg_rx,
            bg_cancelled: false,
            unborn: Default::default(),
            tokens,
            call_counts: Default::default(),
            mask: Default::default(),
            checkpoints: Default::default(),
        })
    }

    /// `--continue`: the recorded latest successor of the last step, never a retired session.
    fn resume_state(
        r: &Resume,
        step_name: Option<&str>,
        warnings: &mut Vec<String>,
    ) -> Result<(Manifest, Option<usize>, Option<SessionState>), ResumeError> {
        let manifest = Manifest::load(&r.run_dir.manifest_path()).map_err(ResumeError::Manifest)?;
        // `--step NAME` picks a step of a run that holds several; else the last one that ran.
        let step = match step_name {
            Some(name) => Some(
                manifest
                    .steps
                    .iter()
                    .position(|s| s.name == name)
                    .ok_or_else(|| ResumeError::NoStep {
                        step: name.to_string(),
                        steps: manifest.steps.iter().map(|s| s.name.clone()).collect(),
                    })?,
            ),
            None => manifest
                .steps
                .iter()
                .rposition(|s| !s.session_id.is_empty()),
        };
        let Some(rec) = step
            .and_then(|i| manifest.steps.get(i))
            .filter(|s| !s.session_id.is_empty())
        else {
            return Err(ResumeError::NoSession);
        };
        let path = r.run_dir.transcript_path(&rec.session_id);
        let loaded = read_transcript(&path).map_err(|source| ResumeError::Session {
            id: rec.session_id.clone(),
            source,
        })?;
        let (header, mut messages) = (loaded.header, loaded.messages);
        if loaded.torn > 0 {
            warnings.push(format!(
                "{}: {} torn line{} skipped (cut off by a crash mid-write); the conversation is \
                 rebuilt from the others",
                path.display(),
                loaded.torn,
                if loaded.torn == 1 { "" } else { "s" }
            ));
        }
        let mut transcript = Transcript::open_append(path);
        // A session that ended mid-tool (a crash, a kill) left tool calls without results: answer
        // them so the history is valid again, and record that in the transcript.
        if repair_dangling_tool_uses(&mut messages).is_some() {
            transcript.append(&TranscriptLine::Replaced {
                messages: messages.clone(),
            });
        }
        // The gauge starts where the session left it: the provider's last reading, plus an
        // estimate of what came after; a history without one is estimated whole.
        let (ctx, counted) = loaded
            .last_context
            .map_or((0, 0), |c| (c.tokens, c.messages));
        let appended_chars = messages.iter().skip(counted).map(Message::char_len).sum();
        let cost_usd = rec
            .per_generation
            .iter()
            .find(|g| g.session_id == header.session_id)
            .map_or(0.0, |g| g.cost_usd);
        Ok((
            manifest.clone(),
            step,
            Some(SessionState {
                id: header.session_id,
                parent: header.parent_session,
                generation: header.generation,
                messages,
                transcript,
                // This session's own reading (the ledger's step ctx may be a retired session's);
                // none after a replacement (compaction): the history is estimated then.
                ctx,
                appended_chars,
                near_fired: false,
                cost_usd,
            }),
        ))
    }

    fn emit(&self, mut ev: Event) {
        // Messages may quote paths, provider bodies or the user's words: never a key.
        if let Event::Notice { message } | Event::Warning { message } | Event::Error { message, .. } =
            &mut ev
            && let std::borrow::Cow::Owned(clean) = super::secrets::redact(message)
        {
            *message = clean;
        }
        log::event(&ev, self.handoff_clock);
        // The front end may be gone (quit); nothing to do then.
        let _ = self.events.send(ev);
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

    /// The current step's record; None before the first task names the step.
    fn step_rec(&mut self) -> Option<&mut StepRecord> {
        self.step.and_then(|i| self.manifest.steps.get_mut(i))
    }

    fn step_ref(&self) -> Option<&StepRecord> {
        self.step.and_then(|i| self.manifest.steps.get(i))
    }

    /// Change the current step's record (nothing to record before the first task).
    fn record(&mut self, f: impl FnOnce(&mut StepRecord)) {
        if let Some(rec) = self.step_rec() {
            f(rec);
        }
    }

    fn has_step(&self) -> bool {
        self.step_ref().is_some()
    }

    /// The current step's name (empty before the first task).
    fn step_name(&self) -> String {
        self.step_ref().map(|r| r.name.clone()).unwrap_or_default()
    }

    fn save_manifest(&mut self) {
        // Only this process's step: others may share the run directory.
        let path = self.p.run_dir.manifest_path();
        if let Err(e) = super::ledger::save_step(&self.manifest, self.step, &path) {
            self.emit(Event::Warning {
                message: format!("could not write the ledger: {e}"),
            });
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
            context: self.ctx_estimate(),
            thresholds: self.thresholds,
            estimated: true,
            usage: Default::default(),
            cost_usd: 0.0,
            session_cost_usd: self.s.cost_usd,
            masked_tokens: self.mask.saved_tokens,
        });
    }

    /// Book a request's cost: the step, its generation and the session.
    fn add_cost(&mut self, cost: f64) {
        self.s.cost_usd += cost;
        self.record(|rec| {
            rec.cost_usd += cost;
            rec.current_generation().cost_usd += cost;
        });
    }

    /// The `SessionStarted` event of the current session.
    fn session_started(&self) -> Event {
        Event::SessionStarted {
            session_id: self.s.id.clone(),
            parent_session: self.s.parent.clone(),
            generation: self.s.generation,
            model: self.p.model.clone(),
            provider: self.p.provider.name().to_string(),
            thresholds: self.thresholds,
            demo: self.p.demo,
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

    /// Begin `turn`: it becomes the one `Op::Abort` may name.
    fn begin_turn(&mut self, id: TurnId, kind: TurnKind) -> ActiveTurn {
        let turn = ActiveTurn {
            id,
            kind,
            started: Instant::now(),
        };
        self.turn = Some(turn);
        self.emit(Event::TurnStarted {
            turn: id,
            kind,
            origin: id.origin(),
        });
        turn
    }

    /// Start the step on its first task: name it, record it in the ledger.
    fn ensure_step(&mut self, task: &str) {
        if self.has_step() {
            return;
        }
        let name = self
            .p
            .step
            .clone()
            .unwrap_or_else(|| step_name_from_task(task));
        let name = self.claim_step(name);
        let rec = StepRecord {
            name,
            task: input::task_excerpt(task),
            window: self.thresholds.window,
            memory: std::mem::take(&mut self.unborn),
            ..Default::default()
        };
        // The name this process claimed in a joined run directory (a record without a session;
        // the workspace's step claim may have renamed it since, `<step>-2`).
        let me = std::process::id();
        let claimed = self.manifest.steps.iter().position(|s| {
            s.session_id.is_empty() && (s.name == rec.name || s.claimed_by == Some(me))
        });
        match claimed.and_then(|i| self.manifest.steps.get_mut(i).map(|slot| (i, slot))) {
            Some((i, slot)) => {
                *slot = rec;
                self.step = Some(i);
            }
            None => {
                self.step = Some(self.manifest.steps.len());
                self.manifest.steps.push(rec);
            }
        }
    }

    /// Make sure the workbench exists with its `.gitignore` (notes and spills stay out of git).
    /// Said once if it cannot be made; the tools and the handoff store report their own failures.
    fn ensure_workbench(&mut self) {
        let Some(dir) = self.p.workbench.clone() else {
            return;
        };
        if let Err(e) = super::fsutil::ensure_workbench(&dir) {
            self.emit(Event::Warning {
                message: format!("cannot prepare the workbench {}: {e}", dir.display()),
            });
        }
    }

    /// Build the new session's system prompt: the base, the environment and the project
    /// instructions read from disk now. It stays as it is for the whole session.
    fn prepare_prompt(&mut self) -> SessionPrompt {
        let prompt = sysprompt::build(&self.base_prompt, &self.p.workspace, &self.p.instructions);
        self.p.system_prompt = prompt.text.clone();
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
    fn start_session(&mut self, parent: Option<String>, generation: u32, first: Vec<Message>) {
        self.ensure_workbench();
        let prompt = self.prepare_prompt();
        let id = new_id();
        let step_name = self.step_name();
        let header = SessionHeader {
            session_id: id.clone(),
            parent_session: parent.clone(),
            generation,
            step: step_name,
            model: self.p.model.clone(),
            provider: self.p.provider.name().to_string(),
            started: rfc3339(now_unix().0),
            workspace: self.p.workspace.clone(),
            subagent: None,
        };
        let mut transcript = Transcript::create(self.p.run_dir.transcript_path(&id), &header);
        for m in &first {
            transcript.append(&TranscriptLine::Message { message: m.clone() });
        }
        if let Some(err) = transcript.take_error() {
            self.emit(Event::Warning { message: err });
        }
        let appended: usize = first.iter().map(Message::char_len).sum();
        let start = match (parent.is_some(), self.s.id.is_empty()) {
            (true, _) => GenerationStart::Handoff,
            (false, true) => GenerationStart::First,
            (false, false) => GenerationStart::New,
        };
        self.s = SessionState {
            id: id.clone(),
            parent: parent.clone(),
            generation,
            messages: first,
            transcript,
            ctx: 0,
            appended_chars: appended,
            near_fired: false,
            cost_usd: 0.0,
        };
        self.spiller = Spiller::new();
        let window = self.thresholds.window;
        let estimate = self.ctx_estimate();
        self.record(|rec| {
            rec.session_id = id.clone();
            rec.context = estimate;
            rec.generations = generation;
            rec.window = window;
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
        self.s.appended_chars += msg.char_len();
        append_message(&mut self.s.messages, msg.clone());
        self.s
            .transcript
            .append(&TranscriptLine::Message { message: msg });
        self.report_transcript_error();
    }

    /// The one place the replace generation advances: after a replacement is persisted.
    fn commit_replacement(&mut self) -> u64 {
        self.replace.advance()
    }

    async fn run(&mut self) {
        for message in std::mem::take(&mut self.startup_warnings) {
            self.emit(Event::Warning { message });
        }
        self.warn_about_the_floor();
        if self.p.resume.is_some() {
            self.announce_resumed();
            self.reopen_frozen().await;
        } else if let Some(text) = self.p.autostart.take() {
            let task = text.clone();
            self.message_turn(
                TurnId::ENGINE,
                TurnKind::Message,
                Origin::Engine,
                &task,
                text,
            )
            .await;
        }
        while !self.shutdown {
            // Idle is a message boundary: a background handoff whose review is over turns over.
            self.turnover_if_ready();
            let Some(op) = self.next_idle_op().await else {
                break;
            };
            match op {
                Op::UserTurn { turn, text } => self.user_turn(turn, text).await,
                Op::Init { turn, overwrite } => self.init_turn(turn, overwrite).await,
                Op::Handoff { turn, focus } => self.manual_handoff(turn, focus).await,
                Op::NewSession => {
                    self.drop_background("/new started a fresh session");
                    let revoked = self.allowances.clear();
                    if self.has_step() {
                        // A fresh start: no briefing, no request carried into it; the next
                        // generation, marked as a /new (no handoff, no parent).
                        self.request = Request::default();
                        self.briefed = None;
                        let next = self.s.generation + 1;
                        self.start_session(None, next, Vec::new());
                    }
                    let mut message = String::from("new session started (no handoff)");
                    if revoked > 0 {
                        message.push_str(&format!(
                            "; {revoked} \"always\" approval(s) of the last session revoked"
                        ));
                    }
                    self.emit(Event::Notice { message });
                }
                Op::Permissions => self.emit(self.permissions_event()),
                Op::Cost => self.emit(self.cost_event()),
                Op::ListSessions => self.emit(self.sessions_event()),
                Op::Resume { run_id } => self.resume_run(&run_id).await,
                Op::SetModel { model } => self.set_model(&model),
                Op::SetEffort { effort } => self.set_effort(effort),
                Op::Revoke { rule } => self.revoke(rule),
                Op::SetWindow { window } => {
                    self.thresholds = self.thresholds_for(window);
                    if self.has_step() {
                        self.record(|rec| rec.window = window);
                        self.save_manifest();
                    }
                    self.emit(Event::Notice {
                        message: format!(
                            "window set to {} (handoff at {}, warning at {})",
                            context::fmt_window(window),
                            context::fmt_tokens(self.thresholds.at),
                            context::fmt_tokens(self.thresholds.warn_at)
                        ),
                    });
                    self.warn_about_the_floor();
                    self.emit_usage_estimate();
                }
                op @ (Op::Pin { .. } | Op::Unpin { .. } | Op::SetFocus { .. }) => {
                    self.on_memory_op(op)
                }
                Op::McpRestart { name } => self.restart_mcp(&name),
                Op::McpJsonDecision { sha256, approve } => self.decide_mcp_json(&sha256, approve),
                Op::Restore {
                    action,
                    on_conflict,
                } => self.restore_op(action, on_conflict).await,
                Op::RewindPoints => self.emit(self.rewind_points()),
                Op::Rewind { turn, mode } => self.rewind(turn, mode).await,
                Op::Shutdown => {
                    self.settle_before_exit().await;
                    break;
                }
                // Nothing is running: an abort can only drop a queued turn.
                Op::Abort { turn } => {
                    let _ = self.on_abort(turn);
                }
                // A background handoff's own ops; anything else is a stale answer.
                op @ (Op::ReviewDone { .. }
                | Op::UnsavedEdits { .. }
                | Op::CancelHandoff { .. }) => self.background_op(op),
                Op::Approval { .. } => {}
            }
        }
        // Quitting: a writing request still running is dropped (the transcript keeps the
        // session, the next start hands off again); a frozen document keeps its record and its
        // review reopens at the next start.
        self.abort_background_writing();
        self.save_manifest_if_any();
    }

    /// The next op while idle (queued ones first); a background writing request's result is
    /// handled as it arrives.
    async fn next_idle_op(&mut self) -> Option<Op> {
        loop {
            if let Some(op) = self.pending.pop_front() {
                return Some(op);
            }
            tokio::select! {
                op = self.ops.recv() => return op,
                Some(w) = self.bg_rx.recv() => {
                    self.on_written(w);
                    self.turnover_if_ready();
                }
            }
        }
    }

    fn save_manifest_if_any(&mut self) {
        if self.has_step() {
            self.save_manifest();
        }
    }
}

/// The replace generation and compaction count a step's record implies (`--continue` seeds them
/// from the ledger, never lower).
fn replace_state(rec: Option<&StepRecord>) -> (ReplaceGeneration, u32) {
    match rec {
        Some(rec) => (
            ReplaceGeneration::starting_at(rec.handoffs.len() as u64 + rec.compactions as u64),
            rec.compactions,
        ),
        None => (ReplaceGeneration::default(), 0),
    }
}

/// What a call left without a result by a crash is answered with: what is known to have happened.
/// Commands die with the agent (their process group is killed, `tools::lifeline`); a file tool may
/// have finished its change before the end.
pub(crate) fn interrupted_result(tool: &str) -> String {
    let what = match tool {
        "bash" => "the command and every process it started were killed with it",
        "write_file" | "edit_file" => {
            "the change may or may not have been made: check the file before you retry"
        }
        t if t.starts_with("mcp__") => "what the tool did before that is unknown",
        _ => "it changed nothing",
    };
    format!("interrupted: flower-tui stopped before this call finished; {what}")
}

/// Give every `tool_use` without a `tool_result` in the next message an "interrupted" result
/// ([`interrupted_result`]).
pub fn repair_dangling_tool_uses(messages: &mut Vec<Message>) -> Option<usize> {
    use super::types::Block;
    let mut fixed = 0;
    let mut i = 0;
    while let Some(message) = messages.get(i) {
        if message.role == Role::Assistant {
            let ids: Vec<(String, String)> = message
                .tool_uses()
                .map(|(id, name, _)| (id.to_string(), name.to_string()))
                .collect();
            if !ids.is_empty() {
                let answered: Vec<String> = match messages.get(i + 1) {
                    Some(next) if next.role == Role::User => next
                        .content
                        .iter()
                        .filter_map(|b| match b {
                            Block::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
                            _ => None,
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                let missing: Vec<Block> = ids
                    .into_iter()
                    .filter(|(id, _)| !answered.contains(id))
                    .map(|(id, name)| Block::ToolResult {
                        tool_use_id: id,
                        content: interrupted_result(&name),
                        is_error: true,
                    })
                    .collect();
                if !missing.is_empty() {
                    fixed += missing.len();
                    match messages.get_mut(i + 1) {
                        Some(next) if next.role == Role::User => {
                            // Tool results come first in a user message.
                            let rest = std::mem::take(&mut next.content);
                            next.content = missing;
                            next.content.extend(rest);
                        }
                        _ => messages.insert(
                            i + 1,
                            Message {
                                role: Role::User,
                                content: missing,
                            },
                        ),
                    }
                }
            }
        }
        i += 1;
    }
    (fixed > 0).then_some(fixed)
}

/// A step name from a task: its first words, lower-case, `-` separated.
pub(crate) fn step_name_from_task(task: &str) -> String {
    let mut out = String::new();
    for word in task.split_whitespace() {
        let w: String = word
            .chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect();
        if w.is_empty() {
            continue;
        }
        if out.len() + w.len() + 1 > 40 {
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&w);
        if out.len() >= 24 {
            break;
        }
    }
    if out.is_empty() { "task".into() } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dangling_tool_uses_get_results() {
        use crate::engine::types::Block;
        let call = |id: &str| Message {
            role: Role::Assistant,
            content: vec![Block::ToolUse {
                id: id.into(),
                name: "bash".into(),
                input: serde_json::json!({}),
                from_text: false,
            }],
        };
        let mut msgs = vec![Message::user("go"), call("a")];
        assert_eq!(repair_dangling_tool_uses(&mut msgs), Some(1));
        assert_eq!(msgs.len(), 3);
        assert!(msgs[2].has_tool_result());
        assert_eq!(repair_dangling_tool_uses(&mut msgs), None, "idempotent");
        let mut msgs = vec![Message::user("go"), call("b"), Message::user("next")];
        assert_eq!(repair_dangling_tool_uses(&mut msgs), Some(1));
        assert!(matches!(msgs[2].content[0], Block::ToolResult { .. }));
        assert_eq!(msgs[2].text(), "next");
    }

    #[test]
    fn step_names() {
        assert_eq!(
            step_name_from_task("Fix the macOS build!"),
            "fix-the-macos-build"
        );
        assert_eq!(step_name_from_task("   "), "task");
        assert!(step_name_from_task(&"word ".repeat(50)).len() <= 40);
    }
}
