//! The document the successor reads: the file exactly as it is on disk when the review ends,
//! read under the step's lock, even when it no longer parses as a handoff (with a warning); the
//! frozen document only when the file is gone (then it is written again with it, so the path
//! holds what the successor read), empty, unreadable, or holds another step's or generation's
//! document.

use std::path::{Path, PathBuf};

use super::context::HandoffCx;
use crate::engine::handoff::HandoffDoc;
use crate::engine::handoff::store::{self, ReadBack, foreign};
use crate::engine::ledger::{FrozenHandoff, HandoffCause};
use crate::engine::protocol::Event;

/// The document the successor reads, and what the ledger learns from it.
pub(super) struct Successor {
    /// Its text, verbatim (the file as on disk, or the in-memory rendering).
    pub(super) text: String,
    /// The text parsed: validation and the ledger only.
    pub(super) parsed: HandoffDoc,
    pub(super) degraded: bool,
    /// The file differs from what was frozen.
    pub(super) edited: bool,
}

/// The document the successor reads for `frozen` (see the module's doc).
pub(super) fn read_back(cx: &mut impl HandoffCx, frozen: &FrozenHandoff) -> Successor {
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
    let read = match doc_base(cx, path) {
        Some(wb) => {
            let (read, lock) = store::read_back_locked(&wb, &cx.ledger().step_name(), path);
            cx.handoffs().add_lock(lock);
            read
        }
        None => store::read_back(path),
    };
    let why = match read {
        ReadBack::Text(text) => match foreign(&text, &frozen.markdown) {
            Some(other) => format!("now holds another document ({other})"),
            None => return validated(cx, text, frozen, path),
        },
        ReadBack::Missing => {
            let base = doc_base(cx, path);
            let step = cx.ledger().step_name();
            return match store::write_back(base.as_deref(), &step, path, &frozen.markdown) {
                Ok(()) => {
                    cx.emit(Event::Warning {
                        message: format!(
                            "the handoff file {} was deleted: it is written again with the document as it was written, and the successor reads that",
                            path.display()
                        ),
                    });
                    memory(&frozen.markdown)
                }
                Err(e) => {
                    cx.emit(Event::Warning {
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
    cx.emit(Event::Warning {
        message: fallback(&why),
    });
    memory(&frozen.markdown)
}

/// The folder whose document lock guards `path`: the workbench, or the run directory the
/// document fell back to.
fn doc_base(cx: &mut impl HandoffCx, path: &Path) -> Option<PathBuf> {
    [
        cx.places().workbench.clone(),
        Some(cx.ledger().run_dir.root.clone()),
    ]
    .into_iter()
    .flatten()
    .find(|base| path.starts_with(base))
}

/// The file's text goes to the successor as it is; parsing only checks it and says what is
/// missing.
fn validated(
    cx: &mut impl HandoffCx,
    text: String,
    frozen: &FrozenHandoff,
    path: &Path,
) -> Successor {
    let parsed = HandoffDoc::parse(&text);
    let complete = parsed.complete();
    if frozen.cause == HandoffCause::Plan {
        // A plan has sections of its own: nothing is missing from it.
    } else if parsed.section_names().is_empty() {
        cx.emit(Event::Warning {
            message: format!(
                "the handoff file {} has no recognisable sections; the successor reads it as you left it",
                path.display()
            ),
        });
    } else if !complete {
        cx.emit(Event::Warning {
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
