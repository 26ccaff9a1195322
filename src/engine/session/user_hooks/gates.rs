//! What the hooks decide, read from their outcome without running anything: whether a prompt,
//! a tool call, the end of a turn or a handoff goes on, and the inputs the handoff's hooks get.

use serde_json::Value;

use crate::engine::hooks::{Decision, HandoffTrigger, HookEvent, HookInput, Outcome, ToolCall};
use crate::engine::ledger::HandoffCause;

/// Whether a prompt or a handoff goes on after its hooks.
#[derive(Debug, PartialEq, Eq)]
pub(in crate::engine::session) enum Gate {
    /// Go on, with this text (context for the model, or the handoff's focus).
    Go(Option<String>),
    /// A hook blocked it; the reason is for the user.
    Blocked(String),
    /// Esc or shutdown while the hooks ran.
    Aborted,
}

/// What `PreToolUse` hooks decided about a call.
#[derive(Debug, PartialEq, Eq)]
pub(in crate::engine::session) enum ToolGate {
    /// Go on to the approval: `allow` skips it, `ask` forces it; `context` goes with the result.
    Go {
        allow: bool,
        ask: bool,
        context: Option<String>,
    },
    /// Denied: the reason is the call's result.
    Blocked(String),
    Aborted,
}

/// Whether a turn ends after its `Stop` hooks.
pub(in crate::engine::session) enum StopGate {
    End,
    /// A hook refused the end: its reason was given to the model; send another request.
    Continue,
    Aborted,
}

/// Why the hooks stopped what they ran before (a block's reason, else a `continue: false`).
fn refusal(outcome: &Outcome) -> Option<String> {
    outcome
        .block_reason()
        .map(str::to_string)
        .or_else(|| outcome.stop.clone())
}

/// `UserPromptSubmit`'s verdict: the prompt is dropped (the reason is the user's), or the context
/// to send with it.
pub(super) fn prompt_gate(outcome: &Outcome) -> Gate {
    if let Some(reason) = refusal(outcome) {
        return Gate::Blocked(reason);
    }
    Gate::Go(
        outcome
            .context_text()
            .map(|t| context_for(HookEvent::UserPromptSubmit, &t)),
    )
}

/// `PreToolUse`'s verdict on one call.
pub(super) fn tool_gate(outcome: Outcome) -> ToolGate {
    let context = outcome
        .context_text()
        .map(|t| context_for(HookEvent::PreToolUse, &t));
    match outcome.decision {
        Decision::Block { reason } => {
            ToolGate::Blocked(format!("denied by a PreToolUse hook: {reason}"))
        }
        _ if outcome.stop.is_some() => ToolGate::Blocked(format!(
            "stopped by a PreToolUse hook: {}",
            outcome.stop.unwrap_or_default()
        )),
        Decision::Allow { .. } => ToolGate::Go {
            allow: true,
            ask: false,
            context,
        },
        Decision::Ask { .. } => ToolGate::Go {
            allow: false,
            ask: true,
            context,
        },
        Decision::None => ToolGate::Go {
            allow: false,
            ask: false,
            context,
        },
    }
}

/// `PreHandoff`'s verdict: refused (the reason), or the focus to write with (the given `focus`
/// and the hooks' text).
pub(super) fn handoff_gate(
    outcome: &Outcome,
    focus: Option<String>,
) -> Result<Option<String>, String> {
    if let Some(reason) = refusal(outcome) {
        return Err(reason);
    }
    Ok(match (focus, outcome.context_text()) {
        (Some(f), Some(more)) => Some(format!("{f}\n{more}")),
        (f, more) => f.or(more),
    })
}

/// `PreHandoff`'s input (`manual`: `/handoff`, else automatic).
pub(in crate::engine::session) fn pre_handoff_input(
    manual: bool,
    focus: &Option<String>,
) -> HookInput {
    HookInput::PreHandoff {
        trigger: if manual {
            HandoffTrigger::Manual
        } else {
            HandoffTrigger::Auto
        },
        focus: focus.clone(),
    }
}

/// `HandoffFrozen`'s input for the document of `step` at `path`, for `generation`.
pub(in crate::engine::session) fn frozen_input(
    cause: HandoffCause,
    path: &std::path::Path,
    step: String,
    generation: u32,
) -> HookInput {
    HookInput::HandoffFrozen {
        trigger: match cause {
            // A plan implemented in a fresh session is the user's choice too.
            HandoffCause::Manual | HandoffCause::Plan => HandoffTrigger::Manual,
            HandoffCause::Pressure | HandoffCause::Overflow => HandoffTrigger::Auto,
        },
        path: path.to_path_buf(),
        step,
        generation,
    }
}

pub(super) fn tool_call(id: &str, name: &str, input: &Value) -> ToolCall {
    ToolCall {
        id: id.to_string(),
        name: name.to_string(),
        input: input.clone(),
    }
}

/// Hook text for the model, marked with the event it came from.
pub(super) fn context_for(event: HookEvent, text: &str) -> String {
    format!("[{event} hook]\n{text}")
}

#[cfg(test)]
#[path = "gates_tests.rs"]
mod tests;
