//! The last message of a request body: what the fake's writing route and the suites' checks read.

use serde_json::Value;

/// The content blocks of the last message (none when its content is a plain string).
pub fn last_blocks(body: &Value) -> Vec<Value> {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_array())
        .cloned()
        .unwrap_or_default()
}

/// The text of the last user message: its string, or its text blocks joined by newlines.
pub fn last_user_text(body: &Value) -> String {
    let Some(last) = body["messages"].as_array().and_then(|m| m.last()) else {
        return String::new();
    };
    match &last["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
