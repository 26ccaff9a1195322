//! Broken and stalled streams one at a time: the idle timeout before the headers and
//! between events, the silence notice, Esc at every point, errors that name the bad event, and a
//! stalled handoff writing turn in the real binary.

use std::time::{Duration, Instant};

use flower_tui::engine::protocol::{Event, Op, StreamState};
use flower_tui::engine::provider::ErrorKind;
use flower_tui::engine::provider::anthropic::{AnthropicConfig, AnthropicProvider};
use flower_tui::engine::provider::openai::{OpenAiConfig, OpenAiProvider};
use flower_tui::engine::types::Message;

use super::chaos::{Api, params, retries, shown, text_reply, transcript};
use super::{KEY, request, run};
use crate::support::check::{assert_contains, assert_event, assert_exit, of, picked};
use crate::support::fake::{self, FakeServer, Reply, U, anthropic as a};
use crate::support::harness::{Harness, start, text_prefix, turn_end};
use crate::support::headless::{Scenario, bin, flags};

const IDLE: Duration = Duration::from_millis(500);

/// Request `i + 1` came about `IDLE` or more after request `i`, and long before the stalled reply
/// (a 60 s pause) would have ended: the try was abandoned by the idle timeout, not waited out. The
/// server stamps a request once it has read it, a little after the client's idle clock started,
/// so the lower bound allows a tenth of `IDLE`; the upper bound is loose on purpose, so a loaded
/// machine does not fail it.
fn abandoned_in_time(h: &Harness, i: usize) {
    let rec = h.server.recorded();
    let gap = rec[i + 1].arrived - rec[i].arrived;
    assert!(
        gap >= IDLE * 9 / 10 && gap < Duration::from_secs(30),
        "the stalled try was abandoned after {gap:?}"
    );
}

#[tokio::test]
async fn a_stall_before_the_headers_is_abandoned_and_retried() {
    for api in [Api::Anthropic, Api::OpenAi] {
        let h = Harness::new().await;
        h.server.push(Reply::Pause {
            head: None,
            pause: Duration::from_secs(60),
        });
        h.server
            .push(text_reply(api, "after the silence", U::new(900, 9)));
        let mut r = start(params(&h, api, IDLE));
        let ev = r.completed_turn("hi").await;
        assert_eq!(shown(&ev), "after the silence");
        assert_eq!(
            retries(&ev),
            ["network: no response from the provider within 0.5s (stream_idle_timeout)"]
        );
        abandoned_in_time(&h, 0);
        assert!(h.server.wait_idle(Duration::from_secs(3)).await);
        r.shutdown().await;
    }
}

#[tokio::test]
async fn a_stall_mid_stream_is_abandoned_its_text_replaced_and_retried() {
    let h = Harness::new().await;
    h.server.push(Reply::Stall {
        prefix: text_prefix("partial words"),
    });
    h.script().usage(U::new(900, 9)).text("the full answer");
    let mut r = start(params(&h, Api::Anthropic, IDLE));
    let ev = r.completed_turn("hi").await;
    assert_event!(ev, Event::Stream(StreamState::Discarded { chars: 13 }));
    assert_eq!(shown(&ev), "the full answer");
    assert_eq!(
        retries(&ev),
        ["stream broken: stalled: no data from the provider for 0.5s (stream_idle_timeout)"]
    );
    abandoned_in_time(&h, 0);
    assert_eq!(
        transcript(&r),
        [Message::user("hi"), Message::assistant("the full answer")]
    );
    r.shutdown().await;
}

