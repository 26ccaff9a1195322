//! Asking a local OpenAI-compatible server for the context window it gives the model, before the
//! first request: llama.cpp (`GET /props`), Ollama (`POST /api/show`, `GET /api/ps`), LM Studio
//! (`GET /api/v0/models`) and vLLM (`GET /v1/models`); `parse` says which of each one's numbers
//! is the window. The base URL arrives with its `/v1`; the servers' own endpoints hang off the
//! root. All questions go out at once and share one short
//! deadline ([`PROBE_TIMEOUT`]): a refused connection answers at once, a server that says nothing
//! costs that deadline and no more, and a server that answers none of them leaves the window as
//! it was. Where several answer, the first in the order above wins (each server answers only its
//! own endpoints; every one of them lists models at `/v1/models`, only vLLM with a length).
//!
//! Also here: llama.cpp's tokenizer (`POST /tokenize`), which counts a text's tokens exactly, for
//! calibrating the token estimates.

mod parse;

pub use parse::{LMSTUDIO_DEFAULT_CTX, OLLAMA_DEFAULT_CTX, OllamaBasis};

use std::time::Duration;

use serde_json::{Value, json};

/// The deadline for all of a probe's questions together.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_millis(1_500);
/// An answer larger than this is not a description of a server (Ollama's `/api/show` carries
/// the model's template and licence: tens of kilobytes).
const MAX_ANSWER: usize = 4 << 20;

/// The kind of server that stated the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServerKind {
    LlamaCpp,
    Ollama,
    LmStudio,
    Vllm,
}

impl ServerKind {
    /// For `-v` and `/window`: the server and the endpoint that said it.
    pub fn describe(self) -> &'static str {
        match self {
            ServerKind::LlamaCpp => "the server (llama.cpp /props)",
            ServerKind::Ollama => "the server (Ollama /api/show)",
            ServerKind::LmStudio => "the server (LM Studio /api/v0/models)",
            ServerKind::Vllm => "the server (vLLM /v1/models)",
        }
    }
}

/// What a server said about its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerWindow {
    pub kind: ServerKind,
    pub window: u64,
    /// For Ollama: which of its numbers it is.
    pub ollama: Option<OllamaBasis>,
}

/// Where a server's own endpoints are: the base URL without a trailing `/` and `/v1`.
pub(crate) fn server_root(base_url: &str) -> String {
    let base = base_url.trim().trim_end_matches('/');
    base.strip_suffix("/v1").unwrap_or(base).to_string()
}

/// Hosted APIs answer none of the questions (and are not asked: a probe would cost a round trip).
pub(crate) fn is_hosted(base_url: &str) -> bool {
    const HOSTED: &[&str] = &[
        "api.openai.com",
        "openrouter.ai",
        "api.anthropic.com",
        "api.groq.com",
        "api.together.xyz",
        "api.fireworks.ai",
        "api.mistral.ai",
        "api.deepseek.com",
        "generativelanguage.googleapis.com",
        "api.x.ai",
    ];
    let lower = base_url.trim().to_ascii_lowercase();
    let host = lower
        .split_once("://")
        .map_or(lower.as_str(), |(_, rest)| rest)
        .split(['/', ':'])
        .next()
        .unwrap_or("");
    HOSTED
        .iter()
        .any(|h| host == *h || host.ends_with(&format!(".{h}")))
}

/// A server to ask: the client, the root of its endpoints and the key (empty: none).
#[derive(Debug, Clone)]
pub struct Server<'a> {
    pub client: &'a reqwest::Client,
    pub base_url: &'a str,
    pub api_key: &'a str,
}

impl Server<'_> {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", server_root(self.base_url))
    }

    fn with_key(&self, rb: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        if self.api_key.is_empty() {
            rb
        } else {
            rb.bearer_auth(self.api_key)
        }
    }

    /// The JSON a successful answer carries; None for anything else (a refusal, a 404, HTML, a
    /// timeout, a body over [`MAX_ANSWER`]).
    async fn json(&self, rb: reqwest::RequestBuilder) -> Option<Value> {
        let mut resp = self.with_key(rb.timeout(PROBE_TIMEOUT)).send().await.ok()?;
        if !resp.status().is_success() {
            return None;
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.ok()? {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_ANSWER {
                return None;
            }
        }
        serde_json::from_slice(&body).ok()
    }

    async fn get(&self, path: &str) -> Option<Value> {
        self.json(self.client.get(self.url(path))).await
    }

    async fn post(&self, path: &str, body: &Value) -> Option<Value> {
        let bytes = serde_json::to_vec(body).ok()?;
        let rb = self
            .client
            .post(self.url(path))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(bytes);
        self.json(rb).await
    }

    /// The window the server gives `model`, if it says (see the module header).
    pub async fn window(&self, model: &str) -> Option<ServerWindow> {
        // Older Ollama builds read `name`, newer ones `model`.
        let show_body = json!({"model": model, "name": model});
        let asked = async {
            tokio::join!(
                self.get("/props"),
                self.post("/api/show", &show_body),
                self.get("/api/ps"),
                self.get("/api/v0/models"),
                self.get("/v1/models"),
            )
        };
        let (props, show, ps, lmstudio, models) =
            tokio::time::timeout(PROBE_TIMEOUT, asked).await.ok()?;
        let found = |kind, window| ServerWindow {
            kind,
            window,
            ollama: None,
        };
        if let Some(n) = props.as_ref().and_then(parse::llamacpp_props) {
            return Some(found(ServerKind::LlamaCpp, n));
        }
        if let Some((n, basis)) = show
            .as_ref()
            .and_then(|s| parse::ollama_window(s, ps.as_ref(), model))
        {
            return Some(ServerWindow {
                ollama: Some(basis),
                ..found(ServerKind::Ollama, n)
            });
        }
        if let Some(n) = lmstudio
            .as_ref()
            .and_then(|l| parse::lmstudio_window(l, model))
        {
            return Some(found(ServerKind::LmStudio, n));
        }
        models
            .as_ref()
            .and_then(|m| parse::vllm_window(m, model))
            .map(|n| found(ServerKind::Vllm, n))
    }

    /// How many tokens the server's tokenizer makes of `text` (llama.cpp `POST /tokenize`, the
    /// text alone, without the special tokens a prompt starts with); None where there is no such
    /// endpoint.
    pub async fn count_tokens(&self, text: &str) -> Option<u64> {
        let body = json!({"content": text, "add_special": false});
        let answer = tokio::time::timeout(PROBE_TIMEOUT, self.post("/tokenize", &body))
            .await
            .ok()??;
        parse::token_count(&answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_drops_the_v1() {
        let table = [
            ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080"),
            ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080"),
            ("http://localhost:11434", "http://localhost:11434"),
            (" http://host/proxy/v1 ", "http://host/proxy"),
            ("http://host/v1beta", "http://host/v1beta"),
        ];
        for (base, root) in table {
            assert_eq!(server_root(base), root, "{base}");
        }
    }

    #[test]
    fn hosted_apis_are_not_asked() {
        let table = [
            ("https://api.openai.com/v1", true),
            ("https://api.openai.com", true),
            ("https://openrouter.ai/api/v1", true),
            ("https://eu.api.openai.com/v1", true),
            ("http://127.0.0.1:8080/v1", false),
            ("http://localhost:11434/v1", false),
            ("http://gpu-box.lan:8000/v1", false),
            ("https://api.openai.com.evil.example/v1", false),
        ];
        for (base, hosted) in table {
            assert_eq!(is_hosted(base), hosted, "{base}");
        }
    }
}
