//! The queue pair's correlation ids: turns, stale and queued aborts, reviews named by handoff.

use std::time::Duration;

use flower_tui::engine::protocol::{Event, ExitReason, Op, Origin, TurnId, TurnKind};

use crate::support::check::{assert_event, picked};
use crate::support::fake::{Reply, U, anthropic as a};
use crate::support::harness::{Harness, start, text_of};

/// A reply whose events arrive one every 30 ms: long enough to send ops while it streams.
fn slow_text(text: &str) -> Reply {
    Reply::Sse {
        chunks: a::Stream::new(U::new(1_000, 20)).text(text).events(),
        delay: Some(Duration::from_millis(30)),
    }
}

#[tokio::test]
async fn a_stale_abort_leaves_the_next_turn_alone_and_a_queued_turn_can_be_dropped() {
    let h = Harness::new().await;
    h.script().usage(U::new(900, 20)).text("one");
    let answer = "the second answer arrives in several pieces, slowly";
    h.server.push(slow_text(answer));
    let mut r = start(h.params(200_000, 50_000));
    let first = r.send_turn("first").await;
    let ev = r.until_end(first).await;
    assert!(matches!(ev.first(), Some(Event::SessionStarted { .. }),));
    assert_event!(
        ev,
        Event::TurnStarted { turn, kind: TurnKind::Message, origin: Origin::User }
            if *turn == first
    );
    assert_event!(
        ev,
        Event::UserMessage { turn: Some(t), origin: Origin::User, text }
            if *t == first && text == "first"
    );

    // Turn 2 streams; Esc meant for turn 1 arrives late, and a third message is queued behind it.
    let second = r.send_turn("second").await;
    r.until(|e| matches!(e, Event::TextDelta { .. })).await;
    r.send(Op::Abort { turn: first }).await;
    let third = r.send_turn("third").await;
    r.send(Op::Abort { turn: third }).await;
    let ev = r.until_end(second).await;
    let ends: Vec<(u64, ExitReason)> = picked!(
        ev,
        Event::TurnEnd { turn, reason, .. } => (turn.0, *reason)
    );
    assert_eq!(
        ends,
        [
            (third.0, ExitReason::Interrupted),
            (second.0, ExitReason::Completed)
        ],
        "the queued turn is dropped at once; the running one is unharmed"
    );
    assert!(
        ev.iter().any(
            |e| matches!(e, Event::AssistantDone { text, interrupted: false, .. } if text == answer)
        ),
        "{ev:#?}"
    );
    assert!(answer.ends_with(&text_of(&ev)), "the rest streamed");
    assert!(
        !ev.iter()
            .any(|e| matches!(e, Event::TurnStarted { turn, .. } if *turn == third)),
        "a dropped turn never starts"
    );
    assert_eq!(h.server.requests().len(), 2, "turn 3 sent no request");
    let st = &r.manifest().steps[0];
    assert_eq!(st.figures.num_turns, 2);
    r.shutdown().await;
}

#[tokio::test]
async fn a_review_ends_only_with_its_own_handoff_id() {
    const DOC: &str = "## Doing\nParsing.\n## Next\nRun the parser tests.\n";
    let h = Harness::new().await;
    h.script()
        .usage(U::new(31_000, 20))
        .tool("list_dir", "{}")
        .at(31_500)
        .text(DOC)
        .at(5_000)
        .text("ok");
    let mut r = start(h.reviewed(40_000, 10_000));
    let turn = r.send_turn("work").await;
    let frozen = r.frozen().await;
    assert!(frozen.awaits_review, "{frozen:#?}");
    let handoff = frozen.handoff;
    // A stale ReviewDone (an earlier handoff's) and an abort do not end this review.
    r.send(Op::ReviewDone {
        handoff: flower_tui::engine::protocol::HandoffId(handoff.0 + 7),
    })
    .await;
    r.send(Op::Abort { turn }).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(h.server.requests().len(), 2, "the successor waits");
    r.send(Op::ReviewDone { handoff }).await;
    let ev = r.until_end(turn).await;
    let briefing = ev.iter().find_map(|e| match e {
        Event::UserMessage {
            turn: t,
            origin: Origin::Engine,
            text,
        } => Some((*t, text.clone())),
        _ => None,
    });
    let (t, text) = briefing.expect("the briefing is echoed");
    assert_eq!(
        t,
        Some(turn),
        "the briefing belongs to the turn it continues"
    );
    assert!(text.contains("Run the parser tests."));
    assert!(matches!(
        ev.last(),
        Some(Event::TurnEnd {
            reason: ExitReason::Completed,
            ..
        })
    ));
    r.shutdown().await;
}

/// The turn a reply's event names, with the event's wire name; None for the other events.
fn turn_of(e: &Event) -> Option<(&'static str, Option<TurnId>)> {
    match e {
        Event::TextDelta { turn, .. } => Some(("text_delta", *turn)),
        Event::ToolCall { turn, .. } => Some(("tool_call", *turn)),
        Event::ToolResult { turn, .. } => Some(("tool_result", *turn)),
        Event::AssistantDone { turn, .. } => Some(("assistant_done", *turn)),
        Event::Usage { turn, .. } => Some(("usage", *turn)),
        _ => None,
    }
}

/// Every reply event between `turn`'s start and end names `turn`; all five kinds are there.
fn assert_all_name(ev: &[Event], turn: TurnId) {
    let start = ev
        .iter()
        .position(|e| matches!(e, Event::TurnStarted { turn: t, .. } if *t == turn));
    let Some(start) = start else {
        panic!("{turn} never started: {ev:#?}")
    };
    let mut kinds: Vec<&str> = Vec::new();
    for e in &ev[start..] {
        if let Some((kind, named)) = turn_of(e) {
            assert_eq!(named, Some(turn), "{kind} of {turn}: {e:#?}");
            kinds.push(kind);
        }
    }
    for kind in [
        "text_delta",
        "tool_call",
        "tool_result",
        "assistant_done",
        "usage",
    ] {
        assert!(kinds.contains(&kind), "{turn} sent no {kind}: {ev:#?}");
    }
}

#[tokio::test]
async fn every_reply_event_names_its_turn() {
    let h = Harness::new().await;
    for (id, text) in [("t1", "Looking."), ("t2", "Again.")] {
        h.server.push(a::text_then_tools(
            text,
            &[(id, "list_dir", "{}")],
            U::new(900, 20),
        ));
        h.script().usage(U::new(1_000, 20)).text("Done.");
    }
    let mut r = start(h.params(200_000, 50_000));
    let first = r.send_turn("first").await;
    let ev = r.until_end(first).await;
    assert_all_name(&ev, first);
    let second = r.send_turn("second").await;
    let ev = r.until_end(second).await;
    assert_all_name(&ev, second);
    assert_ne!(first, second);
    r.shutdown().await;
}
