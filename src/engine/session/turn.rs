//! One user turn: a loop of model requests and tool executions, with the handoff and
//! compaction checks before every request and the overflow path after a context-window error.

use super::active_turn::ActiveTurn;
use super::conversation::UserRequest;
use super::handoff::{self, CompactFailure, HandoffOutcome, Trigger};
use super::model_request::{Outcome, Purpose};
use super::model_settings::WindowLesson;
use super::step_claim;
use super::step_ledger::step_name_from_task;
use super::user_hooks::{self, StopGate};
use super::{Engine, OVERFLOW_RETRY_CAP};
use crate::engine::context::strategy::{Pressure, StrategyKind};
use crate::engine::error::Error;
use crate::engine::ledger::Cut;
use crate::engine::policy::Mode;
use crate::engine::protocol::{
    CompactionTrigger, Event, ExitReason, HandoffPhase, Origin, TurnId, TurnKind,
};
use crate::engine::provider::{ErrorKind, ProviderError};
use crate::engine::replace::may_retry_overflow;
use crate::engine::types::{Block, Message, ModelResponse, Role, ToolChoice};

/// What the turn loop does after a check.
enum Flow {
    Go,
    Stop(ExitReason),
}

/// How the turn goes on after a request that did not complete (see `finished`).
enum Unfinished {
    /// An overflow was recovered (handoff or compaction): send the request again.
    Again,
    /// The turn ends with this exit: aborted, or an overflow that could not be recovered.
    Stop(ExitReason),
    /// The request failed and the error was reported; the exit that error gives.
    Failed(ExitReason),
}

impl Engine {
    /// The id of the turn running now (None when idle): the turn its events belong to.
    pub(super) fn turn_id(&self) -> Option<TurnId> {
        self.turn.map(|t| t.id)
    }

    /// Begin `turn`: it becomes the one `Op::Abort` may name.
    pub(super) fn begin_turn(&mut self, id: TurnId, kind: TurnKind) -> ActiveTurn {
        let turn = ActiveTurn::new(id, kind);
        self.turn = Some(turn);
        self.emit(Event::TurnStarted {
            turn: id,
            kind,
            origin: id.origin(),
        });
        turn
    }

