//! The handoff in the background and its rescue, engine in process against
//! the fake: the writing request beside the main thread on the same prefix, the review while work
//! goes on, the turnover at the next message boundary with the record after the cut, the wait at
//! the hard limit, and every way the writing can fail.
//!
//! The fake answers the writing request from its own queue (`push_writing`) and the main thread
//! from the main one; gates hold a reply until the test lets it go, so the order of what runs at
//! the same time is the test's, not the scheduler's.

use std::time::Duration;

use flower_tui::engine::handoff::briefing::{RESCUED_NOTE, TAIL_NOTE};
use flower_tui::engine::policy::{FrontEnd, HandoffMode};
use flower_tui::engine::protocol::{
    DocumentSource, Event, ExitReason, HandoffId, HandoffPhase, HandoffRefusal, Op,
};
use flower_tui::engine::session::EngineParams;
use serde_json::Value;

use crate::support::fake::{Gate, Recorded, Reply, U, anthropic as a, is_writing};
use crate::support::harness::{Harness, Running, start, turn_end};

const DOC: &str = "## Doing\nRefactoring the parser.\n## Decided\n- Keep the old API: callers depend on it.\n## Dead ends\n- Regex parsing: breaks on nested quotes.\n## Next\nRun the parser tests.\n## Scene\n- src/parser.rs\n";

fn u(input: u64) -> U {
    U::new(input, 10)
}

/// window 40k, headroom 10k: the line at 30k, the hard limit at 40k - 1,024 = 38,976.
fn bg(h: &Harness) -> EngineParams {
    let mut p = h.params(40_000, 10_000);
    p.handoff.mode = HandoffMode::Background;
    p
}

fn phases(events: &[Event]) -> Vec<HandoffPhase> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Handoff(p) => Some(p.clone()),
            _ => None,
        })
        .collect()
}

/// The text blocks of the first message of a request body.
fn first_blocks(body: &Value) -> Vec<String> {
    body["messages"][0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str().map(str::to_string))
        .collect()
}

/// A body without its `cache_control` markers (they move from request to request).
fn unmarked(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "cache_control")
                .map(|(k, v)| (k.clone(), unmarked(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(unmarked).collect()),
        other => other.clone(),
    }
}

fn writing_requests(recorded: &[Recorded]) -> Vec<&Recorded> {
    recorded.iter().filter(|r| is_writing(&r.body)).collect()
}

fn main_requests(recorded: &[Recorded]) -> Vec<&Recorded> {
    recorded.iter().filter(|r| !is_writing(&r.body)).collect()
}

async fn until_phase(r: &mut Running, want: fn(&HandoffPhase) -> bool) -> Vec<Event> {
    r.until(|e| matches!(e, Event::Handoff(p) if want(p))).await
}

fn handoff_of(events: &[Event]) -> HandoffId {
    events
        .iter()
        .find_map(|e| match e {
            Event::Handoff(HandoffPhase::Writing { handoff, .. }) => Some(*handoff),
            _ => None,
        })
        .expect("a writing phase")
}

