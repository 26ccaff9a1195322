//! The engine's loop: what it says once the front end listens, the first moves of a resumed or
//! self-starting run, then one op at a time while idle (a turn, a handoff, a setting, a question,
//! an undo or a rewind), a background handoff turned over at every idle boundary, and the way
//! out on shutdown (the language servers stopped last). Ops that arrive while a turn runs are sorted here too: what stops the work,
//! what is answered at once (the same answers as while idle), what waits for the loop. Each op
//! is handed to the part it is about; the ones that change several parts at once are here:
//! opening a session, `/new`, `/resume`, `/rewind`, `/model`, `/window` and the mode.

use super::Engine;
use super::active_turn::ActiveTurn;
use super::conversation::{Conversation, Identity, UserRequest};
use super::handoff;
use super::mcp_answers;
use super::model_request::Stop;
use super::params::Resume;
use super::startup::{FirstMoves, resumed_state};
use super::step_claim;
use super::step_ledger::{StepLedger, step_name_from_task};
use super::turn::Sent;
use super::user_hooks;
use crate::engine::context;
use crate::engine::error::{Error, ResumeError};
use crate::engine::fsutil::{new_id, now_unix, rfc3339};
use crate::engine::hooks::{EndReason, StartSource};
use crate::engine::ledger::{GenerationStart, SessionHeader, Transcript, TranscriptLine, run_list};
use crate::engine::policy::Mode;
use crate::engine::protocol::{Event, ExitReason, HandoffRefusal, Op, TurnId, TurnKind};
use crate::engine::sysprompt::SessionPrompt;
use crate::engine::types::Message;

impl Engine {
    pub(in crate::engine::session) async fn run(&mut self, first: FirstMoves) {
        for message in first.warnings {
            self.emit(Event::Warning { message });
        }
        self.warn_about_the_floor();
        user_hooks::announce(self);
        if self.planning.mode() != Mode::Normal {
            self.emit(Event::Mode {
                mode: self.planning.mode(),
            });
        }
        if first.resumed {
            self.announce_resumed().await;
        } else if let Some(text) = first.autostart {
            let task = text.clone();
            let id = TurnId::ENGINE;
            let turn = self.open_turn(id, TurnKind::Message, &task);
            self.send_message(turn, Sent::Engine, text).await;
        }
        while !self.inbox.shutdown {
            // Idle is a message boundary: a background handoff whose review is over turns over.
            self.turnover_if_ready();
            let Some(op) = self.next_idle_op().await else {
                break;
            };
            if !self.on_idle_op(op).await {
                break;
            }
        }
        // Quitting: a writing request still running is dropped (the transcript keeps the
        // session, the next start hands off again); a frozen document keeps its record and its
        // review reopens at the next start.
        self.background_op(Op::Shutdown);
        self.conversation.abandon_prompt();
        self.ledger.save_if_any();
        user_hooks::session_end(self).await;
        super::jobs::leave(&self.run.jobs).await;
        self.run.lsp.shutdown().await;
    }

    /// The next op while idle (queued ones first); a background writing request's result is
    /// handled as it arrives.
    async fn next_idle_op(&mut self) -> Option<Op> {
        loop {
            if let Some(op) = self.inbox.pending.pop_front() {
                return Some(op);
            }
            tokio::select! {
                op = self.inbox.ops.recv() => return op,
                Some(w) = self.handoff.next_reply() => {
                    self.on_background(w);
                    self.turnover_if_ready();
                }
                Some(made) = self.conversation.prompt_made() => self.take_prompt(made),
            }
        }
    }

