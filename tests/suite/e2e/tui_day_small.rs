//! End to end, the smaller things of a Claude Code user's day in the real binary: Ctrl-U deletes
//! to the start of the line (Ctrl-Z undoes), an approval waiting rings the terminal's bell and
//! shows a short diff whole on a 20-row screen, and `/model` alone opens a picker of the
//! provider's models whose choice the next request uses.

use crate::support::check::{assert_contains, assert_lacks};
use crate::support::pty::{DOWN, ENTER, Pty, READY, last_user_text, served};

const CTRL_U: &str = "\x15";
const CTRL_Z: &str = "\x1a";

#[test]
fn ctrl_u_deletes_to_the_start_of_the_line_and_ctrl_z_undoes() {
    let (_rt, server) = served();
    server.script().text("Got it.");
    let mut t = Pty::open(&server, &["--yes"]);
    t.keys("words to throw away");
    t.wait_for("words to throw away");
    t.keys(CTRL_U);
    t.wait_for(READY);
    t.keys(CTRL_Z);
    t.wait_for("words to throw away");
    t.keys(CTRL_U);
    t.wait_for(READY);
    t.keys("the words kept");
    t.wait_for("the words kept");
    t.keys(ENTER);
    t.wait_for("Got it.");
    let reqs = server.requests();
    assert_eq!(last_user_text(&reqs[0]), "the words kept");
}

#[test]
fn an_approval_rings_and_shows_a_short_diff_whole_on_a_small_screen() {
    let (_rt, server) = served();
    let old = "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
    server
        .script()
        .tool(
            "edit_file",
            r#"{"path":"Cargo.toml","old_string":"version = \"0.1.0\"\nedition = \"2021\"","new_string":"version = \"0.2.0\"\nedition = \"2024\""}"#,
        )
        .at(1_200)
        .text("Bumped.");
    let mut t = Pty::start(&server, &[]);
    std::fs::write(t.workspace().join("Cargo.toml"), old).unwrap();
    t.resize(20, 80);
    t.wait_for(READY);
    assert_eq!(bells(&t.raw()), 0, "nothing rang before the question");
    t.ask("bump the version");
    let screen = t.wait_for("Allow edit_file?");
    // The whole diff: both `+` lines, nothing to scroll.
    assert_contains(&screen, "+ version = \"0.2.0\"");
    assert_contains(&screen, "+ edition = \"2024\"");
    assert_lacks(&screen, "lines 1-");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while bells(&t.raw()) == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(bells(&t.raw()), 1, "one bell for the question");
    std::thread::sleep(std::time::Duration::from_millis(450));
    t.keys("y");
    t.wait_for("Bumped.");
    let now = std::fs::read_to_string(t.workspace().join("Cargo.toml")).unwrap();
    assert_contains(&now, "edition = \"2024\"");
}

/// BEL bytes the program wrote (a notification by the default `notify = "bell"`; the only
/// other BEL, an OSC 52 clipboard write's end, needs `/copy`).
fn bells(raw: &[u8]) -> usize {
    raw.iter().filter(|b| **b == 0x07).count()
}

#[test]
fn model_alone_picks_from_the_providers_models_and_the_next_request_uses_it() {
    let (_rt, server) = served();
    server.list_models(&["claude-opus-4-5", "claude-haiku-4-5"]);
    server.script().text("Answered by the new model.");
    let mut t = Pty::open(&server, &["--yes"]);
    t.ask("/model");
    let screen = t.wait_for("claude-haiku-4-5");
    assert_contains(&screen, "(in use)");
    assert_contains(&screen, "claude-opus-4-5");
    t.keys(DOWN);
    t.keys(ENTER);
    t.wait("the status line on the new model", |s| {
        !s.contains("(in use)")
            && s.lines()
                .last()
                .is_some_and(|l| l.contains("claude-opus-4-5"))
    });
    t.ask("which model are you");
    t.wait_for("Answered by the new model.");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0]["model"], "claude-opus-4-5");
}
