//! The rest of what a successor is given: the plan, `recall`, the standing focus, the ledger's
//! record of what was retired, `--continue`, and the fifth generation's briefing.

use super::*;
use crate::support::check::{assert_contains, assert_event, assert_starts_with, picked};

#[tokio::test]
async fn the_plan_is_kept_shown_and_carried_and_recall_is_offered_to_the_successor() {
    let h = Harness::new().await;
    h.script().at(31_000).tool("todo", PLAN); // crosses at after the tool
    h.script().at(31_500).text(DOC).at(5_000).text("ok");
    let mut p = h.params(40_000, 10_000);
    // With old tool output masked, `recall` is offered from the first generation on (it brings
    // a masked output back); without, only to a successor.
    p.masking = flower_tui::engine::mask::MaskSettings::OFF;
    let mut r = start(p);
    let ev = r.completed_turn("fix the parser").await;
    let items = ev
        .iter()
        .find_map(|e| match e {
            Event::Todo { items } => Some(items.clone()),
            _ => None,
        })
        .expect("a todo event");
    assert_eq!(items.len(), 3);
    assert_eq!(items[1].status, TodoStatus::InProgress);
    let result = ev
        .iter()
        .find_map(|e| match e {
            Event::ToolResult {
                name,
                output,
                is_error: false,
                ..
            } if name == "todo" => Some(output.clone()),
            _ => None,
        })
        .unwrap();
    assert_starts_with(&result, "Plan updated: 3 items");
    assert_eq!(r.manifest().steps[0].memory.todo, items);
    let reqs = h.server.requests();
    // The first generation has todo and no recall; the writing turn the same tools (cache).
    assert!(tool_names(&reqs[0]).contains(&"todo".to_string()));
    assert!(!tool_names(&reqs[0]).contains(&"recall".to_string()));
    assert_eq!(reqs[0]["tools"], reqs[1]["tools"]);
    // The successor: the plan verbatim, recall offered, the transcript named in the preamble.
    assert!(
        carried(&reqs[2]).contains(
            "## Plan\n- [done] read the parser\n- [in progress] fix nested quotes\n- [pending] run the tests\n"
        ),
        "{}",
        carried(&reqs[2])
    );
    assert!(tool_names(&reqs[2]).contains(&"recall".to_string()));
    let retired = &r.manifest().steps[0].retired[0];
    let transcript = r.run_root.join(format!("sessions/{retired}.jsonl"));
    let briefing = &first_blocks(&reqs[2])[0];
    let preamble = briefing.split("<handoff>").next().unwrap();
    assert_contains(preamble, &format!("generation 1: {}", transcript.display()));
    assert_contains(preamble, "`recall` tool");
    r.shutdown().await;
}

