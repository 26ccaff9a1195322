//! Calls a crash left without results: a session that ended mid-tool (a crash, a kill) left
//! `tool_use` blocks whose `tool_result` never came; each is answered with what is known to have
//! happened, so the history is valid again.

use crate::engine::tools::names;
use crate::engine::types::{Block, Message, Role};

/// What a call left without a result by a crash is answered with: what is known to have happened.
/// Commands die with the agent (their process group is killed, `tools::lifeline`); a file tool may
/// have finished its change before the end.
fn interrupted_result(tool: &str) -> String {
    let what = match tool {
        names::BASH => "the command and every process it started were killed with it",
        t if names::writes_files(t) => {
            "the change may or may not have been made: check the file before you retry"
        }
        t if t.starts_with("mcp__") => "what the tool did before that is unknown",
        _ => "it changed nothing",
    };
    format!("interrupted: flower-tui stopped before this call finished; {what}")
}

/// Give every `tool_use` without a `tool_result` in the next message an "interrupted" result
/// ([`interrupted_result`]).
pub fn repair_dangling_tool_uses(messages: &mut Vec<Message>) -> Option<usize> {
    let mut fixed = 0;
    let mut i = 0;
    while let Some(message) = messages.get(i) {
        if message.role == Role::Assistant {
            let missing = unanswered(message, messages.get(i + 1));
            if !missing.is_empty() {
                fixed += missing.len();
                match messages.get_mut(i + 1) {
                    Some(next) if next.role == Role::User => {
                        // Tool results come first in a user message.
                        let rest = std::mem::take(&mut next.content);
                        next.content = missing;
                        next.content.extend(rest);
                    }
                    _ => messages.insert(
                        i + 1,
                        Message {
                            role: Role::User,
                            content: missing,
                        },
                    ),
                }
            }
        }
        i += 1;
    }
    (fixed > 0).then_some(fixed)
}

/// The "interrupted" results for the calls of `call` that `next` does not answer.
fn unanswered(call: &Message, next: Option<&Message>) -> Vec<Block> {
    let answered: Vec<&str> = match next {
        Some(next) if next.role == Role::User => next
            .content
            .iter()
            .filter_map(|b| match b {
                Block::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    call.tool_uses()
        .filter(|(id, _, _)| !answered.contains(id))
        .map(|(id, name, _)| Block::ToolResult {
            tool_use_id: id.to_string(),
            content: interrupted_result(name),
            is_error: true,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dangling_tool_uses_get_results() {
        let call = |id: &str| Message {
            role: Role::Assistant,
            content: vec![Block::ToolUse {
                id: id.into(),
                name: names::BASH.into(),
                input: serde_json::json!({}),
                from_text: false,
            }],
        };
        let mut msgs = vec![Message::user("go"), call("a")];
        assert_eq!(repair_dangling_tool_uses(&mut msgs), Some(1));
        assert_eq!(msgs.len(), 3);
        assert!(msgs[2].has_tool_result());
        assert_eq!(repair_dangling_tool_uses(&mut msgs), None, "idempotent");
        let mut msgs = vec![Message::user("go"), call("b"), Message::user("next")];
        assert_eq!(repair_dangling_tool_uses(&mut msgs), Some(1));
        assert!(matches!(msgs[2].content[0], Block::ToolResult { .. }));
        assert_eq!(msgs[2].text(), "next");
    }
}
