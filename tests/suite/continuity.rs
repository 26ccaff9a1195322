//! Continuity in the engine, against the fake provider: the request in flight
//! reaches the successor, the briefing holds the file verbatim, a review that does not end commits
//! nothing and is reopened, and two engines in one workspace keep to their own documents. The same
//! cases on the real binary are in `continuity_e2e.rs`.

use flower_tui::engine::handoff::CARRIED_MARKER;
use flower_tui::engine::ledger::RunDir;
use flower_tui::engine::policy::FrontEnd;
use flower_tui::engine::protocol::{Event, HandoffPhase, Op};
use flower_tui::engine::session::Resume;
use serde_json::Value;

use crate::support::check::{assert_contains, assert_event, assert_starts_with, picked};
use crate::support::fake::{Reply, anthropic as a};
use crate::support::harness::{Harness, start, turn_end};
use crate::support::requests::first_blocks;
use crate::support::script::DOC;

fn overflow() -> Reply {
    a::too_long(45_000, 40_000)
}

fn warnings(events: &[Event]) -> Vec<String> {
    picked!(events, Event::Warning { message } => message.clone())
}

#[tokio::test]
async fn an_overflow_on_the_second_message_briefs_the_successor_with_it() {
    let h = Harness::new().await;
    h.script().text("hi there");
    h.server.push(overflow());
    h.script().at(2_000).text("on it: the second request");
    let mut r = start(h.params(40_000, 10_000));
    r.completed_turn("hello").await;
    let second = "Now rename  `parse_all` to `parse`\n  everywhere (keep this spacing).";
    r.completed_turn(second).await;
    let reqs = h.server.requests();
    assert_eq!(reqs.len(), 3);
    let blocks = first_blocks(&reqs[2]);
    assert_eq!(blocks.len(), 3, "{blocks:#?}");
    assert!(blocks[0].contains("[DEGRADED"), "{}", blocks[0]);
    assert!(
        blocks[1].contains("request you are continuing"),
        "{}",
        blocks[1]
    );
    assert_eq!(blocks[2], second, "verbatim, a block of its own");
    // The degraded Scene names the current request, then the step's first task.
    let file = std::fs::read_to_string(h.workbench().join("notes/handoff-test-step.md")).unwrap();
    let scene = file.split("## Scene\n").nth(1).unwrap();
    assert_starts_with(
        scene,
        "Request in progress at the cut:\nNow rename  `parse_all`",
    );
    assert_contains(scene, "Original task of this step:\nhello");
    r.shutdown().await;
}

#[tokio::test]
async fn an_automatic_handoff_carries_the_request_and_a_degraded_one_carries_the_document() {
    let h = Harness::new().await;
    h.script().at(31_000).tool("list_dir", "{}"); // crosses at = 30000
    h.script().at(31_500).text(DOC); // the writing turn
    h.script().at(5_000).text("done with the parser"); // successor
    h.script().at(31_000).tool("list_dir", "{}"); // next turn crosses again
    for _ in 0..5 {
        // The writing turn fails on all 5 tries: a degraded document.
        h.script().reply(Reply::status(500, "boom"));
    }
    h.script().at(5_000).text("third generation here");
    let mut r = start(h.params(40_000, 10_000));
    let task = "refactor the parser";
    r.completed_turn(task).await;
    let reqs = h.server.requests();
    let blocks = first_blocks(&reqs[2]);
    assert_eq!(blocks.len(), 3);
    assert!(blocks[0].contains("Run the parser tests."));
    assert_eq!(blocks[2], task);

    let next = "now the lexer, please";
    r.completed_turn(next).await;
    let reqs = h.server.requests();
    let last = reqs.last().unwrap();
    let blocks = first_blocks(last);
    assert_eq!(blocks.last().map(String::as_str), Some(next));
    let doc = &blocks[0];
    assert_contains(doc, "[DEGRADED");
    let mark = format!("{CARRIED_MARKER} from the generation 1 handoff");
    for carried in [
        "Keep the old API: callers depend on it.",
        "Regex parsing: breaks on nested quotes.",
        "- src/parser.rs",
    ] {
        let at = doc
            .find(carried)
            .unwrap_or_else(|| panic!("{carried}: {doc}"));
        let marked = doc[..at].rfind(&mark).expect("marked as carried forward");
        assert!(marked < at);
    }
    assert!(doc.contains("Request in progress at the cut:\nnow the lexer, please"));
    let m = r.manifest();
    assert_eq!(m.steps[0].handoffs.len(), 2);
    assert!(m.steps[0].handoffs[1].degraded);
    r.shutdown().await;
}