    /// One op while idle. False when the engine stops. A resumed session's prompt still being
    /// prepared is waited for first, unless the op is an undo, a redo or the way out.
    async fn on_idle_op(&mut self, op: Op) -> bool {
        if !matches!(op, Op::Restore { .. } | Op::Shutdown)
            && let Some(made) = self.conversation.prompt_made().await
        {
            self.take_prompt(made);
        }
        match op {
            Op::UserTurn { turn, text } => {
                // A key the user pastes never enters the conversation: not the model's request,
                // not the transcript, the ledger or a handoff document.
                let text = crate::engine::secrets::redact(&text).into_owned();
                let task = text.clone();
                let opened = self.open_turn(turn, TurnKind::Message, &task);
                self.send_message(opened, Sent::Typed, text).await;
            }
            Op::Command { turn, name, args } => self.command_turn(turn, name, args).await,
            Op::Shell { turn, command } => self.shell_turn(turn, command).await,
            Op::Init { turn, overwrite } => self.init_turn(turn, overwrite).await,
            Op::Handoff { turn, focus } => handoff::manual(self, turn, focus).await,
            Op::ImplementPlan { turn, choice } => self.implement_plan(turn, choice).await,
            Op::Resume { run_id } => self.resume_run(&run_id).await,
            Op::Shutdown => {
                handoff::settle_before_exit(self).await;
                return false;
            }
            Op::NewSession => self.new_session(),
            Op::SetWindow { window } => self.set_window(window),
            Op::Restore {
                action,
                on_conflict,
            } => {
                let generation = self.conversation.generation;
                let report = self
                    .checkpoints
                    .restore(&mut self.ledger, generation, action, on_conflict)
                    .await;
                let session = self.conversation.id.clone();
                self.conversation.call_counts.restored(&session, &report);
                self.emit_logged(Event::Restore(report));
            }
            Op::Rewind {
                turn,
                mode,
                on_conflict,
            } => self.rewind(turn, mode, on_conflict).await,
            op => self.on_answered_op(op),
        }
        true
    }

    /// The ops answered at once, the same while idle as during a turn (settings, questions, the
    /// step's memory, MCP, a background handoff's own ops); a stale answer is dropped.
    fn on_answered_op(&mut self, op: Op) {
        match op {
            Op::Jobs(op) => super::jobs::answer(&self.run.jobs, op, &self.run.events),
            Op::Permissions => self.emit(self.approvals.permissions_event(&self.planning)),
            Op::Cost => self.emit(self.ledger.cost_event(&self.conversation.id)),
            Op::LspStatus => self.emit(self.run.lsp.status()),
            Op::Context => {
                let tools = serde_json::to_string(&self.tool_specs()).map_or(0, |t| t.len());
                let (t, ctx) = (self.settings.thresholds, self.conversation.ctx);
                let fill = self.conversation.fill(tools);
                let message = fill.report(ctx, t, |c| self.counters.estimate(c));
                self.emit(Event::Notice { message });
            }
            Op::Hooks => self.emit(Event::Notice {
                message: self.hooks.report(),
            }),
            Op::ListSessions => self.emit(Event::Sessions {
                current_run: self.ledger.run_dir.run_id.clone(),
                sessions: run_list::list(&self.run.places.data_dir, &self.run.places.workspace),
            }),
            Op::RewindPoints => self.emit(self.ledger.rewind_points(&self.conversation.id)),
            Op::SetModel { model } => self.set_model(&model),
            Op::ListModels => self.run.list_models(),
            Op::SetEffort { effort } => {
                // Extended thinking / reasoning effort from the next request on.
                self.settings.effort = effort;
                self.note_setting();
                self.emit(self.settings.event());
            }
            Op::Revoke { rule } => self.approvals.revoke(&self.planning, rule),
            op @ (Op::Pin { .. } | Op::Unpin { .. } | Op::SetFocus { .. }) => {
                self.ledger.on_memory_op(op);
            }
            Op::McpRestart { name } => {
                let message = mcp_answers::restart(self.run.mcp.as_ref(), &name);
                self.emit_logged(Event::Notice { message });
            }
            Op::SetMode { mode } => self.set_mode(mode),
            Op::McpJsonDecision { sha256, approve } => {
                let (mcp, out) = (self.run.mcp.as_ref(), self.run.outbox());
                let places = &self.run.places;
                if let Some(message) = mcp_answers::decide_json(mcp, places, &sha256, approve, &out)
                {
                    self.emit_logged(Event::Notice { message });
                }
            }
            Op::HooksDecision { sha256, approve } => self.decide_hooks(&sha256, approve),
            // Nothing is running: an abort can only drop a queued turn.
            Op::Abort { turn } => {
                let _ = self.on_abort(turn);
            }
            // A background handoff's own ops; anything else is a stale answer.
            op @ (Op::ReviewDone { .. } | Op::UnsavedEdits { .. } | Op::CancelHandoff { .. }) => {
                self.background_op(op)
            }
            Op::Approval { .. }
            | Op::UserTurn { .. }
            | Op::Command { .. }
            | Op::Shell { .. }
            | Op::Init { .. }
            | Op::Handoff { .. }
            | Op::ImplementPlan { .. }
            | Op::Resume { .. }
            | Op::Shutdown
            | Op::NewSession
            | Op::SetWindow { .. }
            | Op::Restore { .. }
            | Op::Rewind { .. } => {}
        }
    }

