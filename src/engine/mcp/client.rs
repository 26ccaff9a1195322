//! One connection to one server through rmcp: start it (a child over stdio, or a streamable-HTTP
//! endpoint), do the `initialize` handshake, list its tools; and the words for what went wrong.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion, Tool};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::process::Child;
use tokio::sync::mpsc;

use super::config::{ServerConfig, Transport};
use super::env;
use super::process::{self, Diagnostics, ProcessGroup};
use crate::engine::secrets::holds_provider_key;

/// What every connection needs from the manager.
#[derive(Debug, Clone)]
pub(crate) struct StartCtx {
    /// A server's working directory when its config names none, and the base of a relative `cwd`.
    pub workspace: PathBuf,
    /// flower-tui's environment, for the servers' base variables.
    pub env: Arc<BTreeMap<String, String>>,
}

/// flower-tui's side of a connection: it names itself and passes on `tools/list_changed`.
#[derive(Debug, Clone)]
pub(crate) struct Handler {
    list_changed: mpsc::UnboundedSender<()>,
}

impl Handler {
    pub fn new(list_changed: mpsc::UnboundedSender<()>) -> Self {
        Handler { list_changed }
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("flower-tui", env!("CARGO_PKG_VERSION")),
        )
        // The handshake every server released so far understands.
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.list_changed.send(());
    }
}

/// A started stdio server's process.
pub(crate) struct Process {
    pub child: Child,
    pub group: Arc<ProcessGroup>,
    pub diag: Arc<Diagnostics>,
}

/// A live connection.
pub(crate) struct Connection {
    pub running: RunningService<RoleClient, Handler>,
    /// `None` for HTTP servers.
    pub process: Option<Process>,
}

/// Why a server could not start (one line, for `/mcp` and the notice).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StartFailure(pub String);

/// Called once a stdio server's process exists, so the manager can kill it whatever happens next
/// and explain a start that never finishes.
pub(crate) type OnSpawn<'a> = Box<dyn FnOnce(&Arc<ProcessGroup>, &Arc<Diagnostics>) + Send + 'a>;

/// Start `cfg`'s server and list its tools. Dropping the future kills a started process.
pub(crate) async fn connect(
    cfg: &ServerConfig,
    ctx: &StartCtx,
    handler: Handler,
    on_spawn: OnSpawn<'_>,
    warnings: &mut Vec<String>,
) -> Result<(Connection, Vec<Tool>), StartFailure> {
    match &cfg.transport {
        Transport::Stdio {
            command,
            args,
            env: configured,
            cwd,
        } => {
            let parent = |k: &str| ctx.env.get(k).cloned();
            let (vars, dropped) = env::server_env(configured, &parent);
            if !dropped.is_empty() {
                warnings.push(format!(
                    "not passed to the server (they would carry a model provider's key): {}",
                    dropped.join(", ")
                ));
            }
            let dir = match cwd {
                Some(c) if c.is_relative() => ctx.workspace.join(c),
                Some(c) => c.clone(),
                None => ctx.workspace.clone(),
            };
            let spawned = process::spawn(command, args, &vars, &dir)
                .map_err(|e| StartFailure(spawn_error(command, &dir, &e)))?;
            on_spawn(&spawned.group, &spawned.diag);
            let process::StdioChild {
                child,
                stdin,
                stdout,
                group,
                diag,
            } = spawned;
            let mut proc = Process { child, group, diag };
            match handler.serve((stdout, stdin)).await {
                Ok(running) => {
                    let tools = list_tools(&running).await;
                    match tools {
                        Ok(tools) => Ok((
                            Connection {
                                running,
                                process: Some(proc),
                            },
                            tools,
                        )),
                        Err(e) => {
                            let why = exit_reason(&mut proc, "while listing its tools").await;
                            Err(StartFailure(why.unwrap_or_else(|| {
                                format!("listing its tools failed: {}", error_chain(&e))
                            })))
                        }
                    }
                }
                Err(e) => {
                    let why = exit_reason(&mut proc, "during start-up").await;
                    Err(StartFailure(why.unwrap_or_else(|| {
                        let d = proc.diag.describe();
                        format!("the handshake failed: {}{}", init_error(&e), clause(&d))
                    })))
                }
            }
        }
        Transport::Http { url, headers } => {
            if holds_provider_key(url) {
                return Err(StartFailure(
                    "its URL would carry a model provider's key; not connecting".into(),
                ));
            }
            let mut custom = HashMap::new();
            for (name, value) in headers {
                if holds_provider_key(value) {
                    return Err(StartFailure(format!(
                        "header `{name}` would carry a model provider's key; not connecting"
                    )));
                }
                let (Ok(n), Ok(v)) = (
                    reqwest::header::HeaderName::from_bytes(name.as_bytes()),
                    reqwest::header::HeaderValue::from_str(value),
                ) else {
                    return Err(StartFailure(format!(
                        "header `{name}` is not a valid HTTP header"
                    )));
                };
                custom.insert(n, v);
            }
            let config =
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
            let transport = StreamableHttpClientTransport::with_client(
                crate::engine::provider::http::http_client(),
                config,
            );
            let running = handler.serve(transport).await.map_err(|e| {
                StartFailure(format!("cannot connect to {url}: {}", init_error(&e)))
            })?;
            let tools = list_tools(&running).await.map_err(|e| {
                StartFailure(format!("listing its tools failed: {}", error_chain(&e)))
            })?;
            Ok((
                Connection {
                    running,
                    process: None,
                },
                tools,
            ))
        }
    }
}

