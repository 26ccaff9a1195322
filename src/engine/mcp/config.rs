//! MCP server configuration in the two conventions users already have: `[mcp_servers.NAME]` tables
//! in `config.toml` (the Codex shape) and a workspace's `.mcp.json` (`{"mcpServers": {NAME: {...}}}`,
//! the Claude Code shape, `type: "stdio" | "http"`).
//!
//! Both are read by one parser over a JSON value, so they accept the same keys and give the same
//! one-line errors naming the key (`mcp_servers.github.args: expected an array of strings (got a
//! string)`). `${VAR}` and `${VAR:-default}` are expanded from the environment in `command`, `args`,
//! `env`, `cwd`, `url` and `headers`, as Claude Code does for `.mcp.json`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

mod parse;
pub(super) use parse::value_kind;
use parse::{kind, parse_servers};

/// How long the first model request waits for a server that is still starting.
pub(crate) const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one tool call may take.
pub(crate) const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);
/// The project file, at the workspace root.
pub(crate) const MCP_JSON: &str = ".mcp.json";

/// One configured server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// The name in the config (`[mcp_servers.NAME]`): letters, digits, `_` and `-`.
    pub name: String,
    pub transport: Transport,
    /// `enabled = false` keeps a server configured but never started.
    pub enabled: bool,
    /// How long the first request waits for this server (see [`crate::engine::mcp::McpManager`]).
    pub startup_timeout: Duration,
    /// How long one call of one of its tools may take.
    pub tool_timeout: Duration,
    /// Which file named it.
    pub origin: Origin,
}

/// Where a server was configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The user's `config.toml`.
    ConfigFile,
    /// The workspace's `.mcp.json` (used only once approved).
    McpJson,
    /// The front end's session (an editor names its own servers for the session it opens).
    FrontEnd,
}

impl Origin {
    /// How the origin is named in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::ConfigFile => "config.toml",
            Origin::McpJson => MCP_JSON,
            Origin::FrontEnd => "the editor's session",
        }
    }
}

/// How flower-tui talks to a server.
#[derive(Clone, PartialEq, Eq)]
pub enum Transport {
    /// A program started by flower-tui, speaking JSON-RPC on its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Variables the config names (after `${VAR}` expansion); the rest of the environment is
        /// a minimal base (see `env.rs`).
        env: BTreeMap<String, String>,
        /// Relative to the workspace; the workspace when absent.
        cwd: Option<PathBuf>,
    },
    /// A streamable-HTTP endpoint.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

impl Transport {
    /// A one-line description for `/mcp` and `-v`: the command line or the URL (values of `env`
    /// and `headers` are never shown).
    pub fn summary(&self) -> String {
        match self {
            Transport::Stdio { command, args, .. } => {
                let mut s = command.clone();
                for a in args {
                    s.push(' ');
                    s.push_str(a);
                }
                crate::engine::secrets::redact(&s).into_owned()
            }
            Transport::Http { url, .. } => crate::engine::secrets::redact(url).into_owned(),
        }
    }

    /// Values that may be credentials (header values, environment values whose name looks like
    /// one), to register with [`crate::engine::secrets::register`] so they are masked everywhere.
    /// A header value with a scheme (`Bearer <token>`) gives its token too, so the token is
    /// masked where it appears alone.
    pub fn secret_values(&self) -> Vec<&str> {
        match self {
            Transport::Stdio { env, .. } => env
                .iter()
                .filter(|(k, _)| looks_secret(k))
                .map(|(_, v)| v.as_str())
                .collect(),
            Transport::Http { headers, .. } => headers
                .values()
                .flat_map(|v| {
                    let token = v.split_once(' ').map(|(_, t)| t.trim());
                    std::iter::once(v.as_str()).chain(token.filter(|t| !t.is_empty()))
                })
                .collect(),
        }
    }
}

fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    [
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "AUTH",
        "CREDENTIAL",
    ]
    .iter()
    .any(|w| upper.contains(w))
}

