//! The web: which hosts `web_fetch` may reach on local and private addresses, and whether the
//! provider's own web search is offered.
//!
//! ```toml
//! web_search = true
//!
//! [web]
//! allow_private_hosts = ["localhost:3000", "127.0.0.1:8080", "devbox"]
//! ```
//!
//! `web_search` (off by default) offers Anthropic's server-side web search; other providers are
//! never offered one. `allow_private_hosts` lists `host` or `host:port` entries (`[::1]:3000` for
//! IPv6) whose addresses may be loopback or private; every other such address is refused, or
//! asked for call by call in the TUI (`--yes` does not cover them).

use serde::Deserialize;

use super::error::ConfigError;

/// The config file's keys of this concern.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct WebKeys {
    /// The `[web]` table.
    pub(crate) web: Option<WebTable>,
    pub(crate) web_search: Option<bool>,
}

/// The `[web]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebTable {
    pub(crate) allow_private_hosts: Option<Vec<String>>,
}

/// The effective settings of this concern.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct WebSettings {
    pub(crate) allow_private_hosts: Vec<String>,
    pub(crate) web_search: bool,
}

/// What an `allow_private_hosts` entry must look like.
const HOST_ACCEPTED: &str = "host names or addresses with an optional port, such as \
                             \"localhost:3000\", \"10.0.0.5\", \"[::1]:8080\"";

/// This concern's file keys as settings (it has no flags). An entry that is not a host (a URL, a
/// path, a wildcard, blank) is an error naming the key.
pub(crate) fn resolve(keys: WebKeys) -> Result<WebSettings, ConfigError> {
    let hosts = keys
        .web
        .and_then(|t| t.allow_private_hosts)
        .unwrap_or_default();
    for h in &hosts {
        let bad =
            h.trim().is_empty() || h.contains("://") || h.contains(['/', '*', ' ', '?', '#', '@']);
        if bad {
            return Err(ConfigError::BadValue {
                key: "web.allow_private_hosts",
                accepted: HOST_ACCEPTED,
                got: h.clone(),
            });
        }
    }
    Ok(WebSettings {
        allow_private_hosts: hosts
            .iter()
            .map(|h| h.trim().to_ascii_lowercase())
            .collect(),
        web_search: keys.web_search.unwrap_or(false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_checked_and_search_is_off_by_default() {
        let keys = |hosts: &[&str]| WebKeys {
            web: Some(WebTable {
                allow_private_hosts: Some(hosts.iter().map(|h| h.to_string()).collect()),
            }),
            web_search: None,
        };
        let ok = resolve(keys(&["LocalHost:3000", "[::1]:8080"])).unwrap();
        assert_eq!(ok.allow_private_hosts, ["localhost:3000", "[::1]:8080"]);
        assert!(!ok.web_search);
        let e = resolve(keys(&["http://localhost:3000"])).unwrap_err();
        assert!(e.to_string().contains("web.allow_private_hosts"), "{e}");
        assert!(resolve(keys(&["*.corp"])).is_err());
    }
}