#[tokio::test]
async fn the_writing_runs_beside_the_main_thread_on_the_same_prefix() {
    let h = Harness::new().await;
    let main3 = Gate::new();
    h.server
        .push(a::tool_use("t1", "list_dir", "{}", u(12_000)));
    // Crosses the line: the writing starts on the prefix this request sent.
    h.server
        .push(a::tool_use("t2", "list_dir", "{}", u(31_000)));
    // The main thread's next request, held until the document is frozen.
    h.server
        .push(a::tool_use("t3", "list_dir", "{}", u(31_500)).gated(&main3));
    h.server
        .push(a::text("successor: the parser tests pass", u(5_000)));
    h.server
        .push_writing(a::text_counted(DOC, 300).after(Duration::from_millis(200)));
    let mut r = start(bg(&h));
    let task = "refactor the parser";
    r.send_turn(task).await;
    let ev = until_phase(&mut r, |p| matches!(p, HandoffPhase::Frozen { .. })).await;
    let Some(Event::Handoff(HandoffPhase::Frozen {
        background: true,
        awaits_review: false,
        ..
    })) = ev.last()
    else {
        panic!("{ev:#?}")
    };
    // The main thread went on: its third request is out while the document was written.
    let rec = h.server.recorded();
    let mains = main_requests(&rec);
    let writes = writing_requests(&rec);
    assert_eq!((mains.len(), writes.len()), (3, 1), "{rec:#?}");
    assert!(
        mains[2].arrived < writes[0].finished.expect("the writing is done"),
        "the main thread sent a request while the document was written"
    );
    main3.open();
    let ev = r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    assert_eq!(turn_end(&ev), "completed", "{ev:#?}");

    // Same prefix: the system prompt, the tools, and every message of the request whose
    // response crossed the line, byte for byte (markers aside), then the handoff prompt.
    let w = unmarked(&writes[0].body);
    let m2 = unmarked(&mains[1].body);
    assert_eq!(w["system"], m2["system"]);
    assert_eq!(w["tools"], m2["tools"]);
    assert_eq!(w["tool_choice"]["type"], "none");
    let (wm, mm) = (
        w["messages"].as_array().unwrap(),
        m2["messages"].as_array().unwrap(),
    );
    assert_eq!(wm.len(), mm.len());
    assert_eq!(wm[..mm.len() - 1], mm[..mm.len() - 1]);
    let (wl, ml) = (
        wm.last().unwrap()["content"].as_array().unwrap(),
        mm.last().unwrap()["content"].as_array().unwrap(),
    );
    assert_eq!(wl[..ml.len()], ml[..]);
    assert_eq!(wl.len(), ml.len() + 1);
    assert!(
        wl[ml.len()]["text"]
            .as_str()
            .unwrap()
            .contains("write a handoff document now")
    );
    // So the prompt cache is read, not rewritten: everything the main request sent.
    assert_eq!(
        writes[0].counted.cache_read, mains[1].tokens,
        "{:?}",
        writes[0].counted
    );
    assert!(
        writes[0].counted.cache_creation < 1_000,
        "{:?}",
        writes[0].counted
    );

    // The successor: the document, the request, then the record of everything after the cut.
    let rec = h.server.recorded();
    let succ = rec.last().unwrap();
    assert_eq!(succ.body["messages"].as_array().unwrap().len(), 1);
    let blocks = first_blocks(&succ.body);
    assert!(blocks[0].contains("Run the parser tests."), "{blocks:#?}");
    assert_eq!(blocks[2], task);
    assert_eq!(blocks[3], TAIL_NOTE);
    assert_eq!(&blocks[4], "[assistant]\n[tool call t2: list_dir {}]\n");
    assert!(
        blocks[5].starts_with("[user]\n[tool result t2 (list_dir)]\n"),
        "{}",
        blocks[5]
    );
    assert_eq!(&blocks[6], "[assistant]\n[tool call t3: list_dir {}]\n");
    assert!(blocks[7].starts_with("[user]\n[tool result t3 (list_dir)]\n"));
    assert_eq!(blocks.len(), 8, "{blocks:#?}");
    let done = phases(&r.events).into_iter().find_map(|p| match p {
        HandoffPhase::Done { source, tail, .. } => Some((source, tail)),
        _ => None,
    });
    assert_eq!(done, Some((DocumentSource::Written, 4)));
    let st = &r.manifest().steps[0];
    assert_eq!(st.handoffs.len(), 1);
    assert_eq!(st.handoffs[0].source, DocumentSource::Written);
    assert_eq!(st.handoffs[0].tail, 4);
    assert_eq!(st.handoffs[0].ctx_at_cut, 31_010);
    assert!(st.frozen.is_none());
    r.shutdown().await;
}

