//! Subagents: the `task` tool starts a child session with its own context and
//! window accounting, which works on the prompt alone and returns only its final report, as the
//! result of the `task` call. Its reading never enters the main thread's context, gauge or
//! handoff check.
//!
//! - [`child`]: one child's loop — requests through the same `stream_with_retry` (replay, idle
//!   timeout), tools through the same `tools::run` and `tools::for_model` (masking, spill), its
//!   own transcript, iteration budget and handoff line. When its context fills or its budget is
//!   spent it is asked, in one last request without tools, for its report (its own mini handoff);
//!   when the provider says its context overflowed, flower-tui writes the report from what it
//!   read and ran ([`report`]).
//! - [`ChildTools`]: what a child may call: `read_file`, `grep`, `glob`, `list_dir`, and `bash`
//!   only where the parent would run a command without asking. A child never asks the user
//!   (several run at once, and the user sees none of their context): with `ApprovalPolicy::Ask`
//!   it has no `bash` unless the sandbox confines commands (then they run unasked, in the same
//!   sandbox, as the parent's do); with `Auto` (`--yes`) it has; with `AskOnce` it has once the
//!   session's one question was answered (from then on the parent runs commands unasked too). A path outside the workspace is refused (the parent's rule for it is "the user, call
//!   by call"). No `task` of its own (no recursion), no file edits, no MCP tools (each needs the
//!   user's approval). The settings files' `deny` rules hold for its calls as for the parent's
//!   (a `Read` rule also for what its searches show). With `bash` come background jobs on a
//!   table of the child's own (`job_output`, `job_stop`): they end with its task (stopped at its
//!   end, killed when it is aborted), and its report says which were still running then.
//! - The engine's side (`session/task_calls.rs`) runs the `task` calls of one response together, at
//!   most [`MAX_CONCURRENT`] at a time, books each child's cost and ledger record, and aborts
//!   them with the turn.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

pub(crate) mod child;
mod events;
mod report;

use std::path::Path;

use serde_json::{Value, json};

pub(crate) use child::Child;
pub use events::{SubagentOutcome, SubagentPhase};

pub(crate) use child::{ChildEnv, ChildHeader, Finished};
pub(crate) use events::{SubagentEvent, TranscriptEvent};

use crate::engine::policy::ApprovalPolicy;
use crate::engine::tools::{self, ToolCtx, ToolError, names};
use crate::engine::types::ToolSpec;

/// The tool's name.
pub const TASK_TOOL: &str = tools::names::TASK;
/// At most this many subagents of one response run at once; the rest wait for a free place.
pub(crate) const MAX_CONCURRENT: usize = 4;
/// A child's iteration budget when the config names none (`subagent_max_iterations`).
pub(crate) const DEFAULT_MAX_ITERATIONS: u32 = 50;
/// The child's base system prompt (the parent's environment block and project instructions
/// follow it).
const PROMPT: &str = include_str!("../../../assets/subagent_prompt.md");

/// How subagents run (config `subagent_model`, `subagent_max_iterations`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentSettings {
    /// The model of every child; None: the main thread's model in force.
    pub model: Option<String>,
    /// Each child's iteration budget.
    pub max_iterations: u32,
}

impl Default for SubagentSettings {
    fn default() -> Self {
        SubagentSettings {
            model: None,
            max_iterations: DEFAULT_MAX_ITERATIONS,
        }
    }
}

/// What a child may call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChildTools {
    /// `bash` is offered (and runs unasked).
    pub bash: bool,
}

/// The read-only tools every child has.
const READ_ONLY: [&str; 4] = [names::READ_FILE, names::GREP, names::GLOB, names::LIST_DIR];

impl ChildTools {
    /// The child's tools under the parent's approval policy; `asked_once`: the session's one
    /// question of `AskOnce` was answered.
    pub fn for_policy(policy: ApprovalPolicy, asked_once: bool) -> ChildTools {
        let bash = match policy {
            ApprovalPolicy::Auto => true,
            ApprovalPolicy::AskOnce => asked_once,
            ApprovalPolicy::Ask => false,
        };
        ChildTools { bash }
    }

    /// The names, in the order the specs list them.
    pub fn names(self) -> Vec<String> {
        self.specs().into_iter().map(|s| s.name).collect()
    }

    /// The specs sent with the child's requests (the built-ins' own; with `bash`, the job
    /// tools for the jobs it starts, which end with its task).
    pub fn specs(self) -> Vec<ToolSpec> {
        tools::specs()
            .into_iter()
            .chain(crate::engine::jobs::specs())
            .filter(|s| self.offers(&s.name))
            .collect()
    }

    fn offers(self, name: &str) -> bool {
        READ_ONLY.contains(&name)
            || (self.bash && [names::BASH, names::JOB_OUTPUT, names::JOB_STOP].contains(&name))
    }

