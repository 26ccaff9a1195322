//! A stdio server's environment: a minimal base taken from flower-tui's own (so the program can be
//! found and can find its home, locale, temp dir and proxy) plus exactly what its config names.
//! Provider keys never pass, whatever the config says: not by name, and not under another name
//! (a value holding a model provider's key is dropped too, so `{"X": "${ANTHROPIC_API_KEY}"}` in a
//! repository's `.mcp.json` cannot carry the key out). The server's own credentials (`GITHUB_TOKEN`)
//! pass: they are masked in what flower-tui shows, not withheld.

use std::collections::BTreeMap;

use crate::engine::secrets::{PROVIDER_KEY_VARS, holds_provider_key};

/// Variables passed from flower-tui's environment to every stdio server when set.
pub const BASE_VARS: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "TERM",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_RUNTIME_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
];

/// The environment for a server: the base from `parent` plus `configured`; and the names dropped
/// because they would carry a provider key (for a notice).
pub(crate) fn server_env(
    configured: &BTreeMap<String, String>,
    parent: &dyn Fn(&str) -> Option<String>,
) -> (BTreeMap<String, String>, Vec<String>) {
    let mut env = BTreeMap::new();
    for name in BASE_VARS {
        if let Some(v) = parent(name).filter(|v| !holds_provider_key(v)) {
            env.insert((*name).to_string(), v);
        }
    }
    let mut dropped = Vec::new();
    for (k, v) in configured {
        if PROVIDER_KEY_VARS.contains(&k.as_str()) || holds_provider_key(v) {
            dropped.push(k.clone());
        } else {
            env.insert(k.clone(), v.clone());
        }
    }
    (env, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_plus_configured_and_never_a_provider_key() {
        crate::engine::secrets::register_provider_key("sk-ant-env-test-0123456789");
        // The server's own token is masked everywhere but still reaches the server.
        crate::engine::secrets::register("ghp_unit_env_token_0123");
        let parent = |k: &str| match k {
            "PATH" => Some("/usr/bin:/bin".to_string()),
            "HOME" => Some("/home/u".to_string()),
            "ANTHROPIC_API_KEY" => Some("sk-ant-env-test-0123456789".to_string()),
            "SECRET_THING" => Some("x".to_string()),
            _ => None,
        };
        let configured: BTreeMap<String, String> = [
            ("GITHUB_TOKEN", "ghp_unit_env_token_0123"),
            ("OPENAI_API_KEY", "sk-openai"),
            ("SNEAKY", "Bearer sk-ant-env-test-0123456789"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let (env, dropped) = server_env(&configured, &parent);
        let keys: Vec<&str> = env.keys().map(String::as_str).collect();
        assert_eq!(keys, ["GITHUB_TOKEN", "HOME", "PATH"]);
        assert_eq!(dropped, ["OPENAI_API_KEY", "SNEAKY"]);
        assert!(env.values().all(|v| !v.contains("sk-ant")));
        assert_eq!(env["GITHUB_TOKEN"], "ghp_unit_env_token_0123");
    }
}
