//! OpenAI-compatible Chat Completions (`POST {base}/v1/chat/completions`, streamed): OpenAI, OpenRouter,
//! vLLM, llama.cpp, Ollama, LM Studio.
//!
//! The output cap is sent as `max_tokens`, which every compatible server understands. OpenAI's reasoning
//! models refuse it and ask for `max_completion_tokens`; on that answer the provider resends the request
//! once with `max_completion_tokens` and keeps using it.
//!
//! A reply whose whole text is tool calls of the offered tools, written as text by a model that
//! does not use native tool calls, comes back as those calls ([`super::text_calls`]).

mod stream;

pub(crate) use stream::OpenAiStream;

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use super::error::{ErrorKind, ProviderError};
use super::http::{self, LazyClient};
use super::{BoxFuture, DeltaSink, Provider};
use crate::engine::images::ImageRef;
use crate::engine::types::{Block, Message, ModelRequest, ModelResponse, Role, ToolChoice};

/// The default base URL.
pub(crate) const DEFAULT_BASE_URL: &str = "https://api.openai.com";
/// The model used when neither the request nor the config names one.
pub(crate) const DEFAULT_MODEL: &str = "gpt-4o";
/// `max_tokens` when neither the request nor the config sets one.
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 8192;

/// Settings for [`OpenAiProvider`].
pub type OpenAiConfig = super::http::HttpConfig;

/// A [`Provider`] for OpenAI-compatible Chat Completions.
#[derive(Debug)]
pub struct OpenAiProvider {
    cfg: OpenAiConfig,
    url: String,
    http: LazyClient,
    /// Set once the server asked for `max_completion_tokens` instead of `max_tokens`.
    completion_tokens: AtomicBool,
    images: super::vision::ImageMemory,
}

impl OpenAiProvider {
    /// A provider for `cfg`; an empty `base_url` means [`DEFAULT_BASE_URL`].
    pub fn new(mut cfg: OpenAiConfig) -> Self {
        if cfg.base_url.trim().is_empty() {
            cfg.base_url = DEFAULT_BASE_URL.to_owned();
        }
        let url = http::endpoint_url(&cfg.base_url, "/v1/chat/completions");
        let http = LazyClient::new(cfg.http.clone());
        OpenAiProvider {
            cfg,
            url,
            http,
            completion_tokens: AtomicBool::new(false),
            images: Default::default(),
        }
    }

    /// The JSON body sent for `req` (public for tests and diagnostics).
    pub fn request_body(&self, req: &ModelRequest) -> Value {
        let model = if req.model.is_empty() {
            self.cfg.model.as_deref().unwrap_or(DEFAULT_MODEL)
        } else {
            &req.model
        };
        let max_tokens = match req.max_tokens {
            0 => self.cfg.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            n => n,
        };
        let mut body = request_body(req, model, max_tokens);
        if self.completion_tokens.load(Ordering::Relaxed)
            && let Some(obj) = body.as_object_mut()
            && let Some(v) = obj.remove("max_tokens")
        {
            obj.insert("max_completion_tokens".to_owned(), v);
        }
        body
    }

    async fn attempt(
        &self,
        req: &ModelRequest,
        sink: DeltaSink<'_>,
    ) -> Result<ModelResponse, ProviderError> {
        let key = self.cfg.api_key.as_str();
        let body = serde_json::to_vec(&self.request_body(req))
            .map_err(|e| ProviderError::other(format!("could not encode the request: {e}")))?;
        let bearer = format!("Bearer {key}");
        let headers: Vec<(&str, &str)> = if key.is_empty() {
            Vec::new()
        } else {
            vec![("authorization", bearer.as_str())]
        };
        let resp = http::post_stream(self.http.get(), &self.url, &headers, body, key).await?;
        let reply = http::read_stream(resp, OpenAiStream::new(), sink, key).await?;
        // Small local models write their tool calls as text: read them as calls.
        Ok(super::text_calls::adopt(reply, req))
    }
}

/// A user message becomes `tool` messages (one per result, first, so they follow the assistant's
/// `tool_calls`) and then a `user` message with its text — and its images as `image_url` parts
/// with data URLs, those a tool returned among them (a `tool` message cannot carry an image),
/// each introduced by a line naming its call.
fn push_user(out: &mut Vec<Value>, m: &Message) {
    let mut text = String::new();
    let mut images: Vec<Value> = Vec::new();
    for b in &m.content {
        match b {
            Block::ToolResult {
                tool_use_id,
                content,
                ..
            } => {
                out.push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": content}));
            }
            // Merged user messages (a queued message after an interrupted one, the request in
            // flight after a briefing) stay apart: Chat Completions takes one string.
            Block::Text { text: t } => {
                if !text.is_empty() && !t.is_empty() {
                    text.push_str("\n\n");
                }
                text.push_str(t);
            }
            Block::Image { image, tool_use_id } => {
                if let Some(id) = tool_use_id {
                    let intro = format!("The image {} returned by tool call {id}:", image.name);
                    images.push(json!({"type": "text", "text": intro}));
                }
                images.push(image_part(image));
            }
            Block::Thinking { .. }
            | Block::ToolUse { .. }
            | Block::ServerToolUse { .. }
            | Block::WebSearchToolResult { .. } => {}
        }
    }
    if !images.is_empty() {
        let mut parts = Vec::with_capacity(images.len() + 1);
        if !text.is_empty() {
            parts.push(json!({"type": "text", "text": text}));
        }
        parts.extend(images);
        out.push(json!({"role": "user", "content": parts}));
    } else if !text.is_empty() || !m.has_tool_result() {
        out.push(json!({"role": "user", "content": text}));
    }
}

