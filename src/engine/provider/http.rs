//! The HTTP plumbing both providers share: the client, the streaming POST, and turning transport and
//! HTTP failures into [`ProviderError`]s (with the API key redacted).
//!
//! A client reads the system's TLS roots (hundreds of files, milliseconds) at its first `https`
//! handshake: a provider builds its client when its first request needs it ([`LazyClient`]), and
//! a start can have it built, its roots read, beside its other work ([`prepare_client`]), so the
//! first request does not wait for it.

use std::sync::{Arc, Mutex, Once, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, HeaderMap};

use super::error::{self, ProviderError};
use super::sse::{SseDecoder, SseEvent};
use crate::engine::types::{Delta, ModelResponse};

/// How long to wait for a TCP/TLS connection. There is no overall timeout: streams are long.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How much of an error body is read (the rest is not needed for a message).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Settings of an HTTP provider (Anthropic or OpenAI-compatible).
#[derive(Clone, Default)]
pub struct HttpConfig {
    /// E.g. `https://api.anthropic.com`, `http://localhost:11434/v1` (a trailing `/v1` is not doubled).
    pub base_url: String,
    /// The API key; empty sends no credentials (local OpenAI-compatible servers).
    pub api_key: String,
    /// Used when the request's `model` is empty.
    pub model: Option<String>,
    /// Used when the request's `max_tokens` is 0.
    pub max_tokens: Option<u32>,
    /// A client to share; [`http_client`] builds one when `None`.
    pub http: Option<reqwest::Client>,
    /// Offer the provider's own web search (Anthropic's server tool; `web_search = true`).
    pub web_search: bool,
}

impl std::fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &crate::engine::secrets::mask(&self.api_key))
            .field("model", &self.model)
            .field("max_tokens", &self.max_tokens)
            .field("web_search", &self.web_search)
            .finish_non_exhaustive()
    }
}

/// A client for the model APIs: rustls with the `ring` provider (installed once per process),
/// a 30 s connect timeout and no overall timeout. The system's TLS roots are read at its first
/// `https` handshake ([`super::tls`]).
pub fn http_client() -> reqwest::Client {
    built_client(false)
}

/// [`http_client`], with the TLS roots read now when `roots_now`.
fn built_client(roots_now: bool) -> reqwest::Client {
    install_crypto_provider();
    let builder = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .tcp_keepalive(Duration::from_secs(30));
    let tls = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .and_then(super::tls::Tls::new);
    let builder = match tls {
        Some(tls) => {
            if roots_now {
                tls.warm();
            }
            builder.tls_backend_preconfigured(tls.config)
        }
        None => builder,
    };
    builder.build().unwrap_or_else(|_| reqwest::Client::new())
}

/// A client being built on a thread of its own by [`prepare_client`], for the first provider made.
static PREPARED: Mutex<Option<JoinHandle<reqwest::Client>>> = Mutex::new(None);

/// Start building the process's first provider client now, on a thread of its own, so the reading
/// of the TLS roots runs beside the rest of the start; the first [`LazyClient::new`] takes it.
/// `base_url`: the provider's; a plain `http://` one needs no roots before its first request.
pub fn prepare_client(base_url: &str) {
    let roots_now = !base_url
        .trim()
        .get(..7)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"));
    let Ok(thread) = std::thread::Builder::new()
        .name("http-client".into())
        .spawn(move || built_client(roots_now))
    else {
        return;
    };
    if let Ok(mut slot) = PREPARED.lock() {
        *slot = Some(thread);
    }
}

/// A provider's client, built when its first request needs it: the one [`prepare_client`] started
/// (waited for, if still being built), else a new [`http_client`]. Clones share it.
#[derive(Clone)]
pub struct LazyClient(Arc<LazyInner>);

struct LazyInner {
    client: OnceLock<reqwest::Client>,
    /// The client a start prepared, taken by the first provider made after it.
    prepared: Mutex<Option<JoinHandle<reqwest::Client>>>,
}

impl LazyClient {
    /// `given` when there is one, else the prepared client or a new one at first use.
    pub fn new(given: Option<reqwest::Client>) -> LazyClient {
        let client = OnceLock::new();
        let prepared = match given {
            Some(c) => {
                let _ = client.set(c);
                None
            }
            None => PREPARED.lock().ok().and_then(|mut slot| slot.take()),
        };
        LazyClient(Arc::new(LazyInner {
            client,
            prepared: Mutex::new(prepared),
        }))
    }

    /// The client, built (or waited for) the first time.
    pub fn get(&self) -> &reqwest::Client {
        self.0.client.get_or_init(|| {
            let prepared = self.0.prepared.lock().ok().and_then(|mut p| p.take());
            prepared
                .and_then(|thread| thread.join().ok())
                .unwrap_or_else(http_client)
        })
    }
}

