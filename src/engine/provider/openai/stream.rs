//! OpenAI Chat Completions stream chunks → a [`ModelResponse`] (pure: chunks in, deltas and a response out).

use serde::Deserialize;
use serde_json::Value;

use crate::engine::fsutil::new_id;
use crate::engine::provider::anthropic::tool_input;
use crate::engine::provider::error::{self, ProviderError};
use crate::engine::provider::http::StreamState;
use crate::engine::provider::sse::SseEvent;
use crate::engine::types::{Block, Delta, ModelResponse, Usage};

/// More parallel tool calls than this in one response is treated as a malformed stream.
const MAX_CALLS: usize = 1024;

#[derive(Deserialize)]
struct Chunk {
    choices: Option<Vec<Choice>>,
    usage: Option<ChunkUsage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    index: Option<u64>,
    delta: Option<ChunkDelta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ChunkDelta {
    content: Option<String>,
    reasoning_content: Option<String>,
    /// OpenRouter's name for the same thing.
    reasoning: Option<String>,
    tool_calls: Option<Vec<CallFragment>>,
}

#[derive(Deserialize)]
struct CallFragment {
    index: Option<u64>,
    id: Option<String>,
    function: Option<FunctionFragment>,
}

#[derive(Deserialize)]
struct FunctionFragment {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct ChunkUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u64>,
}

#[derive(Debug, Default)]
struct Call {
    /// The stream's `index` for this call.
    index: Option<u64>,
    id: String,
    name: String,
    args: String,
    announced: bool,
}

impl StreamState for OpenAiStream {
    fn on_event(
        &mut self,
        ev: &SseEvent,
        sink: &mut dyn FnMut(Delta),
    ) -> Result<(), ProviderError> {
        OpenAiStream::on_event(self, ev, sink)
    }
    fn is_done(&self) -> bool {
        OpenAiStream::is_done(self)
    }
    /// Cut after the finish reason: the answer is whole, only the usage chunk is lost.
    fn whole_if_cut(&self) -> bool {
        self.is_complete()
    }
    fn finish(self) -> Result<ModelResponse, ProviderError> {
        OpenAiStream::finish(self)
    }
}

/// The state of one streamed Chat Completions response: feed it each SSE event with
/// [`OpenAiStream::on_event`], then take the response with [`OpenAiStream::finish`].
#[derive(Debug, Default)]
pub struct OpenAiStream {
    text: String,
    calls: Vec<Call>,
    usage: Usage,
    finish_reason: Option<String>,
    done: bool,
}

impl OpenAiStream {
    /// A stream before its first chunk.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `data: [DONE]` arrived.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Whether a terminal event arrived: `[DONE]` or a `finish_reason` (only the usage chunk may
    /// still follow).
    pub fn is_complete(&self) -> bool {
        self.done || self.finish_reason.is_some()
    }

    /// Apply one SSE event (its name, when the server gives one, only shows in errors).
    pub fn on_event(
        &mut self,
        ev: &SseEvent,
        sink: &mut dyn FnMut(Delta),
    ) -> Result<(), ProviderError> {
        self.apply(ev.event.as_deref(), &ev.data, sink)
    }

    /// Apply one `data:` payload. Content and reasoning go to `sink`; an `{"error": …}` chunk
    /// returns its error, malformed JSON a broken-stream error (never a panic).
    #[cfg(test)]
    pub fn on_data(
        &mut self,
        data: &str,
        sink: &mut dyn FnMut(Delta),
    ) -> Result<(), ProviderError> {
        self.apply(None, data, sink)
    }