#[tokio::test]
async fn when_every_try_breaks_the_last_partial_is_kept_marked_and_the_error_is_clear() {
    let h = Harness::new().await;
    for n in 1..=5 {
        h.server.push(Reply::Stall {
            prefix: text_prefix(&format!("try {n} says")),
        });
    }
    let mut p = params(&h, Api::Anthropic, Duration::from_millis(100));
    p.provider.retry.max_tries = 5;
    let mut r = start(p);
    let ev = r.turn("hi").await;
    assert_eq!(turn_end(&ev), "error:network", "{ev:#?}");
    assert_eq!(retries(&ev).len(), 4);
    // Only the last try's text is left on screen and in the history, marked as cut off.
    assert_eq!(shown(&ev), "try 5 says");
    let err = ev.iter().find_map(|e| match e {
        Event::Error { message, .. } => Some(message.clone()),
        _ => None,
    });
    assert_eq!(
        err.as_deref(),
        Some("stream stalled: no data from the provider for 0.1s (stream_idle_timeout)")
    );
    let t = transcript(&r);
    assert_eq!(t.len(), 2);
    assert_eq!(
        t[1].text(),
        "try 5 says\n\n[the response was cut off: network]"
    );
    r.shutdown().await;
}

#[tokio::test]
async fn a_long_silence_is_announced_and_its_end_too() {
    let h = Harness::new().await;
    let bytes = a::Stream::new(U::new(900, 9)).text("slow but sure").bytes();
    let (head, tail) = bytes.split_at(bytes.len() / 2);
    h.server.push(Reply::Sse {
        chunks: vec![head.to_vec(), tail.to_vec()],
        delay: Some(Duration::from_millis(400)),
    });
    let mut p = params(&h, Api::Anthropic, Duration::from_secs(5));
    p.provider.retry.silence_notice = Duration::from_millis(150);
    let mut r = start(p);
    let ev = r.completed_turn("hi").await;
    let states: Vec<&StreamState> = picked!(ev, Event::Stream(s) => s);
    assert_eq!(states.len(), 2, "{states:?}");
    assert!(
        matches!(states[0], StreamState::Silent { silent_ms } if (150..400).contains(silent_ms))
    );
    assert_eq!(states[1], &StreamState::Resumed);
    assert!(retries(&ev).is_empty());
    r.shutdown().await;
}

