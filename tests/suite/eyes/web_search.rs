//! Anthropic's server-side web search through the engine and the fake's SSE: offered as a server
//! tool only when configured; its `server_tool_use` and `web_search_tool_result` blocks stream,
//! are shown as a call and its result, persist in the transcript and go back unchanged in the
//! next request; a `pause_turn` reply is sent back to go on; each search is billed in `/cost`.

use std::sync::Arc;

use flower_tui::engine::protocol::{Event, ExitReason, Op};
use flower_tui::engine::provider::anthropic::{AnthropicConfig, AnthropicProvider};
use serde_json::{Value, json};

use crate::support::fake::{self, Reply, U, anthropic as a};
use crate::support::harness::{Harness, KEY, all_files, exit_reason, start};

fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

const ENCRYPTED: &str = "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y2M";

fn results() -> Value {
    json!([{"type": "web_search_result", "title": "htmd - Rust", "url": "https://docs.rs/htmd",
            "encrypted_content": ENCRYPTED, "page_age": null}])
}

/// A reply that searches, gets results, and (unless paused) answers with a cited sentence.
fn searching_reply(stop: &str, answer: Option<&str>) -> Reply {
    let mut s = String::new();
    s += &event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
            "role": "assistant", "content": [], "model": "claude-test", "stop_reason": null,
            "usage": {"input_tokens": 1000, "output_tokens": 1}}}),
    );
    s += &event(
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "server_tool_use",
            "id": "srvtoolu_01", "name": "web_search", "input": {}}}),
    );
    s += &event(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta",
            "partial_json": "{\"query\": \"htmd crate\"}"}}),
    );
    s += &event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    );
    s += &event(
        "content_block_start",
        json!({"type": "content_block_start", "index": 1, "content_block": {
            "type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": results()}}),
    );
    s += &event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 1}),
    );
    if let Some(text) = answer {
        s += &event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}}),
        );
        s += &event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "citations_delta",
                "citation": {"type": "web_search_result_location", "url": "https://docs.rs/htmd",
                "title": "htmd - Rust", "encrypted_index": "Eo8BCioIAhgB", "cited_text": "htmd"}}}),
        );
        s += &event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": text}}),
        );
        s += &event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 2}),
        );
    }
    s += &event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop},
            "usage": {"output_tokens": 40, "server_tool_use": {"web_search_requests": 1}}}),
    );
    s += &event("message_stop", json!({"type": "message_stop"}));
    Reply::sse(s)
}

fn searching_params(h: &Harness) -> flower_tui::engine::session::EngineParams {
    let mut p = h.params(200_000, 20_000);
    p.provider.client = Arc::new(AnthropicProvider::new(AnthropicConfig {
        base_url: h.server.base_url(),
        api_key: KEY.into(),
        http: Some(fake::client()),
        web_search: true,
        ..Default::default()
    }));
    p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_blocks_stream_persist_replay_and_are_billed() {
    let h = Harness::new().await;
    h.server.push(searching_reply(
        "end_turn",
        Some("htmd converts HTML to Markdown."),
    ));
    h.server.push(a::text("You're welcome.", U::new(1500, 5)));
    let mut r = start(searching_params(&h));
    let events = r.turn("which crate converts HTML to Markdown?").await;
    assert_eq!(
        exit_reason(&events),
        Some(ExitReason::Completed),
        "{events:#?}"
    );
    let first = &h.server.requests()[0];
    assert_eq!(
        first["tools"][0],
        json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 5})
    );
    // Shown as a call and what it found.
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::ToolCall { name, summary, .. }
        if name == "web_search" && summary == "web_search: htmd crate"))
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::ToolResult { name, output, .. }
        if name == "web_search" && output == "htmd - Rust <https://docs.rs/htmd>"))
    );
    // Persisted with the encrypted results.
    let log: String = all_files(&r.run_root.join("sessions"))
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(
        log.contains("web_search_tool_result") && log.contains(ENCRYPTED),
        "{log}"
    );
    // Replayed unchanged in the next request.
    r.turn("thanks").await;
    let second = &h.server.requests()[1];
    let reply = &second["messages"][1];
    assert_eq!(reply["role"], "assistant");
    let blocks = reply["content"].as_array().unwrap();
    assert_eq!(
        blocks[0],
        json!({"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search",
               "input": {"query": "htmd crate"}})
    );
    assert_eq!(blocks[1]["type"], "web_search_tool_result");
    assert_eq!(blocks[1]["tool_use_id"], "srvtoolu_01");
    assert_eq!(blocks[1]["content"], results());
    assert_eq!(blocks[2]["text"], "htmd converts HTML to Markdown.");
    // One search at $10 per 1,000 (the test model has no token price).
    r.send(Op::Cost).await;
    let got = r.until(|e| matches!(e, Event::Cost { .. })).await;
    let Some(Event::Cost {
        web_searches,
        total_usd,
        ..
    }) = got.last()
    else {
        unreachable!()
    };
    assert_eq!(*web_searches, 1);
    assert!((total_usd - 0.01).abs() < 1e-9, "{total_usd}");
    assert_eq!(r.manifest().steps[0].figures.web_searches, 1);
    r.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_reply_is_sent_back_to_go_on() {
    let h = Harness::new().await;
    h.server.push(searching_reply("pause_turn", None));
    h.server
        .push(a::text("Done searching: htmd.", U::new(1500, 5)));
    let mut r = start(searching_params(&h));
    let events = r.turn("search for me").await;
    assert_eq!(
        exit_reason(&events),
        Some(ExitReason::Completed),
        "{events:#?}"
    );
    let reqs = h.server.requests();
    assert_eq!(reqs.len(), 2);
    let msgs = reqs[1]["messages"].as_array().unwrap();
    let last = msgs.last().unwrap();
    assert_eq!(
        last["role"], "assistant",
        "the paused reply goes back as it is"
    );
    assert_eq!(last["content"][1]["type"], "web_search_tool_result");
    r.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_setting_no_search_is_offered() {
    let h = Harness::new().await;
    h.server.push(a::text("hi", U::new(100, 5)));
    let mut r = start(h.params(200_000, 20_000));
    r.turn("hello").await;
    let tools = h.server.requests()[0]["tools"].to_string();
    assert!(!tools.contains("web_search_20250305"), "{tools}");
    assert!(tools.contains("\"web_fetch\""), "{tools}");
    r.shutdown().await;
}
