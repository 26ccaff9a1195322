//! The engine's error kinds as the protocol carries them.

use std::fmt;

use serde::Serialize;

use super::provider::ErrorKind as ProviderErrorKind;

/// What went wrong, as a type: carried by `Event::Error` and `ExitReason::Error`, written as one
/// snake_case word on the wire (`rate_limited`, `handoff_breaker`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A model request failed (SPEC §3's kinds).
    Provider(ProviderErrorKind),
    /// `max_generations` handoffs in one step (SPEC §6.11).
    HandoffBreaker,
}

impl ErrorKind {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Provider(k) => k.as_str(),
            ErrorKind::HandoffBreaker => "handoff_breaker",
        }
    }

    /// A context-window overflow (the overflow path acts on it).
    pub fn is_overflow(self) -> bool {
        self == ErrorKind::Provider(ProviderErrorKind::ContextWindowExceeded)
    }
}

impl From<ProviderErrorKind> for ErrorKind {
    fn from(k: ProviderErrorKind) -> Self {
        ErrorKind::Provider(k)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_one_word_on_the_wire() {
        let table = [
            (
                ErrorKind::Provider(ProviderErrorKind::ContextWindowExceeded),
                "context_window_exceeded",
            ),
            (
                ErrorKind::Provider(ProviderErrorKind::RateLimited),
                "rate_limited",
            ),
            (ErrorKind::HandoffBreaker, "handoff_breaker"),
        ];
        for (kind, word) in table {
            assert_eq!(kind.to_string(), word);
            assert_eq!(
                serde_json::to_value(kind).ok(),
                Some(serde_json::json!(word))
            );
        }
        assert!(ErrorKind::from(ProviderErrorKind::ContextWindowExceeded).is_overflow());
        assert!(!ErrorKind::HandoffBreaker.is_overflow());
    }
}
