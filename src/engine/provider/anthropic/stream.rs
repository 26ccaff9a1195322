//! Anthropic Messages stream events → a [`ModelResponse`] (pure: events in, deltas and a response out).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use super::REDACTED_THINKING_PREFIX;
use crate::engine::provider::error::{self, ProviderError};
use crate::engine::provider::http::StreamState;
use crate::engine::provider::sse::SseEvent;
use crate::engine::types::{Block, Delta, INVALID_JSON_KEY, ModelResponse, Usage};

/// A content block index beyond this is treated as a malformed stream (guards the block table).
const MAX_BLOCKS: usize = 4096;

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    ty: Option<Cow<'a, str>>,
    index: Option<usize>,
    message: Option<MessageStart>,
    content_block: Option<BlockStart>,
    delta: Option<EventDelta>,
    usage: Option<EventUsage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct MessageStart {
    usage: Option<EventUsage>,
}

#[derive(Deserialize, Default)]
struct EventUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    server_tool_use: Option<ServerToolUsage>,
}

/// The server tools a response used (`usage.server_tool_use`), counted for billing.
#[derive(Deserialize, Default)]
struct ServerToolUsage {
    web_search_requests: Option<u64>,
}

#[derive(Deserialize)]
struct BlockStart {
    #[serde(rename = "type")]
    ty: String,
    text: Option<String>,
    id: Option<String>,
    name: Option<String>,
    input: Option<Value>,
    thinking: Option<String>,
    signature: Option<String>,
    data: Option<String>,
    tool_use_id: Option<String>,
    content: Option<Value>,
}

#[derive(Deserialize)]
struct EventDelta {
    #[serde(rename = "type")]
    ty: Option<String>,
    text: Option<String>,
    partial_json: Option<String>,
    thinking: Option<String>,
    signature: Option<String>,
    stop_reason: Option<String>,
}

/// A content block being streamed.
#[derive(Debug)]
enum Partial {
    Text(String),
    Thinking {
        thinking: String,
        signature: String,
    },
    Redacted(String),
    Tool {
        id: String,
        name: String,
        json: String,
        start: Option<Value>,
        /// The provider runs it itself (`server_tool_use`): no tool of ours answers it.
        server: bool,
    },
    /// A server-side web search's results (whole in the block's start).
    SearchResult {
        tool_use_id: String,
        content: Value,
    },
    /// A block type this client does not use: skipped.
    Ignored,
}

impl StreamState for AnthropicStream {
    fn on_event(
        &mut self,
        ev: &SseEvent,
        sink: &mut dyn FnMut(Delta),
    ) -> Result<(), ProviderError> {
        AnthropicStream::on_event(self, ev, sink)
    }
    fn is_done(&self) -> bool {
        AnthropicStream::is_done(self)
    }
    fn finish(self) -> Result<ModelResponse, ProviderError> {
        AnthropicStream::finish(self)
    }
}

/// The state of one streamed Anthropic response: feed it every SSE event with
/// [`AnthropicStream::on_event`], then take the response with [`AnthropicStream::finish`].
#[derive(Debug, Default)]
pub struct AnthropicStream {
    blocks: Vec<Option<Partial>>,
    usage: Usage,
    stop_reason: Option<String>,
    web_search_requests: u64,
    done: bool,
}