/// Every tool the server lists (all pages); none when it declares no tools.
async fn list_tools(
    running: &RunningService<RoleClient, Handler>,
) -> Result<Vec<Tool>, rmcp::service::ServiceError> {
    let declares_tools = running
        .peer()
        .peer_info()
        .is_none_or(|info| info.capabilities.tools.is_some());
    if !declares_tools {
        return Ok(Vec::new());
    }
    running.peer().list_all_tools().await
}

/// After a failed start or a closed connection: how the process ended, if it did (waits up to
/// 500 ms for it), with what it wrote. `None` while it is still running.
pub(crate) async fn exit_reason(proc: &mut Process, when: &str) -> Option<String> {
    let status = tokio::time::timeout(Duration::from_millis(500), proc.child.wait()).await;
    proc.group.kill_and_disarm();
    let status = status.ok()?.ok()?;
    // Give the stderr reader a moment to take the last lines.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let mut text = describe_status(status);
    if !when.is_empty() {
        text.push(' ');
        text.push_str(when);
    }
    text.push_str(&clause(&proc.diag.describe()));
    Some(text)
}

/// `exited with status 3`, `was killed by signal 9`.
pub(crate) fn describe_status(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("was killed by signal {sig}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => "exited".to_string(),
    }
}

/// `; <text>` or nothing.
pub(crate) fn clause(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!("; {text}")
    }
}

fn spawn_error(command: &str, dir: &Path, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound if !dir.is_dir() => {
            format!(
                "cannot start `{command}`: its working directory {} does not exist",
                dir.display()
            )
        }
        std::io::ErrorKind::NotFound => {
            format!("cannot start `{command}`: command not found on PATH")
        }
        std::io::ErrorKind::PermissionDenied => {
            format!("cannot start `{command}`: permission denied")
        }
        _ => format!("cannot start `{command}`: {e}"),
    }
}

fn init_error(e: &rmcp::service::ClientInitializeError) -> String {
    use rmcp::service::ClientInitializeError as E;
    match e {
        E::ConnectionClosed(_) => "the server closed the connection".to_string(),
        E::JsonRpcError(data) => format!("the server answered with an error: {}", data.message),
        E::TransportError { error, .. } => transport_error(error),
        _ => error_chain(e),
    }
}

/// What went wrong in a transport, without rmcp's type names: for HTTP, the reqwest error and its
/// causes (`error sending request for url (…): client error (Connect): … Connection refused`).
pub(crate) fn transport_error(e: &rmcp::transport::DynamicTransportError) -> String {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let inner: &(dyn std::error::Error + 'static) = &*e.error;
    let mut current = Some(inner);
    while let Some(err) = current {
        if let Some(StreamableHttpError::Client(http)) =
            err.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            return error_chain(http);
        }
        current = err.source();
    }
    error_chain(inner)
}

/// An error and its causes, without repeats.
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    crate::engine::secrets::redact(&parts.join(": ")).into_owned()
}