    /// An op that arrived while something runs. Returns what stops the running work; answers a
    /// `/handoff` during a writing turn at once (refused), and the questions, revocations, the
    /// step's memory (a pin made now reaches the next successor even if the handoff comes before
    /// the turn ends), the mode and MCP as while idle; queues the rest in `pending` for the
    /// engine's loop.
    pub(in crate::engine::session) fn triage(&mut self, op: Option<Op>) -> Option<Stop> {
        match op {
            Some(Op::Shutdown) | None => {
                self.inbox.shutdown = true;
                Some(Stop::Shutdown)
            }
            Some(Op::Abort { turn }) => self.on_abort(turn),
            Some(Op::Handoff { turn, .. }) if self.handoff.writing().is_some() => {
                self.refuse_handoff(turn, HandoffRefusal::AlreadyWriting);
                None
            }
            Some(Op::Handoff { turn, .. }) if self.handoff.background().is_some() => {
                // Queued behind the running turn, it would be refused then: say it now.
                self.refuse_handoff(turn, HandoffRefusal::Reviewing);
                None
            }
            Some(
                op @ (Op::CancelHandoff { .. } | Op::ReviewDone { .. } | Op::UnsavedEdits { .. }),
            ) if self.handoff.background().is_some() => {
                self.background_op(op);
                None
            }
            Some(
                op @ (Op::Jobs(_)
                | Op::Pin { .. }
                | Op::Unpin { .. }
                | Op::SetFocus { .. }
                | Op::McpRestart { .. }
                | Op::SetMode { .. }
                | Op::McpJsonDecision { .. }
                | Op::HooksDecision { .. }
                | Op::Permissions
                | Op::Cost
                | Op::LspStatus
                | Op::Context
                | Op::Hooks
                | Op::RewindPoints
                | Op::ListModels
                | Op::ListSessions
                | Op::Revoke { .. }),
            ) => {
                self.on_answered_op(op);
                None
            }
            Some(other) => {
                self.inbox.pending.push_back(other);
                None
            }
        }
    }

    /// `Op::Abort { turn }`: stops the running turn; drops a queued one (which ends at once,
    /// interrupted); an abort of a turn that is over is stale and ignored.
    fn on_abort(&mut self, turn: TurnId) -> Option<Stop> {
        if self.turn.is_some_and(|t| t.id == turn) {
            // Esc kills the background handoff's hooks too.
            self.background_op(Op::Abort { turn });
            return Some(Stop::Abort);
        }
        let queued = self
            .inbox
            .pending
            .iter()
            .position(|op| op.starts_turn() == Some(turn))
            .and_then(|i| self.inbox.pending.remove(i));
        if let Some(op) = queued {
            let kind = match op {
                Op::Handoff { .. } => TurnKind::Handoff,
                Op::Init { .. } => TurnKind::Init,
                _ => TurnKind::Message,
            };
            self.end_turn(ActiveTurn::new(turn, kind), ExitReason::Interrupted);
        }
        None
    }

    /// Start the step on its first task: named by `--step`, else after `task`; the name claimed
    /// in the workspace; its record in the ledger. A step started in another mode than normal
    /// records it, so `--continue` keeps it.
    pub(in crate::engine::session) fn start_step(&mut self, task: &str) {
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
        self.ledger
            .start_step(name, task, self.settings.thresholds.window);
        if self.planning.mode() != Mode::Normal {
            self.note_setting();
        }
    }

