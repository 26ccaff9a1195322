//! What a request the fake recorded says: its conversation as text, the text blocks of its first
//! and last messages, the tools it offered, and its body without the prompt-cache marks.

use serde_json::Value;

pub use super::fake::body::{last_blocks, last_user_text};

/// Everything a request sent as conversation (its `messages`), as JSON text.
pub fn sent(body: &Value) -> String {
    serde_json::to_string(&body["messages"]).unwrap()
}

/// The text of the first block of the first message.
pub fn first_text(body: &Value) -> String {
    body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The text blocks of the first message.
pub fn first_blocks(body: &Value) -> Vec<String> {
    body["messages"][0]["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The text blocks of the last message (none when its content is a plain string).
pub fn last_texts(body: &Value) -> Vec<String> {
    last_blocks(body)
        .iter()
        .filter_map(|b| b["text"].as_str().map(str::to_string))
        .collect()
}

/// The names of the tools the request offered.
pub fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// `v` without its `cache_control` marks (where the prompt cache breaks is not what is sent).
pub fn unmarked(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "cache_control")
                .map(|(k, v)| (k.clone(), unmarked(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(unmarked).collect()),
        other => other.clone(),
    }
}
