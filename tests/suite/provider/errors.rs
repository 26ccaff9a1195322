//! Error normalisation: overflow detection, limits, classification of any body.

use std::time::Duration;

use flower_tui::engine::provider::ErrorKind;
use flower_tui::engine::provider::error::{classify, is_overflow, overflow_limit};
use flower_tui::engine::types::Message;

use super::{KEY, anthropic, request, run};
use crate::support::check::{assert_contains, assert_event};
use crate::support::fake::{self, FakeServer, Reply, U, openai as o};
use crate::support::harness::{Harness, start};

/// The overflow messages the real services send (the wordings of the services and local servers we know).
const OVERFLOWS: &[&str] = &[
    "prompt is too long: 205030 tokens > 200000 maximum",
    "This model's maximum context length is 8192 tokens. However, your messages resulted in 8243 tokens. Please reduce the length of the messages.",
    "Your input exceeds the context window of this model. Please adjust your input and try again.",
    "the request exceeds the available context size, try increasing it",
    "request (13392 tokens) exceeds the available context size (8192 tokens), try increasing it",
    "Input is too long for requested model.",
    "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).",
    "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again",
    "Too many total text bytes: 9000001 > 9000000",
    "Prompt Context Length Exceeded",
    // vLLM
    "The decoder prompt (length 9000) is longer than the maximum model length of 8192. Make sure that `max_model_len` is no smaller than the number of text tokens.",
    "Input prompt (9000 tokens) is too long and exceeds limit of 8192",
    // Ollama
    "the input length exceeds the context length",
    // LM Studio
    "Trying to keep the first 9000 tokens when context the overflows. However, the model is loaded with context length of only 8192 tokens, which is not enough.",
    // Mistral
    "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length",
];

#[test]
fn every_overflow_message_is_recognised_and_classified() {
    for text in OVERFLOWS {
        assert!(is_overflow(&[text]), "not recognised: {text}");
        assert!(
            is_overflow(&["", &text.to_uppercase()]),
            "case matters for: {text}"
        );
        // A 413 about bytes is not an overflow: the byte limit is the request's, not the
        // context window's.
        let bytes = text.contains("bytes");
        for status in [400, 413, 422] {
            let e = classify(status, text, None);
            let want = if status == 413 && bytes {
                ErrorKind::InvalidRequest
            } else {
                ErrorKind::ContextWindowExceeded
            };
            assert_eq!(e.kind, want, "{status} {text}");
            assert!(!e.retryable);
        }
        let anthropic_json = fake::anthropic::error_json("invalid_request_error", text);
        let e = classify(400, &anthropic_json, None);
        assert_eq!(
            (e.kind, e.message.as_str()),
            (ErrorKind::ContextWindowExceeded, *text)
        );
    }
}

#[test]
fn the_openai_code_alone_marks_an_overflow() {
    let body = fake::openai::error_json(
        "Please shorten your conversation.",
        "invalid_request_error",
        Some("context_length_exceeded"),
    );
    let e = classify(400, &body, None);
    assert_eq!(e.kind, ErrorKind::ContextWindowExceeded);
    assert_eq!(e.message, "Please shorten your conversation.");
    assert!(is_overflow(&["Please shorten", "context_length_exceeded"]));
}

#[test]
fn rate_limit_texts_are_never_overflow() {
    let tpm = "Request too large for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Requested 50000. The input or output tokens must be reduced in order to run successfully.";
    assert!(!is_overflow(&[tpm]));
    let e = classify(
        429,
        &fake::openai::error_json(tpm, "tokens", Some("rate_limit_exceeded")),
        None,
    );
    assert_eq!((e.kind, e.retryable), (ErrorKind::RateLimited, true));
    // Even a rate-limit text that mentions a context length is not an overflow.
    let mixed = "Rate limit reached: maximum context length is 8192 tokens per min";
    assert!(!is_overflow(&[mixed]));
    assert!(!is_overflow(&[
        "This request would exceed the rate limit for your organization of 30,000 input tokens per minute."
    ]));
    assert!(!is_overflow(&["", "ok"]));
    assert!(!is_overflow(&[]));
}

#[test]
fn stated_limits_are_extracted() {
    let cases: &[(&str, Option<u64>)] = &[
        (
            "prompt is too long: 205030 tokens > 200000 maximum",
            Some(200_000),
        ),
        (
            "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease",
            Some(200_000),
        ),
        (
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 8243 tokens.",
            Some(8192),
        ),
        (
            "request (13392 tokens) exceeds the available context size (8192 tokens), try increasing it",
            Some(8192),
        ),
        (
            "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).",
            Some(1_048_575),
        ),
        (
            "Your input exceeds the context window of 128000 tokens.",
            Some(128_000),
        ),
        (
            "the model is loaded with context length of only 4096 tokens, which is not enough.",
            Some(4096),
        ),
        (
            "longer than the maximum model length of 32768. Make sure",
            Some(32_768),
        ),
        (
            "Input prompt (9000 tokens) is too long and exceeds limit of 8192",
            Some(8192),
        ),
        (
            "too large for model with 32768 maximum context length",
            Some(32_768),
        ),
        (
            "This endpoint's maximum context length is 131,072 tokens.",
            Some(131_072),
        ),
        ("Input is too long for requested model.", None),
        ("prompt is too long", None),
    ];
    for (text, want) in cases {
        assert_eq!(overflow_limit(text), *want, "{text}");
    }
}

