//! Language servers: on by default (each found on `PATH` when a file of its language is first
//! read or changed), `--no-lsp` (key `no_lsp`) turns them all off, and `[lsp.NAME]` tables add a
//! server or change or turn off a built-in one (`command`, `extensions`, `root_markers`, `env`,
//! `enabled`; read by `engine::lsp::spec`).

use clap::Args;
use serde::Deserialize;

use super::error::ConfigError;
use crate::engine::lsp::{ServerSpec, spec};

/// The flags of this concern (their place in `--help` is `display_order`).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct LspFlags {
    /// No language servers: no diagnostics after edits, no diagnostics tool
    #[arg(long, display_order = 31)]
    pub(crate) no_lsp: bool,
}

/// The config file's keys of this concern.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct LspKeys {
    pub(crate) no_lsp: Option<bool>,
    /// `[lsp.NAME]` tables.
    pub(crate) lsp: Option<toml::Value>,
}

/// The effective settings of this concern.
#[derive(Debug, Clone)]
pub(crate) struct LspSettings {
    /// `--no-lsp` or `no_lsp = true`.
    pub(crate) off: bool,
    /// Every server, built-in and configured, in order of preference (disabled ones included).
    pub(crate) servers: Vec<ServerSpec>,
}

/// Merge this concern's flags and file keys.
pub(crate) fn resolve(flags: LspFlags, keys: LspKeys) -> Result<LspSettings, ConfigError> {
    Ok(LspSettings {
        off: flags.no_lsp || keys.no_lsp.unwrap_or(false),
        servers: spec::with_config(keys.lsp.as_ref())?,
    })
}
