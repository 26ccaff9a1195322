//! `/rewind` on the engine, in process, with real files and the loopback fake: the picker's list
//! (newest first, with each turn's files), a rewind in the current generation (files back, the
//! history cut before the message, the transcript keeping it, the message returned), and one to
//! a message of an earlier generation (files back across handoffs, a successor briefed with the
//! handoff document that began that generation).

use std::fs;

use flower_tui::engine::checkpoint::OnConflict;
use flower_tui::engine::ledger::RewindMode;
use flower_tui::engine::protocol::{Event, Op};

use crate::support::fake::{U, anthropic as a};
use crate::support::harness::{Harness, start};

fn u(input: u64) -> U {
    U::new(input, 10)
}

fn write(name: &str, content: &str) -> String {
    format!(r#"{{"path":"{name}","content":"{content}"}}"#)
}

/// Everything the model was sent in the last request, as text.
fn last_request(h: &Harness) -> String {
    serde_json::to_string(&h.server.requests().last().unwrap()["messages"]).unwrap()
}

#[tokio::test]
async fn rewinding_in_the_current_generation_cuts_the_history_and_restores_the_files() {
    let h = Harness::new().await;
    let ws = h.workspace.clone();
    let mut r = start(h.params(200_000, 50_000));
    h.server.push(a::tool_use(
        "w1",
        "write_file",
        &write("a.txt", "A1"),
        u(1_000),
    ));
    h.server.push(a::text("first done", u(1_100)));
    r.turn("first message").await;
    h.server.push(
        a::Stream::new(u(1_200))
            .tool("w2", "write_file", &write("a.txt", "A2"))
            .tool("w3", "write_file", &write("b.txt", "B"))
            .reply(),
    );
    h.server.push(a::text("second done", u(1_300)));
    r.turn("second message").await;
    assert_eq!(fs::read_to_string(ws.join("a.txt")).unwrap(), "A2");

    r.send(Op::RewindPoints).await;
    let ev = r.until(|e| matches!(e, Event::RewindPoints { .. })).await;
    let Some(Event::RewindPoints { points }) = ev.last() else {
        unreachable!()
    };
    let listed: Vec<(u64, &str, Vec<String>)> = points
        .iter()
        .map(|p| (p.turn, p.text.as_str(), p.files.clone()))
        .collect();
    assert_eq!(
        listed,
        [
            (2, "second message", vec!["a.txt".into(), "b.txt".into()]),
            (1, "first message", vec!["a.txt".into()]),
        ]
    );
    assert!(points.iter().all(|p| p.current && p.generation == 1));

    r.send(Op::Rewind {
        turn: 2,
        mode: RewindMode::Both,
        on_conflict: OnConflict::Stop,
    })
    .await;
    let ev = r.until(|e| matches!(e, Event::Rewound { .. })).await;
    let Some(Event::Rewound {
        files,
        text,
        generation,
        ..
    }) = ev.last()
    else {
        unreachable!()
    };
    assert_eq!(files, &["a.txt", "b.txt"]);
    assert_eq!(text.as_deref(), Some("second message"));
    assert_eq!(*generation, None, "the same session goes on");
    assert_eq!(fs::read_to_string(ws.join("a.txt")).unwrap(), "A1");
    assert!(!ws.join("b.txt").exists());

    h.server.push(a::text("third done", u(1_100)));
    r.turn("third message").await;
    let sent = last_request(&h);
    assert!(
        sent.contains("first done") && sent.contains("third message"),
        "{sent}"
    );
    assert!(
        !sent.contains("second"),
        "the history is cut before the message: {sent}"
    );
    let m = r.manifest();
    let step = &m.steps[0];
    assert_eq!(step.rewinds.len(), 1);
    assert_eq!(
        (step.rewinds[0].turn, step.rewinds[0].conversation),
        (2, true)
    );
    let transcript = fs::read_to_string(
        r.run_root
            .join(format!("sessions/{}.jsonl", step.session_id)),
    )
    .unwrap();
    assert!(
        transcript.contains("second message"),
        "the transcript keeps what was there"
    );
    // /redo brings the rewound turn's files back.
    r.send(Op::Restore {
        action: flower_tui::engine::checkpoint::UndoAction::Redo,
        on_conflict: flower_tui::engine::checkpoint::OnConflict::Stop,
    })
    .await;
    r.until(|e| matches!(e, Event::Restore(_))).await;
    assert_eq!(fs::read_to_string(ws.join("b.txt")).unwrap(), "B");
    r.shutdown().await;
}

#[tokio::test]
async fn rewinding_to_an_earlier_generation_starts_a_successor_from_its_handoff() {
    let h = Harness::new().await;
    let ws = h.workspace.clone();
    let mut r = start(h.params(200_000, 50_000));
    h.server.push(a::tool_use(
        "w1",
        "write_file",
        &write("a.txt", "A"),
        u(1_000),
    ));
    h.server.push(a::text("one done", u(1_100)));
    r.turn("message one").await;
    h.server.push(a::text(
        "## Doing\nMARKER-DOC-ONE\n## Next\nGo on.\n",
        u(1_500),
    ));
    let t = r.send_handoff(None).await;
    r.until_end(t).await;
    h.server.push(a::tool_use(
        "w2",
        "write_file",
        &write("b.txt", "B"),
        u(1_000),
    ));
    h.server.push(a::text("two done", u(1_100)));
    r.turn("message two").await;
    h.server.push(a::text(
        "## Doing\nMARKER-DOC-TWO\n## Next\nGo on.\n",
        u(1_500),
    ));
    let t = r.send_handoff(None).await;
    r.until_end(t).await;
    h.server.push(a::tool_use(
        "w3",
        "write_file",
        &write("c.txt", "C"),
        u(1_000),
    ));
    h.server.push(a::text("three done", u(1_100)));
    r.turn("message three").await;
    assert_eq!(r.manifest().steps[0].generations, 3);

    r.send(Op::Rewind {
        turn: 2,
        mode: RewindMode::Both,
        on_conflict: OnConflict::Stop,
    })
    .await;
    let ev = r.until(|e| matches!(e, Event::Rewound { .. })).await;
    let Some(Event::Rewound {
        files,
        text,
        generation,
        ..
    }) = ev.last()
    else {
        unreachable!()
    };
    assert_eq!(files, &["b.txt", "c.txt"]);
    assert_eq!(text.as_deref(), Some("message two"));
    assert_eq!(*generation, Some(4));
    assert!(ws.join("a.txt").exists() && !ws.join("b.txt").exists() && !ws.join("c.txt").exists());

    h.server.push(a::text("again", u(1_100)));
    r.turn("message two, again").await;
    let sent = last_request(&h);
    assert!(
        sent.contains("MARKER-DOC-ONE"),
        "briefed with generation 2's document: {sent}"
    );
    assert!(
        !sent.contains("MARKER-DOC-TWO") && !sent.contains("three done"),
        "{sent}"
    );
    let step = &r.manifest().steps[0];
    assert_eq!(step.generations, 4);
    assert_eq!(
        (
            step.rewinds[0].to_generation,
            step.rewinds[0].from_generation
        ),
        (2, 3)
    );
    r.shutdown().await;
}

/// A rewind whose code part would write over files changed since is stopped before anything
/// changes (`RewindConflict`), then done with the answer: `KeepUsers` names the kept file and
/// restores the rest, across two turns; the picker then marks both messages as undone.
#[tokio::test]
async fn a_rewind_over_changed_files_asks_first_and_keeps_them_when_told() {
    let h = Harness::new().await;
    let ws = h.workspace.clone();
    let mut r = start(h.params(200_000, 50_000));
    h.server.push(a::tool_use(
        "w1",
        "write_file",
        &write("a.txt", "A1"),
        u(1_000),
    ));
    h.server.push(a::text("first done", u(1_100)));
    r.turn("first message").await;
    // Between the turns the user edits a.txt; the second turn writes b.txt.
    fs::write(ws.join("a.txt"), "mine").unwrap();
    h.server.push(a::tool_use(
        "w2",
        "write_file",
        &write("b.txt", "B"),
        u(1_200),
    ));
    h.server.push(a::text("second done", u(1_300)));
    r.turn("second message").await;

    r.send(Op::Rewind {
        turn: 1,
        mode: RewindMode::Code,
        on_conflict: OnConflict::Stop,
    })
    .await;
    let ev = r
        .until(|e| matches!(e, Event::RewindConflict { .. } | Event::Rewound { .. }))
        .await;
    let Some(Event::RewindConflict { turn, files, .. }) = ev.last() else {
        panic!("not asked: {:?}", ev.last())
    };
    assert_eq!(
        (*turn, files.as_slice()),
        (1, ["a.txt".to_string()].as_slice())
    );
    assert_eq!(fs::read_to_string(ws.join("a.txt")).unwrap(), "mine");
    assert!(ws.join("b.txt").exists(), "nothing is half done");

    r.send(Op::Rewind {
        turn: 1,
        mode: RewindMode::Code,
        on_conflict: OnConflict::KeepUsers,
    })
    .await;
    let ev = r.until(|e| matches!(e, Event::Rewound { .. })).await;
    let Some(Event::Rewound { files, kept, .. }) = ev.last() else {
        unreachable!()
    };
    assert_eq!(files, &["b.txt"]);
    assert_eq!(kept, &["a.txt"]);
    assert_eq!(fs::read_to_string(ws.join("a.txt")).unwrap(), "mine");
    assert!(!ws.join("b.txt").exists());

    r.send(Op::RewindPoints).await;
    let ev = r.until(|e| matches!(e, Event::RewindPoints { .. })).await;
    let Some(Event::RewindPoints { points }) = ev.last() else {
        unreachable!()
    };
    assert!(points.iter().all(|p| p.undone), "{points:?}");
    r.shutdown().await;
}
