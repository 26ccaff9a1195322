//! Pins: kept for the step and through degraded documents, refused when too large, applied
//! while a turn runs, and adopted from a `Pinned` section typed in the editor or into a review
//! that a new process reopens.

use super::*;
use crate::support::check::{assert_contains, assert_event, assert_lacks};

/// A session at 40,000 (10,000 headroom) that has answered one turn ("hello": "hi").
async fn after_one_turn(h: &Harness) -> Running {
    let mut r = start(h.params(40_000, 10_000));
    h.script().text("hi");
    r.completed_turn("hello").await;
    r
}

#[tokio::test]
async fn a_pin_before_any_session_is_kept_for_the_step_and_reaches_the_successor() {
    let h = Harness::new().await;
    let mut r = start(h.params(40_000, 10_000));
    // Before the first message: kept for the step that message starts.
    let ev = pin(&mut r, "  never push to `main`\n").await;
    assert_eq!(
        ev,
        Event::Pins {
            pins: vec!["never push to `main`".into()],
            change: PinChange::Added,
            changed: vec!["never push to `main`".into()],
            step: None,
        }
    );
    h.script().at(31_000).tool("list_dir", "{}"); // crosses at = 30000
    h.script().at(31_500).text(DOC).at(5_000).text("ok");
    r.completed_turn("refactor the parser").await;
    let m = r.manifest();
    let pins = &m.steps[0].memory.pins;
    assert_eq!(pins.len(), 1);
    assert_eq!(pins[0].text, "never push to `main`");
    assert_eq!(pins[0].source, PinSource::Command);
    let reqs = h.server.requests();
    assert_eq!(reqs.len(), 3);
    let blocks = first_blocks(&reqs[2]);
    // briefing, what the engine carries, the request note, the request.
    assert_eq!(blocks.len(), 4, "{blocks:#?}");
    assert_contains(&blocks[1], "\n## Pinned\n- never push to `main`\n");
    assert_eq!(blocks[3], "refactor the parser");
    // Pinned once the step exists: the event names it.
    let ev = pin(&mut r, "run the tests before saying done").await;
    let Event::Pins { pins, step, .. } = ev else {
        panic!("{ev:?}")
    };
    assert_eq!(pins.len(), 2);
    assert_eq!(step.as_deref(), Some("test-step"));
    r.shutdown().await;
}

#[tokio::test]
async fn pins_survive_degraded_handoffs() {
    let h = Harness::new().await;
    let mut r = after_one_turn(&h).await;
    pin(&mut r, "keep the public API").await;
    // Two overflows in a row of turns: each goes to a degraded document at once.
    for i in 0..2 {
        h.server.push(overflow());
        h.script().at(2_000).text(&format!("ok {i}"));
        let ev = r.completed_turn(&format!("next {i}")).await;
        assert!(
            ev.iter()
                .any(|e| matches!(e, Event::Handoff(HandoffPhase::Done { degraded: true, .. }))),
            "{ev:#?}"
        );
    }
    let reqs = h.server.requests();
    for successor in [&reqs[2], &reqs[4]] {
        let blocks = first_blocks(successor);
        assert_contains(&blocks[0], "[DEGRADED");
        assert_contains(&carried(successor), "## Pinned\n- keep the public API\n");
    }
    r.shutdown().await;
}

#[tokio::test]
async fn a_1mb_pin_is_refused_and_nothing_changes() {
    let h = Harness::new().await;
    let mut r = after_one_turn(&h).await;
    pin(&mut r, "a short pin").await;
    let big = "x".repeat(1 << 20);
    let ev = pin(&mut r, &big).await;
    let Event::MemoryRefused { reason, message } = ev else {
        panic!("{ev:?}")
    };
    assert_eq!(reason, MemoryRefusal::PinTooLong);
    for figure in ["1,048,576", "1,000"] {
        assert_contains(&message, figure);
    }
    // A focus too long, an unpin of a pin that is not there: refused too.
    r.send(Op::SetFocus {
        focus: Some("f".repeat(5_000)),
    })
    .await;
    r.send(Op::Unpin {
        pin: PinRef::Number(7),
    })
    .await;
    let ev = r
        .until(|e| {
            matches!(
                e,
                Event::MemoryRefused {
                    reason: MemoryRefusal::NoSuchPin,
                    ..
                }
            )
        })
        .await;
    assert_event!(
        ev,
        Event::MemoryRefused {
            reason: MemoryRefusal::FocusTooLong,
            ..
        }
    );
    let m = r.manifest();
    assert_eq!(m.steps[0].memory.pin_texts(), ["a short pin"]);
    assert_eq!(m.steps[0].memory.focus, None);
    // The ledger never held the big one.
    let raw = std::fs::read_to_string(r.run_root.join("manifest.json")).unwrap();
    assert!(raw.len() < 100_000, "{}", raw.len());
    r.send(Op::Unpin { pin: PinRef::All }).await;
    let ev = r.until(|e| matches!(e, Event::Pins { .. })).await;
    assert!(matches!(
        ev.last(),
        Some(Event::Pins { pins, change: PinChange::Removed, changed, .. })
            if pins.is_empty() && changed == &["a short pin".to_string()]
    ));
    assert!(r.manifest().steps[0].memory.is_empty());
    r.shutdown().await;
}