#[tokio::test]
async fn an_edit_during_the_review_reaches_the_successor_with_the_work_done_meanwhile() {
    let h = Harness::new().await;
    let (g2, g3) = (Gate::new(), Gate::new());
    h.server
        .push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    h.server
        .push(a::tool_use("t2", "list_dir", "{}", u(31_200)).gated(&g2));
    h.server
        .push(a::tool_use("t3", "list_dir", "{}", u(31_400)).gated(&g3));
    h.server.push(a::text("successor: done", u(5_000)));
    h.server.push_writing(a::text(DOC, u(31_100)));
    let mut p = bg(&h);
    p.front_end = FrontEnd::Interactive { review: true };
    let mut r = start(p);
    r.send_turn("work").await;
    let ev = until_phase(&mut r, |p| matches!(p, HandoffPhase::Frozen { .. })).await;
    let Some(Event::Handoff(HandoffPhase::Frozen {
        handoff,
        path: Some(path),
        awaits_review: true,
        background: true,
        ..
    })) = ev.last().cloned()
    else {
        panic!("{ev:#?}")
    };
    // The user edits the file while the main thread keeps working.
    let text = std::fs::read_to_string(&path).unwrap();
    // And types a pin into it: pinned from the turnover on, in the background path too.
    let edited = text.replace(
        "Run the parser tests.",
        "Run the parser tests.\nUSER EDIT:   also the Windows paths.",
    ) + "## Pinned\n- typed during the background review\n";
    std::fs::write(&path, &edited).unwrap();
    g2.open();
    r.until(|e| matches!(e, Event::ToolResult { id, .. } if id == "t2"))
        .await;
    // The third request is out (held): the review ends while it runs.
    r.send(Op::ReviewDone { handoff }).await;
    g3.open();
    let ev = r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    assert_eq!(turn_end(&ev), "completed", "{ev:#?}");
    let rec = h.server.recorded();
    let mains = main_requests(&rec);
    assert_eq!(
        mains.len(),
        4,
        "three in the old session, one in the successor"
    );
    let blocks = first_blocks(&mains[3].body);
    assert!(
        blocks[0].ends_with(&format!("<handoff>\n{edited}</handoff>\n")),
        "the edited file, verbatim:\n{}",
        blocks[0]
    );
    let tail: Vec<&String> = blocks.iter().skip_while(|b| *b != TAIL_NOTE).collect();
    assert_eq!(
        tail.len(),
        7,
        "the note and t1..t3 with their results: {tail:#?}"
    );
    assert!(tail[5].contains("[tool call t3: list_dir {}]"));
    // The engine's own part follows the document and carries the typed pin.
    assert!(
        blocks[1].contains("## Pinned\n- typed during the background review\n"),
        "{}",
        blocks[1]
    );
    let st = &r.manifest().steps[0];
    assert!(st.handoffs[0].edited);
    assert_eq!(st.handoffs[0].tail, 6);
    assert_eq!(st.memory.pins.len(), 1, "{:?}", st.memory.pins);
    assert_eq!(st.memory.pins[0].text, "typed during the background review");
    r.shutdown().await;
}

#[tokio::test]
async fn at_the_hard_limit_the_main_thread_waits_for_the_document() {
    let h = Harness::new().await;
    let gw = Gate::new();
    h.server
        .push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    // 39,000 >= 40,000 - 1,024: no more main-thread requests before the document.
    h.server
        .push(a::tool_use("t2", "list_dir", "{}", u(39_000)));
    h.server.push(a::text("successor picks up", u(5_000)));
    h.server.push_writing(a::text(DOC, u(31_100)).gated(&gw));
    let mut r = start(bg(&h));
    r.send_turn("work").await;
    let ev = until_phase(&mut r, |p| matches!(p, HandoffPhase::Waiting { .. })).await;
    let Some(Event::Handoff(HandoffPhase::Waiting { context, limit, .. })) = ev.last() else {
        panic!()
    };
    assert_eq!(*limit, 38_976);
    assert!(*context >= *limit, "{context}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        main_requests(&h.server.recorded()).len(),
        2,
        "nothing sent while it waits"
    );
    gw.open();
    let ev = r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    assert_eq!(turn_end(&ev), "completed", "{ev:#?}");
    let rec = h.server.recorded();
    let succ = main_requests(&rec)[2];
    let blocks = first_blocks(&succ.body);
    assert!(
        blocks
            .iter()
            .any(|b| b.contains("[tool call t2: list_dir {}]"))
    );
    r.shutdown().await;
}

