//! Every way the background writing can fail: rescued, rescued on a reduced history, retried
//! after a stall, degraded with the tail still given.

use super::*;
use crate::support::check::{assert_event, assert_no_event};

#[tokio::test]
async fn a_failed_background_writing_is_rescued_while_the_main_thread_works() {
    let h = Harness::new().await;
    let g = Gate::new();
    h.script().at(31_000).tool("list_dir", "{}");
    h.script().at(31_200).held(&g).call("t2", "list_dir", "{}");
    h.script().at(5_000).text("successor: fine");
    // Every try of the writing request fails (5 tries), then the rescue writes it.
    for _ in 0..5 {
        h.server.push_writing(Reply::status(500, "boom"));
    }
    h.script().at(31_100).writing().text(DOC);
    let mut r = start(bg(&h));
    r.send_turn("work").await;
    let ev = until_phase(&mut r, |p| matches!(p, HandoffPhase::Frozen { .. })).await;
    let rescuing = phases(&ev).into_iter().find_map(|p| match p {
        HandoffPhase::Rescuing {
            reason, background, ..
        } => Some((reason, background)),
        _ => None,
    });
    let (reason, background) = rescuing.expect("a rescue");
    assert!(background && reason.contains("boom"), "{reason}");
    // The retries were said, as notices (a `retry` event is the main thread's).
    assert_event!(
        ev,
        Event::Notice { message }
            if message.contains("background writing request is retried")
    );
    assert_no_event!(ev, Event::Retry { .. });
    g.open();
    let ev = r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    assert_eq!(turn_end(&ev), "completed", "{ev:#?}");
    let st = &r.manifest().steps[0];
    assert_eq!(st.handoffs[0].source, DocumentSource::Rescued);
    assert!(!st.handoffs[0].degraded);
    assert_eq!(writing_requests(&h.server.recorded()).len(), 6);
    // The history fitted: nothing was elided, so the briefing does not say it was.
    let rec = h.server.recorded();
    let blocks = first_blocks(&rec.last().unwrap().body);
    assert!(!blocks[0].contains(RESCUED_NOTE));
    r.shutdown().await;
}

