//! MCP tool-call round trip over stdio: flower-tui's manager calls a tool that does nothing
//! (`noop` of the rmcp test server, run as this bench binary re-executed), so everything measured is
//! overhead beyond the server's own time: the manager, rmcp's client, two pipes, rmcp's server.
//! When the tests have installed the reference server (`target/tmp/mcp-servers`), its `echo` is
//! timed too (that figure includes Node's own time for the call).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use flower_tui::engine::mcp::{
    ManagerParams, McpManager, Origin, ServerConfig, ServerState, Transport,
};
use serde_json::json;

use crate::support::mcp_server::SERVER_ENV;

const WARMUP: usize = 100;
const CALLS: usize = 2000;

/// The bench binary, run with [`SERVER_ENV`] set, serves MCP on stdin/stdout instead.
pub fn serve_if_asked() {
    if std::env::var_os(SERVER_ENV).is_some() {
        crate::support::mcp_server::run(1);
    }
}

fn server(
    name: &str,
    command: String,
    args: Vec<String>,
    env: BTreeMap<String, String>,
) -> ServerConfig {
    ServerConfig {
        name: name.into(),
        transport: Transport::Stdio {
            command,
            args,
            env,
            cwd: None,
        },
        enabled: true,
        startup_timeout: Duration::from_secs(30),
        tool_timeout: Duration::from_secs(30),
        origin: Origin::ConfigFile,
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(idx).copied().unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

async fn measure(m: &McpManager, tool: &str, args: serde_json::Value, label: &str) {
    for _ in 0..WARMUP {
        let out = m.call(tool, &args).await;
        assert!(!out.is_error, "{label}: {}", out.content);
    }
    let mut times = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let t = Instant::now();
        let out = m.call(tool, &args).await;
        times.push(t.elapsed());
        assert!(!out.is_error, "{label}: {}", out.content);
    }
    times.sort_unstable();
    println!(
        "   {label:<44} median {:>6.3} ms  p90 {:>6.3} ms  p99 {:>6.3} ms  ({CALLS} calls)",
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.9)),
        ms(percentile(&times, 0.99)),
    );
}

pub fn run() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let exe = std::env::current_exe().expect("bench exe").to_string_lossy().into_owned();
        let mut servers = vec![server(
            "bench",
            exe,
            vec![],
            [(SERVER_ENV.to_string(), "1".to_string())].into(),
        )];
        let everything = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join("mcp-servers/npm-server-everything-2026.8.31/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
        if everything.exists() {
            servers.push(server(
                "everything",
                "node".into(),
                vec![everything.to_string_lossy().into_owned(), "stdio".into()],
                BTreeMap::new(),
            ));
        }
        let started = Instant::now();
        let m = McpManager::start(ManagerParams {
            servers,
            workspace: std::env::temp_dir(),
            env: std::env::vars().collect(),
            status_tx: None,
        });
        m.wait_for_startup().await;
        println!("   start-up of the servers (spawn, handshake, tools/list): {:.1} ms", ms(started.elapsed()));
        for s in m.statuses() {
            assert!(matches!(s.state, ServerState::Ready { .. }), "{}", s.line());
        }
        measure(&m, "mcp__bench__noop", json!({}), "no-op tool, rmcp server (all overhead)").await;
        let big = json!({"text": "x".repeat(10_000)});
        measure(&m, "mcp__bench__echo", big, "10 kB echo, rmcp server").await;
        if everything.exists() {
            measure(
                &m,
                "mcp__everything__echo",
                json!({"message": "hi"}),
                "echo, server-everything (incl. Node's time)",
            )
            .await;
        } else {
            println!("   (server-everything not installed: run `cargo test --test all suite::mcp` first)");
        }
        m.shutdown().await;
    });
}