#[test]
fn bodies_of_any_shape_give_short_clear_messages() {
    let e = classify(
        502,
        "<html><head><title>api.example.com | 502: Bad gateway</title></head><body>…</body></html>",
        None,
    );
    assert_eq!(
        e.message,
        "HTTP 502 from server (HTML body): api.example.com | 502: Bad gateway"
    );
    let e = classify(
        503,
        "<!DOCTYPE html><html><body><h1>down</h1></body></html>",
        None,
    );
    assert_eq!(
        (e.kind, e.message.as_str()),
        (ErrorKind::Overloaded, "HTTP 503 from server (HTML body)")
    );
    let e = classify(500, &"overflowing body ".repeat(100), None);
    assert!(e.message.starts_with("HTTP 500: overflowing body"));
    assert!(e.message.chars().count() <= 320, "{}", e.message.len());
    let e = classify(400, r#"{"detail":"model not found"}"#, None);
    assert_eq!(
        (e.kind, e.message.as_str()),
        (ErrorKind::InvalidRequest, "model not found")
    );
    let e = classify(
        400,
        r#"[{"error":{"code":400,"message":"The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).","status":"INVALID_ARGUMENT"}}]"#,
        None,
    );
    assert_eq!(e.kind, ErrorKind::ContextWindowExceeded);
    let e = classify(429, "", Some(Duration::from_secs(3)));
    assert_eq!(
        (e.kind, e.retry_after),
        (ErrorKind::RateLimited, Some(Duration::from_secs(3)))
    );
    let e = classify(500, r#"{"error":{"message":"Overloaded"}}"#, None);
    assert_eq!(e.kind, ErrorKind::Overloaded);
}

#[tokio::test]
async fn an_overflow_400_from_the_server_is_context_window_exceeded() {
    let server = FakeServer::start().await;
    server.push(fake::anthropic::error_status(
        400,
        "invalid_request_error",
        "prompt is too long: 205030 tokens > 200000 maximum",
    ));
    let e = run(&anthropic(&server), &request(vec![Message::user("big")]))
        .await
        .0
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::ContextWindowExceeded);
    assert_eq!(e.status, Some(400));
    assert!(!e.retryable);
    assert_eq!(overflow_limit(&e.message), Some(200_000));
}

#[tokio::test]
async fn a_json_or_html_200_is_not_mistaken_for_a_stream() {
    let server = FakeServer::start().await;
    server.push(Reply::Status {
        status: 200,
        headers: vec![("content-type".into(), "text/html".into())],
        body: "<html><head><title>Captive portal login</title></head></html>".into(),
    });
    server.push(Reply::status(
        200,
        fake::anthropic::error_json("overloaded_error", "Overloaded"),
    ));
    let p = anthropic(&server);
    let req = request(vec![Message::user("x")]);
    let e = run(&p, &req).await.0.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Other);
    assert!(
        e.message.contains("expected an event stream")
            && e.message.contains("Captive portal login"),
        "{}",
        e.message
    );
    let e = run(&p, &req).await.0.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Overloaded);
}

#[tokio::test]
async fn the_api_key_never_appears_in_errors() {
    let server = FakeServer::start().await;
    server.push(fake::anthropic::error_status(
        401,
        "authentication_error",
        &format!("invalid x-api-key: {KEY}"),
    ));
    server
        .script()
        .reply(Reply::status(500, format!("upstream said: key={KEY}")))
        .reply(Reply::html(502, &format!("Bad key {KEY}")));
    server.push(fake::anthropic::error_event(
        "api_error",
        &format!("echo {KEY}"),
    ));
    let p = anthropic(&server);
    let req = request(vec![Message::user("hi")]);
    let first = run(&p, &req).await.0.unwrap_err();
    assert_eq!(first.kind, ErrorKind::Auth);
    assert!(!first.retryable);
    for e in [
        first,
        run(&p, &req).await.0.unwrap_err(),
        run(&p, &req).await.0.unwrap_err(),
        run(&p, &req).await.0.unwrap_err(),
    ] {
        let shown = format!("{e} {e:?}");
        assert!(!shown.contains(KEY), "{shown}");
        assert_contains(&shown, "[redacted]");
    }
}

#[tokio::test]
async fn a_llama_cpp_overflow_teaches_the_window_from_its_n_ctx_field() {
    use flower_tui::engine::protocol::Event;

    let h = Harness::new().await;
    h.server.push(o::tool_calls(
        &[("c1", "list_dir", "{}")],
        U::new(9_000, 20),
    ));
    // llama.cpp's own wording and body: the numbers are fields beside the message.
    h.server.push(Reply::status(
        400,
        r#"{"error":{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}"#,
    ));
    h.script()
        .openai()
        .usage(U::new(3_000, 20))
        .text("continuing after the handoff");
    let mut p = h.params(1_000_000, 50_000);
    p.provider.client = h.openai();
    p.settings.model = "qwen3-coder-local".into();
    let mut r = start(p);
    let ev = r.completed_turn("a long task").await;
    assert_event!(
        ev,
        Event::WindowLearned { thresholds, model }
            if thresholds.window == 8192 && model == "qwen3-coder-local"
    );
    let learned = std::fs::read_to_string(h.data.join("windows.json")).unwrap();
    assert_contains(&learned, "\"qwen3-coder-local\": 8192");
    r.shutdown().await;
}
