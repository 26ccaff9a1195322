//! Freezing a document: its record in the ledger first (a process killed from then on leaves a
//! review to reopen), then the file under the step's lock in the workbench (or the run directory
//! when the workbench cannot take it), and the `Frozen` phase that shows it as it is on disk.
//! Every document frozen carries the `## Touched` section of the tool log.

use std::path::{Path, PathBuf};

use super::context::HandoffCx;
use super::touched_section::with_touched;
use crate::engine::fsutil::now_unix;
use crate::engine::handoff::HandoffDoc;
use crate::engine::handoff::store::{self, ReadBack};
use crate::engine::ledger::{
    Cut, FrozenFile, FrozenHandoff, HandoffCause, HandoffReason, now_stamp,
};
use crate::engine::protocol::{DocumentSource, Event, HandoffId, HandoffPhase};

/// Which path produced a document, and whether it was written from a reduced history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Produced {
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
pub(super) struct Why {
    pub cause: HandoffCause,
    pub focus: Option<String>,
}

impl Why {
    /// `cause`, with no focus of its own.
    pub fn cause(cause: HandoffCause) -> Why {
        Why { cause, focus: None }
    }
}

/// The frozen record of `doc`, in the ledger at once: a process killed from here on leaves a
/// review to reopen. `cut`: a background handoff's; `why`: why it happened.
pub(super) fn frozen_record(
    cx: &mut impl HandoffCx,
    doc: &HandoffDoc,
    reason: HandoffReason,
    ctx_at_cut: u64,
    produced: Produced,
    cut: Option<Cut>,
    why: Why,
) -> FrozenHandoff {
    // Every document, written, rescued or degraded, carries the facts of the tool log.
    let doc = &with_touched(cx, doc);
    let degraded = doc.degraded();
    let markdown = crate::engine::secrets::redact(&doc.to_markdown()).into_owned();
    if degraded {
        let why = match &reason.failure {
            Some(why) => why.clone(),
            None => reason.trigger.as_str().to_string(),
        };
        cx.ledger()
            .record(|rec| rec.errors.push(format!("handoff degraded ({why})")));
    }
    let conv = cx.conv();
    let frozen = FrozenHandoff {
        file: FrozenFile::Pending,
        markdown,
        degraded,
        reason,
        ctx_at_cut,
        time: now_stamp(),
        retired_session: conv.id.clone(),
        generation: conv.generation + 1,
        // Masked on disk like everything else; the live successor gets the messages as typed.
        request: conv
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
    set_frozen(cx, Some(frozen.clone()), false);
    frozen
}

/// Write the frozen document to the workbench and note it in the ledger.
pub(super) fn write_frozen(cx: &mut impl HandoffCx, mut frozen: FrozenHandoff) -> FrozenHandoff {
    let step = cx.ledger().step_name();
    frozen.file = match freeze_file(cx, &step, &frozen.markdown) {
        Some(path) => FrozenFile::OnDisk(path),
        None => FrozenFile::InMemory,
    };
    // Durable when a review may keep it waiting; otherwise the turnover's own durable save
    // follows within milliseconds.
    let durable = cx.front_end().reviews() && frozen.file.path().is_some();
    set_frozen(cx, Some(frozen.clone()), durable);
    frozen
}

/// Say the document is frozen (with the file as it is on disk). Returns whether the engine
/// waits for its review.
pub(super) fn emit_frozen(
    cx: &mut impl HandoffCx,
    id: HandoffId,
    frozen: &FrozenHandoff,
    background: bool,
) -> bool {
    let awaits_review = cx.front_end().reviews() && frozen.file.path().is_some();
    let shown = match frozen.file.path().map(store::read_back) {
        Some(ReadBack::Text(t)) => t,
        _ => frozen.markdown.clone(),
    };
    cx.emit_logged(Event::Handoff(HandoffPhase::Frozen {
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
pub(super) fn set_frozen(cx: &mut impl HandoffCx, frozen: Option<FrozenHandoff>, durable: bool) {
    cx.ledger().record(|rec| rec.frozen = frozen);
    if durable {
        cx.save_manifest();
    } else if let Err(e) = cx.ledger().save_unsynced() {
        cx.emit(Event::Warning {
            message: format!("could not write the ledger: {e}"),
        });
    }
}

/// Write the document to the workbench; when that fails (a full disk, a file where the notes
/// folder should be), to the run directory instead, where it is reviewed and recorded all the
/// same. None with `--no-workbench` or when neither can be written.
fn freeze_file(cx: &mut impl HandoffCx, step: &str, markdown: &str) -> Option<PathBuf> {
    let wb = cx.places().workbench.clone()?;
    let first = match store::freeze_timed(&wb, step, markdown, now_unix().0) {
        Ok((p, lock)) => {
            cx.handoffs().add_lock(lock);
            return Some(p);
        }
        Err(e) => e,
    };
    let run = cx.ledger().run_dir.root.clone();
    match store::freeze_timed(&run, step, markdown, now_unix().0) {
        Ok((p, lock)) => {
            cx.handoffs().add_lock(lock);
            cx.emit(Event::Warning {
                message: format!(
                    "could not write the handoff file under {} ({first}): it is saved in {} instead, and reviewed there",
                    wb.display(),
                    p.display()
                ),
            });
            Some(p)
        }
        Err(e) => {
            cx.emit(Event::Warning {
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
