//! From a document to a successor: freeze it under the step's
//! lock with a frozen record in the ledger first, wait for the review, read the file back under
//! the lock, brief the successor with the file verbatim and the request in flight, and only then
//! record the turnover. A review that does not end (quit, signal) commits nothing: the frozen
//! record reopens it at the next start (`reopen_frozen`).

use std::path::{Path, PathBuf};

use super::Engine;
use super::conversation::Request;
use crate::engine::fsutil::now_unix;
use crate::engine::handoff::store::foreign;
use crate::engine::handoff::store::{self, ReadBack};
use crate::engine::handoff::{Briefing, HandoffDoc};
use crate::engine::ledger::{
    Cut, FrozenFile, FrozenHandoff, HandoffCause, HandoffReason, HandoffRecord, TranscriptLine,
    now_stamp,
};
use crate::engine::protocol::{
    DocumentSource, Event, ExitReason, HandoffId, HandoffPhase, Op, Origin,
};

/// Which path produced a document, and whether it was written from a reduced history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Produced {
    pub source: DocumentSource,
    pub reduced: bool,
}

impl Produced {
    pub const WRITTEN: Produced = Produced {
        source: DocumentSource::Written,
        reduced: false,
    };
    pub const DEGRADED: Produced = Produced {
        source: DocumentSource::Degraded,
        reduced: false,
    };

    pub fn rescued(reduced: bool) -> Produced {
        Produced {
            source: DocumentSource::Rescued,
            reduced,
        }
    }
}

/// Why a handoff happens, as the ledger keeps it and the successor's briefing says it: its cause,
/// and the focus the user gave `/handoff` (none for the other causes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Why {
    pub cause: HandoffCause,
    pub focus: Option<String>,
}

impl Why {
    /// `cause`, with no focus of its own.
    pub fn cause(cause: HandoffCause) -> Why {
        Why { cause, focus: None }
    }
}

/// How a turnover ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Turnover {
    /// The successor runs.
    Done,
    /// The front end went away during the review: nothing was committed.
    NotCommitted,
}

/// How a review ended.
enum Review {
    Over,
    Shutdown,
}

/// The document the successor reads, and what the ledger learns from it.
struct Successor {
    /// Its text, verbatim (the file as on disk, or the in-memory rendering).
    text: String,
    /// The text parsed: validation and the ledger only.
    parsed: HandoffDoc,
    degraded: bool,
    /// The file differs from what was frozen.
    edited: bool,
}

impl Engine {
    /// Freeze, review, read back, start the successor, record it all.
    pub(crate) async fn turn_over(
        &mut self,
        id: HandoffId,
        doc: HandoffDoc,
        reason: HandoffReason,
        ctx_at_cut: u64,
        produced: Produced,
        why: Why,
    ) -> Turnover {
        let cause = why.cause;
        let frozen = self.frozen_record(&doc, reason, ctx_at_cut, produced, None, why);
        let frozen = self.write_frozen(frozen);
        if let Some(path) = frozen.file.path().map(std::path::Path::to_path_buf) {
            self.frozen_hooks(cause, &path, frozen.generation).await;
        }
        self.review_and_commit(id, frozen).await
    }

    /// The frozen record of `doc`, in the ledger at once: a process killed from here on leaves a
    /// review to reopen. `cut`: a background handoff's; `why`: why it happened.
    pub(super) fn frozen_record(
        &mut self,
        doc: &HandoffDoc,
        reason: HandoffReason,
        ctx_at_cut: u64,
        produced: Produced,
        cut: Option<Cut>,
        why: Why,
    ) -> FrozenHandoff {
        // Every document, written, rescued or degraded, carries the facts of the tool log.
        let doc = &self.with_touched(doc);
        let degraded = doc.degraded();
        let markdown = crate::engine::secrets::redact(&doc.to_markdown()).into_owned();
        if degraded {
            let why = match &reason.failure {
                Some(why) => why.clone(),
                None => reason.trigger.as_str().to_string(),
            };
            self.ledger
                .record(|rec| rec.errors.push(format!("handoff degraded ({why})")));
        }
        let frozen = FrozenHandoff {
            file: FrozenFile::Pending,
            markdown,
            degraded,
            reason,
            ctx_at_cut,
            time: now_stamp(),
            retired_session: self.s.id.clone(),
            generation: self.s.generation + 1,
            // Masked on disk like everything else; the live successor gets the messages as typed.
            request: self
                .s
                .request
                .in_flight()
                .iter()
                .map(|m| crate::engine::secrets::redact(m).into_owned())
                .collect(),
            pid: std::process::id(),
            unsaved: None,
            source: produced.source,
            reduced: produced.reduced,
            cut,
            cause: why.cause,
            focus: why
                .focus
                .map(|f| crate::engine::secrets::redact(&f).into_owned()),
        };
        // The record first: a process killed from here on leaves a review to reopen.
        self.set_frozen(Some(frozen.clone()), false);
        frozen
    }

