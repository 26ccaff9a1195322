//! The questions waiting for the user's answer — a tool call's approval, the workspace's
//! `.mcp.json` or hooks, an overwrite — shown one at a time above the input: the focus stays
//! where it is, and the prompt takes keys only once the input is empty and 400 ms have passed
//! since the first question showed and since the input last changed, so typed-ahead text never
//! answers it. Also the "always" grants as the engine last listed them (`/permissions revoke N`
//! names one by its number there).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::engine::protocol::{AllowOffer, AllowRule, Allowance, FileDiff};

use super::rewind_state::Retry;

/// An approval prompt takes keys only this long after it appeared and after the user's own input
/// was last changed: keys typed for something else (a message, a double `y`) never answer it.
pub(crate) const APPROVAL_GUARD: Duration = Duration::from_millis(400);

/// What a pending question asks about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Asked {
    /// A tool call; the answer goes to this call id.
    Tool { id: String },
    /// The workspace's `.mcp.json` (this version of it): may its servers start?
    McpJson { sha256: String },
    /// A workspace settings file (this version of it): may its hooks run?
    Hooks { sha256: String },
    /// Files an undo, redo or rewind would write over (changed since): overwrite them, skip
    /// them, or cancel.
    Overwrite { retry: Retry },
}

impl Asked {
    /// What tells this question from another: the call id, or the file's hash.
    pub(crate) fn key(&self) -> &str {
        match self {
            Asked::Tool { id } => id,
            Asked::McpJson { sha256 } | Asked::Hooks { sha256 } => sha256,
            Asked::Overwrite { .. } => "overwrite",
        }
    }
}

/// A question waiting for the user's answer: a tool call, or the workspace's `.mcp.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PendingApproval {
    /// What it asks about.
    pub(crate) asked: Asked,
    /// The tool.
    pub(crate) name: String,
    /// What it would do.
    pub(crate) summary: String,
    /// The index of its chat cell, to record the answer there.
    pub(crate) cell: usize,
    /// The call leaves the workspace ("always" does not cover it).
    pub(crate) outside_workspace: bool,
    /// `bash`: the whole command, exactly as it will run.
    pub(crate) command: Option<String>,
    /// `edit_file` / `write_file`: the change it would make.
    pub(crate) diff: Option<Box<FileDiff>>,
    /// What "always" would grant (None: not offered).
    pub(crate) always: Option<AllowOffer>,
    /// The sandbox stopped this command, for this reason: allowing runs it once outside it.
    pub(crate) unsandboxed: Option<String>,
}

impl PendingApproval {
    /// A question that is no tool call, recorded in chat cell `cell`.
    pub(crate) fn question(asked: Asked, name: &str, summary: String, cell: usize) -> Self {
        PendingApproval {
            asked,
            name: name.into(),
            summary,
            cell,
            outside_workspace: false,
            command: None,
            diff: None,
            always: None,
            unsandboxed: None,
        }
    }
}

/// The questions in line, and the grants.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Questions {
    /// The questions waiting for an answer, oldest first (the first one is shown).
    waiting: VecDeque<PendingApproval>,
    /// When the question now shown appeared (it takes keys only a moment after).
    shown_at: Option<Instant>,
    /// The "always" grants as the engine last listed them.
    allowances: Vec<Allowance>,
}

impl Questions {
    /// The question shown now, if any.
    pub(crate) fn front(&self) -> Option<&PendingApproval> {
        self.waiting.front()
    }

    /// How many questions wait.
    pub(crate) fn len(&self) -> usize {
        self.waiting.len()
    }

    /// Whether no question waits.
    pub(crate) fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// Whether this question waits already.
    pub(crate) fn asks(&self, asked: &Asked) -> bool {
        self.waiting.iter().any(|p| p.asked == *asked)
    }

    /// Queue `p` behind the questions already waiting; the first one shown starts the key guard.
    pub(crate) fn enqueue(&mut self, p: PendingApproval, now: Instant) {
        self.waiting.push_back(p);
        if self.shown_at.is_none() {
            self.shown_at = Some(now);
        }
    }

    /// The question shown was answered: it leaves the line, and the next one (if any) takes its
    /// place from `now`.
    pub(crate) fn answered(&mut self, now: Instant) -> Option<PendingApproval> {
        let p = self.waiting.pop_front()?;
        self.shown_at = if self.waiting.is_empty() {
            None
        } else {
            Some(now)
        };
        Some(p)
    }

    /// Another run is continued: its questions are not these.
    pub(crate) fn clear(&mut self) {
        self.waiting.clear();
        self.shown_at = None;
    }

    /// When the question shown may take keys: [`APPROVAL_GUARD`] after it appeared and after
    /// the input last changed (`input_edited`); `None` when no question waits.
    pub(crate) fn ready_at(&self, input_edited: Option<Instant>) -> Option<Instant> {
        self.waiting.front()?;
        let shown = self.shown_at?;
        let since = match input_edited {
            Some(edited) if edited > shown => edited,
            _ => shown,
        };
        Some(since + APPROVAL_GUARD)
    }

    /// The grants the engine listed.
    pub(crate) fn set_allowances(&mut self, allowances: Vec<Allowance>) {
        self.allowances = allowances;
    }

    /// The rule of grant number `n` (1-based) as last listed.
    pub(crate) fn allowance_rule(&self, n: usize) -> Option<AllowRule> {
        let i = n.checked_sub(1)?;
        self.allowances.get(i).map(|a| a.rule.clone())
    }
}