#[tokio::test]
async fn a_pin_made_while_a_turn_runs_applies_at_once() {
    let h = Harness::new().await;
    let mut r = start(h.params(40_000, 10_000));
    h.script()
        .tool("bash", r#"{"command": "sleep 1"}"#)
        .at(1_100)
        .text("done");
    let turn = r.send_turn("wait a second").await;
    r.until(|e| matches!(e, Event::ToolCall { .. })).await;
    r.send(Op::Pin {
        text: "mid-turn pin".into(),
    })
    .await;
    let ev = r.until_end(turn).await;
    let pinned = ev.iter().position(|e| matches!(e, Event::Pins { .. }));
    let result = ev
        .iter()
        .position(|e| matches!(e, Event::ToolResult { .. }));
    assert!(
        pinned.is_some() && pinned < result,
        "answered while the tool ran: {ev:#?}"
    );
    r.shutdown().await;
}

#[tokio::test]
async fn a_pinned_section_typed_in_the_editor_becomes_a_pin_for_every_later_successor() {
    let h = Harness::new().await;
    h.script().at(31_000).tool("list_dir", "{}");
    // The model copies a pinned section into its document: that adds no pin.
    h.script()
        .at(31_500)
        .text(&format!("{DOC}\n## Pinned\n- copied by the model\n"))
        .at(5_000)
        .text("ok");
    let mut r = start(h.reviewed(40_000, 10_000));
    r.send_turn("work").await;
    let frozen = r.frozen().await;
    let (handoff, path) = (frozen.handoff, frozen.path.expect("a file"));
    // The user continues the pinned list (the engine's `Touched` section follows the model's
    // sections, so the list is no longer at the end of the file) and adds one at the end.
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "- copied by the model\n",
        "- copied by the model\n- typed in the review\n",
    );
    std::fs::write(path, format!("{text}\n**Pinned**\n1. and this\n")).unwrap();
    r.send(Op::ReviewDone { handoff }).await;
    let ev = r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    let added = ev.iter().find_map(|e| match e {
        Event::Pins {
            change: PinChange::FromEditor,
            changed,
            ..
        } => Some(changed.clone()),
        _ => None,
    });
    assert_eq!(
        added,
        Some(vec!["typed in the review".into(), "and this".into()])
    );
    let reqs = h.server.requests();
    let block = carried(&reqs[2]);
    assert_contains(&block, "## Pinned\n- typed in the review\n- and this\n");
    assert_lacks(&block, "copied by the model");
    let m = r.manifest();
    assert!(
        m.steps[0]
            .memory
            .pins
            .iter()
            .all(|p| p.source == PinSource::Editor)
    );
    // The next generation gets them from the engine, not from any document.
    h.script().at(6_000).text(DOC).at(2_000).text("third");
    let turn = r.send_handoff(None).await;
    let ev = r
        .until(|e| matches!(e, Event::Handoff(HandoffPhase::Frozen { .. })))
        .await;
    let Some(Event::Handoff(HandoffPhase::Frozen { handoff, .. })) = ev.last() else {
        panic!()
    };
    r.send(Op::ReviewDone { handoff: *handoff }).await;
    r.until_end(turn).await;
    r.completed_turn("go on").await;
    let last = h.server.requests().pop().unwrap();
    assert_contains(&carried(&last), "- typed in the review\n- and this\n");
    r.shutdown().await;
}

/// A process that dies during the review (here: shut down) commits nothing; the next start
/// reopens the review, and the `Pinned` section typed into the file then is adopted at its end.
#[tokio::test]
async fn pins_typed_into_a_review_that_a_new_process_reopens_are_kept() {
    let h = Harness::new().await;
    h.script().over_the_line(DOC);
    let mut r = start(h.reviewed(40_000, 10_000));
    let root = r.run_root.clone();
    pin(&mut r, "pinned before the cut").await;
    r.send_turn("work").await;
    let (_, path) = r.frozen_for_review().await;
    r.shutdown().await;
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        format!("{text}\n## Pinned\n- typed while no process ran\n"),
    )
    .unwrap();

    h.script().at(5_000).text("successor");
    let mut p = h.resumed(40_000, 10_000, &root);
    p.front_end = FrontEnd::Interactive { review: true };
    let mut r = start(p);
    let (handoff, _) = r.frozen_for_review().await;
    r.send(Op::ReviewDone { handoff }).await;
    let ev = r
        .until(|e| matches!(e, Event::Handoff(HandoffPhase::Done { .. })))
        .await;
    assert_event!(
        ev,
        Event::Pins { change: PinChange::FromEditor, changed, .. }
            if changed == &["typed while no process ran".to_string()]
    );
    assert_eq!(
        r.manifest().steps[0].memory.pin_texts(),
        ["pinned before the cut", "typed while no process ran"]
    );
    r.turn("go on").await;
    let block = carried(&h.server.requests().pop().unwrap());
    assert_contains(
        &block,
        "## Pinned\n- pinned before the cut\n- typed while no process ran\n",
    );
    r.shutdown().await;
}