    /// Write the frozen document to the workbench and note it in the ledger.
    pub(super) fn write_frozen(&mut self, mut frozen: FrozenHandoff) -> FrozenHandoff {
        let step = self.ledger.step_name();
        frozen.file = match self.freeze(&step, &frozen.markdown) {
            Some(path) => FrozenFile::OnDisk(path),
            None => FrozenFile::InMemory,
        };
        // Durable when a review may keep it waiting; otherwise the turnover's own durable save
        // follows within milliseconds.
        let durable = self.run.front_end.reviews() && frozen.file.path().is_some();
        self.set_frozen(Some(frozen.clone()), durable);
        frozen
    }

    /// The review (if the front end reviews and the file is on disk), then the turnover.
    pub(super) async fn review_and_commit(
        &mut self,
        id: HandoffId,
        frozen: FrozenHandoff,
    ) -> Turnover {
        let awaits_review = self.emit_frozen(id, &frozen, false);
        if awaits_review && matches!(self.wait_review(id).await, Review::Shutdown) {
            tracing::info!(
                handoff = id.0,
                "the review did not end: the turnover is not committed"
            );
            return Turnover::NotCommitted;
        }
        self.commit_turnover(id, frozen);
        Turnover::Done
    }

    /// Say the document is frozen (with the file as it is on disk). Returns whether the engine
    /// waits for its review.
    pub(super) fn emit_frozen(
        &mut self,
        id: HandoffId,
        frozen: &FrozenHandoff,
        background: bool,
    ) -> bool {
        let awaits_review = self.run.front_end.reviews() && frozen.file.path().is_some();
        let shown = match frozen.file.path().map(store::read_back) {
            Some(ReadBack::Text(t)) => t,
            _ => frozen.markdown.clone(),
        };
        self.emit_logged(Event::Handoff(HandoffPhase::Frozen {
            handoff: id,
            path: frozen.file.path().map(Path::to_path_buf),
            degraded: frozen.degraded,
            degraded_reason: frozen.degraded.then(|| frozen.reason.failure_or_trigger()),
            markdown: shown,
            awaits_review,
            background,
        }));
        awaits_review
    }

    /// Keep (or clear) the frozen record of the current step, on disk at once: `durable` with the
    /// fsyncs, else only safe against a kill (a power cut may lose it).
    pub(super) fn set_frozen(&mut self, frozen: Option<FrozenHandoff>, durable: bool) {
        self.ledger.record(|rec| rec.frozen = frozen);
        if durable {
            self.save_manifest();
        } else if let Err(e) = self.ledger.save_unsynced() {
            self.emit(Event::Warning {
                message: format!("could not write the ledger: {e}"),
            });
        }
    }

