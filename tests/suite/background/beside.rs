//! The writing beside the main thread: on the same prefix, the review while work goes on, the
//! wait at the hard limit, cancel, a main-thread overflow, headless, a resume of another run and a
//! long bash command.

use super::*;
use crate::support::check::assert_starts_with;

#[tokio::test]
async fn the_writing_runs_beside_the_main_thread_on_the_same_prefix() {
    let h = Harness::new().await;
    let main3 = Gate::new();
    h.script().at(12_000).tool("list_dir", "{}");
    // Crosses the line: the writing starts on the prefix this request sent.
    h.script().at(31_000).tool("list_dir", "{}");
    // The main thread's next request, held until the document is frozen.
    h.script()
        .at(31_500)
        .held(&main3)
        .call("t3", "list_dir", "{}");
    h.script()
        .at(5_000)
        .text("successor: the parser tests pass");
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
    assert_starts_with(&blocks[5], "[user]\n[tool result t2 (list_dir)]\n");
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
    h.script().at(31_000).tool("list_dir", "{}");
    h.script()
        .at(31_200)
        .held(&g2)
        .call("t2", "list_dir", "{}")
        .at(31_400)
        .held(&g3)
        .call("t3", "list_dir", "{}");
    h.script().at(5_000).text("successor: done");
    h.script().at(31_100).writing().text(DOC);
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
    h.script().at(31_000).tool("list_dir", "{}");
    // 39,000 >= 40,000 - 1,024: no more main-thread requests before the document.
    h.script()
        .at(39_000)
        .tool("list_dir", "{}")
        .at(5_000)
        .text("successor picks up");
    h.script().at(31_100).writing().held(&gw).text(DOC);
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
async fn cancel_stops_the_writing_only_and_the_turn_goes_on() {
    let h = Harness::new().await;
    let (gw, g2) = (Gate::new(), Gate::new());
    h.script().at(31_000).tool("list_dir", "{}");
    h.script().at(31_100).held(&g2).call("t2", "list_dir", "{}");
    h.script().at(31_200).text("the turn finished");
    h.script().at(31_000).writing().held(&gw).text(DOC);
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
    h.script().at(31_300).text("next answer");
    h.script().at(31_000).writing().text(DOC);
    r.turn("next").await;
    until_phase(&mut r, |p| matches!(p, HandoffPhase::Done { .. })).await;
    assert_eq!(r.manifest().steps[0].handoffs.len(), 1);
    r.shutdown().await;
}

#[tokio::test]
async fn a_main_thread_overflow_waits_for_the_background_document() {
    let h = Harness::new().await;
    let gw = Gate::new();
    h.script()
        .at(31_000)
        .tool("list_dir", "{}")
        .reply(a::too_long(41_000, 40_000))
        .at(5_000)
        .text("retried in the successor");
    h.script().at(31_000).writing().held(&gw).text(DOC);
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
    h.script()
        .at(31_000)
        .tool("list_dir", "{}")
        .at(31_200)
        .text("all done");
    h.script().at(31_000).writing().held(&gw).text(DOC);
    let mut r = start(bg(&h));
    let ev = r.completed_turn("work").await;
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

#[tokio::test]
async fn resume_of_another_run_drops_the_background_handoff_of_the_session_it_leaves() {
    let h = Harness::new().await;
    // An older run to resume.
    h.script().text("Fixed add.");
    let mut older = start(h.params(200_000, 50_000));
    older.completed_turn("fix the add bug").await;
    let older_id = flower_tui::engine::ledger::RunDir::open(&older.run_root).run_id;
    let older_root = older.run_root.clone();
    older.shutdown().await;
    // This run crosses its line; its document is held back while the user resumes the older one.
    let gw = Gate::new();
    h.script()
        .at(31_000)
        .tool("list_dir", "{}")
        .at(31_200)
        .text("listed");
    h.script().at(31_000).writing().held(&gw).text(DOC);
    let mut p = bg(&h);
    p.front_end = FrontEnd::Interactive { review: false };
    // Its own step: the older run's is free to be claimed when it is resumed.
    p.start.step = Some("this-step".into());
    let mut r = start(p);
    r.completed_turn("work").await;
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
    h.script().at(1_200).text("Add still works.");
    let ev = r.completed_turn("check it again").await;
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
    h.script()
        .at(31_000)
        .tool(
            "bash",
            serde_json::json!({ "command": command }).to_string(),
        )
        .at(31_500)
        .text("done")
        .at(5_000)
        .text("successor");
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
