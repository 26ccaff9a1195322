//! The providers against the fake server: Anthropic streaming here; OpenAI, errors, retries, local
//! servers and the fake's own validation in the submodules.

mod broken;
mod chaos;
mod errors;
mod fake_server;
mod local;
mod openai;
mod retry;
mod windows;

use std::time::{Duration, Instant};

use flower_tui::engine::provider::anthropic::{
    AnthropicConfig, AnthropicProvider, REDACTED_THINKING_PREFIX,
};
use flower_tui::engine::provider::{ErrorKind, Provider, ProviderError};
use flower_tui::engine::types::{
    Block, Delta, INVALID_JSON_KEY, Message, ModelRequest, ModelResponse, Role, ToolChoice,
    ToolSpec, Usage,
};
use serde_json::{Value, json};

use crate::support::check::assert_starts_with;
use crate::support::fake::{self, FakeServer, Reply, U};

/// The key every test provider uses; it must never show up in an error.
pub const KEY: &str = "sk-ant-test-KEY-0123456789abcdef";

pub fn anthropic(server: &FakeServer) -> AnthropicProvider {
    AnthropicProvider::new(AnthropicConfig {
        base_url: server.base_url(),
        api_key: KEY.into(),
        http: Some(fake::client()),
        ..Default::default()
    })
}

pub fn tool(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("The {name} tool."),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }
}

pub fn request(messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        model: "test-model".into(),
        system: "You are a careful test assistant.".into(),
        messages,
        tools: vec![tool("read_file"), tool("run")],
        tool_choice: ToolChoice::Auto,
        max_tokens: 1024,
        effort: None,
    }
}

/// Stream `req`, collecting deltas; fails the test if it takes more than 10 s.
pub async fn run(
    p: &dyn Provider,
    req: &ModelRequest,
) -> (Result<ModelResponse, ProviderError>, Vec<Delta>) {
    let mut deltas = Vec::new();
    // `Alive` only says bytes came; the tests look at what would be shown.
    let mut sink = |d: Delta| {
        if d != Delta::Alive {
            deltas.push(d)
        }
    };
    let result = tokio::time::timeout(Duration::from_secs(10), p.stream(req, &mut sink))
        .await
        .expect("the provider call took more than 10 s");
    (result, deltas)
}

