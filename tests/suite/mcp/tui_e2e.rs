//! The workspace's `.mcp.json` in the real TUI (a pseudo-terminal): the question comes at launch,
//! nothing starts before the answer, keys typed ahead never answer it, `y` after a pause starts the
//! server (`/mcp` shows it ready), and the next launch in the workspace does not ask again.

use std::time::Duration;

use crate::support::check::{assert_contains, assert_lacks};
use crate::support::files::write;
use crate::support::mcp_setup::pids_with_env;
use crate::support::pty::{Pty, READY, served};

use super::cli::mcp_json;
use super::*;

#[test]
fn the_tui_asks_once_per_workspace_and_typed_ahead_keys_do_not_answer() {
    let (_rt, server) = served();
    let mark = marker();
    let home = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let ws = home.path().join("ws");
    write(&ws.join(".mcp.json"), mcp_json(&mark));

    let mut t = Pty::start_in(home.clone(), &server, &[]);
    let asked = t.wait_for("Start the MCP servers of this workspace's .mcp.json?");
    assert_contains(&asked, "project: sh -c");
    assert_contains(&asked, "y approve");
    // A first message typed at once: its y and n go to the input and answer nothing.
    for c in "say yes or no".chars() {
        t.keys(&c.to_string());
        std::thread::sleep(Duration::from_millis(60));
    }
    std::thread::sleep(Duration::from_millis(700));
    let screen = t.screen();
    assert!(
        screen.contains("Start the MCP servers of this workspace's .mcp.json?"),
        "answered by typing ahead: {screen}"
    );
    assert!(
        pids_with_env(&marker_str(&mark)).is_empty(),
        "a server started before the answer"
    );
    // The typed text stays in the input (the prompt says so) until it is sent or cleared.
    assert_contains(&screen, "your text stays in the input");
    t.keys("\x03"); // Ctrl-C clears the input
    std::thread::sleep(Duration::from_millis(600));
    t.keys("y");
    t.wait_for("approved for this workspace: starting its MCP servers");
    mcp_until_ready(&mut t);
    assert_eq!(pids_with_env(&marker_str(&mark)).len(), 1);
    t.ask("/quit");
    t.wait_exit();

    // The next launch in this workspace remembers the answer: no question, the server starts.
    let mut again = Pty::start_in(home, &server, &[]);
    again.wait_for(READY);
    let listed = mcp_until_ready(&mut again);
    assert_lacks(&listed, "Start the MCP servers");
}

#[test]
fn declined_stays_declined_until_the_file_changes() {
    let (_rt, server) = served();
    let mark = marker();
    let home = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let ws = home.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let json = mcp_json(&mark);
    std::fs::write(ws.join(".mcp.json"), &json).unwrap();
    let question = "Start the MCP servers of this workspace's .mcp.json?";

    let mut t = Pty::start_in(home.clone(), &server, &[]);
    t.wait_for(question);
    std::thread::sleep(Duration::from_millis(500));
    t.keys("n");
    t.wait_for("declined: its MCP servers stay off");
    t.ask("/quit");
    t.wait_exit();
    drop(t);

    let mut t = Pty::start_in(home.clone(), &server, &[]);
    let screen = t.wait_for("you declined it for this workspace");
    assert_lacks(&screen, question);
    t.ask("/quit");
    t.wait_exit();
    drop(t);
    assert!(pids_with_env(&marker_str(&mark)).is_empty());

    // Another version of the file is another question.
    std::fs::write(ws.join(".mcp.json"), format!("{json}\n")).unwrap();
    let mut t = Pty::start_in(home, &server, &[]);
    t.wait_for(question);
}

/// `/mcp` until it lists the project's server ready (it may still be starting); the screen then.
fn mcp_until_ready(t: &mut Pty) -> String {
    for _ in 0..40 {
        t.ask("/mcp");
        std::thread::sleep(Duration::from_millis(250));
        let screen = t.screen();
        if screen.contains("project (.mcp.json) · ready, ") {
            return screen;
        }
    }
    panic!("the server never listed ready: {}", t.screen());
}