#[tokio::test]
async fn the_briefing_holds_the_file_byte_for_byte() {
    let h = Harness::new().await;
    let (mut r, handoff, path, text) = h.in_review(DOC).await;
    let (header, rest) = text.split_once('\n').unwrap();
    let edited = format!(
        "{header} — EDITED HEADER\r\nA line above the sections, *as typed*.\n\n{rest}\
         ## My own notes\n   indented   oddly\t(tab)\n\n\n"
    );
    std::fs::write(&path, &edited).unwrap();
    r.send(Op::ReviewDone { handoff }).await;
    let ev = r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    assert!(warnings(&ev).is_empty(), "{ev:#?}");
    let blocks = first_blocks(&h.server.requests()[2]);
    let wrapped = format!("<handoff>\n{edited}</handoff>\n");
    assert!(blocks[0].ends_with(&wrapped), "{}", blocks[0]);
    let m = r.manifest();
    let rec = &m.steps[0].handoffs[0];
    assert!(rec.edited);
    // The model's five and the engine's `touched`.
    assert_eq!(rec.sections.len(), 6);
    assert!(m.steps[0].frozen.is_none());
    r.shutdown().await;
}

#[tokio::test]
async fn a_file_that_no_longer_parses_is_sent_as_left_and_an_empty_one_falls_back() {
    let h = Harness::new().await;
    for _ in 0..2 {
        h.script().over_the_line(DOC).at(5_000).text("ok");
    }
    let mut r = start(h.reviewed(40_000, 10_000));
    r.send_turn("first").await;
    let (handoff, path) = r.frozen_for_review().await;
    let left = "I rewrote this as plain prose: finish the parser, then the lexer.";
    std::fs::write(&path, left).unwrap();
    r.send(Op::ReviewDone { handoff }).await;
    let ev = r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    let w = warnings(&ev);
    assert!(
        w.iter()
            .any(|m| m.contains("no recognisable sections") && m.contains("as you left it")),
        "{w:?}"
    );
    let blocks = first_blocks(&h.server.requests()[2]);
    assert!(blocks[0].ends_with(&format!("<handoff>\n{left}\n</handoff>\n")));

    r.send_turn("second").await;
    let (handoff, path) = r.frozen_for_review().await;
    std::fs::write(&path, "  \n").unwrap();
    r.send(Op::ReviewDone { handoff }).await;
    let ev = r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    assert!(
        warnings(&ev).iter().any(|m| m.contains("is empty")),
        "{ev:#?}"
    );
    let blocks = first_blocks(&h.server.requests()[5]);
    assert!(
        blocks[0].contains("## Next\nRun the parser tests."),
        "the document in memory"
    );
    r.shutdown().await;
}

#[tokio::test]
async fn a_shutdown_during_the_review_commits_nothing_and_the_next_start_reopens_it() {
    let h = Harness::new().await;
    h.script().over_the_line(DOC);
    let mut r = start(h.reviewed(40_000, 10_000));
    let root = r.run_root.clone();
    let task = "fix the flaky test";
    r.send_turn(task).await;
    let (handoff, path) = r.frozen_for_review().await;
    let unsaved = path.with_extension("md.unsaved-20261129T134100Z.md");
    std::fs::write(&unsaved, "my unsaved words").unwrap();
    r.send(Op::UnsavedEdits {
        handoff,
        path: unsaved.clone(),
    })
    .await;
    let first_id = r.manifest().steps[0].session_id.clone();
    r.shutdown().await;
    let m = flower_tui::engine::ledger::Manifest::load(&root.join("manifest.json")).unwrap();
    let st = &m.steps[0];
    assert!(st.handoffs.is_empty() && st.retired.is_empty(), "{st:#?}");
    assert_eq!(st.session_id, first_id, "no successor was recorded");
    let fz = st.frozen.as_ref().expect("a frozen record");
    assert!(fz.file.written());
    assert_eq!(fz.file.path(), Some(path.as_path()));
    assert_eq!(fz.request, [task]);
    assert_eq!(fz.unsaved.as_deref(), Some(unsaved.as_path()));
    assert_eq!(h.server.requests().len(), 2, "no successor request");

    // The next start: the review is reopened on the frozen document, the edits offered.
    h.script().at(5_000).text("successor continues");
    let mut p = h.resumed(40_000, 10_000, &root);
    p.front_end = FrontEnd::Interactive { review: true };
    let mut r = start(p);
    let ev = r
        .until(|e| matches!(e, Event::Handoff(HandoffPhase::Frozen { .. })))
        .await;
    let reopened = ev.iter().find_map(|e| match e {
        Event::Handoff(HandoffPhase::Reopened {
            unsaved, path: p, ..
        }) => Some((unsaved.clone(), p.clone())),
        _ => None,
    });
    assert_eq!(reopened, Some((Some(unsaved.clone()), Some(path.clone()))));
    assert_event!(ev, Event::Notice { message } if message.contains("was never turned over"));
    let Some(Event::Handoff(HandoffPhase::Frozen { handoff, .. })) = ev.last() else {
        panic!()
    };
    std::fs::write(&path, "## Doing\nrestored\n## Next\nmy unsaved words\n").unwrap();
    r.send(Op::ReviewDone { handoff: *handoff }).await;
    let ev = r
        .until(|e| matches!(e, Event::Handoff(HandoffPhase::Done { .. })))
        .await;
    assert_event!(ev, Event::Handoff(HandoffPhase::Done { generation: 2, .. }));
    let m = r.manifest();
    let st = &m.steps[0];
    assert!(st.frozen.is_none());
    assert_eq!(st.retired, [first_id]);
    assert_eq!(st.handoffs.len(), 1);
    // The successor starts when the user speaks; it has the request after the briefing.
    r.completed_turn("go on").await;
    let blocks = first_blocks(h.server.requests().last().unwrap());
    assert!(blocks[0].contains("my unsaved words"));
    assert_eq!(&blocks[2..], [task.to_string(), "go on".to_string()]);
    r.shutdown().await;
}

