//! The step's memory against the fake provider: pins, the plan, the
//! standing focus and `recall` reach every successor, survive degraded documents and
//! `--continue`, and the ledger says what each retired generation held.

use flower_tui::engine::ledger::RunDir;
use flower_tui::engine::policy::FrontEnd;
use flower_tui::engine::protocol::{Event, HandoffPhase, MemoryRefusal, Op, PinChange, PinRef};
use flower_tui::engine::session::Resume;
use flower_tui::engine::step_memory::{PinSource, TodoStatus};
use serde_json::Value;

use crate::support::fake::{Reply, U, anthropic as a};
use crate::support::harness::{Harness, Running, start, turn_end};

const DOC: &str = "## Doing\nRefactoring the parser.\n\n## Decided\n- Keep the old API.\n\n## Next\nRun the parser tests.\n\n## Scene\n- src/parser.rs\n";

const PLAN: &str = r#"{"items": [{"text": "read the parser", "status": "done"}, {"text": "fix nested quotes", "status": "in_progress"}, {"text": "run the tests", "status": "pending"}]}"#;

fn u(input: u64) -> U {
    U::new(input, 10)
}

fn overflow() -> Reply {
    Reply::status(
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 45000 tokens > 40000 maximum"}}"#,
    )
}

/// The text blocks of the first message of a request body.
fn first_blocks(body: &Value) -> Vec<String> {
    body["messages"][0]["content"]
        .as_array()
        .map(|b| {
            b.iter()
                .filter_map(|b| b["text"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The text of the last message of a request body.
fn last_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_array())
        .map(|b| {
            b.iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// The block the engine writes itself (pins, plan, focus).
fn carried(body: &Value) -> String {
    first_blocks(body)
        .into_iter()
        .find(|b| b.starts_with("The harness carries"))
        .unwrap_or_else(|| panic!("no carried block: {body:#}"))
}

async fn pin(r: &mut Running, text: &str) -> Event {
    r.send(Op::Pin { text: text.into() }).await;
    r.until(|e| matches!(e, Event::Pins { .. } | Event::MemoryRefused { .. }))
        .await
        .pop()
        .unwrap()
}

/// A manual handoff (headless: no review) and its successor.
async fn handoff(r: &mut Running) -> Vec<Event> {
    let turn = r.send_handoff(None).await;
    r.until_end(turn).await
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
    h.server
        .push(a::tool_use("t1", "list_dir", "{}", u(31_000))); // crosses at = 30000
    h.server.push(a::text(DOC, u(31_500)));
    h.server.push(a::text("ok", u(5_000)));
    assert_eq!(turn_end(&r.turn("refactor the parser").await), "completed");
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
    assert!(
        blocks[1].contains("\n## Pinned\n- never push to `main`\n"),
        "{}",
        blocks[1]
    );
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
    let mut r = start(h.params(40_000, 10_000));
    h.server.push(a::text("hi", u(1_000)));
    assert_eq!(turn_end(&r.turn("hello").await), "completed");
    pin(&mut r, "keep the public API").await;
    // Two overflows in a row of turns: each goes to a degraded document at once.
    for i in 0..2 {
        h.server.push(overflow());
        h.server.push(a::text(&format!("ok {i}"), u(2_000)));
        let ev = r.turn(&format!("next {i}")).await;
        assert_eq!(turn_end(&ev), "completed", "{ev:#?}");
        assert!(
            ev.iter()
                .any(|e| matches!(e, Event::Handoff(HandoffPhase::Done { degraded: true, .. }))),
            "{ev:#?}"
        );
    }
    let reqs = h.server.requests();
    for successor in [&reqs[2], &reqs[4]] {
        let blocks = first_blocks(successor);
        assert!(blocks[0].contains("[DEGRADED"), "{}", blocks[0]);
        assert!(carried(successor).contains("## Pinned\n- keep the public API\n"));
    }
    r.shutdown().await;
}

#[tokio::test]
async fn a_1mb_pin_is_refused_and_nothing_changes() {
    let h = Harness::new().await;
    let mut r = start(h.params(40_000, 10_000));
    h.server.push(a::text("hi", u(1_000)));
    r.turn("hello").await;
    pin(&mut r, "a short pin").await;
    let big = "x".repeat(1 << 20);
    let ev = pin(&mut r, &big).await;
    let Event::MemoryRefused { reason, message } = ev else {
        panic!("{ev:?}")
    };
    assert_eq!(reason, MemoryRefusal::PinTooLong);
    assert!(
        message.contains("1,048,576") && message.contains("1,000"),
        "{message}"
    );
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
    assert!(ev.iter().any(|e| matches!(
        e,
        Event::MemoryRefused {
            reason: MemoryRefusal::FocusTooLong,
            ..
        }
    )));
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
    h.server.push(a::tool_use(
        "t1",
        "bash",
        r#"{"command": "sleep 1"}"#,
        u(1_000),
    ));
    h.server.push(a::text("done", u(1_100)));
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
    h.server
        .push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    // The model copies a pinned section into its document: that adds no pin.
    h.server.push(a::text(
        &format!("{DOC}\n## Pinned\n- copied by the model\n"),
        u(31_500),
    ));
    h.server.push(a::text("ok", u(5_000)));
    let mut p = h.params(40_000, 10_000);
    p.front_end = FrontEnd::Interactive { review: true };
    let mut r = start(p);
    r.send_turn("work").await;
    let ev = r
        .until(|e| matches!(e, Event::Handoff(HandoffPhase::Frozen { .. })))
        .await;
    let Some(Event::Handoff(HandoffPhase::Frozen {
        handoff,
        path: Some(path),
        ..
    })) = ev.last()
    else {
        panic!("{ev:#?}")
    };
    // The user continues the pinned list (the engine's `Touched` section follows the model's
    // sections, so the list is no longer at the end of the file) and adds one at the end.
    let text = std::fs::read_to_string(path).unwrap().replace(
        "- copied by the model\n",
        "- copied by the model\n- typed in the review\n",
    );
    std::fs::write(path, format!("{text}\n**Pinned**\n1. and this\n")).unwrap();
    r.send(Op::ReviewDone { handoff: *handoff }).await;
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
    assert!(
        block.contains("## Pinned\n- typed in the review\n- and this\n"),
        "{block}"
    );
    assert!(!block.contains("copied by the model"), "{block}");
    let m = r.manifest();
    assert!(
        m.steps[0]
            .memory
            .pins
            .iter()
            .all(|p| p.source == PinSource::Editor)
    );
    // The next generation gets them from the engine, not from any document.
    h.server.push(a::text(DOC, u(6_000)));
    h.server.push(a::text("third", u(2_000)));
    let turn = r.send_handoff(None).await;
    let ev = r
        .until(|e| matches!(e, Event::Handoff(HandoffPhase::Frozen { .. })))
        .await;
    let Some(Event::Handoff(HandoffPhase::Frozen { handoff, .. })) = ev.last() else {
        panic!()
    };
    r.send(Op::ReviewDone { handoff: *handoff }).await;
    r.until_end(turn).await;
    assert_eq!(turn_end(&r.turn("go on").await), "completed");
    let last = h.server.requests().pop().unwrap();
    assert!(carried(&last).contains("- typed in the review\n- and this\n"));
    r.shutdown().await;
}

#[tokio::test]
async fn the_plan_is_kept_shown_and_carried_and_recall_is_offered_to_the_successor() {
    let h = Harness::new().await;
    h.server.push(a::tool_use("t1", "todo", PLAN, u(31_000))); // crosses at after the tool
    h.server.push(a::text(DOC, u(31_500)));
    h.server.push(a::text("ok", u(5_000)));
    let mut p = h.params(40_000, 10_000);
    // With old tool output masked, `recall` is offered from the first generation on (it brings
    // a masked output back); without, only to a successor.
    p.masking = flower_tui::engine::mask::MaskSettings::OFF;
    let mut r = start(p);
    let ev = r.turn("fix the parser").await;
    assert_eq!(turn_end(&ev), "completed");
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
    assert!(result.starts_with("Plan updated: 3 items"), "{result}");
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
    assert!(
        preamble.contains(&format!("generation 1: {}", transcript.display())),
        "{preamble}"
    );
    assert!(preamble.contains("`recall` tool"), "{preamble}");
    r.shutdown().await;
}

#[tokio::test]
async fn recall_finds_the_predecessors_words_and_a_bad_regex_is_a_tool_error() {
    let h = Harness::new().await;
    h.server.push(a::text(
        "The flux capacitor lives in src/time.rs at line 88.",
        u(1_000),
    ));
    h.server.push(a::text(DOC, u(1_500)));
    h.server.push(a::tool_use(
        "r1",
        "recall",
        r#"{"query": "FLUX capacitor"}"#,
        u(2_000),
    ));
    h.server.push(a::tool_use(
        "r2",
        "recall",
        r#"{"query": "(flux", "regex": true}"#,
        u(2_100),
    ));
    h.server.push(a::text("It is in src/time.rs.", u(2_200)));
    let mut r = start(h.params(40_000, 10_000));
    r.turn("where is the flux capacitor?").await;
    handoff(&mut r).await;
    let ev = r.turn("remind me where it was").await;
    assert_eq!(turn_end(&ev), "completed", "{ev:#?}");
    let results: Vec<(String, bool)> = ev
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult {
                name,
                output,
                is_error,
                ..
            } if name == "recall" => Some((output.clone(), *is_error)),
            _ => None,
        })
        .collect();
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
    assert!(bad.contains("not a valid regular expression"), "{bad}");
    // The tool calls are shown with their summary.
    assert!(ev.iter().any(|e| matches!(
        e,
        Event::ToolCall { summary, .. } if summary == "recall: \"FLUX capacitor\""
    )));
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
    h.server
        .push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    h.server.push(a::text(DOC, u(31_500)));
    h.server.push(a::text("ok", u(5_000)));
    let ev = r.turn("work").await;
    assert!(ev.iter().any(|e| matches!(
        e,
        Event::Handoff(HandoffPhase::Writing { focus: Some(f), manual: false, .. }) if f == "the parser bug"
    )));
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
    h.server.push(a::text(DOC, u(6_000)));
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
    h.server.push(a::text("more", u(6_200)));
    r.turn("more").await;
    h.server.push(a::text(DOC, u(6_500)));
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
    h.server.push(a::tool_use("t1", "list_dir", "{}", u(1_000)));
    h.server.push(a::tool_use("t2", "list_dir", "{}", u(1_200)));
    h.server.push(a::text("two listings", u(1_400)));
    h.server.push(a::text(DOC, u(1_600)));
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
    h.server.push(a::tool_use("t1", "todo", PLAN, u(1_000)));
    h.server.push(a::text("planned", u(1_200)));
    let p = h.params(40_000, 10_000);
    let root = p.run_dir.root.clone();
    let mut r = start(p);
    r.turn("plan it").await;
    pin(&mut r, "never push to main").await;
    r.send(Op::SetFocus {
        focus: Some("nested quotes".into()),
    })
    .await;
    r.until(|e| matches!(e, Event::Focus { .. })).await;
    r.shutdown().await;

    let mut p = h.params(40_000, 10_000);
    p.run_dir = RunDir::open(&root);
    p.start.resume = Some(Resume::at(RunDir::open(&root)));
    let mut r = start(p);
    let ev = r.until(|e| matches!(e, Event::Todo { .. })).await;
    assert!(ev.iter().any(|e| matches!(
        e,
        Event::Pins { change: PinChange::Restored, pins, .. } if pins == &["never push to main".to_string()]
    )));
    assert!(
        ev.iter()
            .any(|e| matches!(e, Event::Focus { focus: Some(f), .. } if f == "nested quotes"))
    );
    h.server.push(a::text(DOC, u(1_500)));
    h.server.push(a::text("continuing", u(1_800)));
    handoff(&mut r).await;
    r.turn("go on").await;
    let block = carried(&h.server.requests().pop().unwrap());
    assert!(block.contains("- never push to main\n"), "{block}");
    assert!(
        block.contains("- [in progress] fix nested quotes\n"),
        "{block}"
    );
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
    h.server.push(a::tool_use("t1", "todo", PLAN, u(1_000)));
    h.server.push(a::text("planned", u(1_200)));
    r.turn("start").await;
    r.send(Op::SetFocus {
        focus: Some("focus: nested quotes".into()),
    })
    .await;
    r.until(|e| matches!(e, Event::Focus { .. })).await;
    for generation in 1..=4u32 {
        let ev = if generation % 2 == 1 {
            h.server.push(a::text(DOC, u(2_000)));
            handoff(&mut r).await
        } else {
            // An overflow: a degraded document at once, and the successor retries the request.
            h.server.push(overflow());
            h.server
                .push(a::text(&format!("generation {}", generation + 1), u(2_000)));
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
        assert!(
            preamble.contains(&format!("  - generation {g}: ")),
            "{preamble}"
        );
    }
    assert!(tool_names(&body).contains(&"recall".to_string()));
    assert_eq!(r.manifest().steps[0].generations, 5);
    r.shutdown().await;
}

/// A process that dies during the review (here: shut down) commits nothing; the next start
/// reopens the review, and the `Pinned` section typed into the file then is adopted at its end.
#[tokio::test]
async fn pins_typed_into_a_review_that_a_new_process_reopens_are_kept() {
    let h = Harness::new().await;
    h.server
        .push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    h.server.push(a::text(DOC, u(31_500)));
    let mut p = h.params(40_000, 10_000);
    p.front_end = FrontEnd::Interactive { review: true };
    let root = p.run_dir.root.clone();
    let mut r = start(p);
    pin(&mut r, "pinned before the cut").await;
    r.send_turn("work").await;
    let ev = r
        .until(|e| matches!(e, Event::Handoff(HandoffPhase::Frozen { .. })))
        .await;
    let Some(Event::Handoff(HandoffPhase::Frozen {
        path: Some(path), ..
    })) = ev.last()
    else {
        panic!("{ev:#?}")
    };
    let path = path.clone();
    r.shutdown().await;
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        format!("{text}\n## Pinned\n- typed while no process ran\n"),
    )
    .unwrap();

    h.server.push(a::text("successor", u(5_000)));
    let mut p = h.params(40_000, 10_000);
    p.front_end = FrontEnd::Interactive { review: true };
    p.run_dir = RunDir::open(&root);
    p.start.resume = Some(Resume::at(RunDir::open(&root)));
    let mut r = start(p);
    let ev = r
        .until(|e| matches!(e, Event::Handoff(HandoffPhase::Frozen { .. })))
        .await;
    let Some(Event::Handoff(HandoffPhase::Frozen { handoff, .. })) = ev.last() else {
        panic!()
    };
    r.send(Op::ReviewDone { handoff: *handoff }).await;
    let ev = r
        .until(|e| matches!(e, Event::Handoff(HandoffPhase::Done { .. })))
        .await;
    assert!(ev.iter().any(|e| matches!(
        e,
        Event::Pins { change: PinChange::FromEditor, changed, .. }
            if changed == &["typed while no process ran".to_string()]
    )));
    assert_eq!(
        r.manifest().steps[0].memory.pin_texts(),
        ["pinned before the cut", "typed while no process ran"]
    );
    r.turn("go on").await;
    let block = carried(&h.server.requests().pop().unwrap());
    assert!(
        block.contains("## Pinned\n- pinned before the cut\n- typed while no process ran\n"),
        "{block}"
    );
    r.shutdown().await;
}
