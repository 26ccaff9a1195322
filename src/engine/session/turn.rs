//! One user turn: a loop of model requests and tool executions, with the handoff and
//! compaction checks before every request and the overflow path after a context-window error.

use super::ActiveTurn;
use super::background::Settle;
use super::conversation::Request;
use super::handoff_run::{CompactFailure, HandoffOutcome, Trigger};
use super::hook_ops::StopGate;
use super::request::{Outcome, Purpose};
use super::{Engine, OVERFLOW_RETRY_CAP};
use crate::engine::context::strategy::{Pressure, StrategyKind};
use crate::engine::error::Error;
use crate::engine::learned_windows::LearnedWindows;
use crate::engine::ledger::Cut;
use crate::engine::protocol::{
    CompactionTrigger, Event, ExitReason, HandoffPhase, Origin, TurnId, TurnKind,
};
use crate::engine::provider::{ErrorKind, ProviderError};
use crate::engine::replace::may_retry_overflow;
use crate::engine::types::{Block, Message, ModelResponse, Role, ToolChoice};

/// The task an `/init` turn names its step after.
const INIT_TASK: &str = "Draft AGENTS.md for the repository (/init)";
const INIT_PROMPT: &str = include_str!("../../../assets/init_prompt.md");

/// The `/init` prompt for `path`.
fn init_prompt(path: &std::path::Path, exists: bool) -> String {
    let existing = if exists {
        " An AGENTS.md exists already and the user agreed to replace it: read it first and keep \
         what is still true."
    } else {
        ""
    };
    INIT_PROMPT
        .replace("{path}", &path.display().to_string())
        .replace("{existing}", existing)
}

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
    pub(crate) async fn user_turn(&mut self, id: TurnId, text: String) {
        // A key the user pastes never enters the conversation: not the model's request, not the
        // transcript, the ledger or a handoff document.
        let text = crate::engine::secrets::redact(&text).into_owned();
        self.message_turn(id, TurnKind::Message, Origin::User, &text.clone(), text)
            .await;
    }

    /// `/init`: draft `<workspace>/AGENTS.md` through the model, unless it exists and the user
    /// has not agreed to replace it (then the front end is told, and asks).
    pub(crate) async fn init_turn(&mut self, id: TurnId, overwrite: bool) {
        let path = self.run.places.workspace.join("AGENTS.md");
        let exists = std::fs::symlink_metadata(&path).is_ok();
        if exists && !overwrite {
            self.turn_ends_at_once(id, TurnKind::Init, Event::InitExists { turn: id, path });
            return;
        }
        let prompt = init_prompt(&path, exists);
        self.message_turn(id, TurnKind::Init, Origin::Engine, INIT_TASK, prompt)
            .await;
    }

    /// A turn of the agent loop on one message: `task` names the step if this is its first.
    pub(crate) async fn message_turn(
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
    pub(crate) fn open_turn(&mut self, id: TurnId, kind: TurnKind, task: &str) -> ActiveTurn {
        self.ensure_step(task);
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
    pub(crate) async fn send_message(&mut self, turn: ActiveTurn, origin: Origin, text: String) {
        let id = turn.id;
        // A 10 MB paste reaches the model as a preview and a file to read.
        let text = if origin == Origin::User {
            self.admit_input(text)
        } else {
            text
        };
        let prompt = (origin == Origin::User).then_some(text.as_str());
        let Some(hook_context) = self.opening_hooks(turn, prompt).await else {
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
                    attached: a.attached(),
                    path: a.path,
                    summary: a.summary,
                });
                if let Some(block) = a.block {
                    // An attached file is masked as a tool's read of it would be.
                    let block = crate::engine::secrets::redact(&block).into_owned();
                    message.content.push(Block::text(block));
                }
                if let Some(image) = a.image {
                    message.content.push(Block::image(image));
                }
            }
        }
        if let Some(context) = hook_context {
            message.content.push(Block::text(context));
        }
        if origin == Origin::User {
            self.note_prompt(&text);
        }
        // The request in flight is what the user typed (a successor gets it verbatim).
        self.s.request = Request::opened(text.clone());
        self.push_message(message);
        self.save_manifest();
        self.emit_usage_estimate();
        let reason = self.turn_loop().await;
        self.checkpoint_after_turn().await;
        self.finish_turn(turn, reason);
    }

    pub(crate) fn finish_turn(&mut self, turn: ActiveTurn, reason: ExitReason) {
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
        self.save_manifest();
        self.turn = None;
        self.end_turn(turn, reason);
    }

    /// The loop of one turn. Continues across automatic handoffs (the successor picks up the turn).
    pub(crate) async fn turn_loop(&mut self) -> ExitReason {
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
            if !self.session_start_hooks().await {
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
            self.show_searches(&msg);
            self.emit_logged(Event::AssistantDone {
                turn: self.turn_id(),
                text,
                interrupted: false,
            });
            // A reply the provider paused (a long server-side search) goes on when sent back.
            if !tool_uses && resp.stop_reason.as_deref() == Some("pause_turn") {
                continue;
            }
            if !tool_uses {
                match self.stop_hooks().await {
                    StopGate::End => return ExitReason::Completed,
                    StopGate::Continue => continue,
                    StopGate::Aborted => return ExitReason::Interrupted,
                }
            }
            if !self.run_tools(&msg, &offered).await {
                return ExitReason::Interrupted;
            }
            // A presented plan ends the turn: the user decides what follows.
            if self.planning.take_ends_turn() {
                return ExitReason::Completed;
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
                self.keep_cut_off(partial, &error);
                Err(Unfinished::Failed(self.fail(&error.into())))
            }
        }
    }

    /// Report an error (in the ledger and as an event) and end the turn with its kind.
    pub(crate) fn fail(&mut self, e: &Error) -> ExitReason {
        self.ledger.record(|rec| rec.errors.push(e.to_string()));
        self.emit_logged(Event::Error {
            kind: e.kind(),
            message: e.message(),
        });
        ExitReason::Error(e.kind())
    }

    /// Keep the partial assistant text of an aborted stream, marked interrupted. Tool calls that had
    /// started are dropped with it, so no `tool_use` is left without its `tool_result`.
    pub(crate) fn keep_partial(&mut self, partial: String) {
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

    /// Keep the text a failed stream had already shown, marked as cut off by the error.
    fn keep_cut_off(&mut self, partial: String, e: &ProviderError) {
        if partial.trim().is_empty() {
            return;
        }
        let text = format!(
            "{partial}\n\n[the response was cut off: {}]",
            e.kind.as_str()
        );
        self.push_message(Message::assistant(text));
        self.emit_logged(Event::AssistantDone {
            turn: self.turn_id(),
            text: partial,
            interrupted: true,
        });
    }

    /// The provider's web searches of a reply, as tool calls and results for the front ends
    /// (the provider ran them; the transcript has them in the reply).
    fn show_searches(&self, msg: &Message) {
        use crate::engine::tools::web_search;
        for s in web_search::searches(msg) {
            self.emit(Event::ToolCall {
                turn: self.turn_id(),
                id: s.id.clone(),
                name: web_search::NAME.into(),
                input: s.input,
                summary: s.summary,
                changes_files: false,
            });
            self.emit(Event::ToolResult {
                turn: self.turn_id(),
                id: s.id,
                name: web_search::NAME.into(),
                output: s.found,
                is_error: s.failed,
                spilled: None,
                diff: None,
                exit: None,
                sandbox: None,
            });
        }
    }

    /// Account a successful response: ctx, cost, ledger; reset the overflow counter.
    pub(crate) fn on_response(&mut self, resp: &ModelResponse) {
        self.counters.overflow_retries = 0;
        self.counters.responses += 1;
        let ctx = resp.usage.context();
        self.s.ctx = ctx;
        self.s.appended_chars = 0;
        let searches = resp.web_search_requests;
        let cost = crate::engine::pricing::cost_usd(&self.settings.model, &resp.usage)
            + crate::engine::pricing::web_search_usd(searches);
        self.add_cost(cost);
        let window = self.settings.thresholds.window;
        self.ledger.record(|rec| {
            rec.figures.web_searches += searches;
            rec.figures.context = ctx;
            rec.figures.window = window;
            rec.current_generation().context = ctx;
        });
        self.save_manifest();
        self.emit_logged(Event::Usage {
            turn: self.turn_id(),
            context: ctx,
            thresholds: self.settings.thresholds,
            estimated: false,
            usage: resp.usage,
            cost_usd: cost,
            session_cost_usd: self.s.cost_usd,
            masked_tokens: self.s.mask.saved_tokens,
        });
    }

    /// The checks before every main-thread request: a background handoff's turnover (or the wait
    /// for it), near warning, handoff due, compaction pressure.
    async fn before_request(&mut self) -> Flow {
        if let Some(r) = self.background_boundary().await {
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
        if self.handoff.hook_due(self.counters.responses) {
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
        let acting = self
            .run
            .strategies
            .iter()
            .find(|s| s.due(&pressure))
            .map(|s| s.kind());
        match acting {
            // In background mode the writing starts beside the main thread; after the user
            // cancelled one in this turn, only the hard limit makes it block instead.
            Some(StrategyKind::Handoff)
                if self.consider_background(Cut::at_end(&self.s.messages))
                    || (self.background_cancelled() && self.ctx_estimate() < self.hard_limit()) => {
            }
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
        if self.counters.overflow_retries >= OVERFLOW_RETRY_CAP {
            return Flow::Stop(self.fail(&e.clone().into()));
        }
        if let Some(id) = self.handoff.background().map(|bg| bg.id) {
            // A document is being written (or reviewed) on a shorter prefix: wait for it.
            self.emit_logged(Event::Handoff(HandoffPhase::Waiting {
                handoff: id,
                context: self.ctx_estimate(),
                limit: self.hard_limit(),
            }));
            if self.wait_background().await != Settle::Ready {
                return Flow::Stop(ExitReason::Interrupted);
            }
            self.turnover_if_ready();
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
            self.counters.overflow_retries,
            OVERFLOW_RETRY_CAP,
        ) {
            self.counters.overflow_retries += 1;
            Flow::Go
        } else {
            Flow::Stop(self.fail(&e.clone().into()))
        }
    }

    fn learned_windows(&self) -> LearnedWindows {
        LearnedWindows::in_data_dir(&self.run.places.data_dir)
    }

    /// A window stated by an overflow message becomes the model's window from now on.
    pub(super) fn learn_window(&mut self, limit: u64) {
        if limit == self.settings.thresholds.window || limit < 1_000 {
            return;
        }
        if self.settings.window_source.is_pinned() {
            // `--window` beats a learned window: record it for later runs only.
            let _ = self.learned_windows().record(&self.settings.model, limit);
            self.emit(Event::Warning {
                message: format!(
                    "the provider says {} holds {limit} tokens, but --window {} is in force",
                    self.settings.model, self.settings.thresholds.window
                ),
            });
            return;
        }
        if let Err(err) = self.learned_windows().record(&self.settings.model, limit) {
            self.emit(Event::Warning {
                message: format!("could not record the learned window: {err}"),
            });
        }
        self.settings.thresholds = self.thresholds_for(limit);
        self.ledger.record(|rec| rec.figures.window = limit);
        self.emit_logged(Event::WindowLearned {
            model: self.settings.model.clone(),
            thresholds: self.settings.thresholds,
        });
        self.emit(Event::Notice {
            message: format!(
                "the provider says {} holds {} tokens: using that window from now on (recorded in {})",
                self.settings.model,
                limit,
                self.learned_windows().path().display()
            ),
        });
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