    /// Read the document back, start the successor with it, record the turnover.
    pub(super) fn commit_turnover(&mut self, id: HandoffId, frozen: FrozenHandoff) {
        let successor = self.read_back(&frozen);
        // A `Pinned` section the user typed during the review: pins from now on.
        self.adopt_typed_pins(&successor.text, &frozen.markdown);
        // What the step's document lock cost this handoff (freeze + read-back): `perf concurrency`
        // reads it from the log.
        tracing::info!(
            handoff = id.0,
            lock_us = self.handoff.take_lock().as_micros(),
            "handoff: document lock"
        );
        // The request as typed when this process cut it; as recorded when it reopens an earlier
        // process's review.
        let live = self.s.request.in_flight();
        let mut request = if live.is_empty() {
            frozen.request.clone()
        } else {
            live.clone()
        };
        // A background handoff: what the session did after the cut.
        let tail = match frozen.cut {
            Some(cut) => self.tail_record(cut, &request),
            None => Vec::new(),
        };
        let old_id = self.s.id.clone();
        let old_ctx = self.ctx_estimate();
        let generation = self.s.generation + 1;
        let held = self.s.held(self.ctx_estimate());
        let record = HandoffRecord {
            path: frozen.file.path().map(Path::to_path_buf),
            degraded: successor.degraded,
            reason: frozen.reason.clone(),
            ctx_at_cut: frozen.ctx_at_cut,
            time: now_stamp(),
            retired_session: old_id.clone(),
            generation,
            sections: successor.parsed.section_names(),
            edited: successor.edited,
            source: frozen.source,
            tail: tail.len(),
            held: held.clone(),
        };
        self.ledger.record(|rec| {
            rec.retired.push(old_id.clone());
            rec.current_generation().context = old_ctx;
            rec.handoffs.push(record);
            rec.frozen = None;
        });
        self.end_cut_turn_in_transcript();
        // What the engine carries itself, and the transcripts `recall` searches (this one too).
        let memory = self.ledger.memory().clone();
        let predecessors = self.predecessors();
        let mut briefing = Briefing {
            document: &successor.text,
            degraded: successor.degraded,
            request: &[],
            memory: Some(&memory),
            predecessors: &predecessors,
            tail: &tail,
            rescued: frozen.source == DocumentSource::Rescued && frozen.reduced,
            cause: frozen.cause,
            focus: frozen.focus.as_deref(),
        };
        // A message too large for the successor goes to a file; later successors carry the same.
        let spilled = self.fit_request(&mut request, &briefing.message());
        briefing.request = &request;
        let first = briefing.message();
        if spilled || (live.is_empty() && !frozen.request.is_empty()) {
            // The successor continues this request (an earlier process's review's, maybe).
            self.s.request = Request {
                messages: request.clone(),
                open: true,
            };
        }
        let mut shown = briefing.briefing_block();
        if !tail.is_empty() {
            shown.push_str(&format!(
                "(then the record of the {} message{} after the cut)\n",
                tail.len(),
                if tail.len() == 1 { "" } else { "s" }
            ));
        }
        self.checkpoint_at_handoff();
        self.session_left_hooks(crate::engine::hooks::EndReason::Handoff);
        // The old session's history is dropped here: retired histories are freed.
        self.start_session(Some(old_id), generation, vec![first]);
        self.commit_replacement();
        self.s.briefed = Some(successor.parsed.clone()).filter(|d| !d.section_names().is_empty());
        self.emit_logged(Event::Handoff(HandoffPhase::Done {
            handoff: id,
            context: frozen.ctx_at_cut,
            window: self.settings.thresholds.window,
            degraded: successor.degraded,
            degraded_reason: successor
                .degraded
                .then(|| frozen.reason.failure_or_trigger()),
            path: frozen.file.path().map(Path::to_path_buf),
            sections: successor.parsed.section_names(),
            generation,
            source: frozen.source,
            tail: tail.len(),
            held,
        }));
        // Show what the successor was given (it is already in its history and transcript); the
        // request's messages are in the chat already.
        self.emit(Event::UserMessage {
            turn: self.turn.map(|t| t.id),
            origin: Origin::Engine,
            text: shown,
        });
        self.emit_usage_estimate();
    }

    /// The cut turn ends in the old transcript; the successor goes on with it.
    fn end_cut_turn_in_transcript(&mut self) {
        let cut = self.turn.map(|t| Event::TurnEnd {
            turn: t.id,
            kind: t.kind,
            origin: Origin::User,
            reason: ExitReason::Handoff,
        });
        if let Some(v) = cut.and_then(|ev| serde_json::to_value(ev).ok()) {
            self.s
                .transcript
                .append(&TranscriptLine::Event { event: v });
        }
    }

    /// Write the document to the workbench; when that fails (a full disk, a file where the notes
    /// folder should be), to the run directory instead, where it is reviewed and recorded all the
    /// same. None with `--no-workbench` or when neither can be written.
    fn freeze(&mut self, step: &str, markdown: &str) -> Option<PathBuf> {
        let wb = self.run.places.workbench.clone()?;
        let first = match store::freeze_timed(&wb, step, markdown, now_unix().0) {
            Ok((p, lock)) => {
                self.handoff.add_lock(lock);
                return Some(p);
            }
            Err(e) => e,
        };
        let run = self.ledger.run_dir.root.clone();
        match store::freeze_timed(&run, step, markdown, now_unix().0) {
            Ok((p, lock)) => {
                self.handoff.add_lock(lock);
                self.emit(Event::Warning {
                    message: format!(
                        "could not write the handoff file under {} ({first}): it is saved in {} instead, and reviewed there",
                        wb.display(),
                        p.display()
                    ),
                });
                Some(p)
            }
            Err(e) => {
                self.emit(Event::Warning {
                    message: format!(
                        "could not write the handoff file under {} ({first}) nor under {} ({e}); the successor gets the document through its prompt",
                        wb.display(),
                        run.display()
                    ),
                });
                None
            }
        }
    }

    /// The folder whose document lock guards `path`: the workbench, or the run directory the
    /// document fell back to.
    fn doc_base(&self, path: &Path) -> Option<PathBuf> {
        [
            self.run.places.workbench.clone(),
            Some(self.ledger.run_dir.root.clone()),
        ]
        .into_iter()
        .flatten()
        .find(|base| path.starts_with(base))
    }