    /// The one end of a turn: `TurnEnd`, recorded in the transcript for message turns.
    pub(super) fn end_turn(&mut self, turn: ActiveTurn, reason: ExitReason) {
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

    /// A turn that ends as it starts, the session unchanged: `ev` says why.
    pub(super) fn turn_ends_at_once(&mut self, id: TurnId, kind: TurnKind, ev: Event) {
        let turn = self.begin_turn(id, kind);
        self.emit(ev);
        self.turn = None;
        self.end_turn(turn, ExitReason::Unchanged);
    }

    /// A turn of the agent loop on one message: `task` names the step if this is its first.
    pub(super) async fn message_turn(
        &mut self,
        id: TurnId,
        kind: TurnKind,
        origin: Origin,
        task: &str,
        text: String,
    ) {
        let turn = self.open_turn(id, kind, task);
        self.send_message(turn, origin, text).await;
    }

    /// Start the step (`task` names it if this is its first turn), a session if none runs, and
    /// the turn.
    pub(super) fn open_turn(&mut self, id: TurnId, kind: TurnKind, task: &str) -> ActiveTurn {
        if !self.ledger.has_step() {
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
            // A step started in another mode than normal records it, so `--continue` keeps it.
            if self.planning.mode() != Mode::Normal {
                self.note_setting();
            }
        }
        if self.s.is_none() {
            let generation = self.s.generation.max(1);
            self.start_session(None, generation, Vec::new());
        }
        // After the session it opens: a run's first event stays `session_started`.
        // A background handoff the user cancelled in an earlier turn may start again from this
        // turn on: the cancellation belongs to the turn.
        self.begin_turn(id, kind)
    }

    /// The message of the open `turn`, and the agent loop on it to the turn's end.
    pub(super) async fn send_message(&mut self, turn: ActiveTurn, origin: Origin, text: String) {
        let id = turn.id;
        // A 10 MB paste reaches the model as a preview and a file to read.
        let text = if origin == Origin::User {
            self.input_room().admit(text)
        } else {
            text
        };
        let prompt = (origin == Origin::User).then_some(text.as_str());
        let Some(hook_context) = user_hooks::opening(self, turn, prompt).await else {
            return;
        };
        self.emit(Event::UserMessage {
            turn: Some(id),
            origin,
            text: text.clone(),
        });
        let mut message = Message::user(text.clone());
        if origin == Origin::User {
            // `@path` mentions travel with the message, each under its path.
            let ctx = self.tool_ctx(false);
            for a in crate::engine::mentions::attach(&text, &ctx).await {
                self.emit_logged(Event::Attachment {
                    turn: id,
                    path: a.path,
                    attached: a.block.is_some(),
                    summary: a.summary,
                });
                if let Some(block) = a.block {
                    // An attached file is masked as a tool's read of it would be.
                    let block = crate::engine::secrets::redact(&block).into_owned();
                    message.content.push(Block::text(block));
                }
            }
        }
        if let Some(context) = hook_context {
            message.content.push(Block::text(context));
        }
        if origin == Origin::User {
            let (generation, index) = (self.s.generation, self.s.messages.len());
            self.ledger
                .note_prompt(generation, &self.s.id, index, &text);
        }
        // The request in flight is what the user typed (a successor gets it verbatim).
        self.s.request = UserRequest::opened(text.clone());
        self.push_message(message);
        self.ledger.save();
        self.emit_usage_estimate();
        let reason = self.turn_loop().await;
        self.finish_turn(turn, reason).await;
    }

    /// The end of a turn that ran: the turn's last checkpoint, its count in the ledger, then
    /// `TurnEnd`. A completed turn closes the request in flight.
    pub(super) async fn finish_turn(&mut self, turn: ActiveTurn, reason: ExitReason) {
        self.checkpoints
            .after_turn(&mut self.ledger, self.s.generation)
            .await;
        if reason == ExitReason::Completed {
            self.s.request.open = false;
        }
        let failed = matches!(reason, ExitReason::Error(_));
        self.ledger.record(|rec| {
            if failed {
                // A failed try (its error is already in `errors`); handoffs never count.
                rec.attempts += 1;
            }
            rec.figures.num_turns += 1;
            rec.current_generation().num_turns += 1;
        });
        self.ledger.save();
        self.turn = None;
        self.end_turn(turn, reason);
    }

    /// The loop of one turn. Continues across automatic handoffs (the successor picks up the turn).
    pub(super) async fn turn_loop(&mut self) -> ExitReason {
        let max = self.run.tools.max_iterations;
        let mut iterations: u32 = 0;
        self.s.spiller.start_turn();
        loop {
            if self.inbox.shutdown {
                return ExitReason::Interrupted;
            }
            if iterations >= max {
                return self.final_summary(iterations, max).await;
            }
            match self.before_request().await {
                Flow::Go => {}
                Flow::Stop(r) => return r,
            }
            // A successor (a handoff just now) starts with its `SessionStart` hooks.
            if !user_hooks::session_start(self).await {
                return ExitReason::Interrupted;
            }
            iterations += 1;
            if !self.wait_for_mcp().await {
                return ExitReason::Interrupted;
            }
            let req = self.build_request(ToolChoice::Auto);
            // A call of a tool this request did not offer is answered with the ones it did.
            let offered: Vec<String> = req.tools.iter().map(|t| t.name.clone()).collect();
            let snapshot = self.ledger.replace.get();
            // The history this request sends: a background handoff started by its response
            // writes on exactly this prefix (its cache is warm).
            let cut = Cut::at_end(&self.s.messages);
            let outcome = self.stream(req, Purpose::Main).await;
            let resp = match self.finished(outcome, snapshot).await {
                Ok(resp) => resp,
                Err(Unfinished::Again) => continue,
                Err(Unfinished::Stop(r) | Unfinished::Failed(r)) => return r,
            };
            let msg = resp.message();
            let tool_uses = msg.has_tool_use();
            let text = msg.text();
            if !msg.content.is_empty() {
                self.push_message(msg.clone());
            }
            // After the push: the response's ctx already counts its own output.
            self.on_response(&resp);
            self.consider_background(cut);
            self.emit_logged(Event::AssistantDone {
                turn: self.turn_id(),
                text,
                interrupted: false,
            });
            if !tool_uses {
                match user_hooks::stop(self).await {
                    StopGate::End => return ExitReason::Completed,
                    StopGate::Continue => continue,
                    StopGate::Aborted => return ExitReason::Interrupted,
                }
            }
            // An abort, or a presented plan (the user decides what follows), ends the turn.
            if let Some(end) = self.run_tools(&msg, &offered).await {
                return end;
            }
        }
    }

    /// The response of a request that completed, or how the turn goes on after one that did not:
    /// aborted (the streamed text kept, marked interrupted), an overflow before any text (a
    /// handoff or a compaction, then the request again), or a failure (text the user already saw
    /// stays in the history, marked as cut off, and the error is reported).
    async fn finished(
        &mut self,
        outcome: Outcome,
        snapshot: u64,
    ) -> Result<ModelResponse, Unfinished> {
        match outcome {
            Outcome::Done(resp) => Ok(resp),
            Outcome::Aborted { partial } => {
                self.keep_partial(partial);
                Err(Unfinished::Stop(ExitReason::Interrupted))
            }
            Outcome::Failed { error, partial } => {
                if error.kind == ErrorKind::ContextWindowExceeded && partial.is_empty() {
                    return Err(match self.on_overflow(&error, snapshot).await {
                        Flow::Go => Unfinished::Again,
                        Flow::Stop(r) => Unfinished::Stop(r),
                    });
                }
                // Text the user already saw stays in the history, marked as cut off by the error.
                if !partial.trim().is_empty() {
                    let text = format!(
                        "{partial}\n\n[the response was cut off: {}]",
                        error.kind.as_str()
                    );
                    self.push_message(Message::assistant(text));
                    self.emit_logged(Event::AssistantDone {
                        turn: self.turn_id(),
                        text: partial,
                        interrupted: true,
                    });
                }
                Err(Unfinished::Failed(self.fail(&error.into())))
            }
        }
    }

    /// Report an error (in the ledger and as an event) and end the turn with its kind.
    pub(super) fn fail(&mut self, e: &Error) -> ExitReason {
        self.ledger.record(|rec| rec.errors.push(e.to_string()));
        self.emit_logged(Event::Error {
            kind: e.kind(),
            message: e.message(),
        });
        ExitReason::Error(e.kind())
    }

    /// Keep the partial assistant text of an aborted stream, marked interrupted. Tool calls that had
    /// started are dropped with it, so no `tool_use` is left without its `tool_result`.
    pub(super) fn keep_partial(&mut self, partial: String) {
        if !partial.trim().is_empty() {
            let text = format!("{partial}\n\n[interrupted by the user]");
            self.push_message(Message {
                role: Role::Assistant,
                content: vec![Block::text(text)],
            });
        }
        self.emit_logged(Event::AssistantDone {
            turn: self.turn_id(),
            text: partial,
            interrupted: true,
        });
    }

    /// Account a successful response: ctx, cost, ledger; reset the overflow counter.
    fn on_response(&mut self, resp: &ModelResponse) {
        self.counters.responded();
        let ctx = resp.usage.context();
        self.s.ctx = ctx;
        self.s.appended_chars = 0;
        let cost = crate::engine::pricing::cost_usd(&self.settings.model, &resp.usage);
        self.add_cost(cost);
        let window = self.settings.thresholds.window;
        self.ledger.record(|rec| {
            rec.figures.context = ctx;
            rec.figures.window = window;
            rec.current_generation().context = ctx;
        });
        self.ledger.save();
        self.emit_logged(Event::Usage {
            turn: self.turn_id(),
            context: ctx,
            thresholds: self.settings.thresholds,
            estimated: false,
            usage: resp.usage,
            cost_usd: cost,
            session_cost_usd: self.s.cost_usd,
            masked_tokens: self.s.mask.saved_tokens(),
        });
    }

    /// The gauge between responses: the context as estimated now.
    pub(super) fn emit_usage_estimate(&self) {
        self.emit(Event::Usage {
            turn: self.turn_id(),
            context: self.ctx_estimate(),
            thresholds: self.settings.thresholds,
            estimated: true,
            usage: Default::default(),
            cost_usd: 0.0,
            session_cost_usd: self.s.cost_usd,
            masked_tokens: self.s.mask.saved_tokens(),
        });
    }

    /// The checks before every main-thread request: a background handoff's turnover (or the wait
    /// for it), near warning, handoff due, compaction pressure.
    async fn before_request(&mut self) -> Flow {
        if let Some(r) = handoff::before_request(self).await {
            return Flow::Stop(r);
        }
        let ctx = self.ctx_estimate();
        if ctx >= self.settings.thresholds.warn_at && !self.s.near_fired {
            self.s.near_fired = true;
            self.emit_logged(Event::Handoff(HandoffPhase::Near {
                context: ctx,
                at: self.settings.thresholds.at,
                window: self.settings.thresholds.window,
            }));
        }
        // Test hook: a manual handoff after N responses (headless `--handoff-after`).
        if self.handoff.hook_due(self.counters.responses()) {
            self.handoff.hook_fired();
            match self.handoff(Trigger::Manual { focus: None }).await {
                HandoffOutcome::Done | HandoffOutcome::Unchanged | HandoffOutcome::Cancelled => {}
                HandoffOutcome::Stopped(r) => return Flow::Stop(r),
            }
        }
        if self.handoff.background().is_some() {
            // A handoff runs in the background: nothing else replaces the history meanwhile.
            return Flow::Go;
        }
        if self.s.ctx == 0 {
            // No response yet: the session holds only its briefing (or its task), so a handoff
            // or a compaction would free nothing and only start over; a first request too large
            // for the window meets the overflow path instead.
            return Flow::Go;
        }
        // The pressure path: the first strategy in force whose line is crossed acts.
        let pressure = Pressure {
            ctx: self.ctx_estimate(),
            window: self.settings.thresholds.window,
            writing_turn: false,
            has_session_id: !self.s.is_none(),
        };
        match self.run.due_strategy(&pressure) {
            // In background mode the writing starts beside the main thread; after the user
            // cancelled one in this turn, only the hard limit makes it block instead.
            Some(StrategyKind::Handoff)
                if self.consider_background(Cut::at_end(&self.s.messages)) => {}
            Some(StrategyKind::Handoff) => match self.handoff(Trigger::Auto).await {
                HandoffOutcome::Done | HandoffOutcome::Unchanged | HandoffOutcome::Cancelled => {}
                HandoffOutcome::Stopped(r) => return Flow::Stop(r),
            },
            Some(StrategyKind::Compaction) => match self.compact(CompactionTrigger::Pressure).await
            {
                Ok(_) => {}
                Err(CompactFailure::Aborted) => return Flow::Stop(ExitReason::Interrupted),
                // Failure is loose on this path: logged, and the request goes on.
                Err(CompactFailure::Failed(msg)) => self.emit(Event::Warning {
                    message: format!("compaction skipped: {msg}"),
                }),
            },
            None => {}
        }
        Flow::Go
    }

    /// The overflow path: replace what the model sees, then retry only if the replace
    /// generation strictly advanced, at most once in a row.
    async fn on_overflow(&mut self, e: &ProviderError, snapshot: u64) -> Flow {
        if let Some(limit) = crate::engine::provider::error::overflow_limit(&e.message) {
            self.learn_window(limit);
        }
        if self.counters.overflow_retries() >= OVERFLOW_RETRY_CAP {
            return Flow::Stop(self.fail(&e.clone().into()));
        }
        if self.handoff.background().is_some() {
            // A document is being written (or reviewed) on a shorter prefix: wait for it.
            if !handoff::wait_for_document(self).await {
                return Flow::Stop(ExitReason::Interrupted);
            }
        } else if self.run.handoff.context.hands_off() {
            if let HandoffOutcome::Stopped(r) = self
                .handoff(Trigger::Overflow {
                    reason: format!("context window exceeded: {}", e.message),
                    error: e.clone(),
                })
                .await
            {
                return Flow::Stop(r);
            }
        } else {
            match self.compact(CompactionTrigger::Overflow).await {
                Ok(_) => {}
                Err(CompactFailure::Aborted) => return Flow::Stop(ExitReason::Interrupted),
                Err(CompactFailure::Failed(msg)) => self.emit(Event::Warning {
                    message: format!("compaction failed: {msg}"),
                }),
            }
        }
        if may_retry_overflow(
            snapshot,
            self.ledger.replace.get(),
            self.counters.overflow_retries(),
            OVERFLOW_RETRY_CAP,
        ) {
            self.counters.retry_overflow();
            Flow::Go
        } else {
            Flow::Stop(self.fail(&e.clone().into()))
        }
    }

    /// A window stated by an overflow message becomes the model's window from now on (unless
    /// `--window` pinned one: then it is only recorded for later runs).
    pub(super) fn learn_window(&mut self, limit: u64) {
        let (data_dir, configured) = (&self.run.places.data_dir, self.run.provider.max_tokens);
        match self.settings.learn_window(limit, data_dir, configured) {
            None => {}
            Some(WindowLesson::Pinned { warning }) => {
                self.emit(Event::Warning { message: warning })
            }
            Some(WindowLesson::Learned { unrecorded, notice }) => {
                if let Some(message) = unrecorded {
                    self.emit(Event::Warning { message });
                }
                self.ledger.record(|rec| rec.figures.window = limit);
                self.emit_logged(Event::WindowLearned {
                    model: self.settings.model.clone(),
                    thresholds: self.settings.thresholds,
                });
                self.emit(Event::Notice { message: notice });
            }
        }
    }

    /// The iteration budget is spent: one last request with tool use off asks for a summary.
    async fn final_summary(&mut self, n: u32, max: u32) -> ExitReason {
        let ask = format!(
            "You have used the iteration budget of this turn ({n}/{max}). Do not call tools. \
             Summarise where the work stands: what is done, what is left, and what you would do next."
        );
        // The same checks as every main-thread request: a handoff may come first, and
        // then the successor answers the question.
        if let Flow::Stop(r) = self.before_request().await {
            return r;
        }
        self.push_message(Message::user(ask.clone()));
        loop {
            let snapshot = self.ledger.replace.get();
            let req = self.build_request(ToolChoice::None);
            let outcome = self.stream(req, Purpose::Main).await;
            let resp = match self.finished(outcome, snapshot).await {
                Ok(resp) => resp,
                Err(Unfinished::Again) => {
                    // A successor gets the question after its briefing; a compacted history kept
                    // it as its last user message.
                    let asked = self
                        .s
                        .messages
                        .last()
                        .is_some_and(|m| m.text().contains(&ask));
                    if !asked {
                        self.push_message(Message::user(ask.clone()));
                    }
                    continue;
                }
                Err(Unfinished::Stop(r)) => return r,
                // The error is reported; the turn still ends as the budget says.
                Err(Unfinished::Failed(_)) => return ExitReason::MaxIterations { n, max },
            };
            // A tool call emitted anyway is dropped: only the text is kept.
            let text = resp.text();
            if !text.is_empty() {
                self.push_message(Message::assistant(text.clone()));
            }
            self.on_response(&resp);
            self.emit_logged(Event::AssistantDone {
                turn: self.turn_id(),
                text,
                interrupted: false,
            });
            return ExitReason::MaxIterations { n, max };
        }
    }
}