#[tokio::test]
async fn a_failed_background_writing_is_rescued_while_the_main_thread_works() {
    let h = Harness::new().await;
    let g = Gate::new();
    h.server
        .push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    h.server
        .push(a::tool_use("t2", "list_dir", "{}", u(31_200)).gated(&g));
    h.server.push(a::text("successor: fine", u(5_000)));
    // Every try of the writing request fails (5 tries), then the rescue writes it.
    for _ in 0..5 {
        h.server.push_writing(Reply::status(500, "boom"));
    }
    h.server.push_writing(a::text(DOC, u(31_100)));
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
    assert!(ev.iter().any(|e| matches!(e, Event::Notice { message } if message.contains("background writing request is retried"))));
    assert!(!ev.iter().any(|e| matches!(e, Event::Retry { .. })));
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
    std::fs::write(
        h.workspace.join("big.txt"),
        "0123456789abcdef\n".repeat(2_500),
    )
    .unwrap();
    h.server.push(a::tool_use(
        "t1",
        "bash",
        r#"{"command":"cat big.txt"}"#,
        u(20_000),
    ));
    h.server
        .push(a::tool_use("t2", "list_dir", "{}", u(31_000)));
    h.server.push(a::text("main thread goes on", u(31_300)));
    h.server.push_writing(Reply::Status {
        status: 400,
        headers: vec![],
        body: r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 45000 tokens > 40000 maximum"}}"#.into(),
    });
    let gw = Gate::new();
    h.server.push_writing(a::text(DOC, u(20_000)).gated(&gw));
    let mut r = start(bg(&h));
    let ev = r.turn("read the big file").await;
    assert_eq!(turn_end(&ev), "completed");
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
    h.server.push(a::text("generation 2 here", u(6_000)));
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
    h.server
        .push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    h.server.push(a::text("turn done", u(31_100)));
    h.server.push_writing(Reply::Stall {
        prefix: crate::support::harness::text_prefix("## Doing\nRefac"),
    });
    h.server.push_writing(a::text(DOC, u(31_100)));
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
    h.server
        .push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    h.server
        .push(a::tool_use("t2", "list_dir", "{}", u(31_100)).gated(&g));
    h.server
        .push(a::text("successor on a degraded briefing", u(5_000)));
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

#[tokio::test]
async fn cancel_stops_the_writing_only_and_the_turn_goes_on() {
    let h = Harness::new().await;
    let (gw, g2) = (Gate::new(), Gate::new());
    h.server
        .push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    h.server
        .push(a::tool_use("t2", "list_dir", "{}", u(31_100)).gated(&g2));
    h.server.push(a::text("the turn finished", u(31_200)));
    h.server.push_writing(a::text(DOC, u(31_000)).gated(&gw));
    let mut r = start(bg(&h));
    r.send_turn("work").await;
    let ev = until_phase(&mut r, |p| matches!(p, HandoffPhase::Writing { .. })).await;
    let handoff = handoff_of(&ev);
    // `/handoff` meanwhile is refused at once.
    r.send_handoff(None).await;
    let ev = until_phase(&mut r, |p| matches!(p, HandoffPhase::Refused { .. })).await;
    assert!(matches!(
        phases(&ev).last(),
        Some(HandoffPhase::Refused {
            reason: HandoffRefusal::AlreadyWriting,
            ..
        })
    ));
    // The fake has the writing request before it is cancelled.
    while writing_requests(&h.server.recorded()).is_empty() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    r.send(Op::CancelHandoff { handoff }).await;
    until_phase(&mut r, |p| matches!(p, HandoffPhase::Cancelled { .. })).await;
    g2.open();
    let ev = r.until(|e| matches!(e, Event::TurnEnd { kind, .. } if *kind == flower_tui::engine::protocol::TurnKind::Message)).await;
    assert_eq!(turn_end(&ev), "completed", "{ev:#?}");
    // No second writing in this turn, though the line stays crossed.
    assert!(
        !phases(&ev)
            .iter()
            .any(|p| matches!(p, HandoffPhase::Writing { .. }))
    );
    assert!(
        h.server.wait_idle(Duration::from_secs(5)).await,
        "the writing request was dropped"
    );
    let st = &r.manifest().steps[0];
    assert!(st.handoffs.is_empty() && st.frozen.is_none());
    assert_eq!(st.generations, 1);
    // The next turn starts it again.
    h.server.push(a::text("next answer", u(31_300)));
    h.server.push_writing(a::text(DOC, u(31_000)));
    r.turn("next").await;
    until_phase(&mut r, |p| matches!(p, HandoffPhase::Done { .. })).await;
    assert_eq!(r.manifest().steps[0].handoffs.len(), 1);
    r.shutdown().await;
}

#[tokio::test]
async fn a_pair_straddling_the_cut_is_held_whole_in_the_tail() {
    let h = Harness::new().await;
    // The crossing response asks for two tools: the cut comes before it, the pair after.
    h.server.push(a::text_then_tools(
        "Two listings.",
        &[
            ("ta", "list_dir", "{}"),
            ("tb", "glob", r#"{"pattern":"*.rs"}"#),
        ],
        u(31_000),
    ));
    h.server.push(a::text("done", u(31_200)));
    let gw = Gate::new();
    h.server.push_writing(a::text(DOC, u(31_000)).gated(&gw));
    let mut r = start(bg(&h));
    let ev = r.turn("list twice").await;
    assert_eq!(turn_end(&ev), "completed");
    // The document comes after the turn: the turnover happens at once, idle.
    gw.open();
    until_phase(&mut r, |p| matches!(p, HandoffPhase::Done { .. })).await;
    let rec = h.server.recorded();
    let w = &writing_requests(&rec)[0].body;
    // The writing request holds no call without its result (the fake would refuse it anyway).
    assert!(!w.to_string().contains("\"ta\""));
    h.server.push(a::text("gen 2", u(5_000)));
    r.turn("and now?").await;
    let rec = h.server.recorded();
    let blocks = first_blocks(&rec.last().unwrap().body);
    let call = blocks
        .iter()
        .find(|b| b.starts_with("[assistant]\nTwo listings."))
        .unwrap_or_else(|| panic!("the calls: {blocks:#?}"));
    assert!(
        call.contains("[tool call ta: list_dir {}]")
            && call.contains("[tool call tb: glob {\"pattern\":\"*.rs\"}]")
    );
    let results = blocks
        .iter()
        .find(|b| b.contains("[tool result ta (list_dir)]"))
        .expect("the results");
    assert!(results.contains("[tool result tb (glob)]"));
    r.shutdown().await;
}

#[tokio::test]
async fn a_main_thread_overflow_waits_for_the_background_document() {
    let h = Harness::new().await;
    let gw = Gate::new();
    h.server
        .push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    h.server.push(Reply::Status {
        status: 400,
        headers: vec![],
        body: r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 41000 tokens > 40000 maximum"}}"#.into(),
    });
    h.server.push(a::text("retried in the successor", u(5_000)));
    h.server.push_writing(a::text(DOC, u(31_000)).gated(&gw));
    let mut r = start(bg(&h));
    r.send_turn("work").await;
    until_phase(&mut r, |p| matches!(p, HandoffPhase::Waiting { .. })).await;
    gw.open();
    let ev = r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    assert_eq!(turn_end(&ev), "completed", "{ev:#?}");
    let rec = h.server.recorded();
    let blocks = first_blocks(&rec.last().unwrap().body);
    assert!(blocks[0].contains("Run the parser tests."));
    assert_eq!(
        r.manifest().steps[0].handoffs[0].source,
        DocumentSource::Written
    );
    r.shutdown().await;
}

#[tokio::test]
async fn headless_finishes_a_background_handoff_before_it_exits() {
    let h = Harness::new().await;
    let gw = Gate::new();
    h.server
        .push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    h.server.push(a::text("all done", u(31_200)));
    h.server.push_writing(a::text(DOC, u(31_000)).gated(&gw));
    let mut r = start(bg(&h));
    let ev = r.turn("work").await;
    assert_eq!(turn_end(&ev), "completed");
    // As headless does: the turn is over, so it quits; the writing is still out.
    r.send(Op::Shutdown).await;
    gw.open();
    let mut rest = Vec::new();
    while let Ok(Some(e)) = tokio::time::timeout(Duration::from_secs(10), r.h.events.recv()).await {
        rest.push(e);
    }
    let done = phases(&rest).into_iter().find_map(|p| match p {
        HandoffPhase::Done { tail, .. } => Some(tail),
        _ => None,
    });
    assert_eq!(done, Some(3), "{rest:#?}");
    let st = &r.manifest().steps[0];
    assert_eq!(st.handoffs.len(), 1);
    assert_eq!(st.generations, 2);
    // Nothing was in progress: the successor holds no request to continue.
    assert_eq!(exit_of(&ev), Some(ExitReason::Completed));
}

fn exit_of(ev: &[Event]) -> Option<ExitReason> {
    crate::support::harness::exit_reason(ev)
}

#[tokio::test]
async fn a_large_result_after_the_cut_is_capped_in_the_tail_and_kept_whole_in_a_spill_file() {
    let h = Harness::new().await;
    // 9,000+ characters whose last line only the spill file may hold.
    let big: String = (0..900)
        .map(|i| format!("row {i:04}\n"))
        .chain(std::iter::once("END-OF-BIG-FILE\n".to_string()))
        .collect();
    std::fs::write(h.workspace.join("big.txt"), &big).unwrap();
    let gw = Gate::new();
    h.server
        .push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    // After the cut, while the document is written: the big read.
    h.server.push(a::tool_use(
        "t2",
        "read_file",
        r#"{"path":"big.txt"}"#,
        u(31_200),
    ));
    h.server.push(a::text("read it", u(34_000)));
    h.server.push_writing(a::text(DOC, u(31_000)).gated(&gw));
    let mut r = start(bg(&h));
    let ev = r.turn("read the big file").await;
    assert_eq!(turn_end(&ev), "completed");
    gw.open();
    until_phase(&mut r, |p| matches!(p, HandoffPhase::Done { .. })).await;
    h.server.push(a::text("gen 2", u(5_000)));
    r.turn("go on").await;
    let rec = h.server.recorded();
    let blocks = first_blocks(&rec.last().unwrap().body);
    let result = blocks
        .iter()
        .find(|b| b.contains("[tool result t2 (read_file)]"))
        .unwrap_or_else(|| panic!("the big result in the tail: {blocks:#?}"));
    // Capped: the start is there, the end is not, and the record says where the whole is.
    assert!(result.contains("row 0000"), "{result}");
    assert!(!result.contains("END-OF-BIG-FILE"), "{result}");
    let (_, after) = result
        .split_once("the whole result is in ")
        .unwrap_or_else(|| panic!("no spill path: {result}"));
    let path = after.split(']').next().unwrap().trim();
    assert!(path.contains("spill"), "{path}");
    let spilled = std::fs::read_to_string(h.workspace.join(path)).unwrap();
    assert!(spilled.contains("row 0000") && spilled.contains("END-OF-BIG-FILE"));
    assert!(result.len() < spilled.len() / 2, "the record is capped");
    r.shutdown().await;
}

#[tokio::test]
async fn pins_focus_and_plan_reach_the_successor_of_a_background_handoff_with_the_tail_last() {
    const PLAN: &str = r#"{"items": [{"text": "read the parser", "status": "done"}, {"text": "fix nested quotes", "status": "in_progress"}]}"#;
    let h = Harness::new().await;
    let gw = Gate::new();
    let mut r = start(bg(&h));
    r.send(Op::Pin {
        text: "never push to `main`".into(),
    })
    .await;
    r.until(|e| matches!(e, Event::Pins { .. })).await;
    r.send(Op::SetFocus {
        focus: Some("the parser bug".into()),
    })
    .await;
    r.until(|e| matches!(e, Event::Focus { .. })).await;
    // The plan crosses the line; the work after the cut goes on while the document is written,
    // and the turn is still running when it is ready: the request is in flight at the turnover.
    let gm = Gate::new();
    h.server.push(a::tool_use("t1", "todo", PLAN, u(31_000)));
    h.server
        .push(a::tool_use("t2", "list_dir", "{}", u(31_200)).gated(&gm));
    h.server.push(a::text("listed, in generation 2", u(5_000)));
    h.server.push_writing(a::text(DOC, u(31_000)).gated(&gw));
    let turn = r.send_turn("refactor the parser").await;
    until_phase(&mut r, |p| matches!(p, HandoffPhase::Writing { .. })).await;
    gw.open();
    until_phase(&mut r, |p| matches!(p, HandoffPhase::Frozen { .. })).await;
    gm.open();
    let ev = r.until_end(turn).await;
    assert_eq!(turn_end(&ev), "completed", "{ev:#?}");
    let rec = h.server.recorded();
    // The background writing carries the standing focus (and the same prefix as always).
    let w = &writing_requests(&rec)[0].body;
    let prompt = w["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| m.to_string())
        .unwrap_or_default();
    assert!(
        prompt.contains("Additional focus: the parser bug"),
        "{prompt}"
    );
    let mains = main_requests(&rec);
    let blocks = first_blocks(&mains.last().unwrap().body);
    // briefing, the engine's part, the request note, the request, the tail note, then the
    // record: the assistant's call and its result, the reply.
    let carried = blocks
        .iter()
        .position(|b| b.contains("## Pinned\n- never push to `main`\n"))
        .unwrap_or_else(|| panic!("no pins: {blocks:#?}"));
    assert_eq!(carried, 1, "{blocks:#?}");
    assert!(blocks[1].contains("fix nested quotes"), "{}", blocks[1]);
    assert!(blocks[1].contains("the parser bug"), "{}", blocks[1]);
    assert_eq!(blocks[3], "refactor the parser");
    assert_eq!(blocks[4], TAIL_NOTE);
    assert!(
        blocks[5..]
            .iter()
            .any(|b| b.contains("[tool call t2: list_dir {}]")),
        "{blocks:#?}"
    );
    assert!(
        blocks
            .last()
            .unwrap()
            .contains("[tool result t2 (list_dir)]"),
        "{blocks:#?}"
    );
    let m = r.manifest();
    let st = &m.steps[0];
    assert_eq!(st.memory.pins.len(), 1);
    assert_eq!(st.handoffs[0].source, DocumentSource::Written);
    assert!(st.handoffs[0].tail >= 2, "{}", st.handoffs[0].tail);
    // What the retired generation held is recorded for the background path too.
    assert!(
        st.handoffs[0].held.messages >= 4,
        "{:?}",
        st.handoffs[0].held
    );
    assert!(
        st.handoffs[0].held.tool_calls >= 2,
        "{:?}",
        st.handoffs[0].held
    );
    r.shutdown().await;
}

#[tokio::test]
async fn resume_of_another_run_drops_the_background_handoff_of_the_session_it_leaves() {
    let h = Harness::new().await;
    // An older run to resume.
    h.server.push(a::text("Fixed add.", u(1_000)));
    let mut older = start(h.params(200_000, 50_000));
    assert_eq!(turn_end(&older.turn("fix the add bug").await), "completed");
    let older_id = flower_tui::engine::ledger::RunDir::open(&older.run_root).run_id;
    let older_root = older.run_root.clone();
    older.shutdown().await;
    // This run crosses its line; its document is held back while the user resumes the older one.
    let gw = Gate::new();
    h.server
        .push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    h.server.push(a::text("listed", u(31_200)));
    h.server.push_writing(a::text(DOC, u(31_000)).gated(&gw));
    let mut p = bg(&h);
    p.front_end = FrontEnd::Interactive { review: false };
    // Its own step: the older run's is free to be claimed when it is resumed.
    p.start.step = Some("this-step".into());
    let mut r = start(p);
    let ev = r.turn("work").await;
    assert_eq!(turn_end(&ev), "completed");
    let id = handoff_of(&r.events);
    r.send(Op::Resume {
        run_id: older_id.clone(),
    })
    .await;
    let ev = r
        .until(
            |e| matches!(e, Event::Handoff(HandoffPhase::Cancelled { handoff }) if *handoff == id),
        )
        .await;
    assert!(
        ev.iter().any(|e| matches!(e, Event::Notice { message } if message.contains("/resume switched to another run"))),
        "{ev:#?}"
    );
    r.until(|e| matches!(e, Event::Resumed { .. })).await;
    // The late document goes nowhere: no turnover in the resumed run, whose session goes on.
    gw.open();
    h.server.push(a::text("Add still works.", u(1_200)));
    let ev = r.turn("check it again").await;
    assert_eq!(turn_end(&ev), "completed");
    assert!(
        !phases(&ev)
            .iter()
            .any(|p| matches!(p, HandoffPhase::Done { .. })),
        "{ev:#?}"
    );
    let m = flower_tui::engine::ledger::Manifest::load(&older_root.join("manifest.json")).unwrap();
    assert!(m.steps[0].handoffs.is_empty());
    assert!(m.steps[0].frozen.is_none());
    let last = h.server.recorded();
    let first = first_blocks(&main_requests(&last).last().unwrap().body);
    assert_eq!(
        first[0], "fix the add bug",
        "the older run's own history goes on"
    );
    r.shutdown().await;
}

#[tokio::test]
async fn the_document_is_frozen_while_a_long_bash_command_runs() {
    // The writing request answers at once, while the main thread runs a command for seconds: the
    // document must be frozen (on disk, in the ledger, its review open) then, not only once the
    // command ends (a kill meanwhile would lose it; the review would start late).
    let h = Harness::new().await;
    let marker = h.workspace.join("bash-ended");
    let command = format!("sleep 3; touch {}", marker.display());
    h.server.push(a::tool_use(
        "t1",
        "bash",
        &serde_json::json!({ "command": command }).to_string(),
        u(31_000),
    ));
    h.server.push(a::text("done", u(31_500)));
    h.server.push(a::text("successor", u(5_000)));
    h.server.push_writing(a::text_counted(DOC, 300));
    let mut r = start(bg(&h));
    r.send_turn("run the slow command").await;
    let ev = until_phase(&mut r, |p| matches!(p, HandoffPhase::Frozen { .. })).await;
    assert!(
        !marker.exists(),
        "the document was frozen only after the command ended"
    );
    assert!(
        !ev.iter().any(|e| matches!(e, Event::ToolResult { .. })),
        "{ev:#?}"
    );
    assert!(
        r.manifest().steps[0].frozen.is_some(),
        "frozen in the ledger"
    );
    let end = r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    assert_eq!(turn_end(&end), "completed");
    r.shutdown().await;
}