    fn apply(
        &mut self,
        name: Option<&str>,
        data: &str,
        sink: &mut dyn FnMut(Delta),
    ) -> Result<(), ProviderError> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| {
            ProviderError::broken_stream(match name {
                Some(n) => format!("malformed JSON in `{n}` event: {e}"),
                None => format!(
                    "malformed JSON in an event with no name (a chat.completion.chunk): {e}"
                ),
            })
        })?;
        if let Some(e) = chunk.error {
            return Err(error::from_error_json(&e));
        }
        if let Some(u) = chunk.usage {
            let prompt = u.prompt_tokens.unwrap_or(0);
            let cached = u
                .prompt_tokens_details
                .and_then(|d| d.cached_tokens)
                .unwrap_or(0)
                .min(prompt);
            self.usage = Usage {
                input_tokens: prompt - cached,
                output_tokens: u.completion_tokens.unwrap_or(0),
                cache_creation_input_tokens: 0,
                cache_read_input_tokens: cached,
            };
        }
        for choice in chunk.choices.unwrap_or_default() {
            if choice.index.unwrap_or(0) != 0 {
                continue;
            }
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason);
            }
            let Some(delta) = choice.delta else { continue };
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                self.text.push_str(&text);
                sink(Delta::Text(text));
            }
            if let Some(r) = delta
                .reasoning_content
                .or(delta.reasoning)
                .filter(|t| !t.is_empty())
            {
                sink(Delta::Thinking(r));
            }
            for frag in delta.tool_calls.unwrap_or_default() {
                self.apply_call(frag, sink)?;
            }
        }
        Ok(())
    }

    fn apply_call(
        &mut self,
        frag: CallFragment,
        sink: &mut dyn FnMut(Delta),
    ) -> Result<(), ProviderError> {
        let id = frag.id.filter(|s| !s.is_empty());
        let existing = match (frag.index, &id) {
            // The same index with a different id is a new call (some servers reuse index 0).
            (Some(i), id) => self
                .calls
                .iter()
                .rposition(|c| c.index == Some(i))
                .filter(|&p| {
                    id.as_ref().is_none_or(|id| {
                        self.calls
                            .get(p)
                            .is_some_and(|c| c.id.is_empty() || c.id == *id)
                    })
                }),
            (None, Some(id)) => self.calls.iter().position(|c| c.id == *id),
            (None, None) => self.calls.len().checked_sub(1),
        };
        let pos = match existing {
            Some(p) => p,
            None => {
                if self.calls.len() >= MAX_CALLS {
                    return Err(ProviderError::other("stream sent too many tool calls"));
                }
                self.calls.push(Call {
                    index: frag.index,
                    ..Call::default()
                });
                self.calls.len() - 1
            }
        };
        let Some(call) = self.calls.get_mut(pos) else {
            return Err(ProviderError::broken_stream(
                "tool call fragment out of order",
            ));
        };
        if let Some(id) = id
            && call.id.is_empty()
        {
            call.id = id;
        }
        if let Some(f) = frag.function {
            if let Some(name) = f.name.filter(|n| !n.is_empty())
                && call.name.is_empty()
            {
                call.name = name;
            }
            if let Some(args) = f.arguments {
                call.args.push_str(&args);
            }
        }
        if !call.announced && !call.name.is_empty() {
            if call.id.is_empty() {
                call.id = format!("call_{}", new_id());
            }
            call.announced = true;
            sink(Delta::ToolUseStart {
                id: call.id.clone(),
                name: call.name.clone(),
            });
        }
        Ok(())
    }

    /// The complete response, or a broken-stream error (retryable) when the stream ended before
    /// both `[DONE]` and a `finish_reason`.
    pub fn finish(self) -> Result<ModelResponse, ProviderError> {
        if !self.done && self.finish_reason.is_none() {
            return Err(ProviderError::broken_stream("stream ended before [DONE]"));
        }
        let mut content = Vec::new();
        if !self.text.is_empty() {
            content.push(Block::Text { text: self.text });
        }
        let has_calls = !self.calls.is_empty();
        for c in self.calls {
            let id = if c.id.is_empty() {
                format!("call_{}", new_id())
            } else {
                c.id
            };
            content.push(Block::ToolUse {
                id,
                name: c.name,
                input: tool_input(&c.args, None),
                from_text: false,
            });
        }
        let stop_reason = match self.finish_reason.as_deref() {
            _ if has_calls => Some("tool_use".to_owned()),
            Some("tool_calls" | "function_call") => Some("tool_use".to_owned()),
            Some("stop") => Some("end_turn".to_owned()),
            Some("length") => Some("max_tokens".to_owned()),
            Some(other) => Some(other.to_owned()),
            None => None,
        };
        Ok(ModelResponse {
            content,
            usage: self.usage,
            stop_reason,
            web_search_requests: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&str]) -> (Result<ModelResponse, ProviderError>, Vec<Delta>) {
        let mut s = OpenAiStream::new();
        let mut deltas = Vec::new();
        for c in chunks {
            if let Err(e) = s.on_data(c, &mut |d| deltas.push(d)) {
                return (Err(e), deltas);
            }
        }
        (s.finish(), deltas)
    }

    #[test]
    fn reused_index_with_new_id_is_a_new_call_and_missing_id_is_generated() {
        let (r, deltas) = run(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"x","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"y","arguments":"{\"k\":1}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"z","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        ]);
        let r = r.unwrap();
        let calls: Vec<_> = r
            .message()
            .tool_uses()
            .map(|(id, n, i)| (id.to_owned(), n.to_owned(), i.clone()))
            .collect();
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert_eq!(calls[0], ("a".into(), "x".into(), serde_json::json!({})));
        assert_eq!(
            calls[1],
            ("b".into(), "y".into(), serde_json::json!({"k":1}))
        );
        assert_eq!(r.stop_reason.as_deref(), Some("tool_use"));
        assert_eq!(deltas.len(), 2);
    }

    #[test]
    fn no_done_and_no_finish_reason_is_a_network_error() {
        let (r, _) = run(&[r#"{"choices":[{"index":0,"delta":{"content":"hi"}}]}"#]);
        let e = r.unwrap_err();
        assert!(e.retryable);
        assert_eq!(e.message, "stream ended before [DONE]");
        let (r, _) = run(&[
            r#"{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"length"}]}"#,
        ]);
        assert_eq!(r.unwrap().stop_reason.as_deref(), Some("max_tokens"));
    }

    #[test]
    fn cached_more_than_prompt_does_not_underflow() {
        let (r, _) = run(&[
            r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":9}}}"#,
            "[DONE]",
        ]);
        let u = r.unwrap().usage;
        assert_eq!(
            (u.input_tokens, u.cache_read_input_tokens, u.output_tokens),
            (0, 5, 2)
        );
    }
}
