//! End to end, `/undo`, `/redo` and `/rewind` in the TUI: the real binary in a pseudo-terminal,
//! turns that write files and change one with `bash`, the commands typed in the input box. The
//! files on disk and the cells listing what was restored are checked; a file the user changed
//! since is asked about in a prompt (Esc cancels, n keeps it and restores the rest); `/rewind` is opened by Esc twice, the files go back,
//! the abandoned turn leaves the chat and the message returns to the input box.

use std::fs;

use crate::support::check::{assert_contains, assert_file, assert_lacks};
use crate::support::fake::U;
use crate::support::fake::anthropic as a;
use crate::support::files::write;
use crate::support::pty::{ENTER, ESC, Pty, READY, served};

#[test]
fn undo_and_redo_typed_in_the_tui_restore_the_turns_files() {
    let (_rt, server) = served();
    server.push(
        a::Stream::new(U::new(1_000, 10))
            .tool(
                "w1",
                "write_file",
                r#"{"path":"made.txt","content":"made\n"}"#,
            )
            .tool(
                "b1",
                "bash",
                r#"{"command":"printf 'two\\n' >> notes.txt"}"#,
            )
            .reply(),
    );
    server.script().at(1_200).text("Both done.");
    let home = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let ws = home.path().join("ws");
    write(&ws.join("notes.txt"), "one\n");
    let mut t = Pty::start_in(home, &server, &["--yes"]);
    t.wait_for(READY);
    t.ask("make the files");
    t.wait_for("Both done.");
    assert_file(ws.join("notes.txt"), b"one\ntwo\n");

    t.keys("/undo");
    t.keys(ENTER);
    let screen = t.wait_for("undo: 2 files of turn 1 (generation 1) restored");
    assert_contains(&screen, "removed made.txt");
    assert_contains(&screen, "modified notes.txt");
    assert!(!ws.join("made.txt").exists());
    assert_file(ws.join("notes.txt"), b"one\n");

    t.keys("/redo");
    t.keys(ENTER);
    t.wait_for("redo: 2 files of turn 1 (generation 1) restored");
    assert_file(ws.join("made.txt"), b"made\n");
    assert_file(ws.join("notes.txt"), b"one\ntwo\n");

    // The user changes a file the turn wrote: asked in a prompt, not written over. Esc cancels.
    fs::write(ws.join("made.txt"), "mine\n").unwrap();
    t.keys("/undo");
    t.keys(ENTER);
    let screen = t.wait_for("files changed since. Write over them?");
    assert_contains(&screen, "changed since turn 1");
    assert_contains(&screen, "overwrite");
    // A key within the guard time is ignored; the prompt answers after it.
    std::thread::sleep(std::time::Duration::from_millis(600));
    t.keys(ESC);
    t.wait_for("cancelled: nothing was changed");
    assert_file(ws.join("made.txt"), b"mine\n");
    assert_file(ws.join("notes.txt"), b"one\ntwo\n");
    // Asked again; n skips the changed file and restores the rest.
    t.keys("/undo");
    t.keys(ENTER);
    t.wait("the prompt again", |s| {
        s.matches("Write over them?").count() == 1
    });
    std::thread::sleep(std::time::Duration::from_millis(600));
    t.keys("n");
    let screen = t.wait_for("kept as you changed it: made.txt");
    assert_contains(&screen, "modified notes.txt");
    assert_file(ws.join("made.txt"), b"mine\n");
    assert_file(ws.join("notes.txt"), b"one\n");
}

#[test]
fn rewind_picked_with_esc_twice_restores_the_files_and_returns_the_message() {
    let (_rt, server) = served();
    server
        .script()
        .tool("write_file", r#"{"path":"one.txt","content":"1\n"}"#)
        .at(1_100)
        .text("One written.")
        .at(1_200)
        .tool("write_file", r#"{"path":"two.txt","content":"2\n"}"#)
        .at(1_300)
        .text("Two written.");
    let mut t = Pty::start(&server, &["--yes"]);
    let ws = t.workspace();
    t.wait_for(READY);
    t.ask("write file one");
    t.wait_for("One written.");
    t.keys("write file two");
    t.keys(ENTER);
    t.wait_for("Two written.");
    assert!(ws.join("two.txt").exists());

    // Two Esc presses apart (one read of both bytes would be Alt-Esc); a machine under load may
    // still join them, so try again until the picker shows.
    for _ in 0..5 {
        t.keys(ESC);
        std::thread::sleep(std::time::Duration::from_millis(300));
        t.keys(ESC);
        let shown = (0..20).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(100));
            t.screen().contains("rewind to before a message")
        });
        if shown {
            break;
        }
    }
    let screen = t.wait_for("rewind to before a message");
    assert_contains(&screen, "write file two  · two.txt");
    assert_contains(&screen, "write file one  · one.txt");
    t.keys(ENTER);
    t.wait_for("code and conversation");
    t.keys(ENTER);
    let screen = t.wait_for("Rewound to before turn 2 (code and conversation)");
    assert_contains(&screen, "restored two.txt");
    // The abandoned turn left the chat; the one before it stays.
    assert_lacks(&screen, "Two written.");
    assert_contains(&screen, "One written.");
    assert!(!ws.join("two.txt").exists());
    assert!(ws.join("one.txt").exists());
    // The message is back in the input box, ready to edit and send again.
    let screen = t.wait("the message back in the input", |s| {
        s.lines()
            .rev()
            .take(6)
            .any(|l| l.contains("write file two"))
    });
    assert_lacks(&screen, "Ask anything");
}
