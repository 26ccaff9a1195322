//! Retries with backoff against the fake server.

use std::time::{Duration, Instant};

use flower_tui::engine::provider::anthropic::{AnthropicConfig, AnthropicProvider};
use flower_tui::engine::provider::retry::{
    RetryNotice, RetryPolicy, StreamNotice, stream_with_retry,
};
use flower_tui::engine::provider::{ErrorKind, Provider, ProviderError};
use flower_tui::engine::types::{Delta, Message, ModelRequest, ModelResponse};

use super::{KEY, anthropic, request, text_of};
use crate::support::check::assert_starts_with;
use crate::support::fake::{self, FakeServer, Reply, U};

fn quick(max_tries: u32) -> RetryPolicy {
    RetryPolicy {
        max_tries,
        base_delay: Duration::from_millis(2),
        max_delay: Duration::from_millis(20),
        ..RetryPolicy::default()
    }
}

async fn retrying(
    p: &dyn Provider,
    req: &ModelRequest,
    policy: RetryPolicy,
) -> (
    Result<ModelResponse, ProviderError>,
    Vec<Delta>,
    Vec<RetryNotice>,
) {
    let mut deltas = Vec::new();
    let mut notices = Vec::new();
    let mut sink = |d: Delta| {
        if d != Delta::Alive {
            deltas.push(d)
        }
    };
    let mut on_notice = |n: StreamNotice| {
        if let StreamNotice::Retry(r) = n {
            notices.push(r)
        }
    };
    let r = tokio::time::timeout(
        Duration::from_secs(20),
        stream_with_retry(p, req, &mut sink, &policy, &mut on_notice),
    )
    .await
    .expect("retrying took more than 20 s");
    (r, deltas, notices)
}

#[tokio::test]
async fn overloaded_twice_then_success() {
    let server = FakeServer::start().await;
    server.push_all([
        fake::anthropic::overloaded(),
        fake::anthropic::overloaded(),
        fake::anthropic::text("third time lucky", U::new(10, 3)),
    ]);
    let p = anthropic(&server);
    let (r, deltas, notices) = retrying(&p, &request(vec![Message::user("hi")]), quick(5)).await;
    assert_eq!(r.unwrap().text(), "third time lucky");
    assert_eq!(text_of(&deltas), "third time lucky");
    assert_eq!(server.requests().len(), 3);
    assert_eq!(notices.len(), 2);
    for (n, attempt) in notices.iter().zip([2, 3]) {
        assert_eq!((n.attempt, n.max), (attempt, 5));
        assert_eq!(n.reason, "overloaded: Overloaded (HTTP 529)");
        assert!(n.delay <= Duration::from_millis(20), "{:?}", n.delay);
    }
}

#[tokio::test]
async fn retry_after_is_honoured() {
    let server = FakeServer::start().await;
    server.push(
        fake::anthropic::error_status(
            429,
            "rate_limit_error",
            "Number of requests has exceeded your rate limit",
        )
        .with_header("retry-after", "1"),
    );
    server.push(
        fake::anthropic::error_status(429, "rate_limit_error", "again")
            .with_header("retry-after-ms", "150"),
    );
    server.push(fake::anthropic::text("ok", U::new(1, 1)));
    let p = anthropic(&server);
    let started = Instant::now();
    let (r, _, notices) = retrying(&p, &request(vec![Message::user("hi")]), quick(5)).await;
    r.unwrap();
    let delays: Vec<Duration> = notices.iter().map(|n| n.delay).collect();
    assert_eq!(
        delays,
        vec![Duration::from_secs(1), Duration::from_millis(150)]
    );
    assert!(
        started.elapsed() >= Duration::from_millis(1150),
        "{:?}",
        started.elapsed()
    );
    assert!(
        notices[0]
            .reason
            .starts_with("rate_limited: Number of requests"),
        "{}",
        notices[0].reason
    );
}

