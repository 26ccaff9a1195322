//! The loop of one turn: model requests and tool executions until the model ends it (a reply
//! without tool calls that the `Stop` hooks let end), the user stops it, a plan is presented or
//! the iteration budget is spent (one last request without tools then asks for a summary). It
//! goes on across automatic handoffs: the successor picks up the turn, as a plan carried out in
//! a fresh session goes on in the successor briefed with it. The context's pressure is checked
//! before every request and after an overflow (`pressure.rs`).

use super::Engine;
use super::conversation::UserRequest;
use super::handoff::{self, Flow};
use super::model_request::{Outcome, Purpose};
use super::model_settings::WindowLesson;
use super::planning::Presented;
use super::user_hooks::{self, StopGate};
use crate::engine::error::Error;
use crate::engine::ledger::{
    Cut, FrozenFile, FrozenHandoff, HandoffCause, HandoffReason, now_stamp,
};
use crate::engine::protocol::{DocumentSource, Event, ExitReason, TurnId, TurnKind};
use crate::engine::provider::ErrorKind;
use crate::engine::types::{Block, Message, ModelResponse, Role, ToolChoice};

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
    /// The loop of one turn. Continues across automatic handoffs (the successor picks up the turn).
    pub(in crate::engine::session) async fn turn_loop(&mut self) -> ExitReason {
        let max = self.run.tools.max_iterations;
        let mut iterations: u32 = 0;
        self.conversation.spiller.start_turn();
        loop {
            if self.shutting_down() {
                return ExitReason::Interrupted;
            }
            if iterations >= max {
                return self.final_summary(iterations, max).await;
            }
            match handoff::before_request(self).await {
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
            // Jobs that ended since the last request are told in this one, unasked.
            if let Some(notice) = self.run.jobs.take_notice() {
                self.push_message(Message::user(notice));
            }
            let req = self.build_request(ToolChoice::Auto);
            // A call of a tool this request did not offer is answered with the ones it did.
            let offered: Vec<String> = req.tools.iter().map(|t| t.name.clone()).collect();
            let snapshot = self.ledger.replace.get();
            // The history this request sends: a background handoff started by its response
            // writes on exactly this prefix (its cache is warm).
            let cut = Cut::at_end(&self.conversation.messages);
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
            for e in search_events(self.turn_id(), &msg) {
                self.emit(e);
            }
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
                // The partial text is kept, marked interrupted. Tool calls that had started are
                // dropped with it, so no `tool_use` is left without its `tool_result`.
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
                Err(Unfinished::Stop(ExitReason::Interrupted))
            }
            Outcome::Failed { error, partial } => {
                if error.kind == ErrorKind::ContextWindowExceeded && partial.is_empty() {
                    return Err(match handoff::on_overflow(self, &error, snapshot).await {
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

    /// The iteration budget is spent: one last request with tool use off asks for a summary.
    async fn final_summary(&mut self, n: u32, max: u32) -> ExitReason {
        let ask = format!(
            "You have used the iteration budget of this turn ({n}/{max}). Do not call tools. \
             Summarise where the work stands: what is done, what is left, and what you would do next."
        );
        // The same checks as every main-thread request: a handoff may come first, and
        // then the successor answers the question.
        if let Flow::Stop(r) = handoff::before_request(self).await {
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
                        .conversation
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

    /// A window stated by an overflow message becomes the model's window from now on (unless
    /// `--window` pinned one: then it is only recorded for later runs).
    pub(in crate::engine::session) fn learn_window(&mut self, limit: u64) {
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
    /// A successor briefed with the plan file as its document, recorded in the ledger like a
    /// handoff (the generation turns over, the old session is retired), then the turn goes on in
    /// the successor.
    pub(in crate::engine::session) async fn implement_fresh(
        &mut self,
        id: TurnId,
        presented: Presented,
    ) {
        let turn = self.begin_turn(id, TurnKind::Message);
        let done = self.ledger.rec().map_or(0, |r| r.handoffs.len());
        if done >= self.run.handoff.max_generations as usize {
            let reason = self.fail(&Error::HandoffBreaker {
                max: self.run.handoff.max_generations,
                at: self.settings.thresholds.at,
            });
            self.close_turn(turn, reason);
            return;
        }
        let frozen = FrozenHandoff {
            file: FrozenFile::OnDisk(presented.path().to_path_buf()),
            // As the model wrote it: the record says whether the user edited the file.
            markdown: presented.written().to_string(),
            degraded: false,
            reason: HandoffReason::clean(HandoffCause::Plan),
            ctx_at_cut: self.ctx_estimate(),
            time: now_stamp(),
            retired_session: self.conversation.id.clone(),
            generation: self.conversation.generation + 1,
            request: Vec::new(),
            pid: std::process::id(),
            unsaved: None,
            source: DocumentSource::Written,
            reduced: false,
            cut: None,
            cause: HandoffCause::Plan,
            focus: None,
        };
        // The plan turn is over: the successor gets the plan alone, no request beside it.
        self.conversation.request = UserRequest::default();
        // `HandoffFrozen` hooks get the plan's path; the successor reads what they leave there.
        handoff::turn_over_plan(self, frozen).await;
        self.conversation.request = UserRequest::opened(format!(
            "Implement the plan in {}",
            presented.path().display()
        ));
        let reason = self.turn_loop().await;
        self.finish_turn(turn, reason).await;
    }
}

/// The provider's web searches of a reply, as tool calls and results for the front ends (the
/// provider ran them; the transcript has them in the reply).
fn search_events(turn: Option<TurnId>, msg: &Message) -> Vec<Event> {
    use crate::engine::tools::web_search;
    web_search::searches(msg)
        .into_iter()
        .flat_map(|s| {
            [
                Event::ToolCall {
                    turn,
                    id: s.id.clone(),
                    name: web_search::NAME.into(),
                    input: s.input,
                    summary: s.summary,
                    changes_files: false,
                },
                Event::ToolResult {
                    turn,
                    id: s.id,
                    name: web_search::NAME.into(),
                    output: s.found,
                    is_error: s.failed,
                    spilled: None,
                    diff: None,
                    exit: None,
                    sandbox: None,
                },
            ]
        })
        .collect()
}
