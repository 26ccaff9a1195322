//! Provider errors normalised into kinds (SPEC §3).

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
    /// Whether a retry may help (429/5xx/529/connection reset).
    pub retryable: bool,
}