    /// The review window: wait until the front end says the successor may start.
    /// Esc belongs to the review then (it ends it with `ReviewDone`): an abort does not stop it.
    async fn wait_review(&mut self, handoff: HandoffId) -> Review {
        let done = |op: &Op| matches!(op, Op::ReviewDone { handoff: h } if *h == handoff);
        if let Some(i) = self.inbox.pending.iter().position(done) {
            self.inbox.pending.remove(i);
            return Review::Over;
        }
        loop {
            match self.inbox.ops.recv().await {
                Some(op) if done(&op) => return Review::Over,
                Some(Op::UnsavedEdits { handoff: h, path }) if h == handoff => {
                    self.ledger.record(|rec| {
                        if let Some(f) = rec.frozen.as_mut() {
                            f.unsaved = Some(path);
                        }
                    });
                    self.save_manifest();
                }
                // Another handoff's review, or an answer nothing waits for: stale.
                Some(Op::ReviewDone { .. } | Op::Approval { .. } | Op::UnsavedEdits { .. }) => {}
                Some(Op::Abort { turn }) => {
                    let _ = self.on_abort(turn);
                }
                other => {
                    if self.triage(other) == Some(super::request::Stop::Shutdown) {
                        return Review::Shutdown;
                    }
                }
            }
        }
    }

    /// The document the successor reads: the file exactly as it is on disk now,
    /// read under the step's lock, even when it no longer parses as a handoff (with a warning);
    /// the in-memory document only when the file is gone (then it is written again with it, so the
    /// path holds what the successor read), empty, unreadable, or holds another step's or
    /// generation's document.
    fn read_back(&mut self, frozen: &FrozenHandoff) -> Successor {
        let memory = |markdown: &str| Successor {
            text: markdown.to_string(),
            parsed: HandoffDoc::parse(markdown),
            degraded: frozen.degraded,
            edited: false,
        };
        let Some(path) = frozen.file.path() else {
            return memory(&frozen.markdown);
        };
        let fallback = |why: &str| {
            format!(
                "the handoff file {} {why}; the successor gets the document as it was written",
                path.display()
            )
        };
        let read = match self.doc_base(path) {
            Some(wb) => {
                let (read, lock) = store::read_back_locked(&wb, &self.ledger.step_name(), path);
                self.handoff.add_lock(lock);
                read
            }
            None => store::read_back(path),
        };
        let why = match read {
            ReadBack::Text(text) => match foreign(&text, &frozen.markdown) {
                Some(other) => format!("now holds another document ({other})"),
                None => return self.validated(text, frozen, path),
            },
            ReadBack::Missing => {
                let base = self.doc_base(path);
                return match store::write_back(
                    base.as_deref(),
                    &self.ledger.step_name(),
                    path,
                    &frozen.markdown,
                ) {
                    Ok(()) => {
                        self.emit(Event::Warning {
                            message: format!(
                                "the handoff file {} was deleted: it is written again with the document as it was written, and the successor reads that",
                                path.display()
                            ),
                        });
                        memory(&frozen.markdown)
                    }
                    Err(e) => {
                        self.emit(Event::Warning {
                            message: fallback(&format!(
                                "was deleted and cannot be written again ({e})"
                            )),
                        });
                        memory(&frozen.markdown)
                    }
                };
            }
            ReadBack::Empty => "is empty".to_string(),
            ReadBack::Unreadable(e) => format!("cannot be read ({e})"),
        };
        self.emit(Event::Warning {
            message: fallback(&why),
        });
        memory(&frozen.markdown)
    }

    /// The file's text goes to the successor as it is; parsing only checks it and says what is
    /// missing.
    fn validated(&mut self, text: String, frozen: &FrozenHandoff, path: &Path) -> Successor {
        let parsed = HandoffDoc::parse(&text);
        let complete = parsed.complete();
        if frozen.cause == HandoffCause::Plan {
            // A plan has sections of its own: nothing is missing from it.
        } else if parsed.section_names().is_empty() {
            self.emit(Event::Warning {
                message: format!(
                    "the handoff file {} has no recognisable sections; the successor reads it as you left it",
                    path.display()
                ),
            });
        } else if !complete {
            self.emit(Event::Warning {
                message: format!(
                    "the edited handoff file lacks: {}; the successor reads it as you left it",
                    parsed.missing().join(", ")
                ),
            });
        }
        Successor {
            edited: text != frozen.markdown,
            degraded: if complete {
                parsed.degraded()
            } else {
                frozen.degraded
            },
            text,
            parsed,
        }
    }
}
