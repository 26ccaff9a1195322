//! Real servers nobody here wrote: `server-everything` (npm) over stdio, a Python SDK server (PyPI)
//! over streamable HTTP.

use std::collections::BTreeMap;

use flower_tui::engine::mcp::{Origin, ServerConfig};

use crate::support::check::assert_contains;
use crate::support::mcp_setup::{self, PythonServer, pids_with_env, skip, wait_gone};
use std::time::Duration;

use flower_tui::engine::mcp::{ServerState, Transport};
use serde_json::{Value, json};

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reference_server_everything_over_stdio() {
    let script = match mcp_setup::everything() {
        Ok(s) => s,
        Err(why) => return skip("reference_server_everything_over_stdio", &why),
    };
    flower_tui::engine::secrets::register_provider_key("sk-ant-mcp-test-parent-0001");
    let mark = marker();
    let mut cfg = command_server("everything", "node", &[script.to_str().unwrap(), "stdio"]);
    cfg.startup_timeout = Duration::from_secs(20);
    if let Transport::Stdio { env, .. } = &mut cfg.transport {
        env.insert("VISIBLE".into(), "yes".into());
        env.insert("OPENAI_API_KEY".into(), "sk-openai-explicit".into());
        env.insert("SNEAKY".into(), "Bearer sk-ant-mcp-test-parent-0001".into());
        env.insert(mark.0.clone(), mark.1.clone());
    }
    let (m, mut statuses) = start(vec![cfg]);
    m.wait_for_startup().await;
    let s = m.status("everything").unwrap();
    let ServerState::Ready { tools: n } = s.state else {
        panic!("not ready: {s:?}");
    };
    assert!(n >= 10, "{s:?}");
    assert_eq!(
        s.warnings,
        [
            "not passed to the server (they would carry a model provider's key): OPENAI_API_KEY, SNEAKY"
        ]
    );
    let names = tool_names(&m);
    for want in [
        "mcp__everything__echo",
        "mcp__everything__get-sum",
        "mcp__everything__get-env",
        "mcp__everything__get-tiny-image",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} not in {names:?}");
    }
    let echo = m
        .tools()
        .into_iter()
        .find(|t| t.name == "mcp__everything__echo")
        .unwrap();
    assert_eq!(echo.spec.description, "Echoes back the input string");
    assert_eq!(echo.spec.input_schema["type"], "object");
    assert!(
        echo.spec.input_schema["properties"]["message"].is_object(),
        "{}",
        echo.spec.input_schema
    );

    let out = m
        .call("mcp__everything__echo", &json!({"message": "hi there"}))
        .await;
    assert_eq!(
        (out.content.as_str(), out.is_error),
        ("Echo: hi there", false)
    );
    let out = m
        .call("mcp__everything__get-sum", &json!({"a": 2, "b": 3}))
        .await;
    assert_eq!(out.content, "The sum of 2 and 3 is 5.");
    // The server's own validation error comes back as a tool error.
    let out = m.call("mcp__everything__get-sum", &json!({"a": "x"})).await;
    assert!(
        out.is_error && out.content.contains("Invalid arguments"),
        "{out:?}"
    );
    let out = m.call("mcp__everything__get-tiny-image", &json!({})).await;
    assert!(
        out.content.contains("[image: image/png,")
            && out.content.contains("not shown to the model"),
        "{}",
        out.content
    );
    let out = m
        .call("mcp__everything__get-resource-links", &json!({"count": 2}))
        .await;
    assert_contains(&out.content, "[resource link: demo://resource/dynamic/");

    // Its environment: the base and what the config names, never a provider key.
    let out = m.call("mcp__everything__get-env", &json!({})).await;
    let env: Value =
        serde_json::from_str(&out.content).unwrap_or_else(|_| panic!("{}", out.content));
    assert_eq!(env["VISIBLE"], "yes");
    assert!(env["PATH"].is_string());
    for leaked in ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "SNEAKY"] {
        assert!(
            env.get(leaked).is_none(),
            "{leaked} reached the server: {env}"
        );
    }
    assert!(!out.content.contains("sk-ant-mcp-test") && !out.content.contains("sk-openai"));

    // A status event came for each change, ending with ready.
    let mut seen = Vec::new();
    while let Ok(s) = statuses.try_recv() {
        seen.push(s.state.to_string());
    }
    assert_eq!(seen.first().map(String::as_str), Some("starting"));
    assert!(seen.iter().any(|s| s.starts_with("ready, ")), "{seen:?}");

    assert_eq!(pids_with_env(&marker_str(&mark)).len(), 1);
    m.shutdown().await;
    assert_eq!(m.status("everything").unwrap().state, ServerState::Stopped);
    assert_eq!(
        wait_gone(&marker_str(&mark), Duration::from_secs(3)),
        Vec::<u32>::new()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_server_over_streamable_http() {
    let python = match mcp_setup::python_with_mcp() {
        Ok(p) => p,
        Err(why) => return skip("python_sdk_server_over_streamable_http", &why),
    };
    let mut py = tokio::task::spawn_blocking(move || PythonServer::start(&python))
        .await
        .unwrap();
    flower_tui::engine::secrets::register_provider_key("sk-ant-mcp-test-parent-0001");
    let mut headers = BTreeMap::new();
    headers.insert("X-Flower-Test".to_string(), "header-value-42".to_string());
    let mut leaky = BTreeMap::new();
    leaky.insert(
        "Authorization".to_string(),
        "Bearer sk-ant-mcp-test-parent-0001".to_string(),
    );
    let http = |name: &str, headers: BTreeMap<String, String>| ServerConfig {
        name: name.into(),
        transport: Transport::Http {
            url: py.url.clone(),
            headers,
        },
        enabled: true,
        startup_timeout: Duration::from_secs(20),
        tool_timeout: Duration::from_secs(2),
        origin: Origin::McpJson,
    };
    let (m, _rx) = start(vec![http("py", headers), http("leaky", leaky)]);
    m.wait_for_startup().await;
    let s = m.status("py").unwrap();
    assert_eq!(s.state, ServerState::Ready { tools: 4 }, "{s:?}");
    assert_eq!(s.tools, ["add", "header", "fail", "sleep"]);
    // A header that would carry the provider key is never sent.
    let leaky = m.status("leaky").unwrap();
    assert_eq!(
        leaky.state,
        ServerState::Failed {
            reason: "header `Authorization` would carry a model provider's key; not connecting"
                .into()
        }
    );

    let add = m
        .tools()
        .into_iter()
        .find(|t| t.name == "mcp__py__add")
        .unwrap();
    assert_eq!(add.spec.description, "Add two whole numbers.");
    assert_eq!(add.spec.input_schema["required"], json!(["a", "b"]));
    let out = m.call("mcp__py__add", &json!({"a": 20, "b": 22})).await;
    assert_eq!((out.content.as_str(), out.is_error), ("42", false));
    let out = m
        .call("mcp__py__header", &json!({"name": "X-Flower-Test"}))
        .await;
    assert_eq!(out.content, "header-value-42");
    // The SDK reports a raised exception as an error result (without its message).
    let out = m
        .call("mcp__py__fail", &json!({"message": "bad things"}))
        .await;
    assert_eq!(
        (out.content.as_str(), out.is_error),
        ("Error executing tool fail", true)
    );
    let out = m.call("mcp__py__sleep", &json!({"seconds": 10})).await;
    assert!(
        out.is_error
            && out
                .content
                .contains("did not answer within 2 s (its tool_timeout)"),
        "{out:?}"
    );
    assert!(
        m.status("py")
            .unwrap()
            .last_error
            .unwrap()
            .contains("did not answer")
    );

    // The server goes away: a tool error, no hang.
    py.kill();
    let out = tokio::time::timeout(
        Duration::from_secs(10),
        m.call("mcp__py__add", &json!({"a": 1, "b": 2})),
    )
    .await
    .expect("a call to a dead HTTP server returns");
    assert!(out.is_error, "{out:?}");
    assert!(
        out.content
            .starts_with("could not reach MCP server `py` for `add`: error sending request")
            && out.content.contains("Connection refused")
            && !out.content.contains("rmcp::"),
        "{}",
        out.content
    );
    assert_eq!(
        m.status("py").unwrap().last_error.as_deref(),
        Some(out.content.as_str())
    );
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_that_goes_away_is_failed_and_mcp_restart_finds_it_again() {
    let python = match mcp_setup::python_with_mcp() {
        Ok(p) => p,
        Err(why) => return skip("an_http_server_that_goes_away_is_failed", &why),
    };
    let first = python.clone();
    let mut py = tokio::task::spawn_blocking(move || PythonServer::start(&first))
        .await
        .unwrap();
    let port: u16 = py
        .url
        .trim_end_matches("/mcp")
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let (m, _rx) = start(vec![ServerConfig {
        name: "py".into(),
        transport: Transport::Http {
            url: py.url.clone(),
            headers: BTreeMap::new(),
        },
        enabled: true,
        startup_timeout: Duration::from_secs(20),
        tool_timeout: Duration::from_secs(5),
        origin: Origin::ConfigFile,
    }]);
    m.wait_for_startup().await;
    assert!(matches!(
        m.status("py").unwrap().state,
        ServerState::Ready { .. }
    ));
    py.kill();
    let out = m.call("mcp__py__add", &json!({"a": 1, "b": 2})).await;
    assert!(
        out.is_error && out.content.contains("could not reach"),
        "{out:?}"
    );
    // Failed, with the reason, and its tools are no longer offered.
    let s = m.status("py").unwrap();
    let ServerState::Failed { reason } = &s.state else {
        panic!("not failed: {s:?}");
    };
    assert!(
        reason.starts_with("stopped answering (could not reach MCP server `py`")
            && reason.ends_with("`/mcp restart py` once it is back"),
        "{reason}"
    );
    assert!(tool_names(&m).is_empty());
    let again = m.call("mcp__py__add", &json!({"a": 1, "b": 2})).await;
    assert!(again.content.contains("is not available"), "{again:?}");
    // It comes back on the same port: `/mcp restart` finds it again.
    let _py = tokio::task::spawn_blocking(move || PythonServer::start_on(&python, port))
        .await
        .unwrap();
    m.restart("py").unwrap();
    m.wait_for_startup().await;
    assert!(
        matches!(m.status("py").unwrap().state, ServerState::Ready { .. }),
        "{:?}",
        m.status("py")
    );
    let out = m.call("mcp__py__add", &json!({"a": 40, "b": 2})).await;
    assert_eq!((out.content.as_str(), out.is_error), ("42", false));
    m.shutdown().await;
}