    /// Whether the child may make this call (in `ctx`'s workspace, reading its spill folder);
    /// the error is its result when not.
    pub fn check(self, name: &str, input: &Value, ctx: &ToolCtx) -> Result<(), ToolError> {
        if name == TASK_TOOL {
            return Err(ToolError(
                "`task` is not available to a subagent: a subagent cannot start subagents. Do \
                 the work with your own tools, or say in your report what is left."
                    .into(),
            ));
        }
        if !self.offers(name) {
            let why = match name {
                names::BASH => {
                    "`bash` is not available to this subagent: the user approves commands and \
                     cannot be asked from here"
                }
                _ if names::writes_files(name) => "a subagent cannot change files",
                _ => "it is not one of this subagent's tools",
            };
            return Err(ToolError(format!(
                "`{}` cannot be called here: {why}. Your tools are: {}. Say in your report what \
                 you could not do.",
                crate::engine::text::one_line(name, 100),
                self.names().join(", ")
            )));
        }
        if tools::leaves_workspace(name, input, &ctx.workspace, ctx.spill_dir.as_deref()) {
            return Err(ToolError(format!(
                "denied: `{}` would leave the workspace; only the user can approve that, call \
                 by call, and a subagent cannot ask.",
                tools::summary(name, input)
            )));
        }
        Ok(())
    }

    /// The tools paragraph of the child's prompt.
    fn describe(self) -> String {
        let mut s = String::from(
            "You can read_file, grep, glob and list_dir inside the workspace. You cannot change \
             files, ask the user or start subagents.",
        );
        if self.bash {
            s.push_str(
                " You can run commands with bash (they run without asking the user: only run \
                 commands that change nothing — builds, tests, `git log`, `git diff` are fine; \
                 nothing that writes, deletes, installs or pushes). A command run with \
                 run_in_background (a server to test against) keeps running while you work \
                 (job_output reads it, job_stop stops it) and is stopped when your task ends.",
            );
        } else {
            s.push_str(" You have no bash.");
        }
        s
    }
}

/// The `task` tool as the main thread's model sees it.
pub fn spec(child: ChildTools) -> ToolSpec {
    let bash = if child.bash {
        ", run commands with bash"
    } else {
        ""
    };
    ToolSpec {
        name: TASK_TOOL.into(),
        description: format!(
            "Start a subagent: a fresh session of the model with its own context window, which \
             works on `prompt` alone and returns only its final report as this tool's result. \
             Use it for reading that would fill your own context (searching a large codebase, \
             finding every use of something, reviewing a change) and for independent questions: \
             several task calls in one reply run at the same time (up to {MAX_CONCURRENT}). The \
             subagent sees neither this conversation nor your tool results, so the prompt must \
             say everything it needs: the goal, where to look, and what to report. It can \
             read_file, grep, glob and list_dir{bash}; it cannot change files or start \
             subagents. The user does not see its report: pass on what matters."
        ),
        input_schema: json!({
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "A few words naming the task (shown to the user), e.g. \"find the config loaders\"."},
                "prompt": {"type": "string", "description": "The task itself: everything the subagent needs to know, and what its report should contain."}
            },
            "required": ["description", "prompt"],
            "additionalProperties": false
        }),
    }
}

/// The arguments of one `task` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskInput {
    pub description: String,
    pub prompt: String,
}

impl TaskInput {
    /// The arguments, or the error the model gets back (no child is started then).
    pub fn parse(input: &Value) -> Result<TaskInput, ToolError> {
        if input.get(crate::engine::types::INVALID_JSON_KEY).is_some() {
            return Err(ToolError(
                "The arguments for `task` were not valid JSON, so no subagent started. Send the \
                 call again with a JSON object {\"description\": …, \"prompt\": …}."
                    .into(),
            ));
        }
        let text = |key: &str| {
            input
                .get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let prompt = text("prompt").ok_or_else(|| {
            ToolError(
                "`task` needs `prompt` (a non-empty string): the task, with everything the \
                 subagent needs to know."
                    .into(),
            )
        })?;
        let description = text("description")
            .map(|d| crate::engine::text::one_line(&d, 80))
            .unwrap_or_else(|| crate::engine::text::one_line(&prompt, 60));
        Ok(TaskInput {
            description,
            prompt,
        })
    }
}

/// The child's system prompt: its own base, then `context` (the parent session's environment
/// block and project instructions, as the parent has them).
pub fn system_prompt(workspace: &Path, child: ChildTools, context: &str) -> String {
    let base = PROMPT
        .replace("{workspace}", &workspace.display().to_string())
        .replace("{tools}", &child.describe());
    let context = context.trim();
    if context.is_empty() {
        base
    } else {
        format!("{}\n\n{context}\n", base.trim_end())
    }
}

#[cfg(test)]
mod tests;
