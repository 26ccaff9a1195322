//! The background handoff on the real binary in a pseudo-terminal: both spinners at
//! once, the side editor opening without the focus, an edit during the review while the work goes
//! on, the turnover at the next step; `kill -9` while the document is written and during its
//! review.

use serde_json::Value;

use crate::support::fake::{FakeServer, Gate, is_writing};
use crate::support::files::write;
use crate::support::headless::{flags, manifest};
use crate::support::pty::{CTRL_S, ENTER, ESC, Pty, READY, served};
use crate::support::requests::first_blocks;
use crate::support::script::doc;

const CTRL_O: &str = "\x0f";

fn kill_9(t: &mut Pty) {
    t.kill_9();
}

/// A home whose config keeps the writing reserve small (`max_tokens = 1024`): the hard limit of a
/// 40,000-token window is then 38,976, well above its handoff line at 30,000.
fn home() -> std::sync::Arc<tempfile::TempDir> {
    let home = tempfile::tempdir().unwrap();
    let cfg = home.path().join("config/flower");
    write(&cfg.join("config.toml"), "max_tokens = 1024\n");
    std::sync::Arc::new(home)
}

fn start(server: &FakeServer, args: &[&str]) -> Pty {
    Pty::start_in(home(), server, args)
}

const ARGS: &str = "--yes --window 40000 --headroom 10000 --review 60";

#[test]
fn both_spinners_the_review_beside_the_work_and_the_edit_reaches_the_successor() {
    let (_rt, server) = served();
    let (gw, g2) = (Gate::new(), Gate::new());
    server.script().at(31_000).tool("list_dir", "{}");
    server.script().at(31_300).held(&g2).tool("list_dir", "{}");
    server
        .script()
        .at(5_000)
        .text("Successor: picking up the edited plan.");
    server
        .script()
        .at(31_000)
        .writing()
        .held(&gw)
        .text(&doc("parser"));
    let mut t = start(&server, &flags(&format!("{ARGS} --step bg")));
    t.wait_for(READY);
    t.ask("refactor the parser");
    // The writing runs beside the main thread's request: two spinner lines.
    t.wait("both spinners", |s| {
        s.contains("writing the handoff in the background") && s.contains("working…")
    });
    gw.open();
    // The document opens in the side editor with its countdown; the focus stays in the input.
    t.wait("the review beside the work", |s| {
        s.contains("handoff-bg.md") && s.contains("successor in")
    });
    t.keys("typed into the input");
    t.wait_for("typed into the input");
    let file = t.workspace().join(".flower/notes/handoff-bg.md");
    assert!(
        !std::fs::read_to_string(&file)
            .unwrap()
            .contains("typed into the input")
    );
    // Into the editor, a line at the end: the countdown pauses; Ctrl-S ends the review.
    t.keys(CTRL_O);
    t.new_line_at_end();
    t.keys("- typed-during-the-work.rs");
    t.wait("the edit and the paused countdown", |s| {
        s.contains("- typed-during-the-work.rs") && s.contains("paused")
    });
    t.keys(CTRL_S);
    t.wait_for("saved: the next session reads this file");
    // The main thread's request still runs in the old session; when it answers, the next step
    // is the turnover.
    g2.open();
    t.wait_for("Successor: picking up the edited plan.");
    let rec = server.recorded();
    let mains: Vec<&Value> = rec
        .iter()
        .filter(|r| !is_writing(&r.body))
        .map(|r| &r.body)
        .collect();
    assert_eq!(
        mains.len(),
        3,
        "two in the old session, one in the successor: {:#?}",
        mains.iter().map(|m| first_blocks(m)).collect::<Vec<_>>()
    );
    let blocks = first_blocks(mains[2]);
    assert!(
        blocks[0].contains("- typed-during-the-work.rs"),
        "{blocks:#?}"
    );
    assert_eq!(blocks[2], "refactor the parser");
    assert!(
        blocks
            .iter()
            .any(|b| b == "[assistant]\n[tool call t1: list_dir {}]\n")
    );
    assert!(
        blocks
            .iter()
            .any(|b| b == "[assistant]\n[tool call t2: list_dir {}]\n")
    );
    // The typed input is still there, unsent.
    assert!(t.screen().contains("typed into the input"));
    let m = manifest(t.home().path());
    assert_eq!(m["steps"][0]["handoffs"][0]["source"], "written");
    assert_eq!(m["steps"][0]["handoffs"][0]["tail"], 4);
    assert_eq!(m["steps"][0]["handoffs"][0]["edited"], true);
}

#[test]
fn esc_with_no_turn_running_cancels_the_background_writing() {
    let (_rt, server) = served();
    let gw = Gate::new();
    server
        .script()
        .at(31_000)
        .tool("list_dir", "{}")
        .at(31_200)
        .text("The turn is done.");
    server
        .script()
        .at(31_000)
        .writing()
        .held(&gw)
        .text(&doc("x"));
    let mut t = start(&server, &flags(&format!("{ARGS} --step esc")));
    t.wait_for(READY);
    t.ask("go");
    t.wait("the answer, the writing still running", |s| {
        s.contains("The turn is done.") && s.contains("esc to cancel it")
    });
    t.keys(ESC);
    t.wait("the cancel", |s| {
        s.contains("Handoff cancelled") && !s.contains("writing the handoff in the background")
    });
    let m = manifest(t.home().path());
    assert_eq!(m["steps"][0]["handoffs"].as_array().map(Vec::len), Some(0));
    assert!(m["steps"][0].get("frozen").is_none());
}

