//! The engine's side of the `## Touched` section: every handoff document (written, rescued or
//! degraded) gets it when it is frozen, built from the current session's tool log and the
//! section of the document this generation was briefed with (as the user left it). The line
//! counts of edits and writes are kept per call as their results are delivered (the model's
//! result text does not carry them).

use std::collections::HashMap;

use super::Engine;
use crate::engine::diff::FileDiff;
use crate::engine::handoff::HandoffDoc;
use crate::engine::handoff::touched::{self, LineCounts, ToolLog};

/// The line counts of one session's file changes, by call id.
#[derive(Debug, Default)]
pub(crate) struct CallCounts {
    session: String,
    by_call: HashMap<String, LineCounts>,
}

impl Engine {
    /// Keep the counts of a file tool's change for the `Touched` section.
    pub(super) fn note_counts(&mut self, id: &str, diff: Option<&FileDiff>) {
        let Some(d) = diff else {
            return;
        };
        if self.s.call_counts.session != self.s.id {
            self.s.call_counts = CallCounts {
                session: self.s.id.clone(),
                by_call: HashMap::new(),
            };
        }
        self.s.call_counts.by_call.insert(
            id.to_string(),
            LineCounts {
                added: d.added as u64,
                removed: d.removed as u64,
            },
        );
    }

    /// `doc` with its `Touched` section written from the tool log (whatever the model wrote
    /// under that heading is replaced: the section is the log's, not the model's memory).
    pub(super) fn with_touched(&self, doc: &HandoffDoc) -> HandoffDoc {
        let empty = HashMap::new();
        let counts = if self.s.call_counts.session == self.s.id {
            &self.s.call_counts.by_call
        } else {
            &empty
        };
        let previous = self
            .s
            .briefed
            .as_ref()
            .map(|d| d.touched.as_str())
            .filter(|t| !t.trim().is_empty());
        let open_problems = self.run.lsp.as_ref().map(|l| l.open_problems());
        let section = touched::section(ToolLog {
            messages: &self.s.messages,
            counts,
            generation: self.s.generation,
            workspace: Some(&self.run.places.workspace),
            previous,
            open_problems: open_problems.as_ref(),
        });
        HandoffDoc {
            touched: section,
            ..doc.clone()
        }
    }
}