#[tokio::test]
async fn two_engines_on_one_step_keep_to_their_own_documents() {
    let h = Harness::new().await;
    let other = crate::support::fake::FakeServer::start().await;
    for (server, name) in [(&h.server, "A"), (&other, "B")] {
        server
            .script()
            .at(31_000)
            .tool("list_dir", "{}")
            .at(31_500)
            .text(&DOC.replace("Refactoring", &format!("{name} refactoring")))
            .at(5_000)
            .text("ok");
    }
    let mut pa = h.params(40_000, 10_000);
    pa.front_end = FrontEnd::Interactive { review: true };
    let mut pb = h.params(40_000, 10_000);
    pb.front_end = FrontEnd::Interactive { review: true };
    pb.provider.client = std::sync::Arc::new(
        flower_tui::engine::provider::anthropic::AnthropicProvider::new(
            flower_tui::engine::provider::anthropic::AnthropicConfig {
                base_url: other.base_url(),
                api_key: crate::support::harness::KEY.into(),
                http: Some(crate::support::fake::client()),
                ..Default::default()
            },
        ),
    );
    let mut ra = start(pa);
    let mut rb = start(pb);
    ra.send_turn("a task").await;
    let (ha, path_a) = ra.frozen_for_review().await;
    rb.send_turn("b task").await;
    let (hb, path_b) = rb.frozen_for_review().await;
    assert_eq!(path_a, h.workbench().join("notes/handoff-test-step.md"));
    assert_eq!(path_b, h.workbench().join("notes/handoff-test-step-2.md"));
    assert_event!(
        rb.events,
        Event::Notice { message }
            if message.contains("step test-step is in use") && message.contains("test-step-2")
    );
    rb.send(Op::ReviewDone { handoff: hb }).await;
    ra.send(Op::ReviewDone { handoff: ha }).await;
    rb.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    ra.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    let a_first = first_blocks(&h.server.requests()[2]);
    let b_first = first_blocks(&other.requests()[2]);
    assert!(a_first[0].contains("A refactoring") && !a_first[0].contains("B refactoring"));
    assert!(b_first[0].contains("B refactoring") && !b_first[0].contains("A refactoring"));
    assert_eq!(rb.manifest().steps[0].name, "test-step-2");
    ra.shutdown().await;
    rb.shutdown().await;
}

/// Engine parameters that resume the run in `root`.
fn resumed(h: &Harness, root: &std::path::Path) -> flower_tui::engine::session::EngineParams {
    let mut p = h.reviewed(40_000, 10_000);
    p.run_dir = RunDir::open(root);
    p.start.resume = Some(Resume::at(RunDir::open(root)));
    p
}