impl AnthropicStream {
    /// A stream before its first event.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `message_stop` arrived (the response is complete).
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Apply one event; text and thinking go to `sink` as they arrive. An `error` event or malformed
    /// JSON returns an error (never a panic).
    pub fn on_event(
        &mut self,
        ev: &SseEvent,
        sink: &mut dyn FnMut(Delta),
    ) -> Result<(), ProviderError> {
        let name = ev.event.as_deref().unwrap_or("unnamed");
        let parsed: Event<'_> = serde_json::from_str(&ev.data).map_err(|e| {
            ProviderError::broken_stream(match &ev.event {
                Some(n) => format!("malformed JSON in `{n}` event: {e}"),
                None => format!("malformed JSON in an event with no name: {e}"),
            })
        })?;
        let ty = parsed.ty.as_deref().unwrap_or(name);
        match ty {
            "message_start" => {
                if let Some(u) = parsed.message.and_then(|m| m.usage) {
                    self.apply_usage(&u);
                }
            }
            "content_block_start" => {
                let block = parsed
                    .content_block
                    .ok_or_else(|| missing(name, "content_block"))?;
                *self.slot(parsed.index, name)? = Some(start_block(block, sink));
            }
            "content_block_delta" => {
                let delta = parsed.delta.ok_or_else(|| missing(name, "delta"))?;
                apply_delta(self.slot(parsed.index, name)?, delta, sink);
            }
            "content_block_stop" => {}
            "message_delta" => {
                if let Some(reason) = parsed.delta.and_then(|d| d.stop_reason) {
                    self.stop_reason = Some(reason);
                }
                if let Some(u) = parsed.usage {
                    self.apply_usage(&u);
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                let err = match parsed.error {
                    Some(e) => error::from_error_json(&e),
                    None => {
                        ProviderError::other(format!("error event without details: {}", ev.data))
                    }
                };
                return Err(err);
            }
            // `ping` and event types added to the API later.
            _ => {}
        }
        Ok(())
    }

    /// The complete response, or a broken-stream error (retryable) when the stream ended before
    /// `message_stop`.
    pub fn finish(self) -> Result<ModelResponse, ProviderError> {
        if !self.done {
            return Err(ProviderError::broken_stream(
                "stream ended before message_stop",
            ));
        }
        let content = self
            .blocks
            .into_iter()
            .flatten()
            .filter_map(finish_block)
            .collect();
        Ok(ModelResponse {
            content,
            usage: self.usage,
            stop_reason: self.stop_reason,
            web_search_requests: self.web_search_requests,
        })
    }

    fn apply_usage(&mut self, u: &EventUsage) {
        let set = |field: &mut u64, v: Option<u64>| {
            if let Some(v) = v {
                *field = v;
            }
        };
        set(&mut self.usage.input_tokens, u.input_tokens);
        set(&mut self.usage.output_tokens, u.output_tokens);
        set(
            &mut self.usage.cache_creation_input_tokens,
            u.cache_creation_input_tokens,
        );
        set(
            &mut self.usage.cache_read_input_tokens,
            u.cache_read_input_tokens,
        );
        if let Some(n) = u
            .server_tool_use
            .as_ref()
            .and_then(|s| s.web_search_requests)
        {
            self.web_search_requests = n;
        }
    }

    /// The table slot for a block index, grown as needed.
    fn slot(
        &mut self,
        index: Option<usize>,
        name: &str,
    ) -> Result<&mut Option<Partial>, ProviderError> {
        let index = index.ok_or_else(|| missing(name, "index"))?;
        if index >= MAX_BLOCKS {
            return Err(ProviderError::broken_stream(format!(
                "`{name}` event with an impossible block index {index}"
            )));
        }
        if self.blocks.len() <= index {
            self.blocks.resize_with(index + 1, || None);
        }
        self.blocks
            .get_mut(index)
            .ok_or_else(|| missing(name, "index"))
    }
}

/// Apply one `content_block_delta` to its block's slot.
fn apply_delta(slot: &mut Option<Partial>, d: EventDelta, sink: &mut dyn FnMut(Delta)) {
    match (d.ty.as_deref(), slot) {
        (Some("text_delta"), slot) => {
            let text = d.text.unwrap_or_default();
            match slot {
                Some(Partial::Text(t)) => t.push_str(&text),
                // A delta for a block that never started: keep the text rather than lose it.
                s @ None => *s = Some(Partial::Text(text.clone())),
                Some(_) => return,
            }
            if !text.is_empty() {
                sink(Delta::Text(text));
            }
        }
        (Some("thinking_delta"), slot) => {
            let text = d.thinking.unwrap_or_default();
            match slot {
                Some(Partial::Thinking { thinking, .. }) => thinking.push_str(&text),
                s @ None => {
                    *s = Some(Partial::Thinking {
                        thinking: text.clone(),
                        signature: String::new(),
                    })
                }
                Some(_) => return,
            }
            if !text.is_empty() {
                sink(Delta::Thinking(text));
            }
        }
        (Some("signature_delta"), Some(Partial::Thinking { signature, .. })) => {
            signature.push_str(d.signature.as_deref().unwrap_or_default());
        }
        (Some("input_json_delta"), Some(Partial::Tool { json, .. })) => {
            json.push_str(d.partial_json.as_deref().unwrap_or_default());
        }
        _ => {}
    }
}

fn missing(event: &str, field: &str) -> ProviderError {
    ProviderError::broken_stream(format!("`{event}` event without `{field}`"))
}

fn start_block(b: BlockStart, sink: &mut dyn FnMut(Delta)) -> Partial {
    match b.ty.as_str() {
        "text" => {
            let text = b.text.unwrap_or_default();
            if !text.is_empty() {
                sink(Delta::Text(text.clone()));
            }
            Partial::Text(text)
        }
        "thinking" => {
            let thinking = b.thinking.unwrap_or_default();
            if !thinking.is_empty() {
                sink(Delta::Thinking(thinking.clone()));
            }
            Partial::Thinking {
                thinking,
                signature: b.signature.unwrap_or_default(),
            }
        }
        "redacted_thinking" => Partial::Redacted(b.data.unwrap_or_default()),
        ty @ ("tool_use" | "server_tool_use") => {
            let id = b.id.unwrap_or_default();
            let name = b.name.unwrap_or_default();
            sink(Delta::ToolUseStart {
                id: id.clone(),
                name: name.clone(),
            });
            Partial::Tool {
                id,
                name,
                json: String::new(),
                start: b.input,
                server: ty == "server_tool_use",
            }
        }
        "web_search_tool_result" => Partial::SearchResult {
            tool_use_id: b.tool_use_id.unwrap_or_default(),
            content: b.content.unwrap_or(Value::Null),
        },
        _ => Partial::Ignored,
    }
}