pub fn text_of(deltas: &[Delta]) -> String {
    deltas
        .iter()
        .filter_map(|d| match d {
            Delta::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn plain_reply_text_usage_and_request_shape() {
    let server = FakeServer::start().await;
    let answer = "Hello there, the build is green and all tests pass.";
    server.push(fake::anthropic::text(
        answer,
        U::new(1200, 14).cached(300, 4000),
    ));
    let p = anthropic(&server);
    let (r, deltas) = run(&p, &request(vec![Message::user("status?")])).await;
    let r = r.unwrap();
    assert_eq!(r.text(), answer);
    assert_eq!(text_of(&deltas), answer);
    assert!(
        deltas.len() > 3,
        "text arrives in several deltas: {deltas:?}"
    );
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: 1200,
            output_tokens: 14,
            cache_creation_input_tokens: 300,
            cache_read_input_tokens: 4000
        }
    );
    assert_eq!(r.stop_reason.as_deref(), Some("end_turn"));

    let rec = &server.recorded()[0];
    assert_eq!(rec.method, "POST");
    assert_eq!(rec.path, "/v1/messages");
    assert_eq!(rec.header("x-api-key"), Some(KEY));
    assert_eq!(rec.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(rec.header("content-type"), Some("application/json"));
    let b = &rec.body;
    assert_eq!(b["stream"], true);
    assert_eq!(b["model"], "test-model");
    assert_eq!(b["max_tokens"], 1024);
    assert_eq!(b["system"][0]["type"], "text");
    assert_eq!(b["system"][0]["text"], "You are a careful test assistant.");
    assert_eq!(b["tool_choice"], json!({"type": "auto"}));
    assert_eq!(b["tools"][0]["name"], "read_file");
    assert_eq!(b["tools"][0]["input_schema"]["type"], "object");
    assert_eq!(
        b["messages"][0],
        json!({"role": "user", "content": [
        {"type": "text", "text": "status?", "cache_control": {"type": "ephemeral"}}]})
    );
}

#[tokio::test]
async fn tool_use_input_is_assembled_from_json_deltas() {
    let server = FakeServer::start().await;
    let input = r#"{"path": "src/main.rs", "lines": [1, 40], "note": "naïve ✓"}"#;
    server.push(fake::anthropic::text_then_tools(
        "Let me look at the file.",
        &[("toolu_01A", "read_file", input), ("toolu_01B", "run", "")],
        U::new(50, 30),
    ));
    let p = anthropic(&server);
    let (r, deltas) = run(&p, &request(vec![Message::user("read main")])).await;
    let r = r.unwrap();
    assert_eq!(r.stop_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        r.content,
        vec![
            Block::text("Let me look at the file."),
            Block::ToolUse {
                id: "toolu_01A".into(),
                name: "read_file".into(),
                input: serde_json::from_str(input).unwrap(),
                from_text: false,
            },
            Block::ToolUse {
                id: "toolu_01B".into(),
                name: "run".into(),
                input: json!({}),
                from_text: false,
            },
        ]
    );
    let starts: Vec<&Delta> = deltas
        .iter()
        .filter(|d| matches!(d, Delta::ToolUseStart { .. }))
        .collect();
    assert_eq!(
        starts,
        vec![
            &Delta::ToolUseStart {
                id: "toolu_01A".into(),
                name: "read_file".into()
            },
            &Delta::ToolUseStart {
                id: "toolu_01B".into(),
                name: "run".into()
            }
        ]
    );
}

#[tokio::test]
async fn thinking_is_streamed_kept_with_signature_and_sent_back() {
    let server = FakeServer::start().await;
    server.push(
        fake::anthropic::Stream::new(U::new(10, 20))
            .thinking(
                "The user wants a haiku. Five, seven, five.",
                "EqQBCgIYAhIM1gbcDa9GJwZA2b3h",
            )
            .redacted_thinking("EmwKAhgBEgy3va3pzix/LafPsn4a")
            .text("Quiet build server")
            .reply(),
    );
    server.push(fake::anthropic::text("ok", U::new(1, 1)));
    let p = anthropic(&server);
    let (r, deltas) = run(&p, &request(vec![Message::user("haiku")])).await;
    let r = r.unwrap();
    let thinking: String = deltas
        .iter()
        .filter_map(|d| match d {
            Delta::Thinking(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thinking, "The user wants a haiku. Five, seven, five.");
    assert_eq!(
        r.content,
        vec![
            Block::Thinking {
                thinking: "The user wants a haiku. Five, seven, five.".into(),
                signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3h".into()
            },
            Block::Thinking {
                thinking: String::new(),
                signature: format!("{REDACTED_THINKING_PREFIX}EmwKAhgBEgy3va3pzix/LafPsn4a")
            },
            Block::text("Quiet build server"),
        ]
    );

    // The next request carries both blocks back unchanged.
    let next = request(vec![
        Message::user("haiku"),
        r.message(),
        Message::user("another"),
    ]);
    run(&p, &next).await.0.unwrap();
    let sent = &server.requests()[1]["messages"][1]["content"];
    assert_eq!(
        sent[0],
        json!({"type": "thinking", "thinking": "The user wants a haiku. Five, seven, five.",
               "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"})
    );
    assert_eq!(
        sent[1],
        json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"})
    );
}

fn markers(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if m.contains_key("cache_control") {
                out.push(path.to_owned());
            }
            for (k, v) in m {
                markers(v, &format!("{path}.{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                markers(v, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn cache_control_markers_are_at_most_four_and_in_place() {
    let server = FakeServer::start().await;
    server.push(fake::anthropic::text("one", U::new(1, 1)));
    server.push(fake::anthropic::text("two", U::new(1, 1)));
    let p = anthropic(&server);
    let history = vec![
        Message::user("first"),
        Message::assistant("answer one"),
        Message::user("second"),
        Message {
            role: Role::Assistant,
            content: vec![
                Block::text("calling"),
                Block::ToolUse {
                    id: "toolu_9".into(),
                    name: "run".into(),
                    input: json!({"cmd": "ls"}),
                    from_text: false,
                },
            ],
        },
        Message {
            role: Role::User,
            content: vec![
                Block::ToolResult {
                    tool_use_id: "toolu_9".into(),
                    content: "a\nb".into(),
                    is_error: false,
                },
                Block::text("and now?"),
            ],
        },
    ];
    run(&p, &request(history)).await.0.unwrap();
    let mut found = Vec::new();
    markers(&server.requests()[0], "", &mut found);
    // The body's keys come in the order it was written in; the places are compared sorted.
    found.sort();
    assert_eq!(
        found,
        vec![
            ".messages[3].content[1]",
            ".messages[4].content[1]",
            ".system[0]",
            ".tools[1]"
        ]
    );

    // No system and no tools: only the last two messages are marked; thinking blocks never are.
    let mut req = request(vec![
        Message::user("q"),
        Message {
            role: Role::Assistant,
            content: vec![
                Block::text("a"),
                Block::Thinking {
                    thinking: "t".into(),
                    signature: "sig".into(),
                },
            ],
        },
        Message::user("q2"),
    ]);
    req.system.clear();
    req.tools.clear();
    run(&p, &req).await.0.unwrap();
    let body = &server.requests()[1];
    let mut found = Vec::new();
    markers(body, "", &mut found);
    assert_eq!(
        found,
        vec![".messages[1].content[0]", ".messages[2].content[0]"]
    );
    assert!(
        body.get("system").is_none()
            && body.get("tools").is_none()
            && body.get("tool_choice").is_none()
    );
}

#[tokio::test]
async fn tool_choice_none_is_sent() {
    let server = FakeServer::start().await;
    server.push(fake::anthropic::text("fine", U::new(1, 1)));
    let p = anthropic(&server);
    let mut req = request(vec![Message::user("write the handoff")]);
    req.tool_choice = ToolChoice::None;
    run(&p, &req).await.0.unwrap();
    let body = &server.requests()[0];
    assert_eq!(body["tool_choice"], json!({"type": "none"}));
    assert_eq!(body["tools"].as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn mid_stream_error_events_map_to_kinds() {
    let server = FakeServer::start().await;
    server.push(fake::anthropic::error_event(
        "overloaded_error",
        "Overloaded",
    ));
    server.push(fake::anthropic::error_event(
        "rate_limit_error",
        "Number of request tokens has exceeded your per-minute rate limit",
    ));
    server.push(fake::anthropic::error_event(
        "invalid_request_error",
        "prompt is too long: 205030 tokens > 200000 maximum",
    ));
    server.push(fake::anthropic::error_event(
        "api_error",
        "Internal server error",
    ));
    let p = anthropic(&server);
    let req = request(vec![Message::user("hi")]);
    let kinds: Vec<(ErrorKind, bool, String)> = {
        let mut v = Vec::new();
        for _ in 0..4 {
            let e = run(&p, &req).await.0.unwrap_err();
            v.push((e.kind, e.retryable, e.message));
        }
        v
    };
    assert_eq!(kinds[0], (ErrorKind::Overloaded, true, "Overloaded".into()));
    assert_eq!(kinds[1].0, ErrorKind::RateLimited);
    assert!(kinds[1].1);
    assert_eq!(kinds[2].0, ErrorKind::ContextWindowExceeded);
    assert!(!kinds[2].1);
    assert_eq!((kinds[3].0, kinds[3].1), (ErrorKind::Other, true));
}

#[tokio::test]
async fn malformed_event_json_is_a_clear_error() {
    let server = FakeServer::start().await;
    let mut body = fake::anthropic::Stream::new(U::new(1, 1))
        .head_events()
        .remove(0);
    body.extend_from_slice(b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"unterminated\n\n");
    server.script().reply(Reply::sse(body));
    let (r, _) = run(&anthropic(&server), &request(vec![Message::user("hi")])).await;
    let e = r.unwrap_err();
    assert_eq!(
        (e.kind, e.retryable, e.stream_broken),
        (ErrorKind::Network, true, true)
    );
    assert_starts_with(&e.message, "malformed JSON in `content_block_delta` event:");
}

#[tokio::test]
async fn truncated_streams_are_clear_network_errors() {
    let server = FakeServer::start().await;
    let full = fake::anthropic::Stream::new(U::new(5, 5))
        .text("cut me somewhere in the middle")
        .bytes();
    // The connection drops in the middle of an event.
    server.push(Reply::Cut {
        bytes: full[..full.len() / 2].to_vec(),
    });
    // The body ends cleanly, but without `message_stop`.
    let head = fake::anthropic::Stream::new(U::new(5, 5))
        .text("no stop")
        .head_events()
        .concat();
    server.script().reply(Reply::sse(head));
    let p = anthropic(&server);
    let req = request(vec![Message::user("hi")]);

    let (r, _) = run(&p, &req).await;
    let e = r.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Network);
    assert!(e.retryable);
    assert_starts_with(&e.message, "stream interrupted:");

    let (r, deltas) = run(&p, &req).await;
    let e = r.unwrap_err();
    assert_eq!(
        (e.kind, e.message.as_str()),
        (ErrorKind::Network, "stream ended before message_stop")
    );
    assert_eq!(text_of(&deltas), "no stop");
}

#[tokio::test]
async fn html_502_gives_a_short_clear_message() {
    let server = FakeServer::start().await;
    server.script().reply(Reply::html(502, "502 Bad Gateway"));
    let (r, _) = run(&anthropic(&server), &request(vec![Message::user("hi")])).await;
    let e = r.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Other);
    assert!(e.retryable);
    assert_eq!(e.status, Some(502));
    assert_eq!(
        e.message,
        "HTTP 502 from server (HTML body): 502 Bad Gateway"
    );
}

#[tokio::test]
async fn bad_tool_call_json_becomes_an_invalid_json_input() {
    let server = FakeServer::start().await;
    let raw = r#"{"path": "src/lib.rs", "limit": 4"#;
    server.push(fake::anthropic::tool_use(
        "toolu_X",
        "read_file",
        raw,
        U::new(3, 3),
    ));
    server.push(fake::anthropic::tool_use(
        "toolu_Y",
        "read_file",
        "[1, 2]",
        U::new(3, 3),
    ));
    let p = anthropic(&server);
    let req = request(vec![Message::user("go")]);
    for want in [raw, "[1, 2]"] {
        let r = run(&p, &req).await.0.unwrap();
        let (_, _, input) = r
            .message()
            .tool_uses()
            .next()
            .map(|(a, b, c)| (a.to_owned(), b.to_owned(), c.clone()))
            .unwrap();
        assert_eq!(input, json!({INVALID_JSON_KEY: want}));
    }
}

#[tokio::test]
async fn any_network_chunking_gives_the_same_response() {
    let server = FakeServer::start().await;
    let stream = fake::anthropic::Stream::new(U::new(7, 8))
        .thinking("ünïcödé thoughts → here", "sig")
        .text("Grüße, 世界! Splitting everywhere.")
        .tool("toolu_Z", "run", r#"{"cmd": "echo ✓"}"#);
    let bytes = stream.bytes();
    server.push(stream.reply());
    // Tiny writes (which TCP may merge), then pauses so the client surely reads odd pieces.
    for size in [1, 2, 3] {
        server.script().reply(Reply::sse_in_chunks(&bytes, size));
    }
    for size in [61, 173] {
        server
            .script()
            .reply(Reply::sse_in_chunks(&bytes, size).with_delay(Duration::from_millis(1)));
    }
    let p = anthropic(&server);
    let req = request(vec![Message::user("go")]);
    let reference = run(&p, &req).await.0.unwrap();
    assert_eq!(reference.content.len(), 3);
    for _ in 0..5 {
        assert_eq!(run(&p, &req).await.0.unwrap(), reference);
    }
}

#[tokio::test]
async fn dropping_the_future_during_a_stall_aborts_the_request() {
    let server = FakeServer::start().await;
    let head = fake::anthropic::Stream::new(U::new(1, 1))
        .text("partial")
        .head_events();
    server.push(Reply::Stall {
        prefix: head[..3].concat(),
    });
    let p = anthropic(&server);
    let req = request(vec![Message::user("hang")]);
    let mut deltas = Vec::new();
    let mut sink = |d: Delta| deltas.push(d);
    let started = Instant::now();
    let r = tokio::time::timeout(Duration::from_millis(300), p.stream(&req, &mut sink)).await;
    assert!(r.is_err(), "a stalled stream must not finish");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(text_of(&deltas), "partial");
    // The HTTP connection is closed, not leaked: the server sees the client hang up.
    assert!(
        server.wait_idle(Duration::from_secs(3)).await,
        "connection still open after the drop"
    );
}

#[tokio::test]
async fn a_base_url_ending_in_v1_is_not_doubled() {
    let server = FakeServer::start().await;
    server.push(fake::anthropic::text("ok", U::new(1, 1)));
    let p = AnthropicProvider::new(AnthropicConfig {
        base_url: format!("{}/v1/", server.base_url()),
        api_key: KEY.into(),
        http: Some(fake::client()),
        ..Default::default()
    });
    assert_eq!(p.endpoint(), format!("{}/v1/messages", server.base_url()));
    assert_eq!(p.name(), "anthropic");
    run(&p, &request(vec![Message::user("x")])).await.0.unwrap();
    assert_eq!(server.request_paths(), vec!["/v1/messages"]);
}

#[tokio::test]
async fn config_model_and_max_tokens_fill_empty_request_fields() {
    let server = FakeServer::start().await;
    server.push(fake::anthropic::text("ok", U::new(1, 1)));
    let p = AnthropicProvider::new(AnthropicConfig {
        base_url: server.base_url(),
        api_key: KEY.into(),
        model: Some("claude-opus-4-1".into()),
        max_tokens: Some(321),
        http: Some(fake::client()),
        web_search: false,
    });
    let mut req = request(vec![Message::user("x")]);
    req.model.clear();
    req.max_tokens = 0;
    run(&p, &req).await.0.unwrap();
    let body = &server.requests()[0];
    assert_eq!(
        (body["model"].as_str(), body["max_tokens"].as_u64()),
        (Some("claude-opus-4-1"), Some(321))
    );
}
