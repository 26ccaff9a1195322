//! Provider errors normalised into kinds.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    ContextWindowExceeded,
    RateLimited,
    Overloaded,
    Auth,
    InvalidRequest,
    Network,
    Other,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::ContextWindowExceeded => "context_window_exceeded",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::Overloaded => "overloaded",
            ErrorKind::Auth => "auth",
            ErrorKind::InvalidRequest => "invalid_request",
            ErrorKind::Network => "network",
            ErrorKind::Other => "other",
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{kind_str}: {message}", kind_str = kind.as_str())]
pub struct ProviderError {
    pub kind: ErrorKind,
    /// HTTP status, when the error came with one.
    pub status: Option<u16>,
    pub message: String,
    /// `retry-after` as the server sent it.
    pub retry_after: Option<Duration>,
    /// Whether a retry may help (429/5xx/529/connection reset, a broken stream).
    pub retryable: bool,
    /// The response had started (status 200, an event stream) and broke: it ended without its
    /// terminal event, carried an event that does not parse, or its connection dropped or stalled.
    pub stream_broken: bool,
}

impl ProviderError {
    /// An error of `kind` with the retry policy usual for that kind (see [`ProviderError::retryable`]).
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        let retryable = matches!(
            kind,
            ErrorKind::RateLimited | ErrorKind::Overloaded | ErrorKind::Network
        );
        ProviderError {
            kind,
            status: None,
            message: message.into(),
            retry_after: None,
            retryable,
            stream_broken: false,
        }
    }

    /// A response stream that broke after it had started: a retryable `Network` error whose
    /// request is replayed from scratch.
    pub fn broken_stream(message: impl Into<String>) -> Self {
        ProviderError {
            stream_broken: true,
            ..Self::network(message)
        }
    }

    /// A connection problem (reset, refused, timeout, stream cut): retryable.
    pub fn network(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Network, message)
    }

    /// Anything else that a retry will not fix (e.g. a malformed event).
    pub fn other(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Other, message)
    }

    /// The same error with every occurrence of `secret` (the API key) and anything that looks like an
    /// API key removed from its message.
    pub fn redacted(mut self, secret: &str) -> Self {
        self.message = redact(&self.message, secret);
        self
    }
}

/// The longest message an error carries (server bodies are cut to this many characters).
pub(crate) const MAX_MESSAGE_CHARS: usize = 300;

pub use super::overflow::{is_overflow, overflow_limit};

fn normalise(text: &str) -> String {
    text.to_lowercase().replace('`', "")
}

/// The kind an error `type` or `code` string names (Anthropic `error.type`, OpenAI `type` / `code`).
fn kind_from_type(ty: &str) -> Option<(ErrorKind, bool)> {
    Some(match ty {
        "overloaded_error" | "overloaded" => (ErrorKind::Overloaded, true),
        "rate_limit_error" | "rate_limit_exceeded" | "rate_limited" => {
            (ErrorKind::RateLimited, true)
        }
        "insufficient_quota" => (ErrorKind::RateLimited, false),
        "api_error" | "server_error" | "internal_error" | "internal_server_error" => {
            (ErrorKind::Other, true)
        }
        "authentication_error" | "permission_error" | "invalid_api_key" | "unauthorized" => {
            (ErrorKind::Auth, false)
        }
        "invalid_request_error"
        | "not_found_error"
        | "request_too_large"
        | "invalid_request"
        | "model_not_found"
        | "bad_request" => (ErrorKind::InvalidRequest, false),
        "timeout_error" | "timeout" => (ErrorKind::Network, true),
        "context_length_exceeded"
        | "context_window_exceeded"
        | "model_context_window_exceeded"
        | "exceed_context_size_error" => (ErrorKind::ContextWindowExceeded, false),
        _ => return None,
    })
}

/// Decide kind and retryability from what an error says about itself.
fn decide(status: Option<u16>, message: &str, hints: &[&str]) -> (ErrorKind, bool) {
    let mut texts = vec![message];
    texts.extend_from_slice(hints);
    let lower = normalise(message);
    let quota =
        hints.contains(&"insufficient_quota") || lower.contains("exceeded your current quota");
    match status {
        Some(401 | 403) => return (ErrorKind::Auth, false),
        Some(429) => return (ErrorKind::RateLimited, !quota),
        Some(503 | 529) => return (ErrorKind::Overloaded, true),
        _ => {}
    }
    let typed = hints.iter().find_map(|h| kind_from_type(h));
    let server_side = status.is_none_or(|s| s >= 500);
    if matches!(typed, Some((ErrorKind::Overloaded, _)))
        || (server_side && lower.contains("overloaded"))
    {
        return (ErrorKind::Overloaded, true);
    }
    // A 413 about bytes (payload, entity) is not an overflow unless it also speaks of tokens.
    let bytes_413 = status == Some(413) && super::overflow::is_about_bytes_only(&texts);
    if !bytes_413 && is_overflow(&texts) {
        return (ErrorKind::ContextWindowExceeded, false);
    }
    if let Some(k) = typed {
        return k;
    }
    match status {
        Some(408) => (ErrorKind::Network, true),
        Some(400..=499) => (ErrorKind::InvalidRequest, false),
        Some(501 | 505) => (ErrorKind::Other, false),
        Some(500..=599) => (ErrorKind::Other, true),
        _ => (ErrorKind::Other, false),
    }
}

