//! The Anthropic Messages API (`POST {base}/v1/messages`, streamed), with prompt caching.

mod blocks;
mod stream;

pub(crate) use blocks::search_summary;
pub use stream::AnthropicStream;
pub(crate) use stream::tool_input;

use serde_json::{Value, json};

use super::error::ProviderError;
use super::http;
use super::http::LazyClient;
use super::known_windows;
use super::{BoxFuture, DeltaSink, Provider};
use crate::engine::types::{ModelRequest, ModelResponse, THINKING_ANSWER_ROOM, ToolChoice};

/// The API version header value.
pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";
/// The default base URL.
pub(crate) const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The model used when neither the request nor the config names one.
pub(crate) const DEFAULT_MODEL: &str = "claude-sonnet-4-5";
/// `max_tokens` when neither the request nor the config sets one.
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 8192;
/// A `redacted_thinking` block is kept as a [`crate::engine::types::Block::Thinking`] with empty
/// text and this prefix before its opaque `data` in `signature` (real signatures are base64 and
/// never contain `:`), so it can be sent back unchanged.
pub const REDACTED_THINKING_PREFIX: &str = "redacted:";
/// At most this many `cache_control` breakpoints go in one request (the API's limit).
pub(crate) const MAX_CACHE_MARKERS: usize = 4;
/// The server-side web search tool's type (`web_search = true` in the config).
pub const WEB_SEARCH_TOOL: &str = "web_search_20250305";
/// Searches one response may run.
const WEB_SEARCH_MAX_USES: u32 = 5;

/// Settings for [`AnthropicProvider`].
pub type AnthropicConfig = super::http::HttpConfig;

/// A [`Provider`] for the Anthropic Messages API.
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    cfg: AnthropicConfig,
    url: String,
    http: LazyClient,
    images: super::vision::ImageMemory,
}

impl AnthropicProvider {
    /// A provider for `cfg`; an empty `base_url` means [`DEFAULT_BASE_URL`].
    pub fn new(mut cfg: AnthropicConfig) -> Self {
        if cfg.base_url.trim().is_empty() {
            cfg.base_url = DEFAULT_BASE_URL.to_owned();
        }
        let url = http::endpoint_url(&cfg.base_url, "/v1/messages");
        let http = LazyClient::new(cfg.http.clone());
        AnthropicProvider {
            cfg,
            url,
            http,
            images: Default::default(),
        }
    }

    /// The model id for `req`, and whether it asks for the 1M-context beta (a `[1m]` marker, which
    /// the API itself does not know: it is sent as the `anthropic-beta` header instead).
    pub fn model_for<'a>(&'a self, req: &'a ModelRequest) -> (&'a str, bool) {
        let model = if req.model.is_empty() {
            self.cfg.model.as_deref().unwrap_or(DEFAULT_MODEL)
        } else {
            &req.model
        };
        known_windows::strip_1m_marker(model)
    }

    /// The JSON body sent for `req` (public for tests and `-v` diagnostics).
    pub fn request_body(&self, req: &ModelRequest) -> Value {
        let (model, _) = self.model_for(req);
        let max_tokens = match req.max_tokens {
            0 => self.cfg.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            n => n,
        };
        request_body(req, model, max_tokens, self.cfg.web_search)
    }
}

fn cache_marker() -> Value {
    json!({"type": "ephemeral"})
}

/// Mark the last block of a message that may carry `cache_control` (not a thinking block).
fn mark_last_block(message: &mut Value) -> bool {
    let Some(blocks) = message.get_mut("content").and_then(Value::as_array_mut) else {
        return false;
    };
    let target = blocks.iter_mut().rev().find(|b| {
        !matches!(
            b.get("type").and_then(Value::as_str),
            Some("thinking" | "redacted_thinking")
        )
    });
    match target {
        Some(b) => {
            super::set(b, "cache_control", cache_marker());
            true
        }
        None => false,
    }
}

/// The request body: streamed, system as one cached text block, the last tool cached, the last block
/// of each of the last two messages cached — at most [`MAX_CACHE_MARKERS`] markers. `web_search`:
/// the server-side web search is offered first among the tools.
pub(crate) fn request_body(
    req: &ModelRequest,
    model: &str,
    max_tokens: u32,
    web_search: bool,
) -> Value {
    let mut body = json!({
        "model": model,
        "max_tokens": max_tokens,
        "stream": true,
    });
    let mut markers = 0;
    if !req.system.is_empty() {
        super::set(
            &mut body,
            "system",
            json!([{"type": "text", "text": req.system, "cache_control": cache_marker()}]),
        );
        markers += 1;
    }
    let web_search = web_search && !req.tools.is_empty();
    let mut messages: Vec<Value> = req
        .messages
        .iter()
        .map(|m| blocks::message_json(m, web_search))
        .collect();
    let n = messages.len();
    for m in messages.iter_mut().skip(n.saturating_sub(2)) {
        if markers < MAX_CACHE_MARKERS - 1 && mark_last_block(m) {
            markers += 1;
        }
    }
    super::set(&mut body, "messages", Value::Array(messages));
    if !req.tools.is_empty() {
        let mut tools: Vec<Value> = Vec::with_capacity(req.tools.len() + 1);
        if web_search {
            tools.push(json!({
                "type": WEB_SEARCH_TOOL,
                "name": "web_search",
                "max_uses": WEB_SEARCH_MAX_USES,
            }));
        }
        tools.extend(req.tools.iter().map(
            |t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}),
        ));
        if markers < MAX_CACHE_MARKERS
            && let Some(last) = tools.last_mut()
        {
            super::set(last, "cache_control", cache_marker());
        }
        super::set(&mut body, "tools", Value::Array(tools));
        let choice = match req.tool_choice {
            ToolChoice::Auto => json!({"type": "auto"}),
            ToolChoice::None => json!({"type": "none"}),
        };
        super::set(&mut body, "tool_choice", choice);
    }
    // Extended thinking: `max_tokens` must exceed the budget; no temperature is ever sent.
    if let Some(effort) = req.effort {
        let budget = effort.thinking_budget();
        let thinking = json!({"type": "enabled", "budget_tokens": budget});
        super::set(&mut body, "thinking", thinking);
        let room = budget.saturating_add(THINKING_ANSWER_ROOM);
        super::set(&mut body, "max_tokens", json!(max_tokens.max(room)));
    }
    body
}

impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        "anthropic"
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
            let url = http::endpoint_url(&self.cfg.base_url, "/v1/models?limit=1000");
            let mut headers = vec![("anthropic-version", ANTHROPIC_VERSION)];
            if !key.is_empty() {
                headers.push(("x-api-key", key));
            }
            http::model_ids(self.http.get(), &url, &headers, key).await
        })
    }

    fn stream<'a>(
        &'a self,
        req: &'a ModelRequest,
        sink: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ProviderError>> {
        Box::pin(async move {
            let key = self.cfg.api_key.as_str();
            let body = serde_json::to_vec(&self.request_body(req))
                .map_err(|e| ProviderError::other(format!("could not encode the request: {e}")))?;
            let mut headers = vec![("anthropic-version", ANTHROPIC_VERSION)];
            if !key.is_empty() {
                headers.push(("x-api-key", key));
            }
            if self.model_for(req).1 {
                headers.push(("anthropic-beta", known_windows::CONTEXT_1M_BETA));
            }
            let resp = http::post_stream(self.http.get(), &self.url, &headers, body, key).await?;
            http::read_stream(resp, AnthropicStream::new(), sink, key).await
        })
    }
}
