//! The fake server's own behaviour: protocol validation like the real services, recording, defaults.

use flower_tui::engine::provider::ErrorKind;
use flower_tui::engine::provider::openai::{OpenAiConfig, OpenAiProvider};
use flower_tui::engine::types::{Block, Message, Role};
use serde_json::json;

use super::{KEY, anthropic, request, run};
use crate::support::check::assert_starts_with;
use crate::support::fake::{self, FakeServer, U};

fn assistant_calls(ids: &[&str]) -> Message {
    Message {
        role: Role::Assistant,
        content: ids
            .iter()
            .map(|id| Block::ToolUse {
                id: (*id).into(),
                name: "run".into(),
                input: json!({}),
                from_text: false,
            })
            .collect(),
    }
}

fn results(ids: &[&str]) -> Message {
    Message {
        role: Role::User,
        content: ids
            .iter()
            .map(|id| Block::ToolResult {
                tool_use_id: (*id).into(),
                content: "ok".into(),
                is_error: false,
            })
            .collect(),
    }
}

#[tokio::test]
async fn anthropic_unanswered_tool_use_is_rejected_without_consuming_the_script() {
    let server = FakeServer::start().await;
    server.push(fake::anthropic::text("scripted", U::new(1, 1)));
    let p = anthropic(&server);
    let bad = request(vec![
        Message::user("go"),
        assistant_calls(&["toolu_A", "toolu_B"]),
        results(&["toolu_A"]),
    ]);
    let e = run(&p, &bad).await.0.unwrap_err();
    assert_eq!(
        (e.kind, e.status, e.retryable),
        (ErrorKind::InvalidRequest, Some(400), false)
    );
    assert_eq!(
        e.message,
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_B. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    );
    assert_eq!(server.pending(), 1);
    assert_eq!(server.requests().len(), 1, "rejected requests are recorded");

    // A user text in between also breaks the pairing.
    let bad = request(vec![
        Message::user("go"),
        assistant_calls(&["toolu_C"]),
        Message::user("hm"),
    ]);
    assert!(
        run(&p, &bad)
            .await
            .0
            .unwrap_err()
            .message
            .starts_with("messages.1: `tool_use` ids were found")
    );

    let good = request(vec![
        Message::user("go"),
        assistant_calls(&["toolu_A"]),
        results(&["toolu_A"]),
    ]);
    assert_eq!(run(&p, &good).await.0.unwrap().text(), "scripted");
    assert_eq!(server.pending(), 0);
}

#[tokio::test]
async fn anthropic_tool_blocks_need_tools_and_results_need_their_use() {
    let server = FakeServer::start().await;
    let p = anthropic(&server);
    let mut req = request(vec![
        Message::user("go"),
        assistant_calls(&["toolu_A"]),
        results(&["toolu_A"]),
    ]);
    req.tools.clear();
    let e = run(&p, &req).await.0.unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidRequest);
    assert_eq!(
        e.message,
        "Requests which include `tool_use` or `tool_result` blocks must define tools."
    );

    let orphan = request(vec![
        Message::user("go"),
        Message::assistant("hi"),
        results(&["toolu_Q"]),
    ]);
    let e = run(&p, &orphan).await.0.unwrap_err();
    assert_starts_with(
        &e.message,
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_Q.",
    );
}

#[tokio::test]
async fn openai_tool_calls_need_tool_messages() {
    let server = FakeServer::start().await;
    server.push(fake::openai::text("scripted", U::new(1, 1)));
    let p = OpenAiProvider::new(OpenAiConfig {
        base_url: server.base_url(),
        api_key: KEY.into(),
        ..Default::default()
    });
    let bad = request(vec![
        Message::user("go"),
        assistant_calls(&["call_1", "call_2"]),
        results(&["call_1"]),
    ]);
    let e = run(&p, &bad).await.0.unwrap_err();
    assert_eq!((e.kind, e.status), (ErrorKind::InvalidRequest, Some(400)));
    assert_eq!(
        e.message,
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_2"
    );
    assert_eq!(server.pending(), 1);
    let good = request(vec![
        Message::user("go"),
        assistant_calls(&["call_1"]),
        results(&["call_1"]),
    ]);
    assert_eq!(run(&p, &good).await.0.unwrap().text(), "scripted");
}

#[tokio::test]
async fn with_no_script_left_the_server_says_so() {
    let server = FakeServer::start().await;
    let e = run(&anthropic(&server), &request(vec![Message::user("x")]))
        .await
        .0
        .unwrap_err();
    assert_eq!(
        (e.status, e.message.as_str()),
        (Some(500), "HTTP 500: no scripted reply")
    );
    assert_eq!(server.request_paths(), vec!["/v1/messages"]);
    assert_eq!(
        server.request_headers()[0]
            .iter()
            .find(|(k, _)| k == "x-api-key")
            .map(|(_, v)| v.as_str()),
        Some(KEY)
    );
}
