//! The environment as the configuration sees it: read once at start (tests pass their own), an
//! empty variable counts as unset, and the two directories flower-tui keeps things in:
//! `<config_dir>/flower` (the config file, the user's `AGENTS.md`) and `<data_dir>/flower` (runs,
//! logs, learned windows). `XDG_CONFIG_HOME` and `XDG_DATA_HOME` are honoured before the
//! platform's defaults, so a test can keep everything in a temporary directory.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// The environment, read once.
#[derive(Debug, Clone, Default)]
pub(crate) struct Env(pub(crate) BTreeMap<String, String>);

impl Env {
    pub(crate) fn from_process() -> Self {
        Env(std::env::vars().collect())
    }

    /// The variable's value; None when unset or empty.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

/// `<config_dir>/flower/config.toml`.
pub(crate) fn config_path(env: &Env) -> Option<PathBuf> {
    if let Some(dir) = env.get("XDG_CONFIG_HOME") {
        return Some(PathBuf::from(dir).join("flower/config.toml"));
    }
    dirs::config_dir().map(|d| d.join("flower/config.toml"))
}

/// `<data_dir>/flower`.
pub(crate) fn data_dir(env: &Env) -> PathBuf {
    if let Some(dir) = env.get("XDG_DATA_HOME") {
        return PathBuf::from(dir).join("flower");
    }
    dirs::data_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("flower")
}
