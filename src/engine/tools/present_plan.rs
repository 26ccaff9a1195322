//! The plan-mode tool, `present_plan`: its schema, the check of its one argument (the plan's
//! Markdown, not empty, not oversized), its summary line, and the words plan mode adds to the
//! system prompt. The session layer offers it in plan mode only, writes the plan to its file and
//! ends the turn (`session/planning.rs`).

use serde_json::{Value, json};

use super::ToolError;
use super::names::PRESENT_PLAN as NAME;
use crate::engine::types::ToolSpec;

/// A plan holds at most this many characters (a plan is a page or two, not a dump).
pub const PLAN_MAX_CHARS: usize = 100_000;

/// What the system prompt says while the session plans.
pub const PLAN_MODE_PROMPT: &str = "# Plan mode\n\
You are in plan mode: the user wants a plan before anything changes. Read, search and list \
files to understand the task, but change nothing: the tools offered here cannot write files, \
and any `bash` command runs in a read-only sandbox. When you know enough, write the plan in \
Markdown (the goal, the files to change and how, the order of the steps, how to verify, the \
risks and open questions) and call `present_plan` with it once. Then stop: the user edits the \
plan and decides whether and where it is carried out.";

/// The tool as the model sees it.
pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME.into(),
        description: "Present the finished plan to the user, as Markdown. It is saved as a \
                      file the user edits before choosing to implement it here, to implement it \
                      in a fresh session that starts from the file, or to keep planning. Call it \
                      once, when the plan is complete, then end your turn."
            .into(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "plan": {
                    "type": "string",
                    "description": "The whole plan in Markdown: goal, steps with the files they touch, verification, risks."
                }
            },
            "required": ["plan"],
            "additionalProperties": false
        }),
    }
}

/// The plan's Markdown from a call's arguments (trimmed at its end); an error for the model when
/// it is missing, empty or too long.
pub fn parse_call(input: &Value) -> Result<String, ToolError> {
    let map = super::arguments(NAME, input)?;
    let plan = match map.get("plan") {
        Some(Value::String(s)) => s.trim_end(),
        None | Some(Value::Null) => {
            return Err(ToolError(format!(
                "`{NAME}`: the argument `plan` (the plan in Markdown) is missing."
            )));
        }
        Some(_) => {
            return Err(ToolError(format!(
                "`{NAME}`: `plan` must be a string of Markdown."
            )));
        }
    };
    if plan.trim().is_empty() {
        return Err(ToolError(format!(
            "`{NAME}`: the plan is empty; write the plan itself in Markdown."
        )));
    }
    let chars = plan.chars().count();
    if chars > PLAN_MAX_CHARS {
        return Err(ToolError(format!(
            "`{NAME}`: the plan has {chars} characters; a plan holds at most {PLAN_MAX_CHARS}. \
             Keep it to what the work needs."
        )));
    }
    Ok(format!("{plan}\n"))
}

/// `present_plan: <the plan's first heading or line>`.
pub fn summary(input: &Value) -> String {
    let first = input
        .get("plan")
        .and_then(Value::as_str)
        .and_then(|p| p.lines().map(str::trim).find(|l| !l.is_empty()))
        .map(|l| crate::engine::text::one_line(l.trim_start_matches('#').trim(), 80));
    match first {
        Some(line) if !line.is_empty() => format!("{NAME}: {line}"),
        _ => NAME.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_is_read_checked_and_summarised() {
        let ok = parse_call(&json!({"plan": "# Fix the lexer\n\n1. Read it\n\n"}));
        assert_eq!(ok.ok().as_deref(), Some("# Fix the lexer\n\n1. Read it\n"));
        for (bad, says) in [
            (json!({}), "is missing"),
            (json!({"plan": "  \n"}), "is empty"),
            (json!({"plan": 3}), "must be a string"),
            (
                json!({"plan": "x".repeat(PLAN_MAX_CHARS + 1)}),
                "at most 100000",
            ),
        ] {
            let e = parse_call(&bad).err().map(|e| e.0).unwrap_or_default();
            assert!(e.contains(says), "{bad}: {e}");
        }
        assert_eq!(
            summary(&json!({"plan": "\n## Fix the lexer\nsteps"})),
            "present_plan: Fix the lexer"
        );
        assert_eq!(summary(&json!({})), "present_plan");
        assert_eq!(spec().name, NAME);
    }
}