    /// Open a new session (the first, a successor or `/new`), with its transcript and header.
    /// The request in progress goes on in it (`/new` clears it first). Its record in the ledger
    /// is written durably unless `for_turn` (the turn it opens saves durably before its first
    /// request, so the fsyncs would be paid twice on the way to it).
    pub(in crate::engine::session) fn start_session(
        &mut self,
        parent: Option<String>,
        generation: u32,
        first: Vec<Message>,
        for_turn: bool,
    ) {
        let prompt = self.run.prepare_session();
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
        let start = match (parent.is_some(), self.conversation.is_none()) {
            (true, _) => GenerationStart::Handoff,
            (false, true) => GenerationStart::First,
            (false, false) => GenerationStart::New,
        };
        // `SessionStart` runs before the new session's first request.
        self.hooks.start_due(match start {
            GenerationStart::Handoff => StartSource::Handoff,
            GenerationStart::First => StartSource::Startup,
            GenerationStart::New => StartSource::Clear,
        });
        let who = Identity {
            id: id.clone(),
            parent,
            generation,
        };
        let request = std::mem::take(&mut self.conversation.request);
        // The old session's history is dropped here: retired histories are freed.
        self.conversation = Conversation::new(who, first, transcript, &prompt.text);
        self.conversation.request = request;
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
        if for_turn {
            self.ledger.save_for_now();
        } else {
            self.ledger.save();
        }
        let provider = self.run.provider.client.name();
        self.emit(
            self.conversation
                .started(&self.settings, provider, self.run.provider.demo),
        );
        self.emit_logged(Event::SessionPrompt {
            session_id: self.conversation.id.clone(),
            environment: prompt.environment,
            instructions: prompt.instructions,
        });
    }

    /// `/new`: a fresh session with no handoff; the "always" grants go.
    fn new_session(&mut self) {
        self.drop_background("/new started a fresh session");
        let revoked = self.approvals.forget();
        if self.ledger.has_step() {
            // A fresh start: no briefing, no request carried into it; the next generation,
            // marked as a /new (no handoff, no parent).
            self.conversation.request = UserRequest::default();
            self.conversation.briefed = None;
            let next = self.conversation.generation + 1;
            self.session_left_hooks(EndReason::Clear);
            self.start_session(None, next, Vec::new(), false);
        }
        let mut message = String::from("new session started (no handoff)");
        if revoked > 0 {
            message.push_str(&format!(
                "; {revoked} \"always\" approval(s) of the last session revoked"
            ));
        }
        self.emit(Event::Notice { message });
    }

    /// `Op::Resume`: leave this run for another run of the workspace, at its latest successor.
    async fn resume_run(&mut self, run_id: &str) {
        match self.switch_run(run_id) {
            Ok(()) => self.announce_resumed().await,
            Err(e) => {
                self.emit(Event::Error {
                    kind: e.kind(),
                    message: e.message(),
                });
            }
        }
    }

    /// Leave this run for `run_id`'s latest successor: its ledger and session replace this
    /// run's (a run that recorded nothing leaves no directory behind); the "always" grants go.
    fn switch_run(&mut self, run_id: &str) -> Result<(), Error> {
        let places = &self.run.places;
        let run = run_list::find(&places.data_dir, &places.workspace, run_id)?;
        if run.root == self.ledger.run_dir.root {
            return Err(ResumeError::SameRun { id: run.run_id }.into());
        }
        let resume = Resume::at(run);
        // Torn transcript lines are said once the switch is done.
        let mut warnings = Vec::new();
        let resumed = resumed_state(&resume, None, &self.run.prompt.system_prompt, &mut warnings)?;
        // The step name of that run, unless another live process works on it.
        let rec = resumed.step.and_then(|i| resumed.manifest.steps.get(i));
        let claim = step_claim::claim_resumed(self.run.places.workbench.as_deref(), rec)?;
        // The switch happens: a background handoff belongs to the session being left (its frozen
        // record to this run's step).
        self.drop_background("/resume switched to another run");
        self.ledger.save_if_any();
        self.session_left_hooks(EndReason::Other);
        let ledger = StepLedger::new(
            resumed.manifest,
            resumed.step,
            resume.run_dir,
            claim,
            self.run.outbox(),
        );
        let left = std::mem::replace(&mut self.ledger, ledger);
        if !left.has_step() {
            // This run recorded nothing: leave no empty run directory behind.
            let _ = std::fs::remove_dir(left.run_dir.root.join("sessions"));
            let _ = std::fs::remove_dir(&left.run_dir.root);
        }
        self.conversation = resumed.session;
        // The resumed run's jobs join the table: the ones that ran there are gone now.
        let jobs_dir = crate::engine::jobs::dir_in(&self.ledger.run_dir.root);
        self.run.jobs.adopt(jobs_dir);
        // `SessionStart` runs before the resumed session's next request.
        self.hooks.start_due(StartSource::Resume);
        self.counters.reset_overflow();
        self.approvals.forget();
        for message in warnings {
            self.emit(Event::Warning { message });
        }
        Ok(())
    }

