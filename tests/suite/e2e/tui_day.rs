//! End to end, a Claude Code user's day: `!command` runs at once with no model request, the
//! mouse is left to the terminal (unless the config's `mouse_capture` takes it from the start),
//! and leaving prints the conversation into the scrollback.

use crate::support::fake::anthropic as a;
use crate::support::pty::{ENTER, Pty, READY, find, lock, runtime};

use crate::support::fake::U;

fn u(input: u64) -> U {
    U::new(input, 10)
}

#[test]
fn a_bang_line_runs_in_the_sandbox_with_no_model_request() {
    let rt = runtime();
    let server = rt.block_on(crate::support::fake::FakeServer::start());
    server.push(a::text("The file says hello.", u(1_000)));
    let mut t = Pty::start(&server, &[]);
    std::fs::write(t.workspace().join("greeting.txt"), "hello from the file\n").unwrap();
    t.wait_for(READY);
    t.keys("!cat greeting.txt");
    t.wait_for("!cat greeting.txt");
    t.keys(ENTER);
    let screen = t.wait_for("hello from the file");
    assert!(!screen.contains("Allow bash?"), "not asked for:\n{screen}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(server.requests().is_empty(), "no model request");
    t.keys("what does it say");
    t.keys(ENTER);
    t.wait_for("The file says hello.");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let sent = reqs[0]["messages"].to_string();
    assert!(sent.contains("hello from the file"), "{sent}");
}

#[test]
fn the_mouse_is_the_terminals_by_default_and_alt_m_captures_it() {
    let rt = runtime();
    let server = rt.block_on(crate::support::fake::FakeServer::start());
    server.push(a::text("First reply.", u(1_000)));
    let mut t = Pty::start(&server, &["--yes"]);
    t.wait_for(READY);
    let raw = t.raw();
    assert!(find(&raw, b"\x1b[?1007h").is_some(), "alternate scroll on");
    assert!(find(&raw, b"\x1b[?1000h").is_none(), "no mouse capture");
    t.keys("first question");
    t.keys(ENTER);
    t.wait_for("First reply.");
    // Alt-M captures the mouse.
    t.keys("\x1bm");
    t.wait_for("Mouse captured");
    assert!(find(&t.raw(), b"\x1b[?1000h").is_some(), "captured now");
}

#[test]
fn the_config_key_captures_the_mouse_from_the_start_and_alt_m_gives_it_back() {
    let rt = runtime();
    let server = rt.block_on(crate::support::fake::FakeServer::start());
    let home = std::sync::Arc::new(tempfile::tempdir().unwrap());
    crate::support::files::write(
        &home.path().join("config/flower/config.toml"),
        "mouse_capture = true\n",
    );
    let mut t = Pty::start_in(home, &server, &[]);
    t.wait_for(READY);
    let raw = t.raw();
    assert!(find(&raw, b"\x1b[?1000h").is_some(), "captured at start");
    assert!(find(&raw, b"\x1b[?1000l").is_none(), "not given back yet");
    // Alt-M gives it back to the terminal.
    t.keys("\x1bm");
    t.wait_for("Mouse left to the terminal");
    assert!(find(&t.raw(), b"\x1b[?1000l").is_some(), "released now");
}

#[test]
fn leaving_prints_the_conversation_into_the_scrollback() {
    let rt = runtime();
    let server = rt.block_on(crate::support::fake::FakeServer::start());
    server.push(a::text("The reply that stays in the scrollback.", u(1_000)));
    let mut t = Pty::start(&server, &["--yes"]);
    t.wait_for(READY);
    t.keys("a question to keep");
    t.keys(ENTER);
    t.wait_for("The reply that stays in the scrollback.");
    t.keys("/quit");
    t.keys(ENTER);
    let status = t.wait_exit();
    assert!(status.success());
    let screen = t.screen();
    assert!(
        !lock(&t.shared.parser).screen().alternate_screen(),
        "the normal screen"
    );
    let q = screen.find("**You:** a question to keep");
    let r = screen.find("The reply that stays in the scrollback.");
    let resume = screen.find("flower-tui --resume");
    assert!(
        q.is_some() && q < r && r < resume,
        "question, reply, then how to continue:\n{screen}"
    );
}
