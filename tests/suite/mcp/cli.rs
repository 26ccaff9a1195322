//! The real binary, headless: servers from config.toml start at launch, `mcp_status` events and
//! notices come out as JSON lines, a tool call reaches the server, and a workspace's `.mcp.json`
//! is not used until approved (or `--mcp-json trust`).

use std::path::Path;

use crate::support::fake::FakeServer;
use crate::support::harness::KEY;
use crate::support::headless::{bin_for, run};
use crate::support::mcp_setup::{self, PythonServer, skip, wait_gone};

use super::*;

/// TOML for the fault server under `name`.
fn fault_server_toml(name: &str, marker: &(String, String)) -> String {
    fault_server_table(name, "exec \"$0\" \"$@\" 3>&1 1>/dev/null", marker)
}

pub(super) fn mcp_json(marker: &(String, String)) -> String {
    let exe = std::env::current_exe()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    serde_json::json!({"mcpServers": {"project": {
        "type": "stdio",
        "command": "sh",
        "args": ["-c", "exec \"$0\" \"$@\" 3>&1 1>/dev/null", exe, "--exact",
                 "suite::mcp::mcp_test_server_entry", "--ignored", "--nocapture", "--test-threads=1", "-q"],
        "env": {SERVER_ENV: "1", marker.0.clone(): marker.1.clone()}
    }}})
    .to_string()
}

async fn headless(home: &Path, server: &FakeServer, extra: &[&str]) -> Vec<serde_json::Value> {
    run_with_env(home, server, extra, &[]).await
}

async fn run_with_env(
    home: &Path,
    server: &FakeServer,
    extra: &[&str],
    vars: &[(&str, &str)],
) -> Vec<serde_json::Value> {
    let mut c = bin_for(home, server);
    c.envs(vars.iter().copied())
        .args(["-p", "use the tool", "--yes"])
        .args(extra);
    run(c).await.success().events()
}