/// Wait until the fake has received `n` requests.
async fn requests_arrive(h: &Harness, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while h.server.requests().len() < n {
        assert!(Instant::now() < deadline, "request {n} never came");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn esc_works_before_the_headers_and_during_a_backoff() {
    let h = Harness::new().await;
    h.server.push(Reply::Pause {
        head: None,
        pause: Duration::from_secs(60),
    });
    h.server.push(
        a::error_status(429, "rate_limit_error", "slow down").with_header("retry-after", "30"),
    );
    let mut p = params(&h, Api::Anthropic, Duration::from_secs(60));
    p.provider.retry.silence_notice = Duration::from_millis(100);
    let mut r = start(p);

    // Silent before the headers, announced as such: Esc ends it and closes the silence.
    let turn = r.send_turn("one").await;
    r.until(|e| matches!(e, Event::Stream(StreamState::Silent { .. })))
        .await;
    let t = Instant::now();
    r.send(Op::Abort { turn }).await;
    let ev = r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    assert_eq!(turn_end(&ev), "interrupted");
    assert!(ev.contains(&Event::Stream(StreamState::Resumed)));
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert!(h.server.wait_idle(Duration::from_secs(3)).await);

    // Waiting 30 s for `retry-after`: Esc ends the wait.
    let turn = r.send_turn("two").await;
    r.until(|e| matches!(e, Event::Retry { .. })).await;
    let t = Instant::now();
    r.send(Op::Abort { turn }).await;
    let ev = r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    assert_eq!(turn_end(&ev), "interrupted");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    requests_arrive(&h, 2).await;
    assert_eq!(h.server.requests().len(), 2, "no try after the abort");
    r.shutdown().await;
}

#[tokio::test]
async fn an_unparseable_event_is_named_or_said_to_have_no_name() {
    let server = FakeServer::start().await;
    let start_event = a::Stream::new(U::new(1, 1)).head_events().remove(0);
    let mut named = start_event.clone();
    named.extend_from_slice(
        b"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\n\n",
    );
    let mut unnamed = start_event;
    unnamed.extend_from_slice(b"data: {\"type\":\"content_block_delta\",\"ind\n\n");
    server
        .script()
        .reply(Reply::sse(named))
        .reply(Reply::sse(unnamed));
    server.push(Reply::sse(
        "data: {\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"h\n\n",
    ));
    server
        .script()
        .reply(Reply::sse("event: error\ndata: {\"error\": {\"message\n\n"));
    let anthropic = AnthropicProvider::new(AnthropicConfig {
        base_url: server.base_url(),
        api_key: KEY.into(),
        http: Some(fake::client()),
        ..Default::default()
    });
    let openai = OpenAiProvider::new(OpenAiConfig {
        base_url: server.base_url(),
        api_key: KEY.into(),
        http: Some(fake::client()),
        ..Default::default()
    });
    let req = request(vec![Message::user("hi")]);
    let mut messages = Vec::new();
    for p in [
        &anthropic as &dyn flower_tui::engine::provider::Provider,
        &anthropic,
        &openai,
        &openai,
    ] {
        let e = run(p, &req).await.0.unwrap_err();
        assert_eq!(
            (e.kind, e.retryable, e.stream_broken),
            (ErrorKind::Network, true, true)
        );
        messages.push(e.message.split(": ").next().unwrap_or_default().to_owned());
    }
    assert_eq!(
        messages,
        [
            "malformed JSON in `content_block_start` event",
            "malformed JSON in an event with no name",
            "malformed JSON in an event with no name (a chat.completion.chunk)",
            "malformed JSON in `error` event",
        ]
    );
}

#[tokio::test]
async fn a_stalled_writing_turn_ends_in_a_degraded_handoff_and_the_run_exits_0() {
    let s = Scenario::new().await;
    s.config("retry_base_ms = 5\n");
    // The first answer fills the context past the handoff line; every try of the writing turn
    // stalls after its first words; the successor finishes the task.
    s.script().usage(U::new(16_000, 20)).tool("list_dir", "{}");
    for _ in 0..5 {
        s.script().reply(Reply::Stall {
            prefix: text_prefix("## Doing\nListing"),
        });
    }
    s.script()
        .usage(U::new(3_000, 20))
        .text("finished after the handoff");
    // The main thread stops for the writing turn (a stalled writing request); the background
    // version is in tests/suite/background.rs.
    let blocking = flags("--handoff-mode blocking --window 20000 --headroom 5000");
    let task = [
        "-p",
        "list the files",
        "--yes",
        "--stream-idle-timeout",
        "1",
    ];
    let started = Instant::now();
    let out = s.headless(&[&task[..], &blocking].concat()).await.success();
    let elapsed = started.elapsed();
    // Five tries of at most 1 s + 1 s each, and no hang.
    assert!(elapsed < Duration::from_secs(15), "{elapsed:?}");
    let ev = out.events();
    let retried: Vec<&str> = of(&ev, "retry")
        .into_iter()
        .filter_map(|e| e["reason"].as_str())
        .collect();
    assert_eq!(retried.len(), 4, "{ev:#?}");
    assert!(
        retried.iter().all(|r| *r
            == "stream broken: stalled: no data from the provider for 1s (stream_idle_timeout)")
    );
    assert!(
        ev.iter()
            .any(|e| e["type"] == "handoff" && e["phase"] == "done" && e["degraded"] == true),
        "{ev:#?}"
    );
    let last = ev.last().unwrap();
    assert_eq!(last["type"], "result");
    assert_eq!(last["text"], "finished after the handoff");
    assert_eq!(s.server.requests().len(), 7);
}

#[test]
fn a_bad_idle_timeout_is_a_one_line_error_naming_it() {
    let home = tempfile::tempdir().unwrap();
    let out = bin(home.path())
        .args(["-p", "x", "--demo", "--stream-idle-timeout", "0"])
        .output()
        .unwrap();
    assert_exit(&out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_contains(&err, "--stream-idle-timeout");
    let cfg = home.path().join("config/flower");
    std::fs::create_dir_all(&cfg).unwrap();
    for (text, shows) in [
        ("stream_idle_timeout = 0\n", "stream_idle_timeout"),
        ("stream_idle_timeout = \"soon\"\n", "stream_idle_timeout"),
    ] {
        std::fs::write(cfg.join("config.toml"), text).unwrap();
        let out = bin(home.path())
            .args(["-p", "x", "--demo"])
            .output()
            .unwrap();
        assert_exit(&out, 2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert_contains(&err, shows);
    }
}

/// A broken stream is replayed for every kind of request, not only the main thread's.
mod every_request {
    use flower_tui::engine::protocol::{Event, HandoffPhase};

    use super::super::chaos::{shown, transcript};
    use crate::support::check::{assert_contains, assert_event, assert_lacks};
    use crate::support::fake::{Reply, U};
    use crate::support::harness::{Harness, start, text_prefix, turn_end};

    fn cut(text: &str) -> Reply {
        Reply::Cut {
            bytes: text_prefix(text),
        }
    }

    #[tokio::test]
    async fn the_handoff_writing_turn() {
        let h = Harness::new().await;
        h.script().usage(U::new(16_000, 20)).tool("list_dir", "{}");
        h.server.push(cut("## Doing\nA draft that breaks"));
        h.script()
            .usage(U::new(16_500, 40))
            .text("## Doing\nListing the files.\n\n## Next\nSummarise them.\n")
            .usage(U::new(3_000, 20))
            .text("finished in the successor");
        let mut r = start(h.params(20_000, 5_000));
        let ev = r.completed_turn("list the files").await;
        let done = ev.iter().find_map(|e| match e {
            Event::Handoff(HandoffPhase::Done { degraded, path, .. }) => {
                Some((*degraded, path.clone()))
            }
            _ => None,
        });
        let Some((false, Some(path))) = done else {
            panic!("no real handoff: {ev:#?}");
        };
        let doc = std::fs::read_to_string(path).unwrap();
        assert_contains(&doc, "Listing the files.");
        assert_lacks(&doc, "A draft that breaks");
        r.shutdown().await;
    }

    #[tokio::test]
    async fn the_compaction_summary() {
        let h = Harness::new().await;
        let mut r = start(h.compacting(100_000, 50_000));
        h.script()
            .usage(U::new(10_000, 20))
            .listings(4, 10_000, 20_000)
            .at(79_000)
            .text("first done");
        r.turn("first task").await;
        h.server.push(cut("A broken summary draft"));
        h.script()
            .usage(U::new(2_000, 20))
            .text("Summary of the earlier work: listed the directory four times.")
            .usage(U::new(20_000, 20))
            .text("second done");
        let ev = r.completed_turn(&"second task ".repeat(400)).await;
        assert_event!(ev, Event::Compaction { .. });
        let reqs = h.server.requests();
        let history = reqs.last().unwrap()["messages"].to_string();
        assert_contains(&history, "Summary of the earlier work");
        assert_lacks(&history, "A broken summary draft");
        r.shutdown().await;
    }

    #[tokio::test]
    async fn the_iteration_budgets_final_request() {
        let h = Harness::new().await;
        h.script().usage(U::new(1_000, 20)).tool("list_dir", "{}");
        h.server.push(cut("An unfinished summ"));
        h.script()
            .usage(U::new(1_200, 20))
            .text("Summary: one listing.");
        let mut p = h.params(200_000, 50_000);
        p.tools.max_iterations = 1;
        let mut r = start(p);
        let ev = r.turn("loop").await;
        assert_eq!(turn_end(&ev), "max_iterations_reached(1/1)", "{ev:#?}");
        assert_eq!(shown(&ev), "Summary: one listing.");
        let t = transcript(&r);
        assert_eq!(
            t.last().map(|m| m.text()).as_deref(),
            Some("Summary: one listing.")
        );
        assert!(!t.iter().any(|m| m.text().contains("unfinished")));
        let reqs = h.server.requests();
        assert_eq!(reqs.len(), 3);
        assert_eq!(reqs[2]["tool_choice"]["type"], "none");
        r.shutdown().await;
    }
}