#[tokio::test]
async fn recall_finds_the_predecessors_words_and_a_bad_regex_is_a_tool_error() {
    let h = Harness::new().await;
    h.script()
        .text("The flux capacitor lives in src/time.rs at line 88.")
        .at(1_500)
        .text(DOC)
        .at(2_000)
        .tool("recall", r#"{"query": "FLUX capacitor"}"#)
        .at(2_100)
        .tool("recall", r#"{"query": "(flux", "regex": true}"#)
        .at(2_200)
        .text("It is in src/time.rs.");
    let mut r = start(h.params(40_000, 10_000));
    r.turn("where is the flux capacitor?").await;
    handoff(&mut r).await;
    let ev = r.completed_turn("remind me where it was").await;
    let results: Vec<(String, bool)> = picked!(
        ev,
        Event::ToolResult { name, output, is_error, .. } if name == "recall" => (output.clone(), *is_error)
    );
    assert_eq!(results.len(), 2);
    let (found, err) = &results[0];
    assert!(!err);
    assert!(
        found.contains("[generation 1 · message 2 · assistant]")
            && found.contains("src/time.rs at line 88"),
        "{found}"
    );
    let (bad, err) = &results[1];
    assert!(err, "{bad}");
    assert_contains(bad, "not a valid regular expression");
    // The tool calls are shown with their summary.
    assert_event!(ev, Event::ToolCall { summary, .. } if summary == "recall: \"FLUX capacitor\"");
    r.shutdown().await;
}

#[tokio::test]
async fn a_standing_focus_goes_into_every_later_handoff_prompt_and_the_briefing() {
    let h = Harness::new().await;
    let mut r = start(h.params(40_000, 10_000));
    r.send(Op::SetFocus {
        focus: Some("the parser bug".into()),
    })
    .await;
    let ev = r.until(|e| matches!(e, Event::Focus { .. })).await;
    assert_eq!(
        ev.last(),
        Some(&Event::Focus {
            focus: Some("the parser bug".into()),
            step: None
        })
    );
    h.script().over_the_line(DOC).at(5_000).text("ok");
    let ev = r.turn("work").await;
    assert_event!(
        ev,
        Event::Handoff(HandoffPhase::Writing { focus: Some(f), manual: false, .. })
            if f == "the parser bug"
    );
    let reqs = h.server.requests();
    assert!(
        last_text(&reqs[1]).ends_with("\n\nAdditional focus: the parser bug"),
        "{}",
        last_text(&reqs[1])
    );
    assert!(carried(&reqs[2]).ends_with("## Focus\nthe parser bug\n"));
    assert_eq!(
        r.manifest().steps[0].memory.focus.as_deref(),
        Some("the parser bug")
    );
    // A manual handoff with its own focus gets both.
    h.script().at(6_000).text(DOC);
    let turn = r.send_handoff(Some("the lexer")).await;
    r.until_end(turn).await;
    let reqs = h.server.requests();
    assert!(
        last_text(&reqs[3]).ends_with("\n\nAdditional focus: the parser bug\nthe lexer"),
        "{}",
        last_text(&reqs[3])
    );
    // Cleared: the next handoff has none.
    r.send(Op::SetFocus { focus: None }).await;
    r.until(|e| matches!(e, Event::Focus { focus: None, .. }))
        .await;
    // (A successor holds only its briefing: one turn first, so there is something to hand off.)
    h.script().at(6_200).text("more");
    r.turn("more").await;
    h.script().at(6_500).text(DOC);
    handoff(&mut r).await;
    let reqs = h.server.requests();
    assert_eq!(reqs.len(), 6);
    assert!(last_text(&reqs[5]).starts_with("The user asked for a handoff now"));
    assert!(!last_text(&reqs[5]).contains("Additional focus"));
    r.shutdown().await;
}

#[tokio::test]
async fn the_ledger_and_the_done_phase_say_what_was_retired() {
    let h = Harness::new().await;
    h.script()
        .tool("list_dir", "{}")
        .at(1_200)
        .tool("list_dir", "{}")
        .at(1_400)
        .text("two listings")
        .at(1_600)
        .text(DOC);
    let mut r = start(h.params(40_000, 10_000));
    r.turn("list twice").await;
    let ev = handoff(&mut r).await;
    let held = ev
        .iter()
        .find_map(|e| match e {
            Event::Handoff(HandoffPhase::Done { held, .. }) => Some(held.clone()),
            _ => None,
        })
        .unwrap();
    // user, call, results, call, results, answer.
    assert_eq!(held.messages, 6);
    assert_eq!(held.tool_calls, 2);
    assert!(held.tokens >= 1_400, "{held:?}");
    let m = r.manifest();
    let st = &m.steps[0];
    let transcript = r.run_root.join(format!("sessions/{}.jsonl", st.retired[0]));
    assert_eq!(held.transcript.as_deref(), Some(transcript.as_path()));
    assert!(transcript.exists());
    assert_eq!(st.handoffs[0].held, held);
    r.shutdown().await;
}

#[tokio::test]
async fn memory_survives_continue() {
    let h = Harness::new().await;
    h.script().tool("todo", PLAN).at(1_200).text("planned");
    let mut r = start(h.params(40_000, 10_000));
    let root = r.run_root.clone();
    r.turn("plan it").await;
    pin(&mut r, "never push to main").await;
    r.send(Op::SetFocus {
        focus: Some("nested quotes".into()),
    })
    .await;
    r.until(|e| matches!(e, Event::Focus { .. })).await;
    r.shutdown().await;

    let p = h.resumed(40_000, 10_000, &root);
    let mut r = start(p);
    let ev = r.until(|e| matches!(e, Event::Todo { .. })).await;
    assert_event!(
        ev,
        Event::Pins { change: PinChange::Restored, pins, .. }
            if pins == &["never push to main".to_string()]
    );
    assert_event!(ev, Event::Focus { focus: Some(f), .. } if f == "nested quotes");
    h.script().at(1_500).text(DOC).at(1_800).text("continuing");
    handoff(&mut r).await;
    r.turn("go on").await;
    let block = carried(&h.server.requests().pop().unwrap());
    assert_contains(&block, "- never push to main\n");
    assert_contains(&block, "- [in progress] fix nested quotes\n");
    assert!(block.ends_with("## Focus\nnested quotes\n"), "{block}");
    r.shutdown().await;
}

/// What the continuity benchmark checks: after four handoffs (written, degraded, written,
/// degraded), the fifth generation's first request holds every pin, the plan, the focus, and
/// the four transcripts `recall` searches.
#[tokio::test]
async fn the_fifth_generation_is_briefed_with_everything_the_engine_carries() {
    let h = Harness::new().await;
    let mut r = start(h.params(400_000, 10_000));
    pin(&mut r, "pin one: never push to main").await;
    h.script().tool("todo", PLAN).at(1_200).text("planned");
    r.turn("start").await;
    r.send(Op::SetFocus {
        focus: Some("focus: nested quotes".into()),
    })
    .await;
    r.until(|e| matches!(e, Event::Focus { .. })).await;
    for generation in 1..=4u32 {
        let ev = if generation % 2 == 1 {
            h.script().at(2_000).text(DOC);
            handoff(&mut r).await
        } else {
            // An overflow: a degraded document at once, and the successor retries the request.
            h.server.push(overflow());
            h.script()
                .at(2_000)
                .text(&format!("generation {}", generation + 1));
            r.turn(&format!("turn {generation}")).await
        };
        assert!(
            ev.iter().any(|e| matches!(
                e,
                Event::Handoff(HandoffPhase::Done { generation: g, degraded, .. })
                    if *g == generation + 1 && *degraded == (generation % 2 == 0)
            )),
            "{ev:#?}"
        );
        if generation == 2 {
            pin(&mut r, "pin two: added in generation 3").await;
        }
    }
    // The overflow's retry was the fifth generation's first request.
    let body = h.server.requests().pop().unwrap();
    let block = carried(&body);
    for fact in [
        "- pin one: never push to main\n",
        "- pin two: added in generation 3\n",
        "- [done] read the parser\n",
        "- [in progress] fix nested quotes\n",
        "- [pending] run the tests\n",
        "## Focus\nfocus: nested quotes\n",
    ] {
        assert!(block.contains(fact), "{fact}: {block}");
    }
    let preamble = first_blocks(&body)[0].clone();
    for g in 1..=4 {
        assert_contains(&preamble, &format!("  - generation {g}: "));
    }
    assert!(tool_names(&body).contains(&"recall".to_string()));
    assert_eq!(r.manifest().steps[0].generations, 5);
    r.shutdown().await;
}