/// `Debug` names the variables and headers but never shows their values.
impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field(
                    "env",
                    &env.keys().map(|k| format!("{k}=****")).collect::<Vec<_>>(),
                )
                .field("cwd", cwd)
                .finish(),
            Transport::Http { url, headers } => f
                .debug_struct("Http")
                .field("url", url)
                .field(
                    "headers",
                    &headers
                        .keys()
                        .map(|k| format!("{k}: ****"))
                        .collect::<Vec<_>>(),
                )
                .finish(),
        }
    }
}

/// A configuration error: the key it is about (`mcp_servers.github.command`) and what is wrong.
/// The caller prefixes the file (`config ~/.config/flower/config.toml: …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("key `{key}`: {message}")]
pub struct McpConfigError {
    pub key: String,
    pub message: String,
}

fn err(key: impl Into<String>, message: impl Into<String>) -> McpConfigError {
    McpConfigError {
        key: key.into(),
        message: message.into(),
    }
}

/// Looks a variable up for `${VAR}` expansion and `env_vars` (tests pass their own).
pub(crate) type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The servers of a `config.toml`'s `mcp_servers` table. Unknown keys are errors, as elsewhere in
/// that file.
pub fn from_toml(
    table: &toml::Value,
    env: EnvLookup<'_>,
) -> Result<Vec<ServerConfig>, McpConfigError> {
    let json = serde_json::to_value(table)
        .map_err(|e| err("mcp_servers", format!("cannot be read: {e}")))?;
    parse_servers(&json, "mcp_servers", Origin::ConfigFile, env)
}

/// The servers of a `.mcp.json` file's text. Keys other tools use in this file (and flower-tui does
/// not) are ignored; a missing `mcpServers` is an empty list.
pub(crate) fn from_mcp_json(
    text: &str,
    env: EnvLookup<'_>,
) -> Result<Vec<ServerConfig>, McpConfigError> {
    let json: Value = serde_json::from_str(text).map_err(|e| {
        err(
            "mcpServers",
            format!(
                "not valid JSON (line {}, column {}): {e}",
                e.line(),
                e.column()
            ),
        )
    })?;
    let Some(obj) = json.as_object() else {
        return Err(err(
            "mcpServers",
            format!("the file must hold a JSON object (got {})", kind(&json)),
        ));
    };
    match obj.get("mcpServers") {
        None => Ok(Vec::new()),
        Some(servers) => parse_servers(servers, "mcpServers", Origin::McpJson, env),
    }
}

/// A workspace's `.mcp.json`, read but not yet trusted.
#[derive(Debug, Clone, PartialEq)]
pub struct McpJsonFile {
    pub path: PathBuf,
    /// The bytes as read: approval is recorded against their hash.
    pub bytes: Vec<u8>,
}

/// Read `<workspace>/.mcp.json`; `Ok(None)` when there is none.
pub fn read_mcp_json(workspace: &Path) -> std::io::Result<Option<McpJsonFile>> {
    let path = workspace.join(MCP_JSON);
    match std::fs::read(&path) {
        Ok(bytes) => Ok(Some(McpJsonFile { path, bytes })),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

impl McpJsonFile {
    /// Parse the servers it names.
    pub fn servers(&self, env: EnvLookup<'_>) -> Result<Vec<ServerConfig>, McpConfigError> {
        let text = std::str::from_utf8(&self.bytes)
            .map_err(|_| err("mcpServers", "the file is not UTF-8 text"))?;
        from_mcp_json(text, env)
    }
}

/// The servers of both files: the user's own config wins a name both use (the `.mcp.json` one is
/// skipped, with a notice naming it).
pub(crate) fn merge(
    user: Vec<ServerConfig>,
    project: Vec<ServerConfig>,
) -> (Vec<ServerConfig>, Vec<String>) {
    let mut notices = Vec::new();
    let mut all = user;
    for s in project {
        if all.iter().any(|u| u.name == s.name) {
            notices.push(format!(
                "MCP server `{}` in {MCP_JSON} is skipped: config.toml names a server `{}` too",
                s.name, s.name
            ));
        } else {
            all.push(s);
        }
    }
    (all, notices)
}

/// Whether `name` is a usable server name: it becomes part of every tool name
/// (`mcp__<server>__<tool>`), which the model APIs restrict to `[a-zA-Z0-9_-]`.
pub(crate) fn valid_server_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && !name.contains("__")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
