//! The editor's MCP servers, with a real one nobody here wrote: `session/new` names the
//! reference server `@modelcontextprotocol/server-everything` (npm, installed by the test set-up)
//! as a stdio entry, the model's call reaches it and its answer comes back, and the server stops
//! with the session.

use std::time::Duration;

use serde_json::json;

use super::{drive, set_up, u, updates};
use crate::support::fake::anthropic as a;
use crate::support::mcp_setup::{self, pids_with_env, skip, wait_gone};

#[test]
fn the_editors_stdio_mcp_server_answers_the_models_call() {
    let script = match mcp_setup::everything() {
        Ok(s) => s,
        Err(why) => return skip("the_editors_stdio_mcp_server_answers_the_models_call", &why),
    };
    let (_rt, server, home) = set_up();
    server.push(a::tool_use(
        "m1",
        "mcp__editor-everything__get-sum",
        r#"{"a": 2, "b": 3}"#,
        u(1_000),
    ));
    server.push(a::text("Five.", u(1_200)));
    let marker = format!("ACP_MCP_MARK=everything-{}", std::process::id());
    let (key, value) = marker.split_once('=').unwrap();
    let report = drive(
        &home,
        &server,
        json!({
            "mcp_servers": [{
                "name": "editor everything",
                "command": "node",
                "args": [script.display().to_string(), "stdio"],
                "env": {key: value},
            }],
            "prompts": [{"text": "add two and three"}],
        }),
        &[],
    );
    assert_eq!(report["results"][0]["stop_reason"], "end_turn", "{report}");
    // The model was offered the editor's server's tools, under the name made safe.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let tools = reqs[0]["tools"].to_string();
    assert!(tools.contains("mcp__editor-everything__get-sum"), "{tools}");
    // Its call reached the server, whose answer the model got and the editor showed.
    let result = reqs[1]["messages"].to_string();
    assert!(result.contains("The sum of 2 and 3 is 5."), "{result}");
    let ups = updates(&report);
    let call = ups
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"] == "m1")
        .expect("the MCP tool call");
    // Kind `other` (the default, so left out on the wire): what an MCP tool does is its own.
    assert!(call["kind"].is_null() || call["kind"] == "other", "{call}");
    assert!(
        call["title"]
            .as_str()
            .unwrap()
            .starts_with("mcp__editor-everything__get-sum"),
        "{call}"
    );
    let done = ups.iter().rfind(|u| u["toolCallId"] == "m1").unwrap();
    assert_eq!(done["status"], "completed", "{done}");
    assert!(
        done.to_string().contains("The sum of 2 and 3 is 5."),
        "{done}"
    );
    // The server stopped with the session.
    let left = wait_gone(&marker, Duration::from_secs(10));
    assert!(left.is_empty(), "left running: {left:?}");
    assert!(pids_with_env(&marker).is_empty());
}
