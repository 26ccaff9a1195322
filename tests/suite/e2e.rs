//! End to end: the real binary in a pseudo-terminal (`support/pty.rs`), the model played by the
//! loopback fake.

use std::path::Path;

use serde_json::Value;

use crate::support::fake::{FakeServer, Reply, U, anthropic as a};
use crate::support::harness::text_prefix;
use crate::support::pty::{
    CTRL_C, CTRL_S, DOWN, END, ENTER, ESC, Pty, READY, last_user_text, lock, rfind, runtime,
};

/// A five-section handoff document, as a model writes it.
const DOC: &str = "Here is the handoff.\n\n## Doing\nRefactoring the parser.\n\n## Decided\n- Keep the old API: callers depend on it.\n\n## Dead ends\n- Regex parsing: breaks on nested quotes.\n\n## Next\nRun the parser tests.\n\n## Scene\n- src/parser.rs\n";

fn u(input: u64) -> U {
    U {
        input,
        output: 10,
        cache_creation: 0,
        cache_read: 0,
    }
}

#[test]
fn a_typed_message_gets_the_streamed_reply_on_screen() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    server.push(a::text(
        "The answer is forty-two, streamed in small pieces.",
        u(1_000),
    ));
    let mut t = Pty::start(&server, &["--yes"]);
    t.wait_for(READY);
    t.keys("what is the answer");
    t.wait_for("what is the answer");
    t.keys(ENTER);
    let screen = t.wait_for("The answer is forty-two, streamed in small pieces.");
    // The question stays in the chat above the answer.
    let q = screen.find("what is the answer").unwrap();
    let r = screen.find("The answer is forty-two").unwrap();
    assert!(q < r, "{screen}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(last_user_text(&reqs[0]), "what is the answer");
    assert_eq!(reqs[0]["stream"], true);
}

#[test]
fn esc_cancels_a_manual_handoff_and_the_session_goes_on() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    server.push(a::text("first answer here", u(2_000)));
    server.push(a::text("second answer here", u(2_200)));
    server.push(Reply::Stall {
        prefix: text_prefix("## Doing"),
    });
    server.push(a::text("third answer here", u(2_500)));
    let mut t = Pty::start(&server, &["--yes"]);
    t.wait_for(READY);
    t.keys("first question");
    t.wait_for("first question");
    t.keys(ENTER);
    t.wait_for("first answer here");
    // Two exchanges, not one: after a single exchange the TUI refuses `/handoff` with "Nothing to
    // hand off" (its message count is reset by the first session's SessionStarted, which arrives
    // after the first message was counted).
    t.keys("second question");
    t.wait_for("second question");
    t.keys(ENTER);
    t.wait_for("second answer here");

    t.keys("/handoff");
    t.wait_for("/handoff");
    t.keys(ENTER);
    let reqs = t.wait_requests(&server, 3);
    // The writing turn is in flight (stalled): tool use off.
    assert_eq!(reqs[2]["tool_choice"]["type"], "none", "{:#}", reqs[2]);
    t.keys(ESC);
    t.wait_for("Handoff cancelled");

    t.keys("third question");
    t.wait_for("third question");
    t.keys(ENTER);
    t.wait_for("third answer here");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4);
    // The same conversation goes on: the first exchange is still in the history.
    let next = &reqs[3];
    assert_eq!(last_user_text(next), "third question");
    assert_ne!(next["tool_choice"]["type"], "none");
    let history = next["messages"].to_string();
    assert!(history.contains("first question"), "{history}");
    assert!(history.contains("first answer here"), "{history}");
}

#[test]
fn the_reviewed_handoff_reaches_the_successor_with_the_typed_line() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    server.push(a::tool_use("t1", "list_dir", "{}", u(31_000))); // crosses at = 30000
    server.push(a::text(DOC, u(31_500))); // the writing turn
    server.push(a::text(
        "Successor here: running the parser tests.",
        u(5_000),
    ));
    let mut t = Pty::start(
        &server,
        &[
            "--yes",
            // The main thread stops for the document (the background flow is in
            // background_e2e.rs).
            "--handoff-mode",
            "blocking",
            "--window",
            "40000",
            "--headroom",
            "10000",
            "--review",
            "60",
            "--step",
            "e2e",
        ],
    );
    t.wait_for(READY);
    t.keys("refactor the parser");
    t.wait_for("refactor the parser");
    t.keys(ENTER);
    // The side editor opens on the frozen document with the countdown.
    t.wait("the side editor with the document and the countdown", |s| {
        s.contains("handoff-e2e.md") && s.contains("## Next") && s.contains("successor in")
    });
    assert_eq!(
        server.requests().len(),
        2,
        "the successor waits for the review"
    );

    // The editor has the focus: go to the last line, add one, and type into it.
    t.keys(&DOWN.repeat(40));
    t.keys(END);
    t.keys(ENTER);
    t.keys("- zebra-note.rs (typed in review)");
    t.wait("the typed line and the paused countdown", |s| {
        s.contains("- zebra-note.rs (typed in review)") && s.contains("paused")
    });
    assert_eq!(server.requests().len(), 2, "typing paused the countdown");

    t.keys(CTRL_S);
    t.wait_for("Successor here: running the parser tests.");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "{reqs:#?}");
    assert_eq!(reqs[1]["tool_choice"]["type"], "none");
    let successor = &reqs[2];
    assert_eq!(successor["messages"].as_array().unwrap().len(), 1);
    let first = last_user_text(successor);
    assert!(first.contains("zebra-note.rs (typed in review)"), "{first}");
    assert!(first.contains("Run the parser tests."), "{first}");
    let file = workspace_file(&t.workspace(), ".flower/notes/handoff-e2e.md");
    assert!(file.contains("zebra-note.rs (typed in review)"), "{file}");
}

