//! Secrets that must never reach disk or the screen: registered once at start-up,
//! replaced by their masked form wherever text enters or leaves the engine (the user's messages,
//! tool output, transcripts, the ledger, spill and handoff files, events, logs).
//!
//! Every provider key in the environment is registered, not only the active provider's
//! ([`register_env`]); the same variables are removed from every child's environment
//! ([`PROVIDER_KEY_VARS`]). Other credentials (an MCP server's header, a `*_API_KEY` a command
//! needs) are masked too, but only a model provider's key is refused where a value would leave the
//! process ([`holds_provider_key`]): an MCP server may get its own token, never the model's key.

use std::borrow::Cow;
use std::sync::RwLock;

static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());
/// The model providers' keys among [`SECRETS`].
static PROVIDER_KEYS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Keys shorter than this are not registered: replacing them would mangle ordinary text.
const MIN_SECRET_LEN: usize = 8;

/// The environment variables that hold model-provider keys: the two flower-tui reads and those of
/// the services people reach through an OpenAI-compatible endpoint. They are masked, removed from
/// flower-tui's own environment at start, and never passed to a tool's process.
pub(crate) const PROVIDER_KEY_VARS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "OPENAI_ADMIN_KEY",
    "AZURE_OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "XAI_API_KEY",
    "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY",
    "CEREBRAS_API_KEY",
    "PERPLEXITY_API_KEY",
];

/// Whether an environment variable's value is masked: a provider key, or any other `*_API_KEY`
/// (those are masked but left to the commands that need them).
pub(crate) fn is_key_var(name: &str) -> bool {
    PROVIDER_KEY_VARS.contains(&name) || name.ends_with("_API_KEY")
}

/// Register the value of every key variable in `vars` (name, value pairs); those of
/// [`PROVIDER_KEY_VARS`] as provider keys.
pub(crate) fn register_env<'a>(vars: impl IntoIterator<Item = (&'a str, &'a str)>) {
    for (name, value) in vars {
        if PROVIDER_KEY_VARS.contains(&name) {
            register_provider_key(value.trim());
        } else if is_key_var(name) {
            register(value.trim());
        }
    }
}

/// Remember a secret (an API key, a token) for [`redact`].
pub fn register(secret: &str) {
    remember(&SECRETS, secret);
}

/// Remember a model provider's key: masked like every secret, and refused by
/// [`holds_provider_key`] wherever a value would leave the process.
pub fn register_provider_key(secret: &str) {
    register(secret);
    remember(&PROVIDER_KEYS, secret);
}

fn remember(list: &RwLock<Vec<String>>, secret: &str) {
    if secret.len() < MIN_SECRET_LEN {
        return;
    }
    let mut all = list.write().unwrap_or_else(|p| p.into_inner());
    if !all.iter().any(|s| s == secret) {
        all.push(secret.to_string());
    }
}

/// Whether `text` holds a model provider's key (registered with [`register_provider_key`]).
pub(crate) fn holds_provider_key(text: &str) -> bool {
    let keys = PROVIDER_KEYS.read().unwrap_or_else(|p| p.into_inner());
    keys.iter().any(|k| text.contains(k.as_str()))
}

/// The masked form shown instead of a secret: its first 4 characters and `****`.
pub(crate) fn mask(secret: &str) -> String {
    if secret.chars().count() <= MIN_SECRET_LEN {
        return "****".into();
    }
    let head: String = secret.chars().take(4).collect();
    format!("{head}****")
}

/// `text` with every registered secret masked.
pub(crate) fn redact(text: &str) -> Cow<'_, str> {
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

/// `value` with every registered secret masked in each of its strings (keys and values).
pub(crate) fn redact_value(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) => Value::String(redact(s).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(redact_value).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (redact(k).into_owned(), redact_value(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_is_masked_in_every_string_of_a_json_value() {
        register("sk-unit-json-secret-98765");
        let v = serde_json::json!({
            "command": "curl -H 'x-api-key: sk-unit-json-secret-98765' x",
            "list": ["sk-unit-json-secret-98765", 3, true],
            "sk-unit-json-secret-98765": null
        });
        let masked = redact_value(&v).to_string();
        assert!(!masked.contains("sk-unit-json-secret-98765"), "{masked}");
        assert_eq!(masked.matches("sk-u****").count(), 3, "{masked}");
        assert!(masked.contains("3,true"), "{masked}");
    }

    #[test]
    fn every_key_variable_is_registered() {
        register_env([
            ("OPENAI_API_KEY", "sk-proj-unit-inactive-0123456789"),
            ("STRIPE_API_KEY", "rk_live_unit-0123456789"),
            ("PATH", "/usr/bin:/bin:/unit-path-0123"),
        ]);
        assert_eq!(
            redact("a sk-proj-unit-inactive-0123456789 b rk_live_unit-0123456789"),
            "a sk-p**** b rk_l****"
        );
        assert_eq!(
            redact("/usr/bin:/bin:/unit-path-0123"),
            "/usr/bin:/bin:/unit-path-0123"
        );
        assert!(is_key_var("ANTHROPIC_AUTH_TOKEN") && !is_key_var("HOME"));
        // Only a model provider's variable holds a provider key: what a header expanding
        // `${OPENAI_API_KEY}` would carry is refused, a `${STRIPE_API_KEY}` is only masked.
        assert!(holds_provider_key(
            "Bearer sk-proj-unit-inactive-0123456789"
        ));
        assert!(!holds_provider_key("Bearer rk_live_unit-0123456789"));
        assert!(!holds_provider_key("Bearer docs-token-0123456789"));
    }

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
pub(crate) struct ApiKey(String);

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