/// Parse a tool call's streamed arguments; anything that is not a JSON object is kept as raw text
/// under [`INVALID_JSON_KEY`].
pub(crate) fn tool_input(json: &str, start: Option<Value>) -> Value {
    if json.trim().is_empty() {
        return match start {
            Some(v @ Value::Object(_)) => v,
            _ => Value::Object(Default::default()),
        };
    }
    match serde_json::from_str::<Value>(json) {
        Ok(v @ Value::Object(_)) => v,
        _ => {
            let mut m = serde_json::Map::new();
            m.insert(INVALID_JSON_KEY.to_owned(), Value::String(json.to_owned()));
            Value::Object(m)
        }
    }
}

fn finish_block(p: Partial) -> Option<Block> {
    match p {
        Partial::Text(text) if text.is_empty() => None,
        Partial::Text(text) => Some(Block::Text { text }),
        Partial::Thinking {
            thinking,
            signature,
        } => Some(Block::Thinking {
            thinking,
            signature,
        }),
        Partial::Redacted(data) => Some(Block::Thinking {
            thinking: String::new(),
            signature: format!("{REDACTED_THINKING_PREFIX}{data}"),
        }),
        Partial::Tool {
            id,
            name,
            json,
            start,
            server: false,
        } => Some(Block::ToolUse {
            id,
            name,
            input: tool_input(&json, start),
            from_text: false,
        }),
        Partial::Tool {
            id,
            name,
            json,
            start,
            server: true,
        } => Some(Block::ServerToolUse {
            id,
            name,
            input: tool_input(&json, start),
        }),
        Partial::SearchResult {
            tool_use_id,
            content,
        } => Some(Block::WebSearchToolResult {
            tool_use_id,
            content,
        }),
        Partial::Ignored => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(name: &str, data: &str) -> SseEvent {
        SseEvent {
            event: Some(name.to_owned()),
            data: data.to_owned(),
        }
    }

    fn run(events: &[SseEvent]) -> (Result<ModelResponse, ProviderError>, Vec<Delta>) {
        let mut s = AnthropicStream::new();
        let mut deltas = Vec::new();
        for e in events {
            if let Err(err) = s.on_event(e, &mut |d| deltas.push(d)) {
                return (Err(err), deltas);
            }
        }
        (s.finish(), deltas)
    }

    #[test]
    fn message_delta_usage_overrides_start_usage() {
        let (r, _) = run(&[
            ev(
                "message_start",
                r#"{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":1}}}"#,
            ),
            ev(
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7,"input_tokens":12}}"#,
            ),
            ev("message_stop", r#"{"type":"message_stop"}"#),
        ]);
        let r = r.unwrap();
        assert_eq!(
            r.usage,
            Usage {
                input_tokens: 12,
                output_tokens: 7,
                cache_creation_input_tokens: 0,
                cache_read_input_tokens: 5
            }
        );
        assert_eq!(r.stop_reason.as_deref(), Some("end_turn"));
    }

    #[test]
    fn redacted_thinking_and_unknown_blocks() {
        let (r, deltas) = run(&[
            ev(
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"abc"}}"#,
            ),
            ev(
                "content_block_start",
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"mystery_block","id":"x"}}"#,
            ),
            ev(
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{}"}}"#,
            ),
            ev("message_stop", r#"{"type":"message_stop"}"#),
        ]);
        assert!(deltas.is_empty());
        assert_eq!(
            r.unwrap().content,
            vec![Block::Thinking {
                thinking: String::new(),
                signature: format!("{REDACTED_THINKING_PREFIX}abc")
            }]
        );
    }

    #[test]
    fn bad_events_are_errors_not_panics() {
        let (r, _) = run(&[ev(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":99999,"delta":{}}"#,
        )]);
        assert!(r.unwrap_err().message.contains("impossible block index"));
        let (r, _) = run(&[ev(
            "content_block_start",
            r#"{"type":"content_block_start"}"#,
        )]);
        assert!(r.unwrap_err().message.contains("without `content_block`"));
        let (r, _) = run(&[ev("ping", "{not json")]);
        assert_eq!(
            r.unwrap_err().message.split(':').next(),
            Some("malformed JSON in `ping` event")
        );
    }

    #[test]
    fn tool_input_forms() {
        assert_eq!(tool_input("", None), serde_json::json!({}));
        assert_eq!(
            tool_input(" ", Some(serde_json::json!({"a":1}))),
            serde_json::json!({"a":1})
        );
        assert_eq!(
            tool_input(r#"{"a":[1]}"#, None),
            serde_json::json!({"a":[1]})
        );
        assert_eq!(
            tool_input("[1,2]", None),
            serde_json::json!({INVALID_JSON_KEY: "[1,2]"})
        );
        assert_eq!(
            tool_input(r#"{"a":"#, None),
            serde_json::json!({INVALID_JSON_KEY: r#"{"a":"#})
        );
    }
}