fn workspace_file(ws: &Path, rel: &str) -> String {
    std::fs::read_to_string(ws.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn ctrl_c_twice_quits_and_gives_the_terminal_back() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    let mut t = Pty::start(&server, &[]);
    t.wait_for(READY);
    t.keys(CTRL_C);
    t.keys(CTRL_C);
    let status = t.wait_exit();
    assert!(status.success(), "{status}; screen:\n{}", t.screen());
    let raw = t.raw();
    let tail = String::from_utf8_lossy(&raw[raw.len().saturating_sub(200)..]).into_owned();
    let entered = rfind(&raw, b"\x1b[?1049h").expect("entered the alternate screen");
    let left = rfind(&raw, b"\x1b[?1049l").unwrap_or_else(|| panic!("never left: {tail:?}"));
    assert!(left > entered, "{tail:?}");
    // After leaving: mouse capture and bracketed paste off, the cursor shown, nothing else drawn.
    for (seq, what) in [
        (&b"\x1b[?1000l"[..], "mouse capture off"),
        (b"\x1b[?2004l", "bracketed paste off"),
    ] {
        let off = rfind(&raw, seq).unwrap_or_else(|| panic!("{what} missing: {tail:?}"));
        assert!(off > entered, "{what}: {tail:?}");
    }
    let rest = &raw[left + b"\x1b[?1049l".len()..];
    let show = b"\x1b[?25h";
    assert!(
        !rest.is_empty() && rest.chunks(show.len()).all(|c| c == show),
        "{tail:?}"
    );
    assert!(!lock(&t.shared.parser).screen().alternate_screen());
    assert!(server.requests().is_empty());
}

#[test]
fn tool_calls_wait_for_the_approval_keys() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    server.push(a::tool_use(
        "w1",
        "write_file",
        r#"{"path":"allowed.txt","content":"written after y\n"}"#,
        u(1_000),
    ));
    server.push(a::tool_use(
        "w2",
        "write_file",
        r#"{"path":"denied.txt","content":"never\n"}"#,
        u(1_200),
    ));
    server.push(a::text("One written, one refused.", u(1_400)));
    let mut t = Pty::start(&server, &[]);
    let ws = t.workspace();
    t.wait_for(READY);
    t.keys("write two files");
    t.wait_for("write two files");
    t.keys(ENTER);
    t.wait_for("Allow write_file?");
    assert_eq!(server.requests().len(), 1, "the tool waits for the answer");
    assert!(!ws.join("allowed.txt").exists());
    // A prompt ignores its keys for 400 ms after it appears.
    std::thread::sleep(std::time::Duration::from_millis(450));
    t.keys("y");
    t.wait("the second approval prompt", |s| {
        s.contains("Allow write_file?") && s.contains("denied.txt")
    });
    assert_eq!(
        workspace_file(&ws, "allowed.txt"),
        "written after y\n",
        "approved once: written"
    );
    std::thread::sleep(std::time::Duration::from_millis(450));
    t.keys("n");
    t.wait_for("One written, one refused.");
    assert!(!ws.join("denied.txt").exists(), "denied: not written");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let result = |body: &Value, id: &str| -> Value {
        body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["content"].as_array())
            .flatten()
            .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no result for {id}: {body:#}"))
    };
    assert_ne!(result(&reqs[1], "w1")["is_error"], true);
    assert_eq!(result(&reqs[2], "w2")["is_error"], true);
}

#[test]
fn a_resize_redraws_the_screen_at_the_new_size() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    server.push(a::text("An answer drawn before the resize.", u(1_000)));
    let mut t = Pty::start(&server, &["--yes"]);
    t.wait_for(READY);
    t.keys("before resizing");
    t.keys(ENTER);
    t.wait_for("An answer drawn before the resize.");
    t.resize(24, 80);
    // The input box's top border, exactly as wide as the new terminal, can only come from a redraw.
    let border = format!("┌{}┐", "─".repeat(78));
    let screen = t.wait("the input box redrawn 80 wide", |s| {
        s.lines().any(|l| l == border)
    });
    assert!(screen.contains(READY), "{screen}");
    assert!(
        screen.contains("An answer drawn before the resize."),
        "{screen}"
    );
    assert!(screen.contains("› before resizing"), "{screen}");
}