/// Cut `text` to at most [`MAX_MESSAGE_CHARS`] characters (an ellipsis marks the cut).
pub fn truncate(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

fn json_str(v: Option<&serde_json::Value>) -> Option<String> {
    match v? {
        serde_json::Value::String(s) if !s.is_empty() => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// What an error object says: (message, type/code hints, numeric code).
fn read_error_json(v: &serde_json::Value) -> Option<(String, Vec<String>, Option<u16>)> {
    let v = match v {
        serde_json::Value::Array(items) => items.first()?,
        other => other,
    };
    let inner = v.get("error").unwrap_or(v);
    let message = match inner {
        serde_json::Value::String(s) => Some(s.clone()),
        _ => json_str(inner.get("message"))
            .or_else(|| json_str(v.get("message")))
            .or_else(|| json_str(v.get("detail"))),
    }?;
    let mut hints = Vec::new();
    for key in ["type", "code", "status"] {
        if let Some(h) = json_str(inner.get(key)) {
            hints.push(h.to_lowercase());
        }
    }
    let code = inner
        .get("code")
        .and_then(serde_json::Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| (400..600).contains(c));
    // llama.cpp states the numbers beside its message: keep them (the window is learned from them).
    let counts: Vec<String> = ["n_prompt_tokens", "n_ctx"]
        .iter()
        .filter_map(|k| Some(format!("{k} = {}", inner.get(*k)?.as_u64()?)))
        .collect();
    // OpenRouter says `Provider returned error` and puts the upstream's own words in
    // `metadata.raw`: they are the message that matters (an overflow and the limit it states).
    let raw = inner
        .get("metadata")
        .and_then(|m| json_str(m.get("raw")))
        .filter(|r| !message.contains(r.as_str()));
    let message = match raw {
        Some(raw) => format!("{message}: {raw}"),
        None => message,
    };
    let message = if counts.is_empty() {
        message
    } else {
        format!("{message} ({})", counts.join(", "))
    };
    Some((message, hints, code))
}

/// An error reported inside a stream (Anthropic `error` event, OpenAI `{"error": …}` chunk), in
/// either the whole-object shape or the inner `error` object.
pub(crate) fn from_error_json(v: &serde_json::Value) -> ProviderError {
    let (message, hints, code) =
        read_error_json(v).unwrap_or_else(|| (format!("error event: {}", v), Vec::new(), None));
    let hint_refs: Vec<&str> = hints.iter().map(String::as_str).collect();
    let (kind, retryable) = decide(code, &message, &hint_refs);
    ProviderError {
        kind,
        status: code,
        message: truncate(&message),
        retry_after: None,
        retryable,
        stream_broken: false,
    }
}

fn html_title(body: &str) -> Option<String> {
    let lower = body.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    let title = body[start..end]
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'");
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    (!title.is_empty()).then_some(title)
}

fn looks_like_html(body: &str) -> bool {
    let head: String = body
        .trim_start()
        .chars()
        .take(512)
        .collect::<String>()
        .to_lowercase();
    head.starts_with('<')
        && ["<html", "<!doctype", "<head", "<body", "<title"]
            .iter()
            .any(|t| head.contains(t))
}

/// Normalise an HTTP error response (status, body of any shape, `retry-after`) into a [`ProviderError`]
/// with a short, clear message: `error.message` of a JSON body, `HTTP 502 from server (HTML body):
/// <title>` for HTML, the text cut to ~300 characters otherwise.
pub fn classify(status: u16, body: &str, retry_after: Option<Duration>) -> ProviderError {
    let parsed = serde_json::from_str::<serde_json::Value>(body.trim())
        .ok()
        .and_then(|v| read_error_json(&v));
    let (message, hints) = match parsed {
        Some((m, h, _)) => (truncate(&m), h),
        None if looks_like_html(body) => {
            let m = match html_title(body) {
                Some(t) => format!("HTTP {status} from server (HTML body): {}", truncate(&t)),
                None => format!("HTTP {status} from server (HTML body)"),
            };
            (m, Vec::new())
        }
        None if body.trim().is_empty() => (format!("HTTP {status} with an empty body"), Vec::new()),
        None => (format!("HTTP {status}: {}", truncate(body)), Vec::new()),
    };
    let mut hint_refs: Vec<&str> = hints.iter().map(String::as_str).collect();
    // The raw body too: overflow words sometimes sit outside `message` (e.g. in `code`).
    let raw = truncate(body);
    hint_refs.push(&raw);
    let (kind, retryable) = decide(Some(status), &message, &hint_refs);
    ProviderError {
        kind,
        status: Some(status),
        message,
        retry_after,
        retryable,
        stream_broken: false,
    }
}

/// `retry-after-ms` (milliseconds) or `retry-after` (seconds, possibly fractional) as a duration;
/// HTTP dates are not supported and give `None`.
pub(crate) fn parse_retry_after(
    retry_after: Option<&str>,
    retry_after_ms: Option<&str>,
) -> Option<Duration> {
    let num = |s: Option<&str>| {
        s.and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|n| n.is_finite() && *n >= 0.0)
    };
    if let Some(ms) = num(retry_after_ms) {
        return Some(Duration::from_secs_f64((ms / 1000.0).min(86_400.0)));
    }
    num(retry_after).map(|s| Duration::from_secs_f64(s.min(86_400.0)))
}

fn key_pattern() -> Option<&'static regex::Regex> {
    static RE: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    RE.get_or_init(|| regex::Regex::new(r"\b(?:sk|rk|pk)-[A-Za-z0-9_\-]{16,}").ok())
        .as_ref()
}

/// `text` with `secret` and anything shaped like an API key (`sk-…`) replaced by `[redacted]`.
pub(crate) fn redact(text: &str, secret: &str) -> String {
    let mut out = if secret.trim().len() >= 6 {
        text.replace(secret.trim(), "[redacted]")
    } else {
        text.to_owned()
    };
    if let Some(re) = key_pattern() {
        out = re.replace_all(&out, "[redacted]").into_owned();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_status() {
        let k = |s: u16, body: &str| {
            let e = classify(s, body, None);
            (e.kind, e.retryable)
        };
        assert_eq!(k(401, "{}"), (ErrorKind::Auth, false));
        assert_eq!(k(403, "nope"), (ErrorKind::Auth, false));
        assert_eq!(k(429, "slow down"), (ErrorKind::RateLimited, true));
        assert_eq!(k(529, ""), (ErrorKind::Overloaded, true));
        assert_eq!(k(503, ""), (ErrorKind::Overloaded, true));
        assert_eq!(k(500, "boom"), (ErrorKind::Other, true));
        assert_eq!(k(502, ""), (ErrorKind::Other, true));
        assert_eq!(k(504, ""), (ErrorKind::Other, true));
        assert_eq!(k(501, ""), (ErrorKind::Other, false));
        assert_eq!(k(408, ""), (ErrorKind::Network, true));
        assert_eq!(k(404, "no such model"), (ErrorKind::InvalidRequest, false));
        assert_eq!(k(400, "bad"), (ErrorKind::InvalidRequest, false));
        assert_eq!(
            k(400, "prompt is too long: 1 tokens > 2 maximum"),
            (ErrorKind::ContextWindowExceeded, false)
        );
        assert_eq!(
            k(
                500,
                r#"{"error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            (ErrorKind::Overloaded, true)
        );
    }

    #[test]
    fn quota_is_rate_limited_but_not_retryable() {
        let e = classify(
            429,
            r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota"}}"#,
            None,
        );
        assert_eq!((e.kind, e.retryable), (ErrorKind::RateLimited, false));
    }

    #[test]
    fn messages_are_short() {
        let long = "x".repeat(5000);
        let e = classify(500, &long, None);
        assert!(
            e.message.chars().count() < MAX_MESSAGE_CHARS + 20,
            "{}",
            e.message
        );
        let e = classify(502, "", None);
        assert_eq!(e.message, "HTTP 502 with an empty body");
    }

    #[test]
    fn backticks_do_not_hide_overflow() {
        assert!(is_overflow(&[
            "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000"
        ]));
        assert_eq!(
            overflow_limit(
                "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000"
            ),
            Some(200_000)
        );
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(
            parse_retry_after(Some("3"), None),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            parse_retry_after(Some("0.5"), None),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            parse_retry_after(Some("2"), Some("250")),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            parse_retry_after(Some("Wed, 21 Oct 2015 07:28:00 GMT"), None),
            None
        );
        assert_eq!(parse_retry_after(Some("-1"), None), None);
        assert_eq!(parse_retry_after(None, None), None);
    }

    #[test]
    fn redaction() {
        let key = "sk-ant-api03-SECRETSECRETSECRET";
        let r = redact(&format!("bad key {key} given"), key);
        assert_eq!(r, "bad key [redacted] given");
        assert_eq!(
            redact(
                "Incorrect API key provided: sk-proj-abcdefghijklmnopqrstuvwxyz",
                ""
            ),
            "Incorrect API key provided: [redacted]"
        );
        assert_eq!(redact("short", "abc"), "short");
    }
}
