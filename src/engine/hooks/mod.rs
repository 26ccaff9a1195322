//! Hooks: the user's own programs run at points of a session, in Claude Code's protocol so the
//! hook scripts people already have work unchanged.
//!
//! - [`config`]: `[[hooks.EVENT]]` in `config.toml` and the `hooks` of a settings file; matchers.
//! - [`project`]: a workspace's `.flower/settings.json`, `.claude/settings.json` and
//!   `.claude/settings.local.json`, used only once the user approved that version of the file
//!   (the `.mcp.json` store and policy), and its command files' `allowed-tools` likewise.
//! - [`user_file`]: the user's own `~/.claude/settings.json`, used as theirs.
//! - [`event`]: the events and the JSON each hook reads on stdin; Claude Code's tool names.
//! - `run`: one hook process (`bash -c`, a session and process group of its own, timeout, capped
//!   and masked output).
//! - [`outcome`]: what the hooks' exit codes and JSON answers mean, alone and together.
//! - [`note`]: what the user is shown of a hook that ran, and the approval question.
//!
//! [`HookSet::run`] starts every hook matching an event at once, on a task of their own (not the
//! caller's), and returns a [`HookBatch`] the caller awaits (in a `select!` beside its other work: nothing here
//! blocks a UI). Dropping the batch kills the hooks still running, with their process groups.
//! The same command configured twice for an event runs once.

pub mod config;
pub mod event;
pub(crate) mod note;
pub(crate) mod outcome;
pub mod project;
mod run;
pub(crate) mod user_file;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::future::join_all;

pub use config::Hook;
pub(crate) use config::{HookConfigError, HookSource};
pub use event::{
    Audience, EndReason, HandoffTrigger, HookEvent, HookInput, HookSession, PermissionMode,
    StartSource, ToolCall, tool_response,
};
pub use note::{Grant, HookNote, HooksQuestion};
pub use outcome::{Decision, HookReport, HookStatus, Outcome};
pub use project::{
    SettingsFile, Unapproved, WorkspaceHooks, WorkspaceSettings, workspace_hooks,
    workspace_settings,
};
pub use run::{Captured, HookExit, OUTPUT_CAP};

/// The hooks in force for a session: the config file's first, then the approved workspace
/// files', in the order they were configured.
#[derive(Debug, Clone, Default)]
pub struct HookSet {
    hooks: Arc<Vec<Hook>>,
}

/// A hook about to run, as the user is shown it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookLabel {
    pub event: HookEvent,
    /// Masked.
    pub command: String,
    pub source: HookSource,
}

impl HookSet {
    pub fn new(hooks: Vec<Hook>) -> Self {
        HookSet {
            hooks: Arc::new(hooks),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// Every hook, in order (for `/hooks`).
    pub fn hooks(&self) -> &[Hook] {
        &self.hooks
    }

    /// Whether any hook is configured for `event` (so callers can skip building its input).
    pub fn has(&self, event: HookEvent) -> bool {
        self.hooks.iter().any(|h| h.event == event)
    }

    /// The hooks that run for `input`: its event's, whose matcher matches, each command once.
    pub fn matching(&self, input: &HookInput) -> Vec<&Hook> {
        let event = input.event();
        let subjects = input.match_subjects();
        let mut out: Vec<&Hook> = Vec::new();
        for hook in self.hooks.iter() {
            if hook.event == event
                && hook.matcher.matches(&subjects)
                && !out.iter().any(|h| h.command == hook.command)
            {
                out.push(hook);
            }
        }
        out
    }

    /// Start the hooks for `input`, all at once. With none matching the batch is empty and
    /// resolves at once to an empty [`Outcome`].
    pub fn run(&self, input: &HookInput, session: &HookSession) -> HookBatch {
        let event = input.event();
        let hooks: Vec<Hook> = self.matching(input).into_iter().cloned().collect();
        let labels = hooks
            .iter()
            .map(|h| HookLabel {
                event,
                command: crate::engine::secrets::redact(&h.command).into_owned(),
                source: h.source.clone(),
            })
            .collect();
        if hooks.is_empty() {
            return HookBatch { labels, task: None };
        }
        let stdin = stdin_bytes(input, session);
        let workspace = session.workspace.clone();
        let task = tokio::spawn(async move {
            let runs = hooks
                .iter()
                .map(|h| run::run(&h.command, stdin.clone(), &workspace, h.timeout));
            let finished = join_all(runs).await;
            let mut outcome = Outcome::default();
            for (hook, done) in hooks.iter().zip(finished) {
                outcome.add(event, &hook.command, &hook.source, done);
            }
            outcome
        });
        HookBatch {
            labels,
            task: Some(task),
        }
    }
}

/// The event's JSON for stdin, secrets masked (a hook that logs its input writes no key to disk).
fn stdin_bytes(input: &HookInput, session: &HookSession) -> Vec<u8> {
    let json = crate::engine::secrets::redact_value(&input.stdin_json(session));
    let mut bytes = json.to_string().into_bytes();
    bytes.push(b'\n');
    bytes
}

/// Hooks running for one event. Await it for their [`Outcome`]; drop it to kill them.
#[derive(Debug)]
pub struct HookBatch {
    labels: Vec<HookLabel>,
    task: Option<tokio::task::JoinHandle<Outcome>>,
}

impl HookBatch {
    /// The hooks started, in order (for a "running hook" line).
    pub fn labels(&self) -> &[HookLabel] {
        &self.labels
    }

    /// Whether no hook matched.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }
}

impl Future for HookBatch {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        let Some(task) = self.task.as_mut() else {
            return Poll::Ready(Outcome::default());
        };
        match Pin::new(task).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(result) => {
                self.task = None;
                Poll::Ready(result.unwrap_or_else(|e| Outcome {
                    notices: vec![format!("the hooks could not finish: {e}")],
                    ..Outcome::default()
                }))
            }
        }
    }
}

impl Drop for HookBatch {
    fn drop(&mut self) {
        // Aborting drops the hooks' futures, whose group killers kill what still runs.
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests;