#[test]
fn page_keys_and_the_wheel_scroll_a_long_answer_and_the_bottom_follows_again() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    let answer: String = (1..=120)
        .map(|i| format!("row {i:03} of the answer\n\n"))
        .collect();
    server.push(a::text(&answer, u(1_000)));
    let mut t = Pty::start(&server, &["--yes"]);
    t.wait_for(READY);
    t.keys("a long answer please");
    t.keys(ENTER);
    t.wait_for("row 120 of the answer");
    // The first answer row on the screen.
    let top = |s: &str| {
        s.lines()
            .filter_map(|l| l.trim().strip_prefix("row ")?.get(..3)?.parse::<u32>().ok())
            .min()
            .unwrap_or(0)
    };
    let bottom_top = top(&t.screen());
    // PageUp: a page of the chat pane back; the newest row leaves the screen.
    t.keys("\x1b[5~");
    let up = t.wait("a page up", |s| !s.contains("row 120"));
    let paged = top(&up);
    assert!(
        paged > 0 && paged < bottom_top,
        "{bottom_top} -> {paged}:\n{up}"
    );
    // The wheel, the mouse being the terminal's: in alternate scroll mode each notch is three
    // arrow keys in one write, and they scroll the chat (the input is not filled from history).
    for _ in 0..5 {
        t.keys("\x1b[A\x1b[A\x1b[A");
        std::thread::sleep(std::time::Duration::from_millis(30));
    }
    let wheeled = t.wait("the wheel up", |s| top(s) > 0 && top(s) < paged);
    assert!(!wheeled.contains("│ a long answer please"), "{wheeled}");
    for _ in 0..40 {
        t.keys("\x1b[B\x1b[B\x1b[B");
    }
    // Captured (Alt-M), the wheel comes as SGR mouse reports and scrolls too.
    t.keys("\x1bm");
    t.wait_for("Mouse captured");
    t.keys("\x1b[5~");
    let paged = t.wait("a page up", |s| !s.contains("row 120"));
    let paged = top(&paged);
    for _ in 0..5 {
        t.keys("\x1b[<64;10;5M");
    }
    t.wait("the wheel up", |s| top(s) > 0 && top(s) < paged);
    for _ in 0..40 {
        t.keys("\x1b[<65;10;5M");
    }
    t.keys("\x1b[6~\x1b[6~\x1b[6~");
    t.wait_for("row 120 of the answer");
    // At the bottom the view follows again: a new answer shows without scrolling.
    server.push(a::text("A second answer at the bottom.", u(2_000)));
    t.keys("more");
    t.keys(ENTER);
    t.wait_for("A second answer at the bottom.");
}

#[test]
fn a_broken_stream_is_replaced_on_screen_by_its_replay() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    // The first try streams some words, then the connection drops; the replay completes.
    server.push(Reply::Cut {
        bytes: text_prefix("Half of a first try that breaks"),
    });
    server.push(a::text("The whole answer arrives once.", u(2_000)));
    let mut t = Pty::start(&server, &["--yes"]);
    t.wait_for(READY);
    t.keys("explain it");
    t.wait_for("explain it");
    t.keys(ENTER);
    let screen = t.wait_for("The whole answer arrives once.");
    assert!(
        screen.contains("stream broken: interrupted") && screen.contains("(2/5)"),
        "{screen}"
    );
    assert!(!screen.contains("Half of a first try"), "{screen}");
    assert_eq!(
        screen.matches("The whole answer arrives once.").count(),
        1,
        "{screen}"
    );
    let r = screen.find("stream broken").unwrap_or(0);
    let a = screen.find("The whole answer").unwrap_or(0);
    assert!(r < a, "the replay follows the retry line: {screen}");
    assert_eq!(server.requests().len(), 2);
}

mod daily;
mod hostile;
mod tui_day;
mod undo;

#[test]
fn the_demo_plays_by_itself_asks_once_and_its_scratch_dir_is_gone_after_quitting() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    let mut t = Pty::start(&server, &["--demo", "--review", "off"]);
    // No key pressed: the demo types its own first message and reaches its one prompt.
    t.wait_for("Allow edit_file?");
    std::thread::sleep(std::time::Duration::from_millis(450));
    t.keys("y");
    t.wait_for("Running the checks.");
    // Stop the turn, then quit from an idle, empty input.
    t.keys(ESC);
    std::thread::sleep(std::time::Duration::from_millis(800));
    t.keys(CTRL_C);
    t.keys(CTRL_C);
    let status = t.wait_exit();
    assert!(status.success(), "{status}; screen:\n{}", t.screen());
    let runs = t.home().path().join("data/flower/runs");
    let run = std::fs::read_dir(&runs)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let m = flower_tui::engine::ledger::Manifest::load(&run.join("manifest.json")).unwrap();
    assert!(m.workspace.starts_with(std::env::temp_dir()));
    assert!(
        !m.workspace.exists(),
        "{} is left behind",
        m.workspace.display()
    );
    assert!(server.requests().is_empty(), "the demo needs no provider");
}
