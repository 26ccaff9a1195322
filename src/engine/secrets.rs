//! Secrets that must never reach disk or the screen (SPEC §14): registered once at start-up,
//! replaced by their masked form wherever text leaves the engine (transcripts, tool output, spill
//! files, handoff documents).

use std::borrow::Cow;
use std::sync::RwLock;

static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Keys shorter than this are not registered: replacing them would mangle ordinary text.
const MIN_SECRET_LEN: usize = 8;

/// Remember a secret (an API key) for [`redact`].
pub fn register(secret: &str) {
    if secret.len() < MIN_SECRET_LEN {
        return;
    }
    let mut all = SECRETS.write().unwrap_or_else(|p| p.into_inner());
    if !all.iter().any(|s| s == secret) {
        all.push(secret.to_string());
    }
}

/// The masked form shown instead of a secret: its first 4 characters and `****`.
pub fn mask(secret: &str) -> String {
    if secret.chars().count() <= MIN_SECRET_LEN {
        return "****".into();
    }
    let head: String = secret.chars().take(4).collect();
    format!("{head}****")
}

/// `text` with every registered secret masked.
pub fn redact(text: &str) -> Cow<'_, str> {
    let all = SECRETS.read().unwrap_or_else(|p| p.into_inner());
    if !all.iter().any(|s| text.contains(s.as_str())) {
        return Cow::Borrowed(text);
    }
    let mut out = text.to_string();
    for s in all.iter() {
        out = out.replace(s.as_str(), &mask(s));
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_secrets_are_masked() {
        register("sk-unit-test-secret-123456");
        register("short");
        assert_eq!(
            redact("key=sk-unit-test-secret-123456 end"),
            "key=sk-u**** end"
        );
        assert_eq!(redact("short stays"), "short stays");
        assert!(matches!(redact("nothing here"), Cow::Borrowed(_)));
        assert_eq!(mask("abc"), "****");
        assert_eq!(
            format!("{:?}", ApiKey::new("sk-ant-0123456789")),
            "ApiKey(sk-a****)"
        );
    }
}

/// An API key: its `Debug` shows only the masked form, so `{:?}` of a config cannot leak it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key itself, for the request header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ApiKey({})", mask(&self.0))
    }
}