    /// What `--continue`, `--resume` and `/resume` say once attached: the session, its prompt,
    /// the conversation so far (for a front end that shows it), where the gauge stands, what the
    /// step's memory kept. Then a turn cut short by the end of its process is closed, and a
    /// review it left open reopens.
    async fn announce_resumed(&mut self) {
        let making = self.run.prepare_session_aside();
        self.conversation.prompt_from(making);
        self.emit(Event::Resumed {
            run_id: self.ledger.run_dir.run_id.clone(),
            session_id: self.conversation.id.clone(),
            generation: self.conversation.generation,
            messages: self.conversation.messages.len(),
            latest_handoff: self
                .ledger
                .rec()
                .and_then(|r| r.handoffs.last()?.path.clone()),
        });
        let provider = self.run.provider.client.name();
        self.emit(
            self.conversation
                .started(&self.settings, provider, self.run.provider.demo),
        );
        if self.run.front_end.can_ask() {
            for ev in self.conversation.replay() {
                self.emit(ev);
            }
        }
        let s = &self.conversation;
        self.emit(Event::Notice {
            message: format!(
                "continuing session {} (generation {}, {} messages)",
                s.id,
                s.generation,
                s.messages.len()
            ),
        });
        self.emit_usage_estimate();
        self.ledger.emit_memory();
        self.conversation.briefed = crate::engine::handoff::briefing::briefed_with(
            &self.conversation.messages,
            &self.conversation.parent,
        );
        self.checkpoints
            .close_cut_short(&mut self.ledger, self.conversation.generation)
            .await;
        self.reopen_frozen().await;
    }

    /// A resumed session's prompt, prepared beside the engine, becomes the session's (prepared
    /// here when that failed): said to the front end with a new estimate of the context.
    fn take_prompt(&mut self, made: Option<SessionPrompt>) {
        let prompt = made.unwrap_or_else(|| self.run.prepare_session());
        self.conversation.system_prompt = prompt.text;
        self.emit_logged(Event::SessionPrompt {
            session_id: self.conversation.id.clone(),
            environment: prompt.environment,
            instructions: prompt.instructions,
        });
        self.emit_usage_estimate();
    }

    /// `/model NAME`: the next request goes to `model`; the window follows it unless `--window`
    /// pinned it (or the demo's is in force), and so do the token estimates. The ledger notes
    /// the change.
    fn set_model(&mut self, model: &str) {
        let model = model.trim();
        if model.is_empty() {
            return self.emit(self.settings.event());
        }
        let (data_dir, provider) = (&self.run.places.data_dir, &self.run.provider);
        self.settings
            .switch_model(model, data_dir, provider.demo, provider.max_tokens);
        self.counters.model_changed(data_dir, model);
        self.note_setting();
        self.emit(self.settings.event());
        self.emit_usage_estimate();
    }

    /// `Op::SetMode`: from the next request on (a call made meanwhile is judged by the new mode).
    pub(in crate::engine::session) fn set_mode(&mut self, mode: Mode) {
        if self.planning.set_mode(mode) {
            self.note_setting();
        }
        self.emit(Event::Mode { mode });
    }

    /// Record a model, effort or mode change in the step's ledger.
    pub(in crate::engine::session) fn note_setting(&mut self) {
        let change = self
            .settings
            .change(self.conversation.generation, self.planning.mode());
        let window = self.settings.thresholds.window;
        self.ledger.record(|rec| {
            rec.settings.push(change);
            rec.figures.window = window;
        });
        self.ledger.save_if_any();
    }

    /// `/window N`: a new context window for the rest of the run.
    fn set_window(&mut self, window: u64) {
        self.settings.thresholds = self
            .settings
            .thresholds_for(window, self.run.provider.max_tokens);
        if self.ledger.has_step() {
            self.ledger.record(|rec| rec.figures.window = window);
            self.ledger.save();
        }
        let t = self.settings.thresholds;
        self.emit(Event::Notice {
            message: format!(
                "window set to {} (handoff at {}, warning at {})",
                context::fmt_window(window),
                context::fmt_tokens(t.at),
                context::fmt_tokens(t.warn_at)
            ),
        });
        self.warn_about_the_floor();
        self.emit_usage_estimate();
    }
}