#[test]
fn kill_9_while_the_document_is_written_loses_nothing() {
    let (_rt, server) = served();
    let (gw, g2) = (Gate::new(), Gate::new());
    server.script().at(31_000).tool("list_dir", "{}");
    server
        .script()
        .at(31_100)
        .held(&g2)
        .text("never answered")
        .at(31_000)
        .writing()
        .held(&gw)
        .text(&doc("lost"));
    let mut t = start(&server, &flags(&format!("{ARGS} --step k1")));
    t.wait_for(READY);
    let task = "fix the lexer";
    t.keys(task);
    t.keys(ENTER);
    t.wait_for("writing the handoff in the background");
    let home = t.home();
    kill_9(&mut t);
    drop(t);
    let step = &manifest(home.path())["steps"][0];
    assert_eq!(step["handoffs"].as_array().map(Vec::len), Some(0));
    assert!(step.get("frozen").is_none(), "nothing was frozen: {step:#}");
    // --continue: the same session, every message of it; the next handoff writes from it all.
    server.drop_pending();
    server
        .script()
        .at(31_500)
        .text("Continuing the lexer.")
        .at(4_000)
        .text("Generation 2 on the lexer.");
    server.script().at(31_000).writing().text(&doc("lexer"));
    let mut t = Pty::start_in(
        home,
        &server,
        &flags("--yes --window 40000 --headroom 10000 --continue --review off"),
    );
    t.wait_for("continuing session");
    t.keys("go on");
    t.keys(ENTER);
    t.wait_for("Continuing the lexer.");
    t.wait("the turnover", |s| s.contains("generation 2"));
    let rec = server.recorded();
    let writing = rec
        .iter()
        .rev()
        .find(|r| is_writing(&r.body))
        .expect("a writing request");
    let history = writing.body["messages"].to_string();
    assert!(
        history.contains(task) && history.contains("\"t1\""),
        "{history}"
    );
    t.keys("and now?");
    t.keys(ENTER);
    t.wait_for("Generation 2 on the lexer.");
    let blocks = first_blocks(&server.requests().last().unwrap().clone());
    assert!(blocks[0].contains("Continue lexer."), "{blocks:#?}");
}

#[test]
fn kill_9_during_the_background_review_reopens_it_with_the_edit_and_the_tail() {
    let (_rt, server) = served();
    let g2 = Gate::new();
    server
        .script()
        .at(31_000)
        .tool("list_dir", "{}")
        .at(31_200)
        .tool("glob", r#"{"pattern":"*.rs"}"#);
    server
        .script()
        .at(31_300)
        .held(&g2)
        .text("held")
        .at(31_000)
        .writing()
        .text(&doc("review"));
    let mut t = start(&server, &flags(&format!("{ARGS} --step k2")));
    t.wait_for(READY);
    let task = "tidy the review";
    t.keys(task);
    t.keys(ENTER);
    t.wait("the review beside the work", |s| {
        s.contains("handoff-k2.md") && s.contains("successor in")
    });
    // The main thread has gone on past the cut (t2) and is in its third request.
    t.wait_requests(&server, 4);
    // An edit made in another editor lands on disk during the review.
    let file = t.workspace().join(".flower/notes/handoff-k2.md");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace("Continue review.", "Continue review.\nEDITED ON DISK."),
    )
    .unwrap();
    let home = t.home();
    kill_9(&mut t);
    drop(t);
    let m = manifest(home.path());
    let frozen = &m["steps"][0]["frozen"];
    assert_eq!(frozen["request"][0], task, "{frozen:#}");
    assert_eq!(frozen["cut"]["messages"], 1, "{frozen:#}");
    // A plain start reopens the review; Esc ends it; the successor holds the request, the edit
    // and the record of what the killed session did after the cut.
    server.drop_pending();
    server
        .script()
        .at(4_000)
        .text("Generation 2 after the kill.");
    let mut t = Pty::start_in(home, &server, &flags(ARGS));
    t.wait("the reopened review", |s| {
        s.contains("was never turned over") && s.contains("successor in")
    });
    t.keys(ESC);
    t.wait_for("send a message");
    t.keys("go on");
    t.keys(ENTER);
    t.wait_for("Generation 2 after the kill.");
    let blocks = first_blocks(server.requests().last().unwrap());
    assert!(blocks[0].contains("EDITED ON DISK."), "{blocks:#?}");
    assert_eq!(blocks[2], task);
    assert!(
        blocks
            .iter()
            .any(|b| b == "[assistant]\n[tool call t1: list_dir {}]\n")
    );
    assert!(blocks.iter().any(|b| b.contains("[tool call t2: glob")));
    assert_eq!(blocks.last().map(String::as_str), Some("go on"));
    let m = manifest(t.home().path());
    assert_eq!(m["steps"][0]["handoffs"][0]["tail"], 4);
    assert!(m["steps"][0].get("frozen").is_none());
}

#[test]
fn the_demo_hands_off_in_the_background_and_generation_2_finishes() {
    let (_rt, server) = served();
    let mut t = Pty::open(&server, &["--demo", "--review", "3"]);
    t.keys("fix the calculator");
    t.keys(ENTER);
    // The demo's edit waits for its approval (keys are ignored for 400 ms after it shows).
    t.wait_for("Allow edit_file?");
    std::thread::sleep(std::time::Duration::from_millis(450));
    t.keys("y");
    // The review of the demo's document runs while its first generation re-runs the checks.
    t.wait("the review beside the work", |s| {
        s.contains("handoff-") && s.contains("successor in") && s.contains("Re-running the checks")
    });
    t.wait("generation 2 finishing", |s| {
        s.contains("All three checks pass")
    });
    assert!(server.requests().is_empty(), "the demo needs no provider");
}
