//! `/rewind`: the step's user messages, and going back to before one of them.
//!
//! - Every user message is recorded in the step's ledger (`StepRecord::prompts`) with its time,
//!   generation, session, the step's turn it started and its place in the session's history.
//! - The picker's list (`Op::RewindPoints`) is that record, newest first, with the files each
//!   turn changed (from the undo stack).
//! - **Code**: the turns from the chosen one on are undone, newest first, as `/undo` would. Files
//!   changed since those turns (or by someone else while they ran) are looked for first, across
//!   all of them: with `OnConflict::Stop` any such file stops the rewind before anything changes
//!   (`Event::RewindConflict`), and the front end asks; the answer comes back as the same rewind
//!   with `KeepUsers` (they are left as they are and named) or `Overwrite` (their content is kept
//!   in a backup checkpoint first). The undone turns go to the redo side: `/redo` brings them
//!   back one by one.
//! - The picker marks a message whose turn is undone now (its files are on the redo side).
//! - **Conversation, the current generation**: the session's history is cut to before the
//!   message, and a `replaced` line in the transcript says so (the lines before it stay: the
//!   transcript keeps what was there); the message goes back to the front end's input box.
//! - **Conversation, an earlier generation**: that history was handed off and is gone from the
//!   model's view, so the engine starts a successor briefed as that generation was (the first
//!   message of its transcript: the briefing with the handoff document that began it, as it was
//!   read then); for generation 1, which had none, a fresh session. The message goes back to the
//!   input box; the current session is retired as by a handoff.
//! - Every rewind is a line of `StepRecord::rewinds`.

use std::path::Path;

use super::Engine;
use super::conversation::Request;
use crate::engine::checkpoint::{OnConflict, Restore};
use crate::engine::fsutil::now_unix;
use crate::engine::ledger::{
    GenerationStart, PromptRecord, RewindMode, RewindPoint, RewindRecord, TranscriptLine,
    now_stamp, push_prompt,
};
use crate::engine::protocol::Event;
use crate::engine::types::{Message, Role};

impl Engine {
    /// Record a message the user sent, before it joins the history.
    pub(crate) fn note_prompt(&mut self, text: &str) {
        let Some(rec) = self.ledger.rec() else { return };
        let prompt = PromptRecord {
            time: now_stamp(),
            at: now_unix().0,
            generation: self.s.generation,
            session_id: self.s.id.clone(),
            turn: u64::from(rec.num_turns) + 1,
            index: self.s.messages.len(),
            text: text.to_string(),
        };
        self.ledger.record(|r| push_prompt(&mut r.prompts, prompt));
    }

    /// The picker's list: the step's user messages, newest first.
    pub(crate) fn rewind_points(&self) -> Event {
        let Some(rec) = self.ledger.rec() else {
            return Event::RewindPoints { points: Vec::new() };
        };
        let points = rec
            .prompts
            .iter()
            .rev()
            .map(|p| RewindPoint {
                turn: p.turn,
                generation: p.generation,
                at: p.at,
                text: p.text.clone(),
                files: rec
                    .undo
                    .undoable()
                    .chain(rec.undo.redoable())
                    .filter(|t| t.turn == p.turn)
                    .flat_map(|t| t.files.iter().map(|f| f.path.to_string()))
                    .collect(),
                current: p.session_id == self.s.id,
                undone: rec.undo.redoable().any(|t| t.turn == p.turn)
                    && !rec.undo.undoable().any(|t| t.turn == p.turn),
            })
            .collect();
        Event::RewindPoints { points }
    }