#[tokio::test]
async fn a_manual_handoff_carries_an_interrupted_request_but_not_a_finished_one() {
    let h = Harness::new().await;
    h.script().text("first answer");
    h.server.push(Reply::Stall {
        prefix: crate::support::harness::text_prefix("half an ans"),
    });
    h.script().at(1_500).text(DOC); // the /handoff writing turn
    h.script().at(500).text("ok");
    h.script().at(1_500).text(DOC); // the second /handoff
    let mut r = start(h.params(40_000, 10_000));
    r.completed_turn("first request").await;
    let cut = "the request Esc interrupted";
    let turn = r.send_turn(cut).await;
    while h.server.requests().len() < 2 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    r.send(Op::Abort { turn }).await;
    assert_eq!(turn_end(&r.until_end(turn).await), "interrupted");
    let turn = r.send_handoff(None).await;
    assert_eq!(turn_end(&r.until_end(turn).await), "handoff");
    // The successor's first request (sent with the next message) has the interrupted request.
    r.completed_turn("and then?").await;
    let blocks = first_blocks(&h.server.requests()[3]);
    assert_eq!(
        &blocks[2..],
        [cut.to_string(), "and then?".to_string()],
        "{blocks:#?}"
    );
    // That turn completed: a handoff now carries no request.
    let turn = r.send_handoff(None).await;
    assert_eq!(turn_end(&r.until_end(turn).await), "handoff");
    let m = r.manifest();
    assert_eq!(m.steps[0].handoffs.len(), 2);
    let s = m.steps[0].session_id.clone();
    let transcript =
        std::fs::read_to_string(r.run_root.join(format!("sessions/{s}.jsonl"))).unwrap();
    let first: Value = serde_json::from_str(transcript.lines().nth(1).unwrap()).unwrap();
    assert_eq!(
        first["message"]["content"].as_array().map(Vec::len),
        Some(1),
        "the briefing alone: {first:#}"
    );
    r.shutdown().await;
}

#[tokio::test]
async fn a_kill_before_the_file_was_written_freezes_it_at_the_next_start() {
    let h = Harness::new().await;
    h.script().over_the_line(DOC);
    let mut r = start(h.reviewed(40_000, 10_000));
    let root = r.run_root.clone();
    r.send_turn("task").await;
    let (_, path) = r.frozen_for_review().await;
    r.shutdown().await;
    // As if killed between the ledger's record and the file: not written, no file.
    let mpath = root.join("manifest.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&mpath).unwrap()).unwrap();
    m["steps"][0]["frozen"]["written"] = Value::Bool(false);
    m["steps"][0]["frozen"]["path"] = Value::Null;
    std::fs::write(&mpath, serde_json::to_vec(&m).unwrap()).unwrap();
    std::fs::remove_file(&path).unwrap();

    let mut r = start(resumed(&h, &root));
    let (handoff, again) = r.frozen_for_review().await;
    assert_eq!(again, path);
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .contains("Run the parser tests.")
    );
    h.script().at(100).text("on it");
    r.send(Op::ReviewDone { handoff }).await;
    r.until(|e| matches!(e, Event::Handoff(HandoffPhase::Done { .. })))
        .await;
    assert!(r.manifest().steps[0].frozen.is_none());
    r.shutdown().await;
}

#[tokio::test]
async fn continuing_a_step_a_live_engine_works_on_is_refused() {
    let h = Harness::new().await;
    h.script().at(100).text("hi");
    let mut r = start(h.params(40_000, 10_000));
    let root = r.run_root.clone();
    r.completed_turn("hello").await;
    let err = flower_tui::engine::session::spawn(resumed(&h, &root))
        .err()
        .expect("refused while the first engine lives");
    let text = err.to_string();
    assert!(
        text.contains("step test-step is in use by another flower-tui")
            && text.contains(&format!("pid {}", std::process::id())),
        "{text}"
    );
    r.shutdown().await;
    // Once it is gone, the step is free again.
    let r = start(resumed(&h, &root));
    r.shutdown().await;
}

#[tokio::test]
async fn a_key_typed_into_the_handoff_file_during_the_review_reaches_neither_the_model_nor_disk() {
    // A provider key, registered as every key in the environment is at start.
    const TYPED_KEY: &str = "sk-ant-typed-into-the-file-0123456789";
    flower_tui::engine::secrets::register(TYPED_KEY);
    let h = Harness::new().await;
    let (mut r, handoff, path, text) = h.in_review(DOC).await;
    // The user (or `$EDITOR`, or a command) puts a key into the document under review.
    std::fs::write(&path, format!("{text}## Notes\nthe key is {TYPED_KEY}\n")).unwrap();
    r.send(Op::ReviewDone { handoff }).await;
    r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    let briefing = first_blocks(&h.server.requests()[2]).join("\n");
    assert_contains(&briefing, "## Notes\nthe key is sk-a****\n");
    assert!(!briefing.contains(TYPED_KEY), "{briefing}");
    // The file the successor was briefed from holds it masked too, as every handoff file does.
    let on_disk = std::fs::read_to_string(&path).unwrap();
    assert!(!on_disk.contains(TYPED_KEY), "{on_disk}");
    assert_contains(&on_disk, "the key is sk-a****");
    r.shutdown().await;
}