impl std::fmt::Debug for LazyClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyClient")
            .field("built", &self.0.client.get().is_some())
            .finish()
    }
}

/// Install rustls's `ring` provider for the process (once); every client built after uses it.
pub(crate) fn install_crypto_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Another part of the process may have installed a provider already; either is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// `{base}{path}` where `path` starts with `/v1/…`; a base that already ends in `/v1` is not doubled.
pub(crate) fn endpoint_url(base: &str, path: &str) -> String {
    let base = base.trim().trim_end_matches('/');
    match (base.ends_with("/v1"), path.strip_prefix("/v1")) {
        (true, Some(rest)) => format!("{base}{rest}"),
        _ => format!("{base}{path}"),
    }
}

/// `retry-after-ms` or `retry-after` (seconds) from response headers.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    error::parse_retry_after(get("retry-after"), get("retry-after-ms"))
}

/// The message of a transport error and its causes, without repeats.
fn chain(err: &reqwest::Error) -> String {
    let mut parts: Vec<String> = vec![err.to_string()];
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}

/// A transport failure (refused, reset, timeout, TLS, cut body) as a retryable `Network` error.
pub(crate) fn transport_error(err: &reqwest::Error, during: &str, secret: &str) -> ProviderError {
    let what = if err.is_timeout() {
        "timed out"
    } else if err.is_connect() {
        "could not connect"
    } else {
        "connection failed"
    };
    ProviderError::network(format!(
        "{during}: {what}: {}",
        error::truncate(&chain(err))
    ))
    .redacted(secret)
}

/// A transport failure while the body of a started stream arrives (a cut, a reset): a broken stream.
pub(crate) fn body_error(err: &reqwest::Error, secret: &str) -> ProviderError {
    ProviderError {
        stream_broken: true,
        ..transport_error(err, "stream interrupted", secret)
    }
}

/// Read at most [`MAX_ERROR_BODY`] bytes of a response body as text (lossy).
async fn read_capped(resp: &mut reqwest::Response) -> String {
    let mut body = Vec::new();
    while body.len() < MAX_ERROR_BODY {
        match resp.chunk().await {
            Ok(Some(c)) => body.extend_from_slice(&c),
            _ => break,
        }
    }
    body.truncate(MAX_ERROR_BODY);
    String::from_utf8_lossy(&body).into_owned()
}

/// The provider's id of a request, from the headers providers send it in: `request-id`
/// (Anthropic), `x-request-id` (OpenAI, most gateways and proxies), `apim-request-id` (Azure).
pub(crate) fn provider_request_id(headers: &HeaderMap) -> Option<String> {
    ["request-id", "x-request-id", "apim-request-id"]
        .iter()
        .find_map(|name| headers.get(*name)?.to_str().ok())
        .map(|id| id.chars().filter(|c| !c.is_control()).take(200).collect())
}

/// POST `body` as JSON and return the response once its status says a stream follows. Transport
/// failures become `Network` errors; non-2xx statuses are classified from their body; a 2xx that is
/// JSON or HTML instead of an event stream becomes a clear error too.
pub(crate) async fn post_stream(
    client: &reqwest::Client,
    url: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
    secret: &str,
) -> Result<reqwest::Response, ProviderError> {
    let mut rb = client
        .post(url)
        .header(CONTENT_TYPE, "application/json")
        .header("accept", "text/event-stream");
    for (k, v) in headers {
        rb = rb.header(*k, *v);
    }
    let mut resp = rb
        .body(body)
        .send()
        .await
        .map_err(|e| transport_error(&e, "request failed", secret))?;
    let status = resp.status().as_u16();
    // The provider's own id of this request: what its support asks for in a bug report.
    match provider_request_id(resp.headers()) {
        Some(id) => tracing::info!(status, request_id = %id, "provider answered"),
        None => tracing::info!(status, "provider answered (no request id header)"),
    }
    if !resp.status().is_success() {
        let after = retry_after(resp.headers());
        let text = read_capped(&mut resp).await;
        return Err(error::classify(status, &text, after).redacted(secret));
    }
    let ctype = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if ctype.contains("application/json") || ctype.contains("text/html") {
        let text = read_capped(&mut resp).await;
        let mut e = match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(v) if v.get("error").is_some() => error::from_error_json(&v),
            _ => {
                let c = error::classify(status, &text, None);
                ProviderError::other(format!(
                    "expected an event stream, the server sent {ctype}: {}",
                    c.message
                ))
            }
        };
        e.status = Some(status);
        return Err(e.redacted(secret));
    }
    Ok(resp)
}

/// A list of models larger than this is not read (a real one is a few kilobytes).
const MAX_MODEL_LIST: usize = 4 << 20;

