//! A call of a tool the request did not offer is answered with exactly the tools it did offer:
//! the built-ins, the step's own (`todo`), `task`, and any MCP tools.

use crate::support::check::assert_success;
use crate::support::fake::FakeServer;
use crate::support::headless::{bin_for, lines, run};
use crate::support::requests::tool_names;

#[tokio::test]
async fn an_unknown_tool_error_lists_what_the_request_offered() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    server
        .script()
        .tool("no_such_tool", "{}")
        .at(1_100)
        .text("done");
    let mut c = bin_for(home.path(), &server);
    c.args(["-p", "use a tool", "--yes"]);
    let out = run(c).await.output;
    assert_success(&out);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{:?}", lines(&out));
    let offered = tool_names(&reqs[0]);
    for name in ["read_file", "bash", "todo", "task"] {
        assert!(offered.iter().any(|t| t == name), "{offered:?}");
    }
    let last = reqs[1]["messages"].as_array().unwrap().last().unwrap();
    let result = &last["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["is_error"], true);
    assert_eq!(
        result["content"],
        format!(
            "Unknown tool `no_such_tool`. The available tools are: {}.",
            offered.join(", ")
        )
    );
    // The front end saw the call and its error.
    let ev = lines(&out);
    assert!(
        ev.iter()
            .any(|e| e["type"] == "tool_call" && e["name"] == "no_such_tool"),
        "{ev:?}"
    );
}
