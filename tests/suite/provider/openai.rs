//! The OpenAI-compatible provider against the fake server.

use flower_tui::engine::provider::openai::{OpenAiConfig, OpenAiProvider};
use flower_tui::engine::provider::{ErrorKind, Provider};
use flower_tui::engine::types::{Block, Delta, INVALID_JSON_KEY, Message, Role, Usage};
use serde_json::json;

use super::{KEY, request, run, text_of};
use crate::support::check::assert_starts_with;
use crate::support::fake::{self, FakeServer, U};

fn openai(server: &FakeServer) -> OpenAiProvider {
    OpenAiProvider::new(OpenAiConfig {
        base_url: server.base_url(),
        api_key: KEY.into(),
        http: Some(fake::client()),
        ..Default::default()
    })
}

#[tokio::test]
async fn text_reasoning_and_usage_chunk() {
    let server = FakeServer::start().await;
    server.push(
        fake::openai::Stream::new(U::new(900, 42).cached(0, 2048))
            .reasoning("Think first, then answer.")
            .text("The answer is 42, as always.")
            .reply(),
    );
    let p = openai(&server);
    let (r, deltas) = run(&p, &request(vec![Message::user("question")])).await;
    let r = r.unwrap();
    assert_eq!(r.content, vec![Block::text("The answer is 42, as always.")]);
    assert_eq!(text_of(&deltas), "The answer is 42, as always.");
    let thinking: String = deltas
        .iter()
        .filter_map(|d| match d {
            Delta::Thinking(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thinking, "Think first, then answer.");
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: 900,
            output_tokens: 42,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 2048
        }
    );
    assert_eq!(r.stop_reason.as_deref(), Some("end_turn"));

    let rec = &server.recorded()[0];
    assert_eq!(rec.path, "/v1/chat/completions");
    assert_eq!(
        rec.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let b = &rec.body;
    assert_eq!(b["stream"], true);
    assert_eq!(b["stream_options"], json!({"include_usage": true}));
    assert_eq!(b["max_tokens"], 1024);
    assert_eq!(b["model"], "test-model");
    assert_eq!(b["tool_choice"], "auto");
    assert_eq!(
        b["messages"][0],
        json!({"role": "system", "content": "You are a careful test assistant."})
    );
    assert_eq!(
        b["messages"][1],
        json!({"role": "user", "content": "question"})
    );
    assert_eq!(b["tools"][0]["type"], "function");
    assert_eq!(b["tools"][0]["function"]["name"], "read_file");
    assert_eq!(b["tools"][0]["function"]["parameters"]["type"], "object");
    assert_eq!(
        b["tools"][0]["function"]["description"],
        "The read_file tool."
    );
}

#[tokio::test]
async fn fragmented_tool_calls_are_assembled() {
    let server = FakeServer::start().await;
    server.push(fake::openai::tool_calls(
        &[
            (
                "call_abc",
                "read_file",
                r#"{"path": "src/lib.rs", "why": "look ✓"}"#,
            ),
            ("call_def", "run", r#"{"cmd": "cargo test"#),
        ],
        U::new(10, 20),
    ));
    let p = openai(&server);
    let (r, deltas) = run(&p, &request(vec![Message::user("go")])).await;
    let r = r.unwrap();
    assert_eq!(r.stop_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        r.content,
        vec![
            Block::ToolUse {
                id: "call_abc".into(),
                name: "read_file".into(),
                input: json!({"path": "src/lib.rs", "why": "look ✓"}),
                from_text: false,
            },
            Block::ToolUse {
                id: "call_def".into(),
                name: "run".into(),
                input: json!({INVALID_JSON_KEY: r#"{"cmd": "cargo test"#}),
                from_text: false,
            },
        ]
    );
    assert_eq!(
        deltas,
        vec![
            Delta::ToolUseStart {
                id: "call_abc".into(),
                name: "read_file".into()
            },
            Delta::ToolUseStart {
                id: "call_def".into(),
                name: "run".into()
            },
        ]
    );
}

#[tokio::test]
async fn history_maps_to_tool_calls_and_tool_messages() {
    let server = FakeServer::start().await;
    server.push(fake::openai::text("done", U::new(1, 1)));
    let p = openai(&server);
    let history = vec![
        Message::user("list files"),
        Message {
            role: Role::Assistant,
            content: vec![
                Block::Thinking {
                    thinking: "hidden".into(),
                    signature: "s".into(),
                },
                Block::ToolUse {
                    id: "call_1".into(),
                    name: "run".into(),
                    input: json!({"cmd": "ls"}),
                    from_text: false,
                },
                Block::ToolUse {
                    id: "call_2".into(),
                    name: "read_file".into(),
                    input: json!({"path": "a"}),
                    from_text: false,
                },
            ],
        },
        Message {
            role: Role::User,
            content: vec![
                Block::ToolResult {
                    tool_use_id: "call_1".into(),
                    content: "a\nb".into(),
                    is_error: false,
                },
                Block::ToolResult {
                    tool_use_id: "call_2".into(),
                    content: "no such file".into(),
                    is_error: true,
                },
            ],
        },
        Message::assistant("Two files."),
        Message::user("thanks"),
    ];
    run(&p, &request(history)).await.0.unwrap();
    let msgs = server.requests()[0]["messages"].clone();
    assert_eq!(
        msgs,
        json!([
            {"role": "system", "content": "You are a careful test assistant."},
            {"role": "user", "content": "list files"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "run", "arguments": "{\"cmd\":\"ls\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "a\nb"},
            {"role": "tool", "tool_call_id": "call_2", "content": "no such file"},
            {"role": "assistant", "content": "Two files."},
            {"role": "user", "content": "thanks"},
        ])
    );
}

#[tokio::test]
async fn error_chunks_in_the_stream_map_to_kinds() {
    let server = FakeServer::start().await;
    server.push(fake::openai::error_chunk(
        "",
        "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
        "invalid_request_error",
        Some("context_length_exceeded"),
    ));
    server.push(fake::openai::error_chunk(
        "partial",
        "Rate limit reached",
        "requests",
        Some("rate_limit_exceeded"),
    ));
    server.push(fake::openai::error_chunk(
        "",
        "The server had an error",
        "server_error",
        None,
    ));
    let p = openai(&server);
    let req = request(vec![Message::user("q")]);
    let e = run(&p, &req).await.0.unwrap_err();
    assert_eq!(
        (e.kind, e.retryable),
        (ErrorKind::ContextWindowExceeded, false)
    );
    let (r, deltas) = run(&p, &req).await;
    let e = r.unwrap_err();
    assert_eq!(
        (e.kind, e.message.as_str()),
        (ErrorKind::RateLimited, "Rate limit reached")
    );
    assert_eq!(text_of(&deltas), "partial");
    let e = run(&p, &req).await.0.unwrap_err();
    assert_eq!((e.kind, e.retryable), (ErrorKind::Other, true));
}

#[tokio::test]
async fn base_ending_in_v1_and_no_key() {
    let server = FakeServer::start().await;
    server.push(
        fake::openai::Stream::new(U::new(3, 4))
            .text("local")
            .no_usage()
            .reply(),
    );
    let p = OpenAiProvider::new(OpenAiConfig {
        base_url: format!("{}/v1", server.base_url()),
        ..Default::default()
    });
    assert_eq!(p.name(), "openai");
    assert_eq!(
        p.endpoint(),
        format!("{}/v1/chat/completions", server.base_url())
    );
    let r = run(&p, &request(vec![Message::user("q")])).await.0.unwrap();
    assert_eq!(r.text(), "local");
    assert_eq!(r.usage, Usage::default());
    let rec = &server.recorded()[0];
    assert_eq!(rec.path, "/v1/chat/completions");
    assert_eq!(rec.header("authorization"), None);
}

#[tokio::test]
async fn max_completion_tokens_is_used_when_the_model_asks_for_it() {
    let server = FakeServer::start().await;
    server.push(fake::openai::error_status(
        400,
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
        "invalid_request_error",
        Some("unsupported_parameter"),
    ));
    server.push(fake::openai::text("first", U::new(1, 1)));
    server.push(fake::openai::text("second", U::new(1, 1)));
    let p = openai(&server);
    let req = request(vec![Message::user("q")]);
    assert_eq!(run(&p, &req).await.0.unwrap().text(), "first");
    assert_eq!(run(&p, &req).await.0.unwrap().text(), "second");
    let bodies = server.requests();
    assert_eq!(bodies.len(), 3);
    assert_eq!(bodies[0]["max_tokens"], 1024);
    for b in &bodies[1..] {
        assert_eq!(
            (b.get("max_tokens"), &b["max_completion_tokens"]),
            (None, &json!(1024))
        );
    }
}

#[tokio::test]
async fn a_cut_after_the_finish_reason_keeps_the_answer_and_one_before_it_is_an_error() {
    let server = FakeServer::start().await;
    let events = fake::openai::Stream::new(U::new(10, 5))
        .text("whole answer")
        .events();
    // Role, text pieces and the finish reason arrive; the usage chunk and `[DONE]` do not.
    let upto_finish = events[..events.len() - 2].concat();
    server.push(fake::Reply::Reset { bytes: upto_finish });
    // The same cut one chunk earlier: no finish reason yet.
    let before_finish = events[..events.len() - 3].concat();
    server.push(fake::Reply::Reset {
        bytes: before_finish,
    });
    let p = openai(&server);
    let req = request(vec![Message::user("hi")]);

    let (r, deltas) = run(&p, &req).await;
    let r = r.unwrap();
    assert_eq!(r.content, vec![Block::text("whole answer")]);
    assert_eq!(text_of(&deltas), "whole answer");

    let (r, _) = run(&p, &req).await;
    let e = r.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Network);
    assert_starts_with(&e.message, "stream interrupted:");
}
