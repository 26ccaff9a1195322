//! Our messages in the Messages API's shape: text, thinking, tool calls and results, images
//! (`image` blocks with a base64 `source`; an image a tool returned goes inside that call's
//! `tool_result`), and the server tool blocks of a web search, sent back as they came.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::REDACTED_THINKING_PREFIX;
use crate::engine::images::ImageRef;
use crate::engine::provider::set;
use crate::engine::types::{Block, Message, Role};

/// An `image` block for `image`, or a text block saying why it could not be read.
pub(crate) fn image_json(image: &ImageRef) -> Value {
    match image.base64() {
        Ok(data) => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": image.media_type, "data": data},
        }),
        Err(e) => {
            json!({"type": "text", "text": image.stand_in(&format!("could not be read ({e})"))})
        }
    }
}

/// One of our blocks in the API's shape; `None` for blocks that cannot be sent back (a thinking
/// block without a signature, an empty text block). `server_tools`: the request offers the web
/// search, so its blocks go back as they came (else as a line of text).
fn block_json(b: &Block, server_tools: bool) -> Option<Value> {
    Some(match b {
        Block::Text { text } if text.is_empty() => return None,
        Block::Text { text } => json!({"type": "text", "text": text}),
        Block::Thinking { signature, .. } if signature.is_empty() => return None,
        Block::Thinking {
            thinking,
            signature,
        } => match signature.strip_prefix(REDACTED_THINKING_PREFIX) {
            Some(data) => json!({"type": "redacted_thinking", "data": data}),
            None => json!({"type": "thinking", "thinking": thinking, "signature": signature}),
        },
        Block::ToolUse {
            id, name, input, ..
        } => {
            let input = if input.is_object() {
                input.clone()
            } else {
                json!({})
            };
            json!({"type": "tool_use", "id": id, "name": name, "input": input})
        }
        Block::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => {
            let mut v =
                json!({"type": "tool_result", "tool_use_id": tool_use_id, "content": content});
            if *is_error {
                set(&mut v, "is_error", Value::Bool(true));
            }
            v
        }
        Block::Image { image, .. } => image_json(image),
        Block::ServerToolUse { id, name, input } if server_tools => {
            json!({"type": "server_tool_use", "id": id, "name": name, "input": input})
        }
        Block::ServerToolUse { name, input, .. } => {
            json!({"type": "text", "text": format!("[{name} {input}]")})
        }
        Block::WebSearchToolResult {
            tool_use_id,
            content,
        } if server_tools => {
            json!({"type": "web_search_tool_result", "tool_use_id": tool_use_id, "content": content})
        }
        Block::WebSearchToolResult { content, .. } => {
            json!({"type": "text", "text": search_summary(content)})
        }
    })
}

/// A web search's results as one line per page (for a request that no longer offers the search).
pub(crate) fn search_summary(content: &Value) -> String {
    let pages: Vec<String> = content
        .as_array()
        .map(|results| {
            results
                .iter()
                .filter_map(|r| {
                    let url = r.get("url")?.as_str()?;
                    let title = r.get("title").and_then(Value::as_str).unwrap_or(url);
                    Some(format!("- {title} <{url}>"))
                })
                .collect()
        })
        .unwrap_or_default();
    if pages.is_empty() {
        "[web search: no results]".into()
    } else {
        format!("[web search results]\n{}", pages.join("\n"))
    }
}

/// One message in the API's shape. The images a tool returned join their call's `tool_result`
/// (its content becomes the text and the images).
pub(crate) fn message_json(m: &Message, server_tools: bool) -> Value {
    let role = match m.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    let results: HashSet<&str> = m
        .content
        .iter()
        .filter_map(|b| match b {
            Block::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
            _ => None,
        })
        .collect();
    let nested = |b: &Block| matches!(b, Block::Image { tool_use_id: Some(id), .. } if results.contains(id.as_str()));
    let mut content: Vec<Value> = Vec::with_capacity(m.content.len());
    for b in m.content.iter().filter(|b| !nested(b)) {
        let Some(mut v) = block_json(b, server_tools) else {
            continue;
        };
        if let Block::ToolResult {
            tool_use_id,
            content: text,
            ..
        } = b
        {
            let images: Vec<Value> = m
                .content
                .iter()
                .filter_map(|i| match i {
                    Block::Image {
                        image,
                        tool_use_id: Some(id),
                    } if id == tool_use_id => Some(image_json(image)),
                    _ => None,
                })
                .collect();
            if !images.is_empty() {
                let mut parts = Vec::with_capacity(images.len() + 1);
                if !text.is_empty() {
                    parts.push(json!({"type": "text", "text": text}));
                }
                parts.extend(images);
                set(&mut v, "content", Value::Array(parts));
            }
        }
        content.push(v);
    }
    if content.is_empty() {
        // The API refuses empty messages and empty text blocks; keep the turn structure.
        content.push(json!({"type": "text", "text": "(empty)"}));
    }
    json!({"role": role, "content": content})
}
