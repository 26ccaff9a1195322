//! The provider's own web search (Anthropic's server tool, `web_search = true`): the searches a
//! reply ran, as a query and a line of what each found, for the front ends. The provider ran
//! them; nothing here runs anything, and the blocks go back to the provider unchanged.

use serde_json::Value;

use crate::engine::types::{Block, Message};

/// The tool's name in a reply.
pub const NAME: &str = "web_search";

/// One search of a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search {
    pub id: String,
    pub input: Value,
    /// `web_search: rust html to markdown`.
    pub summary: String,
    /// What it found, one page a line (or why it failed).
    pub found: String,
    pub failed: bool,
}

/// The searches of `msg`, each with its results when the reply holds them.
pub fn searches(msg: &Message) -> Vec<Search> {
    msg.content
        .iter()
        .filter_map(|b| match b {
            Block::ServerToolUse { id, name, input } => {
                let query = input.get("query").and_then(Value::as_str).unwrap_or("");
                let (found, failed) = msg
                    .content
                    .iter()
                    .find_map(|r| match r {
                        Block::WebSearchToolResult {
                            tool_use_id,
                            content,
                        } if tool_use_id == id => Some(found(content)),
                        _ => None,
                    })
                    .unwrap_or_else(|| ("(no results in the reply)".into(), false));
                Some(Search {
                    id: id.clone(),
                    input: input.clone(),
                    summary: format!("{name}: {}", crate::engine::text::one_line(query, 100)),
                    found,
                    failed,
                })
            }
            _ => None,
        })
        .collect()
}

/// The pages of a search result, one a line, or its error code.
fn found(content: &Value) -> (String, bool) {
    if let Some(code) = content.get("error_code").and_then(Value::as_str) {
        return (format!("the search failed: {code}"), true);
    }
    let pages: Vec<String> = content
        .as_array()
        .map(|results| {
            results
                .iter()
                .filter_map(|r| {
                    let url = r.get("url")?.as_str()?;
                    let title = r.get("title").and_then(Value::as_str).unwrap_or(url);
                    Some(format!("{title} <{url}>"))
                })
                .collect()
        })
        .unwrap_or_default();
    if pages.is_empty() {
        ("no pages found".into(), false)
    } else {
        (pages.join("\n"), false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::types::Role;
    use serde_json::json;

    #[test]
    fn a_reply_s_searches_with_what_they_found() {
        let msg = Message {
            role: Role::Assistant,
            content: vec![
                Block::ServerToolUse {
                    id: "srvtoolu_1".into(),
                    name: NAME.into(),
                    input: json!({"query": "htmd crate"}),
                },
                Block::WebSearchToolResult {
                    tool_use_id: "srvtoolu_1".into(),
                    content: json!([{"type": "web_search_result", "url": "https://docs.rs/htmd",
                        "title": "htmd - Rust", "encrypted_content": "abc"}]),
                },
                Block::ServerToolUse {
                    id: "srvtoolu_2".into(),
                    name: NAME.into(),
                    input: json!({"query": "x"}),
                },
                Block::WebSearchToolResult {
                    tool_use_id: "srvtoolu_2".into(),
                    content: json!({"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}),
                },
                Block::text("Found it."),
            ],
        };
        let s = searches(&msg);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].summary, "web_search: htmd crate");
        assert_eq!(s[0].found, "htmd - Rust <https://docs.rs/htmd>");
        assert!(!s[0].failed);
        assert_eq!(s[1].found, "the search failed: max_uses_exceeded");
        assert!(s[1].failed);
    }
}
