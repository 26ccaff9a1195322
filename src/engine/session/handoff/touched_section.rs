//! The `## Touched` section of a handoff document: every document (written, rescued or degraded)
//! gets it when it is frozen, built from the current session's tool log and the section of the
//! document this generation was briefed with (as the user left it), ending with the errors the
//! language servers still see in the generation's files. The line counts of edits and writes are
//! kept per call as their results are delivered (the model's result text does not carry them).

use std::collections::HashMap;

use super::context::HandoffCx;
use crate::engine::diff::FileDiff;
use crate::engine::handoff::HandoffDoc;
use crate::engine::handoff::touched::{self, LineCounts, ToolLog};

/// The line counts of one session's file changes, by call id.
#[derive(Debug, Default)]
pub(in crate::engine::session) struct CallCounts {
    session: String,
    by_call: HashMap<String, LineCounts>,
}

impl CallCounts {
    /// Keep the counts of the file tool call `id` of `session` (a new session starts afresh).
    pub(in crate::engine::session) fn note(
        &mut self,
        session: &str,
        id: &str,
        diff: Option<&FileDiff>,
    ) {
        let Some(d) = diff else {
            return;
        };
        if self.session != session {
            *self = CallCounts {
                session: session.to_string(),
                by_call: HashMap::new(),
            };
        }
        self.by_call.insert(
            id.to_string(),
            LineCounts {
                added: d.added as u64,
                removed: d.removed as u64,
            },
        );
    }
}

/// `doc` with its `Touched` section written from the tool log (whatever the model wrote under
/// that heading is replaced: the section is the log's, not the model's memory).
pub(super) fn with_touched(cx: &mut impl HandoffCx, doc: &HandoffDoc) -> HandoffDoc {
    let workspace = cx.places().workspace.clone();
    let open_problems = cx.open_problems();
    let conv = cx.conv();
    let empty = HashMap::new();
    let counts = if conv.call_counts.session == conv.id {
        &conv.call_counts.by_call
    } else {
        &empty
    };
    let previous = conv
        .briefed
        .as_ref()
        .map(|d| d.touched.as_str())
        .filter(|t| !t.trim().is_empty());
    let section = touched::section(ToolLog {
        messages: &conv.messages,
        counts,
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