/// An `image_url` part with the stored image as a data URL, or a text part saying why it could
/// not be read.
fn image_part(image: &ImageRef) -> Value {
    match image.base64() {
        Ok(data) => json!({
            "type": "image_url",
            "image_url": {"url": format!("data:{};base64,{data}", image.media_type)},
        }),
        Err(e) => {
            json!({"type": "text", "text": image.stand_in(&format!("could not be read ({e})"))})
        }
    }
}

/// An assistant message: its text as `content`, its tool calls with arguments as a JSON string.
/// Thinking blocks are not sent (Chat Completions has no place for them).
fn push_assistant(out: &mut Vec<Value>, m: &Message) {
    let text = m.text();
    let calls: Vec<Value> = m
        .tool_uses()
        .map(|(id, name, input)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": input.to_string()}})
        })
        .collect();
    let mut msg = json!({"role": "assistant"});
    let content = if text.is_empty() && !calls.is_empty() {
        Value::Null
    } else {
        Value::String(text)
    };
    super::set(&mut msg, "content", content);
    if !calls.is_empty() {
        super::set(&mut msg, "tool_calls", Value::Array(calls));
    }
    out.push(msg);
}

/// The request body for a Chat Completions stream.
pub(crate) fn request_body(req: &ModelRequest, model: &str, max_tokens: u32) -> Value {
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if !req.system.is_empty() {
        messages.push(json!({"role": "system", "content": req.system}));
    }
    for m in &req.messages {
        match m.role {
            Role::User => push_user(&mut messages, m),
            Role::Assistant => push_assistant(&mut messages, m),
        }
    }
    let mut body = json!({
        "model": model,
        "stream": true,
        "stream_options": {"include_usage": true},
        "max_tokens": max_tokens,
        "messages": messages,
    });
    if !req.tools.is_empty() {
        let tools = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.input_schema}})
            })
            .collect();
        super::set(&mut body, "tools", tools);
        let choice = json!(match req.tool_choice {
            ToolChoice::Auto => "auto",
            ToolChoice::None => "none",
        });
        super::set(&mut body, "tool_choice", choice);
    }
    if let Some(effort) = req.effort {
        super::set(&mut body, "reasoning_effort", json!(effort.as_str()));
    }
    body
}

/// Whether an error asks for `max_completion_tokens` instead of `max_tokens`.
fn wants_completion_tokens(e: &ProviderError) -> bool {
    e.kind == ErrorKind::InvalidRequest
        && e.message.contains("max_tokens")
        && e.message.contains("max_completion_tokens")
}

impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        "openai"
    }

    fn endpoint(&self) -> String {
        self.url.clone()
    }

    fn takes_images(&self, model: &str) -> bool {
        self.images.takes_images(model)
    }

    fn images_left_out(&self, model: &str, refused: bool) -> bool {
        self.images.left_out(model, refused)
    }

    fn models(&self) -> BoxFuture<'_, Result<Vec<String>, ProviderError>> {
        Box::pin(async move {
            let key = self.cfg.api_key.as_str();
            let url = http::endpoint_url(&self.cfg.base_url, "/v1/models");
            let bearer = format!("Bearer {key}");
            let headers: Vec<(&str, &str)> = if key.is_empty() {
                Vec::new()
            } else {
                vec![("authorization", bearer.as_str())]
            };
            http::model_ids(self.http.get(), &url, &headers, key).await
        })
    }

    fn stream<'a>(
        &'a self,
        req: &'a ModelRequest,
        sink: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ProviderError>> {
        Box::pin(async move {
            match self.attempt(req, &mut *sink).await {
                Err(e)
                    if wants_completion_tokens(&e)
                        && !self.completion_tokens.load(Ordering::Relaxed) =>
                {
                    self.completion_tokens.store(true, Ordering::Relaxed);
                    self.attempt(req, sink).await
                }
                other => other,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_merged_user_message_keeps_its_parts_apart() {
        let m = Message {
            role: Role::User,
            content: vec![
                Block::ToolResult {
                    tool_use_id: "t1".into(),
                    content: "ok".into(),
                    is_error: false,
                },
                Block::text("interrupted"),
                Block::text("second"),
            ],
        };
        let mut out = Vec::new();
        push_user(&mut out, &m);
        assert_eq!(
            out,
            vec![
                json!({"role": "tool", "tool_call_id": "t1", "content": "ok"}),
                json!({"role": "user", "content": "interrupted\n\nsecond"}),
            ]
        );
    }
}
