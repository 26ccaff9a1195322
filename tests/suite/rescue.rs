//! Rescue on overflow in blocking mode: a main-thread request or the writing request
//! overflows, and the writing turn runs once more on a reduced copy of the history (old tool
//! results as stubs, then the oldest turns dropped) before the degraded document is the answer.

use flower_tui::engine::protocol::{DocumentSource, Event, HandoffPhase};
use serde_json::Value;

use crate::support::check::assert_event;
use crate::support::fake::{anthropic as a, is_writing};
use crate::support::harness::{Harness, start};

const DOC: &str = "## Doing\nReading the logs.\n## Decided\n- x\n## Dead ends\n(empty)\n## Next\nGrep the errors.\n## Scene\n- logs/\n";

fn rescuing(events: &[Event]) -> Option<(usize, usize)> {
    events.iter().find_map(|e| match e {
        Event::Handoff(HandoffPhase::Rescuing {
            stubbed, dropped, ..
        }) => Some((*stubbed, *dropped)),
        _ => None,
    })
}

fn first_text(body: &Value) -> String {
    body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Two big results in the history: `cat a.log`, `cat b.log`, 34,000 characters each.
fn logs(h: &Harness) {
    h.big_log("a.log");
    h.big_log("b.log");
}

#[tokio::test]
async fn a_main_thread_overflow_is_rescued_and_the_request_retried_in_the_successor() {
    let h = Harness::new().await;
    logs(&h);
    h.script()
        .at(12_000)
        .tool("bash", r#"{"command":"cat a.log"}"#)
        .at(24_000)
        .tool("bash", r#"{"command":"cat b.log"}"#)
        .overflows_then_rescued(DOC, "retried in generation 2");
    let mut r = start(h.params(40_000, 10_000));
    let ev = r.completed_turn("read the logs").await;
    // The estimate of 2 × 34,000 characters is ~17K tokens against the 41K the provider counted:
    // scaled, the older result becomes a stub, the newer one fits.
    assert_eq!(rescuing(&ev), Some((1, 0)));
    let reqs = h.server.requests();
    assert_eq!(reqs.len(), 5);
    let rescue = reqs[3].to_string();
    assert!(is_writing(&reqs[3]));
    assert!(rescue.contains("bash {\\\"command\\\":\\\"cat a.log\\\"} returned"));
    assert!(
        rescue.contains("error: disk full\\nerror: disk full"),
        "b.log stays whole"
    );
    assert!(first_text(&reqs[4]).contains("Grep the errors."));
    assert!(first_text(&reqs[4]).contains("shortened copy of the conversation"));
    let st = &r.manifest().steps[0];
    assert_eq!(st.handoffs[0].source, DocumentSource::Rescued);
    assert!(!st.handoffs[0].degraded);
    assert!(st.errors.is_empty(), "{:?}", st.errors);
    r.shutdown().await;
}

#[tokio::test]
async fn an_overflowing_writing_request_is_retried_once_on_a_reduced_copy() {
    let h = Harness::new().await;
    logs(&h);
    // The writing turn overflows, the rescue writes it, the successor goes on.
    h.script().writing_overflows().rescued(DOC, "generation 2");
    let mut r = start(h.params(40_000, 10_000));
    let ev = r.completed_turn("read a.log").await;
    assert_eq!(rescuing(&ev), Some((1, 0)));
    assert_event!(
        ev,
        Event::Handoff(HandoffPhase::Done {
            source: DocumentSource::Rescued,
            degraded: false,
            ..
        })
    );
    let reqs = h.server.requests();
    assert!(is_writing(&reqs[1]) && is_writing(&reqs[2]));
    assert_eq!(
        r.manifest().steps[0].handoffs[0].source,
        DocumentSource::Rescued
    );
    r.shutdown().await;
}

#[tokio::test]
async fn when_the_rescue_overflows_too_the_degraded_document_is_written() {
    let h = Harness::new().await;
    logs(&h);
    h.script()
        .writing_overflows()
        .reply(a::too_long(40_500, 40_000))
        .at(4_000)
        .text("generation 2 on a degraded briefing");
    let mut r = start(h.params(40_000, 10_000));
    r.completed_turn("read a.log").await;
    let st = &r.manifest().steps[0];
    assert_eq!(st.handoffs[0].source, DocumentSource::Degraded);
    assert!(st.handoffs[0].degraded);
    assert!(
        st.handoffs[0]
            .reason
            .to_string()
            .contains("the rescue failed"),
        "{}",
        st.handoffs[0].reason
    );
    assert_eq!(h.server.requests().len(), 4, "one rescue, no more");
    r.shutdown().await;
}

#[tokio::test]
async fn the_fake_enforcing_its_window_by_body_size_is_rescued_by_dropping_old_turns() {
    let h = Harness::new().await;
    // Ten turns each reading a 6,000-character file with 5,600 characters of arguments: stubs
    // alone are not enough once the window is small (arguments stay); the oldest turns go, the
    // first message and the latest exchange stay.
    for i in 0..10 {
        std::fs::write(h.workspace.join(format!("f{i}.txt")), "x".repeat(6_000)).unwrap();
    }
    for i in 0..10 {
        h.server.push(a::tool_use_counted(
            &format!("t{i}"),
            "bash",
            &format!(
                r#"{{"command":"cat f{i}.txt; echo {}"}}"#,
                "long argument ".repeat(400)
            ),
            10,
        ));
    }
    h.server.push(a::text_counted("finished", 10));
    let mut p = h.params(200_000, 50_000);
    p.provider.max_tokens = 1_024;
    let mut r = start(p);
    r.completed_turn("read every file").await;
    let full = h.server.recorded().last().unwrap().tokens;
    // A window below what the session holds now: the next request overflows.
    let window = full * 35 / 100;
    h.server.set_window(Some(window));
    h.server.push(a::text_counted(DOC, 100)); // the rescue, if it fits
    h.server.push(a::text_counted("generation 2", 10));
    let ev = r.completed_turn("and now summarise").await;
    let (stubbed, dropped) = rescuing(&ev).expect("a rescue");
    assert!(stubbed >= 1 && dropped >= 1, "{stubbed} {dropped}");
    let rec = h.server.recorded();
    let rescue = rec.iter().rev().find(|r| is_writing(&r.body)).unwrap();
    assert!(rescue.tokens <= window, "{} > {window}", rescue.tokens);
    let st = &r.manifest().steps[0];
    assert_eq!(
        st.handoffs[0].source,
        DocumentSource::Rescued,
        "dropped {dropped}"
    );
    assert_eq!(
        st.figures.window, window,
        "the window stated by the overflow is learned"
    );
    r.shutdown().await;
}
