//! End to end: the real binary in a pseudo-terminal (`support/pty.rs`), the model played by the
//! loopback fake.

use std::path::Path;

use serde_json::Value;

use crate::support::check::{assert_contains, assert_lacks};
use crate::support::fake::Reply;
use crate::support::harness::text_prefix;
use crate::support::headless::{BLOCKING, flags, ledger};
use crate::support::pty::{CTRL_S, ENTER, ESC, Pty, READY, last_user_text, lock, rfind, served};
use crate::support::script::DOC;

#[test]
fn a_typed_message_gets_the_streamed_reply_on_screen() {
    let (_rt, server) = served();
    let answer = "The answer is forty-two, streamed in small pieces.";
    server.script().text(answer);
    let mut t = Pty::open(&server, &["--yes"]);
    t.ask("what is the answer");
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
    let (_rt, server) = served();
    let stall = Reply::Stall {
        prefix: text_prefix("## Doing"),
    };
    server
        .script()
        .at(2_000)
        .text("first answer here")
        .at(2_200)
        .text("second answer here")
        .reply(stall)
        .at(2_500)
        .text("third answer here");
    let mut t = Pty::open(&server, &["--yes"]);
    t.ask("first question");
    t.wait_for("first answer here");
    // Two exchanges, not one: after a single exchange the TUI refuses `/handoff` with "Nothing to
    // hand off" (its message count is reset by the first session's SessionStarted, which arrives
    // after the first message was counted).
    t.ask("second question");
    t.wait_for("second answer here");

    t.ask("/handoff");
    let reqs = t.wait_requests(&server, 3);
    // The writing turn is in flight (stalled): tool use off.
    assert_eq!(reqs[2]["tool_choice"]["type"], "none", "{:#}", reqs[2]);
    t.keys(ESC);
    t.wait_for("Handoff cancelled");

    t.ask("third question");
    t.wait_for("third answer here");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4);
    // The same conversation goes on: the first exchange is still in the history.
    let next = &reqs[3];
    assert_eq!(last_user_text(next), "third question");
    assert_ne!(next["tool_choice"]["type"], "none");
    let history = next["messages"].to_string();
    assert_contains(&history, "first question");
    assert_contains(&history, "first answer here");
}

#[test]
fn the_reviewed_handoff_reaches_the_successor_with_the_typed_line() {
    let (_rt, server) = served();
    // Crosses the line at 30,000; the writing turn; the successor.
    server
        .script()
        .over_the_line(DOC)
        .at(5_000)
        .text("Successor here: running the parser tests.");
    // The main thread stops for the document (the background flow is in background_e2e.rs).
    let args = flags(&format!("{BLOCKING} --review 60 --step e2e"));
    let mut t = Pty::open(&server, &args);
    t.ask("refactor the parser");
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
    t.new_line_at_end();
    t.keys("- zebra-note.rs (typed in review)");
    t.wait("the typed line and the paused countdown", |s| {
        s.contains("- zebra-note.rs (typed in review)") && s.contains("paused")
    });
    assert_eq!(server.requests().len(), 2, "typing paused the countdown");

    t.keys(CTRL_S);
    let screen = t.wait_for("Successor here: running the parser tests.");
    // The successor started from the document: the side editor holding it closed.
    assert_lacks(&screen, "- zebra-note.rs (typed in review)");
    assert_contains(&screen, READY);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "{reqs:#?}");
    assert_eq!(reqs[1]["tool_choice"]["type"], "none");
    let successor = &reqs[2];
    assert_eq!(successor["messages"].as_array().unwrap().len(), 1);
    let first = last_user_text(successor);
    assert_contains(&first, "zebra-note.rs (typed in review)");
    assert_contains(&first, "Run the parser tests.");
    let file = workspace_file(&t.workspace(), ".flower/notes/handoff-e2e.md");
    assert_contains(&file, "zebra-note.rs (typed in review)");
}

fn workspace_file(ws: &Path, rel: &str) -> String {
    std::fs::read_to_string(ws.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn ctrl_c_twice_quits_and_gives_the_terminal_back() {
    let (_rt, server) = served();
    let mut t = Pty::open(&server, &[]);
    let status = t.quit();
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
    let (_rt, server) = served();
    server
        .script()
        .tool(
            "write_file",
            r#"{"path":"allowed.txt","content":"written after y\n"}"#,
        )
        .at(1_200)
        .tool("write_file", r#"{"path":"denied.txt","content":"never\n"}"#)
        .at(1_400)
        .text("One written, one refused.");
    let mut t = Pty::open(&server, &[]);
    let ws = t.workspace();
    t.ask("write two files");
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
    assert_ne!(result(&reqs[1], "t1")["is_error"], true);
    assert_eq!(result(&reqs[2], "t2")["is_error"], true);
}

#[test]
fn a_resize_redraws_the_screen_at_the_new_size() {
    let (_rt, server) = served();
    server.script().text("An answer drawn before the resize.");
    let mut t = Pty::open(&server, &["--yes"]);
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
    assert_contains(&screen, "An answer drawn before the resize.");
    assert_contains(&screen, "› before resizing");
}

#[test]
fn page_keys_and_the_wheel_scroll_a_long_answer_and_the_bottom_follows_again() {
    let (_rt, server) = served();
    let answer: String = (1..=120)
        .map(|i| format!("row {i:03} of the answer\n\n"))
        .collect();
    server.script().text(&answer);
    let mut t = Pty::open(&server, &["--yes"]);
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
    server
        .script()
        .at(2_000)
        .text("A second answer at the bottom.");
    t.keys("more");
    t.keys(ENTER);
    t.wait_for("A second answer at the bottom.");
}

#[test]
fn a_broken_stream_is_replaced_on_screen_by_its_replay() {
    let (_rt, server) = served();
    // The first try streams some words, then the connection drops; the replay completes.
    let cut = Reply::Cut {
        bytes: text_prefix("Half of a first try that breaks"),
    };
    server
        .script()
        .reply(cut)
        .at(2_000)
        .text("The whole answer arrives once.");
    let mut t = Pty::open(&server, &["--yes"]);
    t.ask("explain it");
    let screen = t.wait_for("The whole answer arrives once.");
    assert!(
        screen.contains("stream broken: interrupted") && screen.contains("(2/5)"),
        "{screen}"
    );
    assert_lacks(&screen, "Half of a first try");
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
mod tui_day_small;
mod undo;

#[test]
fn the_demo_plays_by_itself_asks_once_and_its_scratch_dir_is_gone_after_quitting() {
    let (_rt, server) = served();
    let mut t = Pty::start(&server, &["--demo", "--review", "off"]);
    // No key pressed: the demo types its own first message and reaches its one prompt.
    t.wait_for("Allow edit_file?");
    std::thread::sleep(std::time::Duration::from_millis(450));
    t.keys("y");
    t.wait_for("Running the checks.");
    // Stop the turn, then quit from an idle, empty input.
    t.keys(ESC);
    std::thread::sleep(std::time::Duration::from_millis(800));
    let status = t.quit();
    assert!(status.success(), "{status}; screen:\n{}", t.screen());
    let m = ledger(t.home().path());
    assert!(m.workspace.starts_with(std::env::temp_dir()));
    assert!(
        !m.workspace.exists(),
        "{} is left behind",
        m.workspace.display()
    );
    assert!(server.requests().is_empty(), "the demo needs no provider");
}