    /// `Op::Rewind`: back to before the message of step turn `turn`.
    pub(crate) async fn rewind(&mut self, turn: u64, mode: RewindMode, on_conflict: OnConflict) {
        let prompt = self
            .ledger
            .rec()
            .and_then(|r| r.prompts.iter().find(|p| p.turn == turn).cloned());
        let Some(prompt) = prompt else {
            return self.emit(Event::Warning {
                message: format!("/rewind: no message of turn {turn} in this step"),
            });
        };
        let from_generation = self.s.generation;
        if mode.code() && on_conflict == OnConflict::Stop {
            let conflicts = self.rewind_conflicts(turn).await;
            if !conflicts.is_empty() {
                return self.emit_logged(Event::RewindConflict {
                    turn,
                    mode,
                    files: conflicts,
                });
            }
        }
        let (mut files, mut kept) = (Vec::new(), Vec::new());
        if mode.code() {
            self.rewind_code(turn, on_conflict, &mut files, &mut kept)
                .await;
        }
        let mut generation = None;
        let mut text = None;
        if mode.conversation() {
            if prompt.session_id == self.s.id {
                if !self.cut_history(&prompt) {
                    self.emit(Event::Warning {
                        message: "/rewind: the history was compacted since that message; the \
                                  conversation stays as it is"
                            .into(),
                    });
                } else {
                    text = Some(prompt.text.clone());
                }
            } else {
                generation = Some(self.successor_from(prompt.generation));
                text = Some(prompt.text.clone());
            }
        }
        let record = RewindRecord {
            time: now_stamp(),
            turn,
            to_generation: prompt.generation,
            from_generation,
            conversation: text.is_some(),
            files: files.clone(),
        };
        self.ledger.record(|r| r.rewinds.push(record));
        self.save_manifest();
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

    /// The files undoing every turn from `turn` on would write over (changed since, or by
    /// someone else while a turn ran). A store that cannot tell is said, and counts as none:
    /// the walk itself then stops at the first turn it cannot undo.
    async fn rewind_conflicts(&mut self, turn: u64) -> Vec<String> {
        let turns: Vec<_> = self
            .ledger
            .rec()
            .map(|r| {
                r.undo
                    .undoable()
                    .take_while(|t| t.turn >= turn)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        if turns.is_empty() {
            return Vec::new();
        }
        let Some(store) = self.checkpoint_store() else {
            return Vec::new();
        };
        match store.in_background(move |s| s.undo_conflicts(&turns)).await {
            Ok(found) => found.into_iter().map(|c| c.path.to_string()).collect(),
            Err(e) => {
                self.emit(Event::Warning {
                    message: format!("/rewind: the files cannot be compared: {e}"),
                });
                Vec::new()
            }
        }
    }

    /// Undo, newest first, every turn from `turn` on; files changed since are `on_conflict`'s
    /// (a `Stop` that meets one, found after the check, keeps them).
    async fn rewind_code(
        &mut self,
        turn: u64,
        on_conflict: OnConflict,
        files: &mut Vec<String>,
        kept: &mut Vec<String>,
    ) {
        let on_conflict = match on_conflict {
            OnConflict::Stop => OnConflict::KeepUsers,
            other => other,
        };
        loop {
            let next = self
                .ledger
                .rec()
                .and_then(|r| r.undo.next_undo().cloned())
                .filter(|t| t.turn >= turn);
            let Some(t) = next else { break };
            let Some(store) = self.checkpoint_store() else {
                break;
            };
            let undo = t.clone();
            match store
                .in_background(move |s| s.undo(&undo, on_conflict))
                .await
            {
                Ok(Restore::Done(done)) => {
                    files.extend(done.changed.iter().map(|f| f.path.to_string()));
                    kept.extend(done.kept.iter().map(|c| c.path.to_string()));
                    if let Some(b) = done.backup {
                        self.note_checkpoint(
                            t.turn,
                            crate::engine::ledger::CheckpointKind::Backup,
                            Some(b),
                            &[],
                            &std::collections::BTreeSet::new(),
                        );
                    }
                    self.ledger.record(|r| {
                        let _ = r.undo.commit_undo(&t);
                    });
                }
                // KeepUsers never stops; a store that fails ends the walk.
                Ok(Restore::Stopped { .. }) => break,
                Err(e) => {
                    self.emit(Event::Warning {
                        message: format!("/rewind: turn {} not undone: {e}", t.turn),
                    });
                    break;
                }
            }
        }
        files.sort();
        files.dedup();
        kept.sort();
        kept.dedup();
    }

    /// Cut the current session's history to before `prompt`'s message. False when the history no
    /// longer holds it where it was (a compaction replaced it).
    fn cut_history(&mut self, prompt: &PromptRecord) -> bool {
        let holds = self.s.messages.get(prompt.index).is_some_and(|m| {
            m.role == Role::User && m.text().starts_with(first_line(&prompt.text))
        });
        if !holds {
            return false;
        }
        self.s.messages.truncate(prompt.index);
        self.s.transcript.append(&TranscriptLine::Replaced {
            messages: self.s.messages.clone(),
        });
        self.report_transcript_error();
        self.s.ctx = 0;
        self.s.appended_chars = self.s.messages.iter().map(Message::char_len).sum();
        self.s.near_fired = false;
        self.s.request = Request::default();
        true
    }

    /// Retire the current session for one briefed as `generation` was: the first message of
    /// its transcript, the briefing with the handoff document as that generation read it (the
    /// live document file has been overwritten by later handoffs since). Generation 1, one
    /// started by `/new`, or a transcript that cannot be read: a fresh session. Returns the new
    /// session's generation.
    fn successor_from(&mut self, generation: u32) -> u32 {
        let briefing = self
            .ledger
            .rec()
            .and_then(|r| r.per_generation.iter().find(|g| g.generation == generation))
            .filter(|g| g.start() == GenerationStart::Handoff)
            .map(|g| self.ledger.run_dir.transcript_path(&g.session_id))
            .and_then(|path| first_message(&path));
        let old = self.s.id.clone();
        let next = self.s.generation + 1;
        self.ledger.record(|r| r.retired.push(old.clone()));
        self.s.request = Request::default();
        let parent = briefing.as_ref().map(|_| old);
        self.start_session(parent, next, briefing.into_iter().collect());
        self.commit_replacement();
        next
    }
}

/// The first message of a transcript (a successor's briefing).
fn first_message(path: &Path) -> Option<Message> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .filter_map(|l| serde_json::from_str::<TranscriptLine>(l).ok())
        .find_map(|l| match l {
            TranscriptLine::Message { message } if message.role == Role::User => Some(message),
            _ => None,
        })
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}
