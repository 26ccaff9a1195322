//! A turn's life: it begins (the step and a session start with the first), its message goes in
//! (a 10 MB paste as a preview and a file, `@path` mentions attached, the user's hooks first), the
//! loop runs it (`turn_loop.rs`), and it ends — its last checkpoint taken, counted in the ledger,
//! `TurnEnd` said. Also the checkpoints around each of its calls that may change the workspace,
//! an error that ends it, a `/handoff` turn declined, and `/rewind`: back to before a turn's
//! message, its code and its conversation.

use super::Engine;
use super::active_turn::ActiveTurn;
use super::conversation::UserRequest;
use super::language_servers::CallCheckpoints;
use super::masked_history::HistoryAt;
use super::step_ledger::PromptAt;
use super::tools_exec::tool_call_event;
use super::user_hooks;
use crate::engine::checkpoint::OnConflict;
use crate::engine::error::Error;
use crate::engine::ledger::{RewindMode, RewindRecord, now_stamp};
use crate::engine::protocol::{
    Event, ExitReason, HandoffPhase, HandoffRefusal, Origin, TurnId, TurnKind,
};
use crate::engine::tools::names;
use crate::engine::types::{Block, Message};

/// Where a message's text comes from, and whether it is the user's prompt (the
/// `UserPromptSubmit` hooks see it, `/rewind` offers it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::engine::session) enum Sent {
    /// What the user typed (or `-p`).
    Typed,
    /// The expansion of the custom command the user typed (`/review 42`).
    Command { typed: String },
    /// The engine's message for a choice the user made (implement the presented plan here): a
    /// prompt of theirs, in the engine's words.
    Chosen,
    /// The engine's own (the demo's first message, `/init`'s prompt).
    Engine,
}

impl Sent {
    /// Who wrote it, as the `UserMessage` event says.
    fn origin(&self) -> Origin {
        match self {
            Sent::Typed | Sent::Command { .. } => Origin::User,
            Sent::Chosen | Sent::Engine => Origin::Engine,
        }
    }

    /// Whether it is the user's prompt.
    fn is_prompt(&self) -> bool {
        !matches!(self, Sent::Engine)
    }

    /// The command the user typed, when the text is its expansion.
    fn typed(&self) -> Option<&str> {
        match self {
            Sent::Command { typed } => Some(typed),
            _ => None,
        }
    }
}

impl Engine {
    /// The id of the turn running now (None when idle): the turn its events belong to.
    pub(in crate::engine::session) fn turn_id(&self) -> Option<TurnId> {
        self.turn.map(|t| t.id)
    }

    /// The history the current session's requests send, as masking keys it: the session and its
    /// replace generation.
    pub(in crate::engine::session) fn history_at(&self) -> HistoryAt {
        HistoryAt {
            session: self.conversation.id.clone(),
            replace: self.ledger.replace.get(),
        }
    }