/// GET `url`, a provider's list of models (`{"data": [{"id": …}, …]}`, the shape Anthropic's
/// and OpenAI-compatible servers share): the ids, in the order given.
pub(crate) async fn model_ids(
    client: &reqwest::Client,
    url: &str,
    headers: &[(&str, &str)],
    secret: &str,
) -> Result<Vec<String>, ProviderError> {
    let mut rb = client.get(url).header("accept", "application/json");
    for (k, v) in headers {
        rb = rb.header(*k, *v);
    }
    let mut resp = rb
        .send()
        .await
        .map_err(|e| transport_error(&e, "listing the models failed", secret))?;
    let status = resp.status().as_u16();
    if !resp.status().is_success() {
        let text = read_capped(&mut resp).await;
        return Err(error::classify(status, &text, None).redacted(secret));
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| body_error(&e, secret))? {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_MODEL_LIST {
            return Err(ProviderError::other(
                "the list of models is too large to read",
            ));
        }
    }
    let list: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|e| ProviderError::other(format!("the list of models is not JSON: {e}")))?;
    let ids = list
        .get("data")
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| ProviderError::other("the answer holds no list of models (`data`)"))?
        .iter()
        .filter_map(|m| m.get("id").and_then(serde_json::Value::as_str))
        .map(str::to_string)
        .collect();
    Ok(ids)
}

/// The state of one streamed response, fed the SSE events of its body (Anthropic's or an
/// OpenAI-compatible server's).
pub trait StreamState {
    /// Apply one event; text and thinking go to `sink` as they arrive.
    fn on_event(&mut self, ev: &SseEvent, sink: &mut dyn FnMut(Delta))
    -> Result<(), ProviderError>;
    /// Whether the terminal event arrived: reading stops there.
    fn is_done(&self) -> bool;
    /// Whether a body cut now still holds the whole answer (only trailing metadata lost).
    fn whole_if_cut(&self) -> bool {
        false
    }
    /// The response, once the body ended (or `is_done`).
    fn finish(self) -> Result<ModelResponse, ProviderError>;
}

/// Read a streaming response to its end through `state`: every chunk tells `sink` the stream is
/// alive, every SSE event goes to `state`, and errors carry `secret` redacted.
pub(crate) async fn read_stream<S: StreamState>(
    mut resp: reqwest::Response,
    mut state: S,
    sink: &mut (dyn FnMut(Delta) + Send),
    secret: &str,
) -> Result<ModelResponse, ProviderError> {
    sink(Delta::Alive);
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    loop {
        let chunk = match resp.chunk().await {
            Ok(c) => c,
            Err(_) if state.whole_if_cut() => return state.finish(),
            Err(e) => return Err(body_error(&e, secret)),
        };
        let Some(bytes) = chunk else {
            return state.finish();
        };
        sink(Delta::Alive);
        decoder.push_into(&bytes, &mut events);
        for ev in events.drain(..) {
            state
                .on_event(&ev, &mut *sink)
                .map_err(|e| e.redacted(secret))?;
            if state.is_done() {
                return state.finish();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_id_comes_from_whichever_header_the_provider_uses() {
        let mut h = HeaderMap::new();
        assert_eq!(provider_request_id(&h), None);
        h.insert("x-request-id", "req_openai_1".parse().unwrap());
        assert_eq!(provider_request_id(&h).as_deref(), Some("req_openai_1"));
        h.insert("request-id", "req_011CAnthropic".parse().unwrap());
        assert_eq!(
            provider_request_id(&h).as_deref(),
            Some("req_011CAnthropic"),
            "Anthropic's own header first"
        );
        let mut azure = HeaderMap::new();
        azure.insert("apim-request-id", "3f2a-azure".parse().unwrap());
        assert_eq!(provider_request_id(&azure).as_deref(), Some("3f2a-azure"));
    }

    #[test]
    fn endpoint_is_not_doubled() {
        let p = "/v1/chat/completions";
        assert_eq!(
            endpoint_url("http://h:1", p),
            "http://h:1/v1/chat/completions"
        );
        assert_eq!(
            endpoint_url("http://h:1/", p),
            "http://h:1/v1/chat/completions"
        );
        assert_eq!(
            endpoint_url("http://h:1/v1", p),
            "http://h:1/v1/chat/completions"
        );
        assert_eq!(
            endpoint_url("http://h:1/v1/", p),
            "http://h:1/v1/chat/completions"
        );
        assert_eq!(
            endpoint_url("https://openrouter.ai/api/v1", p),
            "https://openrouter.ai/api/v1/chat/completions"
        );
        assert_eq!(
            endpoint_url("https://api.anthropic.com", "/v1/messages"),
            "https://api.anthropic.com/v1/messages"
        );
    }
}
