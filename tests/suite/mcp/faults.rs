//! The rmcp fault server: results, names, and every way a server can fail, at start and mid-call.

use std::collections::BTreeMap;
use std::path::PathBuf;

use flower_tui::engine::mcp::ServerConfig;
use flower_tui::engine::tools;

use crate::support::check::assert_starts_with;
use crate::support::mcp_server::{SERVER_ENV, START_ENV};
use crate::support::mcp_setup::{pids_with_env, wait_gone};
use std::time::Duration;

use flower_tui::engine::mcp::{ServerState, Transport};
use serde_json::{Value, json};

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_server_tools_results_and_names() {
    let mark = marker();
    let mut cfg = fault_server("faults", "normal", &mark, false);
    if let Transport::Stdio { env, .. } = &mut cfg.transport {
        env.insert("ANTHROPIC_API_KEY".into(), "named-in-config".into());
    }
    let (m, _rx) = start(vec![cfg]);
    m.wait_for_startup().await;
    let s = settled(&m, "faults").await;
    assert_eq!(s.state, ServerState::Ready { tools: 15 }, "{s:?}");

    // Built-in names stay namespaced; every name is one the APIs accept; none shadows a built-in.
    let names = tool_names(&m);
    assert!(names.contains(&"mcp__faults__read_file".to_string()));
    assert!(names.contains(&"mcp__faults__bash".to_string()));
    let builtin: Vec<String> = tools::specs().into_iter().map(|s| s.name).collect();
    for n in &names {
        assert!(flower_tui::engine::mcp::names::is_api_safe(n), "{n}");
        assert!(
            !builtin.contains(n) && !tools::is_known(n),
            "{n} shadows a built-in"
        );
    }
    let dotted = names
        .iter()
        .find(|n| n.starts_with("mcp__faults__dotted_name_v2_"))
        .unwrap();
    assert_eq!(m.call(dotted, &json!({})).await.content, "dotted");
    assert_eq!(
        m.call("mcp__faults__read_file", &json!({"path": "x"}))
            .await
            .content,
        "the server's own read_file"
    );

    // A 5 MB result arrives whole.
    let out = m
        .call("mcp__faults__big", &json!({"bytes": 5_000_000}))
        .await;
    assert!(!out.is_error);
    assert_eq!(out.content.len(), 5_000_000);
    assert!(out.content.starts_with("0123456789abcdef0123"));

    // Error results, protocol errors, bad arguments, unknown tools: tool errors, server still ready.
    let out = m.call("mcp__faults__fail", &json!({})).await;
    assert_eq!(
        (out.content.as_str(), out.is_error),
        ("the tool failed on purpose", true)
    );
    let out = m.call("mcp__faults__refuse", &json!({})).await;
    assert!(
        out.is_error
            && out
                .content
                .contains("refused on purpose (JSON-RPC error -32602)"),
        "{out:?}"
    );
    let out = m.call("mcp__faults__echo", &json!("not an object")).await;
    assert_eq!(
        out.content,
        "the arguments of `mcp__faults__echo` must be a JSON object (got a string)"
    );
    let out = m.call("mcp__faults__nope", &json!({})).await;
    assert_eq!(out.content, "unknown MCP tool `mcp__faults__nope`");
    let out = m.call("mcp__faults__image", &json!({})).await;
    assert_eq!(
        out.content,
        "here:\n[image: image/png, 8 bytes — not shown to the model]"
    );

    // No provider key in its environment, not even one its config names.
    let out = m.call("mcp__faults__env", &json!({})).await;
    let env: Value = serde_json::from_str(&out.content).unwrap();
    assert!(
        env.get("ANTHROPIC_API_KEY").is_none() && env.get("OPENAI_API_KEY").is_none(),
        "{env}"
    );
    assert_eq!(env[&mark.0], mark.1.as_str());
    let keys: Vec<&str> = env
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for k in &keys {
        assert!(
            flower_tui::engine::mcp::env::BASE_VARS.contains(k)
                || [SERVER_ENV, START_ENV, mark.0.as_str()].contains(k)
                // set by the `sh` the server runs under
                || *k == "PWD",
            "unexpected variable {k} in {keys:?}"
        );
    }

    // Concurrent calls on one server.
    let (sleep_args, echo_args) = (json!({"ms": 200}), json!({"text": "meanwhile"}));
    let (a, b) = tokio::join!(
        m.call("mcp__faults__sleep", &sleep_args),
        m.call("mcp__faults__echo", &echo_args)
    );
    assert_eq!(
        (a.content.as_str(), b.content.as_str()),
        ("slept", "meanwhile")
    );

    // The tool list changes: the new tool is offered.
    assert_eq!(
        m.call("mcp__faults__add_tool", &json!({})).await.content,
        "added"
    );
    for _ in 0..500 {
        if tool_names(&m).iter().any(|n| n == "mcp__faults__added") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        m.status("faults").unwrap().state,
        ServerState::Ready { tools: 16 }
    );
    assert_eq!(m.call("mcp__faults__added", &json!({})).await.content, "ok");

    m.shutdown().await;
    assert_eq!(
        wait_gone(&marker_str(&mark), Duration::from_secs(3)),
        Vec::<u32>::new()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_at_start_are_states_with_reasons() {
    let mark = marker();
    let crash = fault_server("crash", "crash", &mark, false);
    let exits = command_server(
        "exits",
        "sh",
        &["-c", "echo cannot find config >&2; exit 7"],
    );
    let missing = command_server("missing", "no-such-mcp-server-binary", &[]);
    let hangs = command_server("hangs", "sleep", &["30"]);
    let garbage = command_server(
        "garbage",
        "sh",
        &["-c", "while :; do echo this is not json; sleep 0.02; done"],
    );
    let mut bad_dir = command_server("bad_dir", "true", &[]);
    if let Transport::Stdio { cwd, .. } = &mut bad_dir.transport {
        *cwd = Some(PathBuf::from("/no/such/dir"));
    }
    let mut off = command_server("off", "sleep", &["30"]);
    off.enabled = false;
    let refused = ServerConfig {
        name: "refused".into(),
        transport: Transport::Http {
            url: "http://127.0.0.1:1/mcp".into(),
            headers: BTreeMap::new(),
        },
        ..command_server("refused", "x", &[])
    };
    // Late servers on their own, so that nothing else decides when the wait ends.
    let (late, _late_rx) = start(vec![hangs, garbage]);
    late.wait_for_startup().await;
    // The wait ended at their startup_timeout; they are still starting (offered once ready) and
    // no request waits for them any more; they are given up at 6 × startup_timeout.
    assert_eq!(late.status("hangs").unwrap().state, ServerState::Starting);
    assert_eq!(late.status("garbage").unwrap().state, ServerState::Starting);
    assert!(late.starting().is_empty());
    let late_reason = |name: &str| match late.status(name).unwrap().state {
        ServerState::Failed { reason } => reason,
        other => panic!("{name}: {other:?}"),
    };
    settled(&late, "hangs").await;
    assert_eq!(
        late_reason("hangs"),
        "did not finish starting within 1.8 s (6 × its startup_timeout)"
    );
    settled(&late, "garbage").await;
    let g = late_reason("garbage");
    assert!(
        g.starts_with("did not finish starting within 1.8 s (6 × its startup_timeout); it wrote ")
            && g.contains("lines to stdout that are not JSON-RPC (first: \"this is not json\")"),
        "{g}"
    );

    let (m, _rx) = start(vec![crash, exits, missing, bad_dir, off, refused]);
    m.wait_for_startup().await;
    let reason = |name: &str| match m.status(name).unwrap().state {
        ServerState::Failed { reason } => reason,
        other => panic!("{name}: {other:?}"),
    };
    let crash = {
        settled(&m, "crash").await;
        reason("crash")
    };
    assert_starts_with(
        &crash,
        "exited with status 3 during start-up; stderr: boom on start",
    );
    settled(&m, "exits").await;
    assert_eq!(
        reason("exits"),
        "exited with status 7 during start-up; stderr: cannot find config"
    );
    assert_eq!(
        reason("missing"),
        "cannot start `no-such-mcp-server-binary`: command not found on PATH"
    );
    assert_eq!(
        reason("bad_dir"),
        "cannot start `true`: its working directory /no/such/dir does not exist"
    );
    assert_eq!(m.status("off").unwrap().state, ServerState::Disabled);
    settled(&m, "refused").await;
    let r = reason("refused");
    assert!(
        r.starts_with("cannot connect to http://127.0.0.1:1/mcp: error sending request for url")
            && r.contains("Connection refused")
            && !r.contains("rmcp::"),
        "{r}"
    );
    // Calling a tool of a failed server says so.
    let out = m.call("mcp__exits__anything", &json!({})).await;
    assert!(
        out.is_error
            && out
                .content
                .starts_with("MCP server `exits` is not available (failed: exited with status 7"),
        "{}",
        out.content
    );
    assert!(tool_names(&m).is_empty());
    drop(m);
    assert_eq!(
        wait_gone(&marker_str(&mark), Duration::from_secs(3)),
        Vec::<u32>::new()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_mid_call_are_tool_errors_and_restart_recovers() {
    let mark = marker();
    let mut cfg = fault_server("faults", "normal", &mark, false);
    // Long enough for a debug build under load; the hang and garbage calls wait it out.
    cfg.tool_timeout = Duration::from_secs(2);
    let (m, mut rx) = start(vec![cfg]);
    m.wait_for_startup().await;
    assert!(matches!(
        settled(&m, "faults").await.state,
        ServerState::Ready { .. }
    ));

    // Hang: a timeout, the server stays ready and keeps answering.
    let out = m.call("mcp__faults__hang", &json!({})).await;
    assert_eq!(
        out.content,
        "MCP tool `hang` of server `faults` did not answer within 2 s (its tool_timeout)"
    );
    assert!(out.is_error);
    let s = m.status("faults").unwrap();
    assert_eq!(s.last_error.as_deref(), Some(out.content.as_str()));
    assert_eq!(
        m.call("mcp__faults__echo", &json!({"text": "still here"}))
            .await
            .content,
        "still here"
    );

    // Garbage instead of an answer: a timeout that says what the server wrote.
    let out = m.call("mcp__faults__garbage", &json!({})).await;
    assert!(out.is_error);
    assert_eq!(
        out.content,
        "MCP tool `garbage` of server `faults` did not answer within 2 s (its tool_timeout); \
         it wrote 1 line to stdout that is not JSON-RPC (first: \"this line is not JSON-RPC\")"
    );

    // Crash mid-call: a tool error naming the exit and what the server wrote; the state turns
    // failed.
    while rx.try_recv().is_ok() {}
    let out = m.call("mcp__faults__crash", &json!({})).await;
    assert!(out.is_error);
    let reason = "exited with status 3; it wrote 1 line to stdout that is not JSON-RPC (first: \
                  \"this line is not JSON-RPC\"); stderr: crashing on purpose in the middle of a call";
    assert_eq!(
        out.content,
        format!("MCP server `faults` stopped during the call of `crash`: it {reason}")
    );
    let s = m.status("faults").unwrap();
    assert_eq!(
        s.state,
        ServerState::Failed {
            reason: reason.into()
        }
    );
    assert!(tool_names(&m).is_empty());
    let mut seen = Vec::new();
    while let Ok(s) = rx.try_recv() {
        seen.push(s.state.to_string());
    }
    assert!(
        seen.iter()
            .any(|s| s.starts_with("failed: exited with status 3")),
        "{seen:?}"
    );

    // Restart: ready again, answering.
    m.restart("faults").unwrap();
    assert_eq!(m.status("faults").unwrap().state, ServerState::Starting);
    assert!(matches!(
        settled(&m, "faults").await.state,
        ServerState::Ready { tools: 15 }
    ));
    assert_eq!(m.status("faults").unwrap().last_error, None);
    assert_eq!(
        m.call("mcp__faults__echo", &json!({"text": "back"}))
            .await
            .content,
        "back"
    );
    assert_eq!(
        m.restart("nobody").unwrap_err().to_string(),
        "no MCP server is named `nobody`"
    );

    // A restart while a call is in flight: that call fails, the new server answers.
    let slow_args = json!({"ms": 5000});
    let slow = m.call("mcp__faults__sleep", &slow_args);
    let restart = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        m.restart("faults").unwrap();
    };
    let (out, ()) = tokio::join!(slow, restart);
    assert!(
        out.is_error
            && out
                .content
                .starts_with("MCP server `faults` stopped during the call of `sleep`"),
        "{out:?}"
    );
    settled(&m, "faults").await;
    assert_eq!(
        m.call("mcp__faults__echo", &json!({"text": "again"}))
            .await
            .content,
        "again"
    );
    for _ in 0..300 {
        if pids_with_env(&marker_str(&mark)).len() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        pids_with_env(&marker_str(&mark)).len(),
        1,
        "the old server is gone"
    );
    m.shutdown().await;
    assert_eq!(
        wait_gone(&marker_str(&mark), Duration::from_secs(3)),
        Vec::<u32>::new()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_over_rmcp_line_limit_is_explained() {
    let mark = marker();
    let mut cfg = fault_server("faults", "normal", &mark, false);
    cfg.tool_timeout = Duration::from_secs(5);
    let (m, _rx) = start(vec![cfg]);
    settled(&m, "faults").await;
    let out = m
        .call("mcp__faults__big", &json!({"bytes": 17_000_000}))
        .await;
    assert_eq!(
        out.content,
        "MCP tool `big` of server `faults` did not answer within 5 s (its tool_timeout); \
         it sent 1 message over 16 MiB, which was dropped unread"
    );
    // The server is still usable.
    assert_eq!(
        m.call("mcp__faults__echo", &json!({"text": "ok"}))
            .await
            .content,
        "ok"
    );
    m.shutdown().await;
}
