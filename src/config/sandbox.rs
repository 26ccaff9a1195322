//! The `bash` tool's OS sandbox: its mode, whether commands have the network, the extra paths
//! they may write, and whether a confined command is still asked for.
//!
//! The rules: `--sandbox` beats the file's mode, which beats `workspace-write`; `--sandbox-network`
//! beats `sandbox_network`, which beats `off`. The file's `sandbox` key is a mode word
//! (`sandbox = "read-only"`) or a table:
//!
//! ```toml
//! [sandbox]
//! mode = "workspace-write"
//! writable = ["~/.cache/pip", "/opt/build"]
//! ask = false
//! ```
//!
//! `writable` paths are absolute or start with `~/` (the home directory); `ask = true` asks for
//! every command as if there were no sandbox.

use std::path::PathBuf;

use clap::Args;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};

use super::env::Env;
use super::error::ConfigError;
use super::values::{Choice, FileWord, file_word, flag};
use crate::engine::policy::SandboxApproval;
use crate::engine::tools::sandbox::{NetworkAccess, SandboxMode, SandboxPolicy};

impl Choice for SandboxMode {
    const ACCEPTED: &'static str = "workspace-write, read-only, off";

    fn from_word(word: &str) -> Option<Self> {
        word.parse().ok()
    }
}

impl Choice for NetworkAccess {
    const ACCEPTED: &'static str = "on, off";

    fn from_word(word: &str) -> Option<Self> {
        word.parse().ok()
    }
}

/// The flags of this concern.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct SandboxFlags {
    /// Where bash commands may write: the workspace and temp dirs, the temp dirs only, or
    /// anywhere (no sandbox)
    #[arg(global = true, long, value_name = "workspace-write|read-only|off", value_parser = flag::<SandboxMode>, display_order = 27)]
    pub(crate) sandbox: Option<SandboxMode>,
    /// Whether sandboxed bash commands may use the network
    #[arg(global = true, long, value_name = "on|off", value_parser = flag::<NetworkAccess>, display_order = 28)]
    pub(crate) sandbox_network: Option<NetworkAccess>,
}

/// The config file's keys of this concern.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct SandboxKeys {
    /// A mode word, or the `[sandbox]` table.
    pub(crate) sandbox: Option<SandboxKey>,
    pub(crate) sandbox_network: Option<FileWord<NetworkAccess>>,
}

/// The `sandbox` key as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SandboxKey {
    Word(FileWord<SandboxMode>),
    Table(SandboxTable),
}

/// The `[sandbox]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SandboxTable {
    pub(crate) mode: Option<FileWord<SandboxMode>>,
    /// Paths commands may write besides the workspace and the temp dirs.
    pub(crate) writable: Option<Vec<String>>,
    /// Ask for confined commands too.
    pub(crate) ask: Option<bool>,
}

impl<'de> Deserialize<'de> for SandboxKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match toml::Value::deserialize(d)? {
            toml::Value::String(word) => {
                Ok(SandboxKey::Word(match SandboxMode::from_word(&word) {
                    Some(mode) => FileWord::Valid(mode),
                    None => FileWord::Invalid(word),
                }))
            }
            toml::Value::Table(table) => SandboxTable::deserialize(toml::Value::Table(table))
                .map(SandboxKey::Table)
                .map_err(|e| D::Error::custom(format!("[sandbox]: {}", e.message()))),
            other => Err(D::Error::custom(format!(
                "expected a mode ({}) or a [sandbox] table, not a value of type {}",
                SandboxMode::ACCEPTED,
                other.type_str()
            ))),
        }
    }
}

/// The effective settings of this concern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SandboxSettings {
    pub(crate) policy: SandboxPolicy,
    pub(crate) approval: SandboxApproval,
}

/// What a `writable` path must look like.
const WRITABLE_ACCEPTED: &str = "absolute paths, or paths starting with ~/";

/// Merge this concern's flags and file keys (`HOME` expands `~/`).
pub(crate) fn resolve(
    flags: SandboxFlags,
    keys: SandboxKeys,
    env: &Env,
) -> Result<SandboxSettings, ConfigError> {
    let (file_mode, table) = match keys.sandbox {
        None => (None, SandboxTable::default()),
        Some(SandboxKey::Word(word)) => {
            (file_word("sandbox", Some(word))?, SandboxTable::default())
        }
        Some(SandboxKey::Table(table)) => (file_word("sandbox.mode", table.mode.clone())?, table),
    };
    let network = file_word("sandbox_network", keys.sandbox_network)?;
    let writable = table
        .writable
        .unwrap_or_default()
        .iter()
        .map(|raw| writable_path(raw, env))
        .collect::<Result<Vec<_>, _>>()?;
    let mode = flags.sandbox.or(file_mode).unwrap_or_default();
    Ok(SandboxSettings {
        policy: SandboxPolicy::new(mode)
            .with_network(flags.sandbox_network.or(network).unwrap_or_default())
            .with_writable(writable),
        approval: if table.ask.unwrap_or(false) {
            SandboxApproval::Ask
        } else {
            SandboxApproval::Skip
        },
    })
}

/// One `writable` entry: absolute, or `~/…` under `HOME`.
fn writable_path(raw: &str, env: &Env) -> Result<PathBuf, ConfigError> {
    let bad = || ConfigError::BadValue {
        key: "sandbox.writable",
        accepted: WRITABLE_ACCEPTED,
        got: format!("\"{raw}\""),
    };
    let path = match raw.strip_prefix("~/") {
        Some(rest) => PathBuf::from(env.get("HOME").ok_or_else(bad)?).join(rest),
        None => PathBuf::from(raw),
    };
    if path.is_absolute() {
        Ok(path)
    } else {
        Err(bad())
    }
}

#[cfg(test)]
#[path = "sandbox_tests.rs"]
mod tests;
