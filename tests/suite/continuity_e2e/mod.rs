//! Continuity on the real binary: the TUI in a pseudo-terminal for the
//! request in flight, the verbatim briefing and the signals; two headless processes at once in
//! one workspace for the documents.

mod processes;
mod review;
mod signals;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

use serde_json::Value;

use crate::support::check::assert_success;
use crate::support::fake::{FakeServer, U, anthropic as a};
use crate::support::harness::all_files;
use crate::support::headless::{BLOCKING, bin_for, flags, manifest, run};
use crate::support::pty::{CTRL_S, END, ENTER, ESC, Pty, kept_beside, served};
use crate::support::requests::first_blocks;
use crate::support::script::doc;

const UP: &str = "\x1b[A";

const HOME: &str = "\x1b[H";

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// One process's script: two handoffs, each document marked with `who` and its generation.
fn script(server: &FakeServer, who: &str) {
    let slow = std::time::Duration::from_millis(300);
    let first = a::tool_use(&server.next_tool_id(), "list_dir", "{}", U::new(31_000, 10));
    server.push(first.with_delay(slow));
    server
        .script()
        .at(31_500)
        .text(&doc(&format!("{who}-g1")))
        .at(31_000)
        .tool("list_dir", "{}")
        .at(31_500)
        .text(&doc(&format!("{who}-g2")))
        .at(5_000)
        .text(&format!("{who} finished"));
}

/// Start a review of step `step` in a fresh home and type a line into the side editor without
/// saving; the program and the frozen file's name.
fn typing_in_review(server: &FakeServer, step: &str, typed: &str) -> (Pty, String) {
    server.script().over_the_line(&doc("signals"));
    let args = flags(&format!("{BLOCKING} --review 60 --step {step}"));
    let mut t = Pty::open(server, &args);
    t.keys("handle the signals");
    t.keys(ENTER);
    let file = format!("handoff-{step}.md");
    t.wait("the review", |s| {
        s.contains(&file) && s.contains("successor in")
    });
    t.new_line_at_end();
    t.keys(typed);
    t.wait("the typed line, unsaved", |s| {
        s.contains(typed) && s.contains("paused")
    });
    (t, file)
}

/// Start a review in a fresh home, type a line into the side editor without saving, send
/// `signal`; the program exits cleanly. Returns the home and the path of the frozen file.
fn review_then_signal(
    server: &FakeServer,
    step: &str,
    signal: &str,
    typed: &str,
) -> (Arc<tempfile::TempDir>, PathBuf) {
    let (mut t, file) = typing_in_review(server, step, typed);
    t.signal(signal);
    let status = t.wait_exit();
    assert!(
        status.success(),
        "{signal}: {status}; screen:\n{}",
        t.screen()
    );
    let raw = String::from_utf8_lossy(&t.raw()).into_owned();
    assert!(
        raw.contains("are kept in"),
        "the way out says where: {raw:?}"
    );
    assert_eq!(server.requests().len(), 2, "no successor was started");
    let home = t.home();
    let notes = t.workspace().join(".flower/notes");
    (home, notes.join(file))
}