#[tokio::test]
async fn an_overflowing_background_writing_is_rescued_on_a_reduced_history() {
    let h = Harness::new().await;
    h.file("big.txt", "0123456789abcdef\n".repeat(2_500));
    h.script()
        .at(20_000)
        .tool("bash", r#"{"command":"cat big.txt"}"#)
        .at(31_000)
        .tool("list_dir", "{}")
        .at(31_300)
        .text("main thread goes on");
    h.server.push_writing(a::too_long(45_000, 40_000));
    let gw = Gate::new();
    h.script().at(20_000).writing().held(&gw).text(DOC);
    let mut r = start(bg(&h));
    let ev = r.completed_turn("read the big file").await;
    let (stubbed, dropped) = phases(&ev)
        .into_iter()
        .find_map(|p| match p {
            HandoffPhase::Rescuing {
                stubbed, dropped, ..
            } => Some((stubbed, dropped)),
            _ => None,
        })
        .expect("a rescue");
    assert_eq!((stubbed, dropped), (1, 0));
    gw.open();
    let ev = until_phase(&mut r, |p| matches!(p, HandoffPhase::Done { .. })).await;
    let rec = h.server.recorded();
    let writes = writing_requests(&rec);
    assert_eq!(writes.len(), 2);
    let rescue = writes[1].body.to_string();
    assert!(
        !rescue.contains("0123456789abcdef\\n0123456789abcdef"),
        "the result is elided"
    );
    assert!(
        rescue.contains(r#"[tool result elided to fit the context window: bash {\"command\":\"cat big.txt\"} returned 425"#),
        "{rescue}"
    );
    // The turn completed before the turnover: it happens at once, idle.
    assert!(matches!(
        phases(&ev).last(),
        Some(HandoffPhase::Done {
            source: DocumentSource::Rescued,
            ..
        })
    ));
    let st = &r.manifest().steps[0];
    assert_eq!(st.handoffs[0].source, DocumentSource::Rescued);
    // The successor's briefing waits for its first request: the next message.
    h.script().at(6_000).text("generation 2 here");
    r.turn("go on").await;
    let rec = h.server.recorded();
    let blocks = first_blocks(&rec.last().unwrap().body);
    assert!(blocks[0].contains(RESCUED_NOTE), "{}", blocks[0]);
    assert!(
        blocks
            .iter()
            .any(|b| b == "[assistant]\nmain thread goes on\n"),
        "{blocks:#?}"
    );
    r.shutdown().await;
}

#[tokio::test]
async fn a_stalled_background_writing_is_retried_by_the_idle_timeout() {
    let h = Harness::new().await;
    h.script()
        .at(31_000)
        .tool("list_dir", "{}")
        .at(31_100)
        .text("turn done");
    h.server.push_writing(Reply::Stall {
        prefix: crate::support::harness::text_prefix("## Doing\nRefac"),
    });
    h.script().at(31_100).writing().text(DOC);
    let mut p = bg(&h);
    // The main thread's requests answer at once; the stalled one is abandoned after 300 ms.
    p.provider.retry.idle_timeout = Duration::from_millis(300);
    let mut r = start(p);
    r.send_turn("work").await;
    let (ended, done) = (std::cell::Cell::new(false), std::cell::Cell::new(false));
    let ev = r
        .until(|e| {
            ended.set(ended.get() || matches!(e, Event::TurnEnd { .. }));
            done.set(done.get() || matches!(e, Event::Handoff(HandoffPhase::Done { .. })));
            ended.get() && done.get()
        })
        .await;
    assert!(
        ev.iter()
            .any(|e| matches!(e, Event::Notice { message } if message.contains("stalled"))),
        "{ev:#?}"
    );
    assert!(
        !phases(&ev)
            .iter()
            .any(|p| matches!(p, HandoffPhase::Rescuing { .. }))
    );
    assert_eq!(turn_end(&ev), "completed");
    assert_eq!(writing_requests(&h.server.recorded()).len(), 2);
    assert_eq!(
        r.manifest().steps[0].handoffs[0].source,
        DocumentSource::Written
    );
    r.shutdown().await;
}

#[tokio::test]
async fn a_failed_rescue_degrades_and_the_successor_still_gets_the_tail() {
    let h = Harness::new().await;
    let g = Gate::new();
    h.script().at(31_000).tool("list_dir", "{}");
    h.script().at(31_100).held(&g).call("t2", "list_dir", "{}");
    h.script()
        .at(5_000)
        .text("successor on a degraded briefing");
    for _ in 0..10 {
        h.server.push_writing(Reply::status(503, "down"));
    }
    let mut r = start(bg(&h));
    r.send_turn("the task").await;
    let ev = until_phase(&mut r, |p| matches!(p, HandoffPhase::Frozen { .. })).await;
    assert!(matches!(
        phases(&ev).last(),
        Some(HandoffPhase::Frozen { degraded: true, .. })
    ));
    g.open();
    let ev = r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    assert_eq!(turn_end(&ev), "completed");
    let rec = h.server.recorded();
    let blocks = first_blocks(&rec.last().unwrap().body);
    assert!(blocks[0].contains("[DEGRADED"), "{}", blocks[0]);
    assert!(blocks.contains(&TAIL_NOTE.to_string()));
    assert!(
        blocks
            .iter()
            .any(|b| b.contains("[tool call t2: list_dir {}]"))
    );
    let st = &r.manifest().steps[0];
    assert_eq!(st.handoffs[0].source, DocumentSource::Degraded);
    assert!(
        st.handoffs[0]
            .reason
            .to_string()
            .contains("the rescue on a reduced history failed too"),
        "{}",
        st.handoffs[0].reason
    );
    r.shutdown().await;
}