fn statuses<'a>(events: &'a [serde_json::Value], name: &str) -> Vec<&'a str> {
    events
        .iter()
        .filter(|e| e["type"] == "mcp_status" && e["name"] == name)
        .map(|e| e["state"].as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_starts_configured_servers_and_an_mcp_json_only_when_trusted() {
    let home = tempfile::tempdir().unwrap();
    let mark = marker();
    std::fs::create_dir_all(home.path().join("config/flower")).unwrap();
    std::fs::write(
        home.path().join("config/flower/config.toml"),
        fault_server_toml("faults", &mark),
    )
    .unwrap();
    std::fs::write(home.path().join(".mcp.json"), mcp_json(&mark)).unwrap();

    let server = FakeServer::start().await;
    server
        .script()
        .tool("mcp__faults__echo", r#"{"text":"through the binary"}"#)
        .at(1100)
        .text("done");
    let events = headless(home.path(), &server, &[]).await;
    let faults = statuses(&events, "faults");
    assert_eq!(faults.first(), Some(&"starting"), "{events:?}");
    assert!(faults.contains(&"ready"), "{faults:?}");
    // The run ends with the servers' last state, then the result.
    assert_eq!(faults.last(), Some(&"stopped"), "{faults:?}");
    assert_eq!(events.last().unwrap()["type"], "result");
    let stopped = events
        .iter()
        .position(|e| e["type"] == "mcp_status" && e["state"] == "stopped")
        .unwrap();
    let turn_end = events.iter().position(|e| e["type"] == "turn_end").unwrap();
    assert!(turn_end < stopped, "stopped after the turn's end");
    // The .mcp.json was never approved: not started, and the user is told.
    assert!(statuses(&events, "project").is_empty());
    assert!(events.iter().any(|e| e["type"] == "notice"
        && e["message"].as_str().unwrap().ends_with("is not used: it was never approved in this workspace (run flower-tui here once to approve it, or pass --mcp-json trust)")), "{events:?}");
    let reqs = server.requests();
    let result = &reqs[1]["messages"].as_array().unwrap().last().unwrap()["content"][0];
    assert_eq!(result["content"], "through the binary");
    assert_eq!(
        wait_gone(&marker_str(&mark), Duration::from_secs(3)),
        Vec::<u32>::new()
    );

    // Trusted: the project's server starts too.
    let server = FakeServer::start().await;
    server
        .script()
        .tool("mcp__project__echo", r#"{"text":"project"}"#)
        .at(1100)
        .text("done");
    let events = headless(home.path(), &server, &["--mcp-json", "trust"]).await;
    assert!(
        statuses(&events, "project").contains(&"ready"),
        "{events:?}"
    );
    let reqs = server.requests();
    let result = &reqs[1]["messages"].as_array().unwrap().last().unwrap()["content"][0];
    assert_eq!(result["content"], "project");
    assert_eq!(
        wait_gone(&marker_str(&mark), Duration::from_secs(3)),
        Vec::<u32>::new()
    );
}

/// The last message of a request body: the tool result it carries, as the model sees it.
fn tool_result(body: &serde_json::Value) -> String {
    let last = body["messages"].as_array().unwrap().last().unwrap();
    last["content"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_own_credentials_reach_it_and_a_provider_key_never_does() {
    let python = match mcp_setup::python_with_mcp() {
        Ok(p) => p,
        Err(why) => return skip("a_servers_own_credentials_reach_it", &why),
    };
    let py = tokio::task::spawn_blocking(move || PythonServer::start(&python))
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mark = marker();
    // The README's own example, a static header, a header that would carry the provider's key,
    // and a stdio server given a token of its own.
    let toml = format!(
        r#"
[mcp_servers.docs]
url = "{url}"
headers = {{ Authorization = "Bearer ${{DOCS_TOKEN}}", X-Flower-Test = "static-header-0042" }}

[mcp_servers.leaky]
url = "{url}"
headers = {{ Authorization = "Bearer ${{ANTHROPIC_API_KEY}}" }}
{stdio}"#,
        url = py.url,
        stdio = fault_server_toml("tools", &mark)
            .replace("env = { ", "env = { GITHUB_TOKEN = \"${GH_TEST_TOKEN}\", "),
    );
    std::fs::create_dir_all(home.path().join("config/flower")).unwrap();
    std::fs::write(home.path().join("config/flower/config.toml"), toml).unwrap();

    let server = FakeServer::start().await;
    for (tool, input) in [
        ("mcp__docs__header", r#"{"name":"Authorization"}"#),
        ("mcp__docs__header", r#"{"name":"X-Flower-Test"}"#),
        ("mcp__tools__env", "{}"),
    ] {
        server.script().tool(tool, input);
    }
    server.script().at(1100).text("done");
    let vars = [
        ("DOCS_TOKEN", "docs-token-0123456789"),
        ("GH_TEST_TOKEN", "ghp_test_token_0123456789"),
    ];
    let events = run_with_env(home.path(), &server, &[], &vars).await;
    assert!(statuses(&events, "docs").contains(&"ready"), "{events:?}");
    let leaky: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["type"] == "mcp_status" && e["name"] == "leaky" && e["state"] == "failed")
        .collect();
    assert_eq!(
        leaky.first().map(|e| e["reason"].clone()),
        Some(serde_json::json!(
            "header `Authorization` would carry a model provider's key; not connecting"
        )),
        "{events:?}"
    );
    // Both headers arrived (the server echoes them; flower-tui masks credentials in what the
    // model and the transcript see).
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4, "{events:?}");
    assert_eq!(tool_result(&reqs[1]), "Bear****");
    assert_eq!(tool_result(&reqs[2]), "stat****");
    // The stdio server got its token, and no provider key.
    let env = tool_result(&reqs[3]);
    assert!(env.contains(r#""GITHUB_TOKEN":"ghp_****""#), "{env}");
    assert!(!env.contains("ANTHROPIC") && !env.contains(KEY), "{env}");
    let notices: Vec<&serde_json::Value> =
        events.iter().filter(|e| e["type"] == "notice").collect();
    assert!(
        !notices
            .iter()
            .any(|n| n.to_string().contains("GITHUB_TOKEN")),
        "{notices:?}"
    );
    assert_eq!(
        wait_gone(&marker_str(&mark), Duration::from_secs(3)),
        Vec::<u32>::new()
    );
}
