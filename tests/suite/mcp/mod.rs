//! MCP client against real servers: the reference `server-everything` (npm) over stdio, a Python
//! SDK server (PyPI) over streamable HTTP, and an rmcp server of our own that misbehaves on request
//! (crash on start and mid-call, hang, garbage on stdout, 5 MB results, built-in names). Processes
//! are found through a marker in their environment, so the tests see grandchildren too.

use std::collections::BTreeMap;
use std::time::Duration;

use flower_tui::engine::mcp::{
    ManagerParams, McpManager, Origin, ServerConfig, ServerState, ServerStatus, Transport, config,
};
use tokio::sync::mpsc;

use crate::support::mcp_server::{self, SERVER_ENV, START_ENV};

/// The test binary itself, as the fault server (see `mcp_test_server_entry`).
#[test]
#[ignore = "entry point: the MCP fault server, run as a child process by the tests in this module"]
fn mcp_test_server_entry() {
    if std::env::var_os(SERVER_ENV).is_some() {
        mcp_server::run(3);
    }
}

const OWNER_ENV: &str = "FLOWER_MCP_TEST_OWNER";

/// The test binary itself, as a process owning MCP servers that a test kills with SIGKILL.
#[test]
#[ignore = "entry point: a process owning MCP servers, killed with SIGKILL by a test in this module"]
fn mcp_owner_entry() {
    let Ok(toml_text) = std::env::var(OWNER_ENV) else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async move {
        let value: toml::Value = toml::from_str(&toml_text).unwrap();
        let lookup = |k: &str| std::env::var(k).ok();
        let servers = config::from_toml(&value["mcp_servers"], &lookup).unwrap();
        let m = McpManager::start(ManagerParams {
            servers,
            workspace: std::env::temp_dir(),
            env: std::env::vars().collect(),
            status_tx: None,
            project: None,
        });
        m.wait_for_startup().await;
        let states: Vec<String> = m.statuses().iter().map(|s| s.state.to_string()).collect();
        println!("READY {}", states.join(" / "));
        std::future::pending::<()>().await;
    });
}

/// A unique `NAME=value` to find a test's processes by.
fn marker() -> (String, String) {
    let v = format!(
        "{}-{}",
        std::process::id(),
        flower_tui::engine::fsutil::unique()
    );
    ("FLOWER_MCP_MARKER".to_string(), v)
}

fn marker_str(m: &(String, String)) -> String {
    format!("{}={}", m.0, m.1)
}

/// The fault server as a stdio server config. `grandchild`: behind a shell that does not exec it,
/// the way `npx` runs a package's server.
fn fault_server(
    name: &str,
    start: &str,
    marker: &(String, String),
    grandchild: bool,
) -> ServerConfig {
    let exe = std::env::current_exe().unwrap();
    let script = if grandchild {
        "\"$0\" \"$@\" 3>&1 1>/dev/null; echo shell-after-server >&2"
    } else {
        "exec \"$0\" \"$@\" 3>&1 1>/dev/null"
    };
    let mut env = BTreeMap::new();
    env.insert(SERVER_ENV.to_string(), "1".to_string());
    env.insert(START_ENV.to_string(), start.to_string());
    env.insert(marker.0.clone(), marker.1.clone());
    ServerConfig {
        name: name.to_string(),
        transport: Transport::Stdio {
            command: "sh".into(),
            args: vec![
                "-c".into(),
                script.into(),
                exe.to_string_lossy().into_owned(),
                "--exact".into(),
                "suite::mcp::mcp_test_server_entry".into(),
                "--ignored".into(),
                "--nocapture".into(),
                "--test-threads=1".into(),
                "-q".into(),
            ],
            env,
            cwd: None,
        },
        enabled: true,
        startup_timeout: Duration::from_secs(20),
        tool_timeout: Duration::from_secs(20),
        origin: Origin::ConfigFile,
    }
}

/// The fault server as a `[mcp_servers.<name>]` table of `config.toml`: `sh -c <script>` with
/// the test binary's entry as `"$0" "$@"` (`script` puts its stdout on fd 3), `marker` in its
/// environment.
fn fault_server_table(name: &str, script: &str, marker: &(String, String)) -> String {
    let exe = std::env::current_exe().unwrap();
    let args = [
        "-c",
        script,
        &exe.to_string_lossy(),
        "--exact",
        "suite::mcp::mcp_test_server_entry",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
        "-q",
    ];
    let (m0, m1) = marker;
    format!(
        "[mcp_servers.{name}]\ncommand = \"sh\"\nargs = {args:?}\nenv = {{ {SERVER_ENV} = \"1\", {m0} = {m1:?} }}\n"
    )
}

fn command_server(name: &str, command: &str, args: &[&str]) -> ServerConfig {
    ServerConfig {
        name: name.to_string(),
        transport: Transport::Stdio {
            command: command.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            env: BTreeMap::new(),
            cwd: None,
        },
        enabled: true,
        startup_timeout: Duration::from_millis(300),
        tool_timeout: Duration::from_secs(5),
        origin: Origin::McpJson,
    }
}

/// A parent environment with provider keys in it, which must never reach a server.
fn parent_env() -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = std::env::vars()
        .filter(|(k, _)| matches!(k.as_str(), "PATH" | "HOME" | "LANG" | "TMPDIR"))
        .collect();
    env.insert(
        "ANTHROPIC_API_KEY".into(),
        "sk-ant-mcp-test-parent-0001".into(),
    );
    env.insert(
        "OPENAI_API_KEY".into(),
        "sk-openai-mcp-test-parent-0001".into(),
    );
    env
}

fn start(servers: Vec<ServerConfig>) -> (McpManager, mpsc::UnboundedReceiver<ServerStatus>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let m = McpManager::start(ManagerParams {
        servers,
        workspace: std::env::temp_dir(),
        env: parent_env(),
        status_tx: Some(tx),
        project: None,
    });
    (m, rx)
}

/// Wait (bounded) until `name` leaves `starting`.
async fn settled(m: &McpManager, name: &str) -> ServerStatus {
    for _ in 0..3000 {
        let s = m.status(name).unwrap();
        if s.state != ServerState::Starting {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{name} still starting after 30 s");
}

fn tool_names(m: &McpManager) -> Vec<String> {
    m.tools().into_iter().map(|t| t.name).collect()
}

mod approval;
mod cli;
mod engine;
mod faults;
mod lifecycle;
mod third_party;
mod tui_e2e;
