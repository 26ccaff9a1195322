//! End to end, what a hostile daily user found in the TUI: Esc in the side editor with unsaved
//! edits, quitting during the review, where the editor's cursor starts, approval prompts that
//! offer only their keys, the model's single line breaks, and wide and combined characters. The
//! real binary in a pseudo-terminal, the fake behind it (see the parent module).

use std::path::PathBuf;
use std::time::Duration;

use crate::support::check::{assert_contains, assert_lacks};
use crate::support::fake::FakeServer;
use crate::support::headless::{BLOCKING, flags};
use crate::support::pty::{
    CTRL_C, ENTER, ESC, Pty, kept_beside, last_user_text, lock, runtime, served,
};
use crate::support::script::DOC;

const CTRL_END: &str = "\x1b[1;5F";
const CTRL_O: &str = "\x0f";

/// A blocking handoff crossed on the first request, its document open in the side editor for a
/// review of 60 s. The fake's replies after the writing turn are the caller's.
fn in_review(server: &FakeServer, step: &str) -> Pty {
    server.script().over_the_line(DOC);
    let args = flags(&format!("{BLOCKING} --review 60 --step {step}"));
    let mut t = Pty::open(server, &args);
    t.ask("refactor the parser");
    let file = format!("handoff-{step}.md");
    t.wait("the side editor with the countdown", |s| {
        s.contains(&file) && s.contains("successor in")
    });
    t
}

fn notes(t: &Pty) -> PathBuf {
    t.workspace().join(".flower/notes")
}

#[test]
fn esc_with_unsaved_review_edits_asks_and_the_cursor_starts_below_the_header() {
    let (_rt, server) = served();
    let mut t = in_review(&server, "esc");
    server
        .script()
        .at(5_000)
        .text("Successor here, with your notes.");
    // Typed at once, without moving: it lands at the end of the first section's text.
    t.keys(" Keep zebra.");
    t.wait_for("Refactoring the parser. Keep zebra.");
    // Esc asks; nothing goes to the successor meanwhile.
    t.keys(ESC);
    t.wait_for("s save · d discard · Esc keep editing");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(server.requests().len(), 2, "the successor waits");
    // Esc again: back to editing, the edits still there. Ctrl-End reaches the end.
    t.keys(ESC);
    t.wait("the question gone", |s| {
        !s.contains("s save · d discard") && s.contains("Keep zebra.")
    });
    t.keys(CTRL_END);
    t.keys(ENTER);
    t.keys("- tail-note.rs");
    t.wait_for("- tail-note.rs");
    t.keys(ESC);
    t.wait_for("s save · d discard · Esc keep editing");
    t.keys("s");
    t.wait_for("Successor here, with your notes.");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let first = last_user_text(&reqs[2]);
    assert_contains(&first, "Refactoring the parser. Keep zebra.");
    let file = std::fs::read_to_string(notes(&t).join("handoff-esc.md")).unwrap();
    assert!(
        file.starts_with("# Handoff"),
        "the header line is intact: {file}"
    );
    assert_contains(&file, "Refactoring the parser. Keep zebra.\n");
    assert!(file.trim_end().ends_with("- tail-note.rs"), "{file}");
}

#[test]
fn quitting_during_the_review_keeps_the_unsaved_edits_and_says_where() {
    let rt = runtime();
    for (how, step) in [("ctrl-c twice", "quitc"), ("/quit", "quitq")] {
        let server = rt.block_on(FakeServer::start());
        let mut t = in_review(&server, step);
        t.keys(" Unsaved words.");
        t.wait_for("Unsaved words.");
        if how == "/quit" {
            t.keys(CTRL_O);
            t.ask("/quit");
        } else {
            // The first Ctrl-C with the editor focused says what the second does.
            t.keys(CTRL_C);
            t.wait_for("Ctrl-C again quits, keeping your unsaved edits in a file");
            t.keys(CTRL_C);
        }
        let status = t.wait_exit();
        assert!(status.success(), "{how}: {status}; screen:\n{}", t.screen());
        let file = notes(&t).join(format!("handoff-{step}.md"));
        let kept = kept_beside(&file);
        assert_eq!(kept.len(), 1, "{how}: {kept:?}");
        let text = std::fs::read_to_string(&kept[0]).unwrap();
        assert!(
            text.contains("Refactoring the parser. Unsaved words."),
            "{how}: {text}"
        );
        let raw = String::from_utf8_lossy(&t.raw()).into_owned();
        assert!(
            raw.contains("are kept in") && raw.contains("reopens its review"),
            "{how}: the way out says where: {raw:?}"
        );
        assert_eq!(server.requests().len(), 2, "{how}: no successor started");
    }
}

