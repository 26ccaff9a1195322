//! The configuration of one editor session: the process's configuration (flags, environment,
//! config file) with the editor's `cwd` as the workspace, the run to continue, and the editor's
//! MCP servers beside the config file's (stdio and HTTP; a name the config file uses already
//! keeps the config file's server, as `.mcp.json` does).

use std::collections::BTreeMap;
use std::path::Path;

use agent_client_protocol::v1::schema::McpServer;

use crate::config::{Config, SessionChoice};
use crate::engine::mcp::config::{
    DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, Origin, ServerConfig, Transport,
};

/// `base` for a session in `cwd` (absolute, an existing directory), continuing `choice`, with the
/// editor's `servers`. Err says what is wrong with the request.
pub(super) fn for_session(
    base: &Config,
    cwd: &Path,
    choice: SessionChoice,
    servers: &[McpServer],
) -> Result<Config, String> {
    if !cwd.is_absolute() {
        return Err(format!(
            "cwd must be an absolute path, not {}",
            cwd.display()
        ));
    }
    let workspace = cwd
        .canonicalize()
        .map_err(|e| format!("cwd {}: {e}", cwd.display()))?;
    if !workspace.is_dir() {
        return Err(format!("cwd {} is not a directory", cwd.display()));
    }
    let mut config = base.clone();
    config.prompt = None;
    config.places.workspace = workspace;
    config.places.session = choice;
    config.places.run_dir = None;
    let (servers, skipped) = editor_servers(servers);
    for name in skipped {
        tracing::warn!("acp: the editor's MCP server `{name}` is left out (SSE is not supported)");
    }
    for server in servers {
        if config
            .tools
            .mcp_servers
            .iter()
            .any(|s| s.name == server.name)
        {
            tracing::info!(
                "acp: the editor's MCP server `{}` is skipped: config.toml names one too",
                server.name
            );
            continue;
        }
        config.tools.mcp_servers.push(server);
    }
    Ok(config)
}

/// The editor's servers as the engine's, and the names of those left out (SSE, invalid names).
fn editor_servers(servers: &[McpServer]) -> (Vec<ServerConfig>, Vec<String>) {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for server in servers {
        let (name, transport) = match server {
            McpServer::Stdio(s) => (
                s.name.clone(),
                Transport::Stdio {
                    command: s.command.to_string_lossy().into_owned(),
                    args: s.args.clone(),
                    env: s
                        .env
                        .iter()
                        .map(|v| (v.name.clone(), v.value.clone()))
                        .collect::<BTreeMap<_, _>>(),
                    cwd: None,
                },
            ),
            McpServer::Http(h) => (
                h.name.clone(),
                Transport::Http {
                    url: h.url.clone(),
                    headers: h
                        .headers
                        .iter()
                        .map(|v| (v.name.clone(), v.value.clone()))
                        .collect(),
                },
            ),
            McpServer::Sse(s) => {
                skipped.push(s.name.clone());
                continue;
            }
            _ => continue,
        };
        let name = safe_name(&name);
        out.push(ServerConfig {
            name,
            transport,
            enabled: true,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
            origin: Origin::FrontEnd,
        });
    }
    (out, skipped)
}

/// A server name usable in tool names (`mcp__<server>__<tool>`): other characters become `-`,
/// cut to 32.
fn safe_name(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .take(32)
        .collect();
    while s.contains("__") {
        s = s.replace("__", "_");
    }
    if s.is_empty() {
        s.push_str("editor");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        EnvVariable, HttpHeader, McpServerHttp, McpServerSse, McpServerStdio,
    };

    #[test]
    fn stdio_and_http_servers_are_kept_and_sse_is_left_out() {
        let servers = vec![
            McpServer::Stdio(
                McpServerStdio::new("git tools", "/usr/bin/mcp-git")
                    .args(vec!["--repo".into(), ".".into()])
                    .env(vec![EnvVariable::new("TOKEN", "s3cret")]),
            ),
            McpServer::Http(
                McpServerHttp::new("docs", "http://127.0.0.1:9/mcp")
                    .headers(vec![HttpHeader::new("Authorization", "Bearer x")]),
            ),
            McpServer::Sse(McpServerSse::new("old", "http://127.0.0.1:9/sse")),
        ];
        let (kept, skipped) = editor_servers(&servers);
        assert_eq!(skipped, ["old"]);
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[0].name, "git-tools");
        assert_eq!(kept[0].origin, Origin::FrontEnd);
        let Transport::Stdio {
            command, args, env, ..
        } = &kept[0].transport
        else {
            panic!("not stdio");
        };
        assert_eq!(command, "/usr/bin/mcp-git");
        assert_eq!(args, &["--repo", "."]);
        assert_eq!(env.get("TOKEN").map(String::as_str), Some("s3cret"));
        assert!(matches!(&kept[1].transport, Transport::Http { url, .. } if url.ends_with("/mcp")));
    }

    #[test]
    fn names_are_made_safe_for_tool_names() {
        assert_eq!(safe_name("a b__c"), "a-b_c");
        assert_eq!(safe_name(""), "editor");
        assert_eq!(safe_name(&"x".repeat(40)).len(), 32);
    }
}
