//! The `## Touched` section of a handoff document: every document (written, rescued or degraded)
//! gets it when it is frozen, built from the current session's tool log and the section of the
//! document this generation was briefed with (as the user left it), ending with the errors the
//! language servers still see in the generation's files. The line counts of edits and writes are
//! kept per call as their results are delivered (the model's result text does not carry them),
//! with the turn of each call, so a turn the user undid (and has not redone) leaves the section.

use std::collections::{BTreeSet, HashMap};

use super::context::HandoffCx;
use crate::engine::checkpoint::{RestoreReport, UndoAction};
use crate::engine::diff::FileDiff;
use crate::engine::handoff::HandoffDoc;
use crate::engine::handoff::touched::{self, LineCounts, ToolLog};

/// The line counts of one session's file changes, by call id, the step's turn of each call that
/// may have changed files, and the turns whose changes the user undid since.
#[derive(Debug, Default)]
pub(in crate::engine::session) struct CallCounts {
    session: String,
    by_call: HashMap<String, LineCounts>,
    /// The step's turn of each call delivered while that turn had an undo entry open.
    turn_of: HashMap<String, u64>,
    /// Turns undone (`/undo`, a rewind of the code) and not redone.
    undone: BTreeSet<u64>,
}

impl CallCounts {
    /// Start afresh when `session` is not the one counted.
    fn of_session(&mut self, session: &str) -> &mut CallCounts {
        if self.session != session {
            *self = CallCounts {
                session: session.to_string(),
                ..CallCounts::default()
            };
        }
        self
    }

    /// Keep the counts of the tool call `id` of `session` (a new session starts afresh), and the
    /// step's `turn` it ran in (the turn with an undo entry open, if any).
    pub(in crate::engine::session) fn note(
        &mut self,
        session: &str,
        id: &str,
        turn: Option<u64>,
        diff: Option<&FileDiff>,
    ) {
        let this = self.of_session(session);
        if let Some(turn) = turn {
            this.turn_of.insert(id.to_string(), turn);
        }
        let Some(d) = diff else {
            return;
        };
        this.by_call.insert(
            id.to_string(),
            LineCounts {
                added: d.added as u64,
                removed: d.removed as u64,
            },
        );
    }

    /// An undo or redo that ran in `session`: its turn's changes leave (or come back to) the
    /// section.
    pub(in crate::engine::session) fn restored(&mut self, session: &str, report: &RestoreReport) {
        if let RestoreReport::Restored { action, of, .. } = report {
            let this = self.of_session(session);
            match action {
                UndoAction::Undo => this.undone.insert(of.turn),
                UndoAction::Redo => this.undone.remove(&of.turn),
            };
        }
    }

    /// A rewind of the code in `session` undid `turns`.
    pub(in crate::engine::session) fn rewound(&mut self, session: &str, turns: &[u64]) {
        self.of_session(session).undone.extend(turns);
    }

    /// The calls of the undone turns.
    fn undone_calls(&self) -> Vec<String> {
        self.turn_of
            .iter()
            .filter(|(_, t)| self.undone.contains(t))
            .map(|(id, _)| id.clone())
            .collect()
    }
}

/// `doc` with its `Touched` section written from the tool log (whatever the model wrote under
/// that heading is replaced: the section is the log's, not the model's memory).
pub(super) fn with_touched(cx: &mut impl HandoffCx, doc: &HandoffDoc) -> HandoffDoc {
    let workspace = cx.places().workspace.clone();
    let open_problems = cx.open_problems();
    let conv = cx.conv();
    let empty = HashMap::new();
    let (counts, undone) = if conv.call_counts.session == conv.id {
        (&conv.call_counts.by_call, conv.call_counts.undone_calls())
    } else {
        (&empty, Vec::new())
    };
    let previous = conv
        .briefed
        .as_ref()
        .map(|d| d.touched.as_str())
        .filter(|t| !t.trim().is_empty());
    let section = touched::section(ToolLog {
        messages: &conv.messages,
        counts,
        undone: &undone,
        generation: conv.generation,
        workspace: Some(&workspace),
        previous,
        open_problems: open_problems.as_ref(),
    });
    let jobs = touched::jobs_lines(&cx.jobs());
    HandoffDoc {
        touched: if jobs.is_empty() {
            section
        } else {
            format!("{}{jobs}", section.trim_end())
        },
        ..doc.clone()
    }
}
