//! What can be wrong with the configuration, one variant per kind of mistake. Each renders as the
//! one line the user sees after `flower-tui: `: it names the flag, key or variable at fault and,
//! where there is a choice, the accepted values. Every one of them exits with code 2.

use std::fmt;
use std::path::PathBuf;

use crate::engine::mcp::config::McpConfigError;

/// What a provider's base URL must look like (the `base_url` key and the `*_BASE_URL` variables).
pub(crate) const BASE_URL_ACCEPTED: &str = "an absolute http(s) URL like https://api.anthropic.com";

/// A configuration error: one line naming the key and the accepted values; exit code 2.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfigError {
    /// The config file exists but cannot be read.
    #[error("config {}: cannot read: {source}", .path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A key that takes a value is written as a `[table]` header.
    #[error(
        "config {}: key `{key}` is written as a table ([{key}]) but takes a value \
         (write `{key} = …` at the top of the file): {}",
        .path.display(),
        one_line(.error)
    )]
    WrittenAsTable {
        path: PathBuf,
        key: String,
        #[source]
        error: Box<toml::de::Error>,
    },
    /// A key's value has the wrong type or cannot be read as what the key takes.
    #[error("config {}: key `{key}`: {}", .path.display(), one_line(.error))]
    WrongValue {
        path: PathBuf,
        key: String,
        #[source]
        error: Box<toml::de::Error>,
    },
    /// The file is not valid TOML, or the decoder's message already names the key.
    #[error("config {}: {}", .path.display(), one_line(.error))]
    Malformed {
        path: PathBuf,
        #[source]
        error: Box<toml::de::Error>,
    },
    /// A key the file format does not have.
    #[error("config {}: {}", .path.display(), unknown_key(.key, .expected))]
    UnknownKey {
        path: PathBuf,
        key: String,
        /// Every key the file format has, in the order the message lists them.
        expected: &'static [&'static str],
    },
    /// A key's value is not one of the accepted ones.
    #[error("config key `{key}`: accepted values: {accepted} (got {got})")]
    BadValue {
        key: &'static str,
        accepted: &'static str,
        /// What was written (or, for a value of the wrong kind, its kind).
        got: String,
    },
    /// A provider base URL (from the file or the environment) that cannot be one.
    #[error("{at}: {problem}; accepted values: {BASE_URL_ACCEPTED}")]
    BadUrl { at: UrlSetting, problem: UrlProblem },
    /// An `[mcp_servers.NAME]` table is wrong.
    #[error("config {0}")]
    McpServers(#[from] McpConfigError),
    /// An `[lsp.NAME]` table is wrong.
    #[error("config {0}")]
    Lsp(#[from] crate::engine::lsp::LspConfigError),
    /// A provider is needed (headless without `--demo`) but has no key.
    #[error("no API key configured: set {set}, or pass --demo to use the built-in demo model")]
    NoApiKey {
        /// The environment variable(s) to set.
        set: &'static str,
    },
    /// `--workspace` (or the `workspace` key) cannot be resolved.
    #[error("--workspace {}: {source}", .path.display())]
    WorkspaceUnresolvable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--workspace {}: not a directory", .path.display())]
    WorkspaceNotADirectory { path: PathBuf },
    /// `<workspace>/.flower` is a file where the notes and spill files go.
    #[error(
        "{} is a file, not a directory: flower-tui keeps its notes and spill files there; \
         move the file away, or pass --no-workbench",
        .dir.display()
    )]
    WorkbenchIsAFile { dir: PathBuf },
    #[error("--run-dir {}: not a directory", .dir.display())]
    RunDirNotADirectory { dir: PathBuf },
}

/// Where a base URL came from: the config file's key, or an environment variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UrlSetting {
    FileKey,
    Env(&'static str),
}

impl fmt::Display for UrlSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlSetting::FileKey => f.write_str("config key `base_url`"),
            UrlSetting::Env(var) => f.write_str(var),
        }
    }
}

/// Why a string cannot be a provider's base URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum UrlProblem {
    #[error("'{url}' is not an http(s) URL")]
    NotHttp { url: String },
    #[error("'{url}' has no host")]
    NoHost { url: String },
    /// `reason` is the URL parser's own explanation.
    #[error("'{url}' is not an absolute URL ({reason})")]
    NotAbsolute { url: String, reason: String },
}

/// The TOML decoder's message on one line.
fn one_line(error: &toml::de::Error) -> String {
    error.message().replace('\n', " ")
}

/// The unknown-key message in the words of the TOML decoder (`unknown field …, expected one of …`),
/// so a key the file format lacks reads as it always has.
fn unknown_key(key: &str, expected: &&'static [&'static str]) -> String {
    <serde::de::value::Error as serde::de::Error>::unknown_field(key, expected).to_string()
}