#[test]
fn an_outside_call_offers_no_always_and_its_cell_waits_for_the_answer() {
    let (_rt, server) = served();
    server
        .script()
        .tool("read_file", r#"{"path":"/etc/hostname"}"#)
        .at(1_200)
        .text("Not read, as you wished.");
    // --yes: a path outside the workspace is asked for all the same.
    let mut t = Pty::open(&server, &["--yes"]);
    t.keys("read the hostname");
    t.keys(ENTER);
    t.wait_for("Allow read_file?");
    // Seconds pass while the user reads: the cell says it waits, not that it runs.
    std::thread::sleep(Duration::from_millis(2_300));
    let screen = t.wait_for("y once  ·  n/esc deny");
    assert_contains(&screen, "waits for your approval");
    assert_lacks(&screen, "running…");
    assert_lacks(&screen, "a always");
    t.keys("n");
    t.wait_for("Not read, as you wished.");
}

#[test]
fn single_line_breaks_in_a_reply_stay_on_their_lines() {
    let (_rt, server) = served();
    server
        .script()
        .text("Files changed:\nsrc/alpha.rs\nsrc/beta.rs\n\nAll tests pass.");
    let mut t = Pty::open(&server, &["--yes"]);
    t.keys("what changed");
    t.keys(ENTER);
    let screen = t.wait_for("All tests pass.");
    let rows: Vec<&str> = screen.lines().collect();
    let at = rows
        .iter()
        .position(|r| r.trim_end().ends_with("Files changed:"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(
        rows[at + 1].trim_end().ends_with("src/alpha.rs"),
        "{screen}"
    );
    assert!(rows[at + 2].trim_end().ends_with("src/beta.rs"), "{screen}");
}

const FAMILY: &str = "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}";
const FLAG: &str = "\u{1f1eb}\u{1f1f7}";
const HEART: &str = "\u{2764}\u{fe0f}";

/// The screen's rows as the terminal shows them.
fn rows(t: &Pty) -> Vec<String> {
    let parser = lock(&t.shared.parser);
    let (_, cols) = parser.screen().size();
    parser.screen().rows(0, cols).collect()
}

/// No row shows a glyph ratatui did not draw there: the family's other members (a terminal that
/// does not join it draws them past its two columns), and every row with the tricky line shows
/// exactly it.
fn assert_no_strays(t: &Pty, want: &str) {
    let rows = rows(t);
    let screen = rows.join("\n");
    assert!(
        !screen.contains('\u{1f469}') && !screen.contains('\u{1f467}'),
        "a stray glyph:\n{screen}"
    );
    for row in rows.iter().filter(|r| r.contains("famille")) {
        assert_eq!(row.trim_start().trim_end(), want, "\n{screen}");
    }
}

#[test]
fn wide_and_combined_characters_leave_no_stray_glyphs() {
    let (_rt, server) = served();
    let line = format!("A {FAMILY} famille {FLAG} caf\u{e9}e\u{301} {HEART} 日本語 Z");
    server.script().text(&line);
    let many: String = (1..=45).map(|i| format!("line {i}\n")).collect();
    server.script().at(1_200).text(&many);
    let mut t = Pty::open(&server, &["--yes"]);
    // In the input box too: the right border stays where it is.
    t.keys(&format!("x {FAMILY} y"));
    t.wait("the typed emoji", |s| s.contains("x \u{1f468}"));
    let input = rows(&t)
        .into_iter()
        .find(|r| r.contains("x \u{1f468}"))
        .unwrap();
    assert!(input.trim_end().ends_with('│'), "{input:?}");
    assert_eq!(input.chars().filter(|c| *c == '│').count(), 2, "{input:?}");
    t.keys(ENTER);
    t.wait_for("日本語 Z");
    // The family is drawn as its first person over the two columns it was given, the flag as
    // its letters, the heart as itself and a blank.
    let want = "A \u{1f468} famille FR caf\u{e9}e\u{301} \u{2764}  日本語 Z";
    assert_no_strays(&t, want);
    // Later output scrolls over those rows, redrawing only what changed.
    t.keys("more");
    t.keys(ENTER);
    t.wait_for("line 45");
    assert_no_strays(&t, want);
    let screen = rows(&t).join("\n");
    assert!(!screen.contains("famille"), "scrolled away:\n{screen}");
    // Scrolled back into view, over the lines that were there.
    t.keys(&"\x1b[5~".repeat(3));
    t.wait_for("famille");
    assert_no_strays(&t, want);
}

#[test]
fn after_continue_edit_handoff_opens_the_document_that_briefed_the_session() {
    let (_rt, server) = served();
    server
        .script()
        .over_the_line(DOC)
        .at(5_000)
        .text("Successor here: the parser tests run.");
    let args = flags(&format!("{BLOCKING} --review off --step cont"));
    let mut t = Pty::open(&server, &args);
    t.keys("refactor the parser");
    t.keys(ENTER);
    t.wait_for("Successor here: the parser tests run.");
    // `/quit` leaves whether or not the turn has ended yet; two quick Ctrl-C presses would
    // interrupt a turn still finishing instead of quitting.
    t.ask("/quit");
    assert!(t.wait_exit().success());

    let mut t = Pty::start_in(t.home(), &server, &["--continue"]);
    t.wait_for("Continuing run");
    t.ask("/edit-handoff");
    let screen = t.wait("the document in the side editor", |s| {
        s.contains("handoff-cont.md") && s.contains("## Next") || s.contains("No handoff")
    });
    assert_lacks(&screen, "No handoff document yet");
    assert_contains(&screen, "Run the parser tests.");
}

#[test]
fn the_demo_keeps_unsaved_review_edits_outside_its_scratch_copy() {
    let (_rt, server) = served();
    let mut t = Pty::start(&server, &["--demo", "--review", "300"]);
    t.wait_for("Allow edit_file?");
    std::thread::sleep(Duration::from_millis(450));
    t.keys("y");
    t.wait_for("successor in");
    // Written in the background, the document opens beside the work without the focus.
    t.keys(CTRL_O);
    t.keys(" (demo note)");
    t.wait_for("(demo note)");
    t.keys(CTRL_O);
    t.ask("/quit");
    let status = t.wait_exit();
    assert!(status.success(), "{status}; screen:\n{}", t.screen());
    let raw = String::from_utf8_lossy(&t.raw()).into_owned();
    let kept = raw
        .split("are kept in ")
        .nth(1)
        .and_then(|rest| rest.split(['\r', '\n']).next())
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("the way out says where: {raw:?}"));
    // The scratch copy is gone; the edits are not, and nothing promises a review to reopen.
    let text = std::fs::read_to_string(&kept).unwrap_or_else(|e| panic!("{}: {e}", kept.display()));
    let _ = std::fs::remove_file(&kept);
    assert_contains(&text, "(demo note)");
    assert!(!raw.contains("reopens its review"), "{raw:?}");
}

#[test]
fn a_handoff_file_deleted_during_the_review_is_written_back_with_the_typed_edit() {
    let (_rt, server) = served();
    let mut t = in_review(&server, "gone");
    server
        .script()
        .at(5_000)
        .text("Successor here, briefed from the file.");
    let file = notes(&t).join("handoff-gone.md");
    std::fs::remove_file(&file).unwrap();
    t.wait_for("gone from disk");
    t.keys(" Typed after the delete.");
    t.wait_for("Typed after the delete.");
    // Nothing on disk to discard the edit for: Esc writes the buffer back and the review ends.
    t.keys(ESC);
    t.wait_for("Successor here, briefed from the file.");
    // The user is told: the editor says its text was written back.
    t.resize(40, 200);
    t.wait("the editor's note", |s| s.contains("written back"));
    let on_disk = std::fs::read_to_string(&file).unwrap();
    assert_contains(
        &on_disk,
        "Refactoring the parser. Typed after the delete.\n",
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let first = last_user_text(&reqs[2]);
    assert_contains(&first, "Refactoring the parser. Typed after the delete.");
}
