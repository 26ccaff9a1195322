//! Continuity on the real binary: the TUI in a pseudo-terminal for the
//! request in flight, the verbatim briefing and the signals; two headless processes at once in
//! one workspace for the documents.

mod processes;
mod review;
mod signals;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use serde_json::Value;

use crate::support::fake::{FakeServer, Reply, U, anthropic as a};
use crate::support::harness::{KEY, all_files};
use crate::support::pty::{CTRL_S, END, ENTER, ESC, Pty, READY, kept_beside, runtime};

const UP: &str = "\x1b[A";

const HOME: &str = "\x1b[H";

fn u(input: u64) -> U {
    U {
        input,
        output: 10,
        cache_creation: 0,
        cache_read: 0,
    }
}

/// A five-section document with a marker that says whose it is.
fn doc(marker: &str) -> String {
    format!(
        "## Doing\nWork of {marker}.\n## Decided\n- {marker} decided this.\n## Dead ends\n(empty)\n\
         ## Next\nContinue {marker}.\n## Scene\n- src/{marker}.rs\n"
    )
}

/// The text blocks of the first message of a request body.
fn first_blocks(body: &Value) -> Vec<String> {
    body["messages"][0]["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The last run's manifest under `<home>/data`.
fn manifest(home: &Path) -> Value {
    let runs = home.join("data/flower/runs");
    let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
    for e in std::fs::read_dir(&runs).unwrap().flatten() {
        let m = e.path().join("manifest.json");
        if let Ok(t) = std::fs::metadata(&m).and_then(|md| md.modified())
            && newest.as_ref().is_none_or(|(n, _)| t > *n)
        {
            newest = Some((t, m));
        }
    }
    let path = newest.expect("a run").1;
    serde_json::from_str(&read(&path)).unwrap()
}

fn bin(home: &Path, server: &FakeServer) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_flower-tui"));
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .current_dir(home);
    c
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
    server.push(a::tool_use("t1", "list_dir", "{}", u(31_000)).with_delay(slow));
    server.push(a::text(&doc(&format!("{who}-g1")), u(31_500)));
    server.push(a::tool_use("t2", "list_dir", "{}", u(31_000)));
    server.push(a::text(&doc(&format!("{who}-g2")), u(31_500)));
    server.push(a::text(&format!("{who} finished"), u(5_000)));
}

/// Start a review in a fresh home, type a line into the side editor without saving, send
/// `signal`; the program exits cleanly. Returns the home and the path of the frozen file.
fn review_then_signal(
    server: &FakeServer,
    step: &str,
    signal: &str,
    typed: &str,
) -> (Arc<tempfile::TempDir>, PathBuf) {
    server.push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    server.push(a::text(&doc("signals"), u(31_500)));
    let mut t = Pty::start(
        server,
        &[
            "--yes",
            // The blocking flow: these cases script the replies in order.
            "--handoff-mode",
            "blocking",
            "--window",
            "40000",
            "--headroom",
            "10000",
            "--review",
            "60",
            "--step",
            step,
        ],
    );
    t.wait_for(READY);
    t.keys("handle the signals");
    t.keys(ENTER);
    let file = format!("handoff-{step}.md");
    t.wait("the review", |s| {
        s.contains(&file) && s.contains("successor in")
    });
    t.keys(&"\x1b[B".repeat(40));
    t.keys(END);
    t.keys(ENTER);
    t.keys(typed);
    t.wait("the typed line, unsaved", |s| {
        s.contains(typed) && s.contains("paused")
    });
    let sent = Command::new("kill")
        .args([signal, &t.pid().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
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