#[tokio::test]
async fn errors_that_a_retry_cannot_fix_are_returned_at_once() {
    let server = FakeServer::start().await;
    server.push(fake::anthropic::error_status(
        400,
        "invalid_request_error",
        "messages: text content blocks must be non-empty",
    ));
    server.push(fake::anthropic::error_status(
        400,
        "invalid_request_error",
        "prompt is too long: 300000 tokens > 200000 maximum",
    ));
    server.push(fake::anthropic::error_status(
        401,
        "authentication_error",
        "invalid x-api-key",
    ));
    let p = anthropic(&server);
    let req = request(vec![Message::user("hi")]);
    for kind in [
        ErrorKind::InvalidRequest,
        ErrorKind::ContextWindowExceeded,
        ErrorKind::Auth,
    ] {
        let (r, _, notices) = retrying(&p, &req, quick(5)).await;
        assert_eq!(r.unwrap_err().kind, kind);
        assert!(notices.is_empty());
    }
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn an_attempt_that_already_showed_text_is_replayed_and_says_so() {
    let server = FakeServer::start().await;
    let mut chunks = fake::anthropic::Stream::new(U::new(1, 1))
        .text("half an answer")
        .head_events();
    chunks.truncate(3);
    chunks.push(b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n".to_vec());
    server.push(Reply::Sse {
        chunks,
        delay: None,
    });
    server.push(fake::anthropic::text("the whole answer", U::new(1, 1)));
    let p = anthropic(&server);
    let (r, deltas, notices) = retrying(&p, &request(vec![Message::user("hi")]), quick(5)).await;
    assert_eq!(r.unwrap().text(), "the whole answer");
    // The sink saw the broken try, then the replay; the notice between them voids the first.
    assert_eq!(text_of(&deltas), "half an the whole answer");
    assert_eq!(notices.len(), 1);
    assert!(notices[0].discarded);
    assert_eq!(notices[0].reason, "overloaded: Overloaded");
    assert_eq!(server.pending(), 0);
}

#[tokio::test]
async fn a_cut_before_any_text_is_retried() {
    let server = FakeServer::start().await;
    let start = fake::anthropic::Stream::new(U::new(1, 1))
        .head_events()
        .remove(0);
    server.push(Reply::Cut {
        bytes: start[..start.len() - 5].to_vec(),
    });
    server.push(fake::anthropic::text("recovered", U::new(1, 1)));
    let p = anthropic(&server);
    let (r, _, notices) = retrying(&p, &request(vec![Message::user("hi")]), quick(5)).await;
    assert_eq!(r.unwrap().text(), "recovered");
    assert_eq!(notices.len(), 1);
    assert_starts_with(&notices[0].reason, "stream broken: interrupted:");
    assert!(!notices[0].discarded);
}

#[tokio::test]
async fn tries_are_capped() {
    let server = FakeServer::start().await;
    server.push_all((0..5).map(|_| fake::anthropic::overloaded()));
    let p = anthropic(&server);
    let (r, _, notices) = retrying(&p, &request(vec![Message::user("hi")]), quick(3)).await;
    assert_eq!(r.unwrap_err().kind, ErrorKind::Overloaded);
    assert_eq!(
        notices.iter().map(|n| n.attempt).collect::<Vec<_>>(),
        vec![2, 3]
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn connection_refused_is_a_retryable_network_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let p = AnthropicProvider::new(AnthropicConfig {
        base_url: format!("http://{addr}"),
        api_key: KEY.into(),
        http: Some(fake::client()),
        ..Default::default()
    });
    let (r, _, notices) = retrying(&p, &request(vec![Message::user("hi")]), quick(2)).await;
    let e = r.unwrap_err();
    assert_eq!((e.kind, e.retryable), (ErrorKind::Network, true));
    assert_starts_with(&e.message, "request failed: could not connect");
    assert!(!e.message.contains(KEY));
    assert_eq!(notices.len(), 1);
}