    /// Begin `turn`: it becomes the one `Op::Abort` may name.
    pub(in crate::engine::session) fn begin_turn(
        &mut self,
        id: TurnId,
        kind: TurnKind,
    ) -> ActiveTurn {
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
    pub(in crate::engine::session) fn end_turn(&mut self, turn: ActiveTurn, reason: ExitReason) {
        tracing::info!(
            turn = turn.id.0,
            kind = ?turn.kind,
            ms = turn.started.elapsed().as_millis(),
            session = %self.conversation.id,
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
    pub(in crate::engine::session) fn turn_ends_at_once(
        &mut self,
        id: TurnId,
        kind: TurnKind,
        ev: Event,
    ) {
        let turn = self.begin_turn(id, kind);
        self.emit(ev);
        self.close_turn(turn, ExitReason::Unchanged);
    }

    /// `turn` is over, for `reason`: no turn runs any more, and `TurnEnd` says why.
    pub(in crate::engine::session) fn close_turn(&mut self, turn: ActiveTurn, reason: ExitReason) {
        self.turn = None;
        self.end_turn(turn, reason);
    }

    /// Start the step (`task` names it if this is its first turn), a session if none runs, and
    /// the turn.
    pub(in crate::engine::session) fn open_turn(
        &mut self,
        id: TurnId,
        kind: TurnKind,
        task: &str,
    ) -> ActiveTurn {
        if !self.ledger.has_step() {
            self.start_step(task);
        }
        if self.conversation.is_none() {
            let generation = self.conversation.generation.max(1);
            self.start_session(None, generation, Vec::new(), true);
        }
        // After the session it opens: a run's first event stays `session_started`.
        // A background handoff the user cancelled in an earlier turn may start again from this
        // turn on: the cancellation belongs to the turn.
        self.begin_turn(id, kind)
    }

    /// The message of the open `turn`, and the agent loop on it to the turn's end.
    pub(in crate::engine::session) async fn send_message(
        &mut self,
        turn: ActiveTurn,
        sent: Sent,
        text: String,
    ) {
        let id = turn.id;
        let origin = sent.origin();
        // A 10 MB paste reaches the model as a preview and a file to read.
        let text = if origin == Origin::User {
            self.input_room().admit(text)
        } else {
            text
        };
        let prompt = sent.is_prompt().then_some(text.as_str());
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
        // What the user's own `!` commands printed meanwhile goes with this message.
        for note in self.conversation.take_shell_notes() {
            message.content.push(Block::text(note));
        }
        if let Some(context) = hook_context {
            message.content.push(Block::text(context));
        }
        if sent.is_prompt() {
            let at = PromptAt {
                generation: self.conversation.generation,
                session_id: &self.conversation.id,
                index: self.conversation.messages.len(),
                sent_as: id.0,
            };
            self.ledger.note_prompt(at, &text, sent.typed());
        }
        // The request in flight is what the user typed (a successor gets it verbatim).
        self.conversation.request = UserRequest::opened(text.clone());
        self.push_message(message);
        self.ledger.save();
        self.emit_usage_estimate();
        let reason = self.turn_loop().await;
        self.finish_turn(turn, reason).await;
    }

    /// `Op::Shell`: the user's `!command`, a turn with one `bash` call and no model request.
    /// It runs in the sandbox the model's calls get, between two checkpoints (so `/undo` puts
    /// back what it changed), never asked for (the user typed it); an abort stops it with its
    /// output so far. The output (spilled past the budget, as a tool's) goes with the next
    /// message.
    pub(in crate::engine::session) async fn shell_turn(&mut self, id: TurnId, command: String) {
        let command = crate::engine::secrets::redact(&command).into_owned();
        let turn = self.open_turn(id, TurnKind::Message, &format!("!{command}"));
        let call = format!("shell-{}", id.0);
        let input = serde_json::json!({ "command": command });
        let announce = tool_call_event(Some(id), &call, names::BASH, &input, false);
        self.emit_logged(announce);
        let ctx = self.tool_ctx(false);
        self.checkpoint_before_call(names::BASH).await;
        let ran = self.run_bash(&call, &input, &ctx).await;
        self.checkpoint_after_call().await;
        let reason = match ran {
            Some(out) => {
                let out = crate::engine::tools::for_model(
                    names::BASH,
                    out,
                    &ctx,
                    &mut self.conversation.spiller,
                );
                let stopped = out.exit.as_ref().is_some_and(|exit| exit.interrupted());
                let ending = if stopped {
                    "stopped by them"
                } else {
                    "it ended"
                };
                self.conversation.note_shell(&command, &out.content, ending);
                self.deliver(&call, names::BASH, out);
                if stopped {
                    ExitReason::Interrupted
                } else {
                    ExitReason::Completed
                }
            }
            None => ExitReason::Interrupted,
        };
        // No request ran: the request in flight stays as it was, and no model turn is counted.
        self.checkpoints
            .after_turn(&mut self.ledger, self.conversation.generation)
            .await;
        self.ledger.save();
        self.close_turn(turn, reason);
    }

    /// The end of a turn that ran: the turn's last checkpoint, its count in the ledger, then
    /// `TurnEnd`. A completed turn closes the request in flight.
    pub(in crate::engine::session) async fn finish_turn(
        &mut self,
        turn: ActiveTurn,
        reason: ExitReason,
    ) {
        self.checkpoints
            .after_turn(&mut self.ledger, self.conversation.generation)
            .await;
        if reason == ExitReason::Completed {
            self.conversation.request.open = false;
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
        self.close_turn(turn, reason);
    }

    /// Decline a `/handoff` turn: say why, and end it.
    pub(in crate::engine::session) fn refuse_handoff(
        &mut self,
        turn: TurnId,
        reason: HandoffRefusal,
    ) {
        self.emit(Event::Handoff(HandoffPhase::Refused {
            reason,
            message: reason.to_string(),
        }));
        self.end_turn(
            ActiveTurn::new(turn, TurnKind::Handoff),
            ExitReason::Unchanged,
        );
    }

    /// Before a call of `tool` in the running turn: a checkpoint when it may change the
    /// workspace (the turn's undo entry opens with the first).
    pub(in crate::engine::session) async fn checkpoint_before_call(&mut self, tool: &str) {
        let (generation, turn) = (self.conversation.generation, self.turn_id());
        self.checkpoints
            .before_call(&mut self.ledger, generation, turn, tool)
            .await;
    }

    /// After a call that took a checkpoint before it: its end state; the call's two checkpoints
    /// (with their store) when both were taken.
    pub(in crate::engine::session) async fn checkpoint_after_call(
        &mut self,
    ) -> Option<CallCheckpoints> {
        self.checkpoints.after_call(&mut self.ledger).await
    }

    /// `Op::Rewind`: back to before the message of step turn `turn` — the code (every turn from
    /// it on undone), the conversation, or both. The conversation of the current generation is
    /// cut to before the message (a `replaced` line in the transcript says so); an earlier
    /// generation's was handed off, so a successor starts briefed as that generation was (the
    /// first message of its transcript, the handoff document as it was read then; generation 1,
    /// one started by `/new`, or a transcript that cannot be read: a fresh session), the current
    /// session retired as by a handoff. The message goes back to the front end's input box;
    /// every rewind is a line of the step's ledger.
    pub(in crate::engine::session) async fn rewind(
        &mut self,
        turn: u64,
        mode: RewindMode,
        on_conflict: OnConflict,
    ) {
        let Some(prompt) = self.ledger.prompt_of(turn) else {
            return self.emit(Event::Warning {
                message: format!("/rewind: no message of turn {turn} in this step"),
            });
        };
        let from_generation = self.conversation.generation;
        if mode.code() && on_conflict == OnConflict::Stop {
            let files = self.checkpoints.rewind_conflicts(&self.ledger, turn).await;
            if !files.is_empty() {
                return self.emit_logged(Event::RewindConflict { turn, mode, files });
            }
        }
        let (files, kept) = if mode.code() {
            let code = self
                .checkpoints
                .rewind(&mut self.ledger, from_generation, turn, on_conflict)
                .await;
            let session = self.conversation.id.clone();
            self.conversation.call_counts.rewound(&session, &code.turns);
            (code.files, code.kept)
        } else {
            (Vec::new(), Vec::new())
        };
        let (mut generation, mut text) = (None, None);
        if mode.conversation() && prompt.session_id == self.conversation.id {
            if self.conversation.cut_before(prompt.index, &prompt.text) {
                if let Some(warning) = self.conversation.transcript_warning() {
                    self.emit(warning);
                }
                text = Some(prompt.shown().to_string());
            } else {
                self.emit(Event::Warning {
                    message: "/rewind: the history was compacted since that message; the \
                              conversation stays as it is"
                        .into(),
                });
            }
        } else if mode.conversation() {
            // The briefing of that generation, as it read its document then.
            let briefing = self.ledger.briefing_of(prompt.generation);
            let old = self.conversation.id.clone();
            let next = self.conversation.generation + 1;
            self.ledger.record(|r| r.retired.push(old.clone()));
            self.conversation.request = UserRequest::default();
            let parent = briefing.as_ref().map(|_| old);
            self.start_session(parent, next, briefing.into_iter().collect(), false);
            self.ledger.commit_replacement();
            generation = Some(next);
            text = Some(prompt.shown().to_string());
        }
        let record = RewindRecord {
            time: now_stamp(),
            turn,
            to_generation: prompt.generation,
            from_generation,
            conversation: text.is_some(),
            files: files.clone(),
        };
        self.ledger.record(|r| r.history.rewinds.push(record));
        self.ledger.save();
        self.emit_logged(Event::Rewound {
            turn,
            mode,
            files,
            kept,
            text,
            generation,
        });
        self.emit_usage_estimate();
    }

    /// Report an error (in the ledger and as an event) and end the turn with its kind.
    pub(in crate::engine::session) fn fail(&mut self, e: &Error) -> ExitReason {
        self.ledger.record(|rec| rec.errors.push(e.to_string()));
        self.emit_logged(Event::Error {
            kind: e.kind(),
            message: e.message(),
        });
        ExitReason::Error(e.kind())
    }
}
