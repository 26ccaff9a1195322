//! The config file, `<config_dir>/flower/config.toml`: flat `key = value` lines (plus
//! `[mcp_servers.NAME]`, `[lsp.NAME]` and `[[hooks.EVENT]]` tables), every flag having a key of the same name with `_` for `-`. A
//! missing file is an empty config; an unknown key or a value of the wrong type is an error that
//! names the file and the key. Each concern reads its own keys from the same text; [`KEYS`] lists
//! them all, and the first problem in the file's order is the one reported.

use std::ops::Range;
use std::path::Path;

use serde::de::{DeserializeOwned, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use toml::Spanned;

use super::context::ContextKeys;
use super::error::ConfigError;
use super::front::FrontKeys;
use super::hooks::HookKeys;
use super::lsp::LspKeys;
use super::places::PlaceKeys;
use super::provider::ProviderKeys;
use super::sandbox::SandboxKeys;
use super::tools::ToolKeys;
use super::web::WebKeys;

/// Every key of the file, in the order an unknown key's message lists them. A key added to one
/// of the concerns' key structs is added here too (a test checks that both agree).
pub(crate) const KEYS: &[&str] = &[
    "window",
    "headroom",
    "no_handoff",
    "lean",
    "compaction",
    "max_generations",
    "model",
    "provider",
    "base_url",
    "workspace",
    "run_dir",
    "no_workbench",
    "no_checkpoints",
    "checkpoint_keeper",
    "review",
    "step",
    "yes",
    "output",
    "demo",
    "verbose",
    "max_iterations",
    "theme",
    "max_tokens",
    "bash_timeout",
    "max_jobs",
    "job_stop_grace",
    "retry_base_ms",
    "stream_idle_timeout",
    "log_level",
    "handoff_mode",
    "mcp_servers",
    "mcp_json",
    "instructions_max_bytes",
    "effort",
    "subagent_model",
    "subagent_max_iterations",
    "notify",
    "history",
    "mouse_capture",
    "mask_tool_results",
    "mask_recent_tokens",
    "sandbox",
    "sandbox_network",
    "hooks",
    "mode",
    "no_lsp",
    "lsp",
    "web",
    "web_search",
];

/// The keys that take a table: an error inside one is not "written as a table".
const TABLE_KEYS: &[&str] = &["mcp_servers", "sandbox", "hooks", "lsp", "web"];

/// The config file's keys, read by concern.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileConfig {
    pub(crate) provider: ProviderKeys,
    pub(crate) context: ContextKeys,
    pub(crate) places: PlaceKeys,
    pub(crate) tools: ToolKeys,
    pub(crate) front: FrontKeys,
    pub(crate) sandbox: SandboxKeys,
    pub(crate) hooks: HookKeys,
    pub(crate) lsp: LspKeys,
    pub(crate) web: WebKeys,
}

/// Read and check the config file at `path`; a missing file is an empty config.
pub(crate) fn load_file(path: &Path) -> Result<FileConfig, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(path, &text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(FileConfig::default()),
        Err(source) => Err(ConfigError::Unreadable {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// The config file's `text` (`path` names it in errors).
pub(crate) fn parse(path: &Path, text: &str) -> Result<FileConfig, ConfigError> {
    let mut problems = Vec::new();
    let file = FileConfig {
        provider: read(text, &mut problems),
        context: read(text, &mut problems),
        places: read(text, &mut problems),
        tools: read(text, &mut problems),
        front: read(text, &mut problems),
        sandbox: read(text, &mut problems),
        hooks: read(text, &mut problems),
        lsp: read(text, &mut problems),
        web: read(text, &mut problems),
    };
    match toml::from_str::<FirstUnknownKey>(text) {
        Ok(FirstUnknownKey(Some(key))) => problems.push(Problem::Unknown(key)),
        Ok(FirstUnknownKey(None)) => {}
        Err(e) => problems.push(Problem::Toml(e)),
    }
    match problems.into_iter().min_by_key(Problem::start) {
        None => Ok(file),
        Some(problem) => Err(problem.into_error(path, text)),
    }
}

/// One concern's keys from `text`; a problem is noted and the keys are left at their defaults.
fn read<T: DeserializeOwned + Default>(text: &str, problems: &mut Vec<Problem>) -> T {
    toml::from_str(text).unwrap_or_else(|e| {
        problems.push(Problem::Toml(e));
        T::default()
    })
}

/// Something wrong in the file, and where.
enum Problem {
    Toml(toml::de::Error),
    Unknown(Spanned<String>),
}

impl Problem {
    /// The byte the problem starts at (the file's order decides which one is reported).
    fn start(&self) -> usize {
        match self {
            Problem::Toml(e) => e.span().map_or(0, |s: Range<usize>| s.start),
            Problem::Unknown(key) => key.span().start,
        }
    }

    fn into_error(self, path: &Path, text: &str) -> ConfigError {
        let path = path.to_path_buf();
        let error = match self {
            Problem::Unknown(key) => {
                return ConfigError::UnknownKey {
                    path,
                    key: key.into_inner(),
                    expected: KEYS,
                };
            }
            Problem::Toml(error) => Box::new(error),
        };
        match error.span().and_then(|span| key_at(text, span.start)) {
            Some(KeyAt::Table(key)) if !key.is_empty() && !TABLE_KEYS.contains(&key.as_str()) => {
                ConfigError::WrittenAsTable { path, key, error }
            }
            Some(KeyAt::Value(key))
                if !key.is_empty() && !error.message().contains(&format!("`{key}`")) =>
            {
                ConfigError::WrongValue { path, key, error }
            }
            _ => ConfigError::Malformed { path, error },
        }
    }
}

/// The first top-level key that is not in [`KEYS`], with where it is written.
struct FirstUnknownKey(Option<Spanned<String>>);

impl<'de> Deserialize<'de> for FirstUnknownKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> Visitor<'de> for Keys {
            type Value = FirstUnknownKey;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a table of settings")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while let Some(key) = map.next_key::<Spanned<String>>()? {
                    if !KEYS.contains(&key.get_ref().as_str()) {
                        return Ok(FirstUnknownKey(Some(key)));
                    }
                    map.next_value::<IgnoredAny>()?;
                }
                Ok(FirstUnknownKey(None))
            }
        }
        d.deserialize_map(Keys)
    }
}

/// What the line an error points at names: a `key = value` or a `[table]` header.
enum KeyAt {
    Value(String),
    Table(String),
}

/// The key on the line holding byte `pos` of `text`.
fn key_at(text: &str, pos: usize) -> Option<KeyAt> {
    let head = text.get(..pos.min(text.len()))?;
    let start = head.rfind('\n').map_or(0, |i| i + 1);
    let line = text.get(start..)?.lines().next()?.trim();
    if let Some(header) = line.strip_prefix('[') {
        let name = header.trim_start_matches('[');
        let name = name.split(']').next()?.trim();
        return Some(KeyAt::Table(name.trim_matches('"').to_string()));
    }
    let (k, _) = line.split_once('=')?;
    Some(KeyAt::Value(k.trim().to_string()))
}

#[cfg(test)]
#[path = "file_tests.rs"]
mod tests;
