//! MCP tools through the engine on the loopback fake: offered beside the built-ins after the first
//! request waited for the server, approved like any tool that needs it, results back to the model.

use std::sync::Arc;

use flower_tui::engine::policy::ApprovalPolicy;
use flower_tui::engine::protocol::Event;

use crate::support::check::assert_event;
use crate::support::fake::{Reply, U, anthropic as a};
use crate::support::harness::{Harness, start as start_engine, turn_end};

use super::*;

fn tool_result(body: &serde_json::Value) -> serde_json::Value {
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    last["content"][0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_calls_an_mcp_tool_through_the_engine() {
    let h = Harness::new().await;
    let mark = marker();
    let (m, _rx) = start(vec![fault_server("faults", "normal", &mark, false)]);
    let m = Arc::new(m);
    h.script()
        .usage(U::new(1000, 20))
        .tool("mcp__faults__echo", r#"{"text":"from the server"}"#)
        .usage(U::new(1100, 20))
        .tool("mcp__faults__crash", "{}")
        .usage(U::new(1200, 20))
        .text("done");
    let mut p = h.params(200_000, 50_000);
    p.mcp = Some(m.clone());
    let mut r = start_engine(p);
    let ev = r.completed_turn("use the tool").await;
    let reqs = h.server.requests();
    assert_eq!(reqs.len(), 3);
    // The first request waited for the server: its tools are offered beside the built-ins.
    let names = crate::support::requests::tool_names(&reqs[0]);
    let has = |name: &str| names.iter().any(|n| n == name);
    assert!(has("read_file") && has("mcp__faults__echo"), "{names:?}");
    assert!(has("mcp__faults__read_file"));
    assert_eq!(tool_result(&reqs[1])["content"], "from the server");
    // A crash mid-call is a tool error for the model, not a failed turn.
    let crash = tool_result(&reqs[2]);
    assert_eq!(crash["is_error"], true);
    assert!(
        crash["content"]
            .as_str()
            .unwrap()
            .starts_with("MCP server `faults` stopped during the call of `crash`"),
        "{crash}"
    );
    // The tool call event names its arguments.
    assert_event!(
        ev,
        Event::ToolCall { summary, .. }
            if summary == "mcp__faults__echo: {\"text\":\"from the server\"}"
    );
    // The crashed server's tools are no longer offered.
    assert!(!reqs[2]["tools"].to_string().contains("mcp__faults__"));
    r.shutdown().await;
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_without_yes_denies_every_mcp_tool() {
    let h = Harness::new().await;
    let mark = marker();
    let (m, _rx) = start(vec![fault_server("faults", "normal", &mark, false)]);
    let m = Arc::new(m);
    m.wait_for_startup().await;
    h.script()
        .usage(U::new(1000, 20))
        .tool("mcp__faults__echo", r#"{"text":"x"}"#)
        .usage(U::new(1100, 20))
        .text("ok");
    let mut p = h.params(200_000, 50_000);
    p.tools.approvals = ApprovalPolicy::Ask;
    p.mcp = Some(m.clone());
    let mut r = start_engine(p);
    r.completed_turn("try it").await;
    let result = tool_result(&h.server.requests()[1]);
    assert_eq!(result["is_error"], true);
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .starts_with("denied: `mcp__faults__echo` needs the user's approval"),
        "{result}"
    );
    r.shutdown().await;
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_restart_op_restarts_the_server() {
    use flower_tui::engine::protocol::Op;
    let h = Harness::new().await;
    let mark = marker();
    let (m, _rx) = start(vec![fault_server("faults", "normal", &mark, false)]);
    let m = Arc::new(m);
    settled(&m, "faults").await;
    let mut p = h.params(200_000, 50_000);
    p.mcp = Some(m.clone());
    let mut r = start_engine(p);
    r.send(Op::McpRestart {
        name: "faults".into(),
    })
    .await;
    let ev = r
        .until(|e| matches!(e, Event::Notice { message } if message.contains("MCP server")))
        .await;
    assert_event!(ev, Event::Notice { message } if message == "restarting MCP server `faults`");
    assert!(matches!(
        settled(&m, "faults").await.state,
        ServerState::Ready { .. }
    ));
    r.send(Op::McpRestart {
        name: "nobody".into(),
    })
    .await;
    let ev = r
        .until(|e| matches!(e, Event::Notice { message } if message.contains("nobody")))
        .await;
    assert_event!(ev, Event::Notice { message } if message == "no MCP server is named `nobody`");
    r.shutdown().await;
    m.shutdown().await;
}

/// Kill every process of the server marked `mark`.
fn kill_server(mark: &(String, String)) {
    let pids = crate::support::mcp_setup::pids_with_env(&marker_str(mark));
    assert!(!pids.is_empty());
    for pid in pids {
        // SAFETY: a plain kill(2) of the test's own child process.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_of_a_killed_server_fails_at_once_without_asking() {
    use flower_tui::engine::policy::FrontEnd;
    let h = Harness::new().await;
    let mark = marker();
    let (m, _rx) = start(vec![fault_server("faults", "normal", &mark, false)]);
    let m = Arc::new(m);
    assert!(matches!(
        settled(&m, "faults").await.state,
        ServerState::Ready { .. }
    ));
    // The request offers the tool; the server is killed before the answer that calls it arrives.
    let killed = mark.clone();
    h.server.push(Reply::lazy(move |_, _| {
        kill_server(&killed);
        a::tool_use(
            "t1",
            "mcp__faults__echo",
            r#"{"text":"x"}"#,
            U::new(1000, 20),
        )
        .with_delay(Duration::from_secs(2))
    }));
    h.script().usage(U::new(1100, 20)).text("ok");
    // The next turn's request no longer offers it; the model calls it all the same.
    h.script()
        .usage(U::new(1200, 20))
        .call("t2", "mcp__faults__echo", r#"{"text":"y"}"#)
        .at(1300)
        .text("ok again");
    let mut p = h.params(200_000, 50_000);
    p.tools.approvals = ApprovalPolicy::Ask;
    p.front_end = FrontEnd::Interactive { review: false };
    p.mcp = Some(m.clone());
    let mut r = start_engine(p);
    let mut ev = r.turn("try it").await;
    assert!(matches!(
        m.status("faults").unwrap().state,
        ServerState::Failed { .. }
    ));
    ev.extend(r.turn("and again").await);
    assert_eq!(turn_end(&ev), "completed");
    assert!(
        !ev.iter()
            .any(|e| matches!(e, Event::ApprovalRequest { .. })),
        "{ev:#?}"
    );
    let reqs = h.server.requests();
    assert!(reqs[0]["tools"].to_string().contains("mcp__faults__echo"));
    assert!(!reqs[2]["tools"].to_string().contains("mcp__faults__echo"));
    for i in [1, 3] {
        let result = tool_result(&reqs[i]);
        assert_eq!(result["is_error"], true);
        assert!(
            result["content"]
                .as_str()
                .unwrap()
                .starts_with("MCP server `faults` is not available (failed: "),
            "{result}"
        );
    }
    r.shutdown().await;
    m.shutdown().await;
}
