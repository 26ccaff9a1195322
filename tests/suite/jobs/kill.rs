//! The real binary in a pseudo-terminal: a running job is counted in the status line, `/jobs`
//! lists it and `s` stops it, and flower-tui leaving by `kill -9`, SIGTERM or a closed terminal
//! (SIGHUP) leaves no job process behind; `--continue` then lists the job gone.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::json;

use super::{HEARTBEAT, beating, stops};
use crate::support::fake::{FakeServer, Gate, U, anthropic as a};
use crate::support::pty::{ENTER, ESC, Pty, READY, runtime};

/// flower-tui in a terminal whose first turn started the heartbeat job (the turn's last reply,
/// asked for already, waits for `held`); the job beats.
fn with_heartbeat(server: &FakeServer, held: &Gate) -> (Pty, PathBuf) {
    let asked = server.requests().len() + 2;
    server.push(a::tool_use(
        "t1",
        "bash",
        &json!({"command": HEARTBEAT, "run_in_background": true}).to_string(),
        U::new(1000, 10),
    ));
    server.push(a::text("serving it", U::new(1100, 10)).gated(held));
    let mut t = Pty::start(server, &["--yes"]);
    t.wait_for(READY);
    t.keys("start the heartbeat");
    t.keys(ENTER);
    t.wait("the job counted in the status line", |s| {
        s.contains("1 job")
    });
    t.wait_requests(server, asked);
    let ws = t.workspace();
    assert!(beating(&ws, Duration::from_secs(5)), "the job beats");
    (t, ws)
}

#[test]
fn kill_9_of_flower_tui_stops_its_jobs() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    let held = Gate::new();
    let (t, ws) = with_heartbeat(&server, &held);
    let killed = Command::new("kill")
        .args(["-9", &t.pid().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert!(
        stops(&ws, Duration::from_secs(8)),
        "no job outlives kill -9"
    );
    held.open();
    // The next process on the run lists the job gone.
    let mut next = Pty::start_in(t.home(), &server, &["--continue", "--yes"]);
    next.wait_for(READY);
    next.keys("/jobs");
    next.keys(ENTER);
    next.wait("the job listed gone", |s| {
        s.contains("background jobs") && s.contains("gone") && s.contains("while :; do date")
    });
}

#[test]
fn the_jobs_list_shows_a_job_and_s_stops_it() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    let held = Gate::new();
    let (mut t, ws) = with_heartbeat(&server, &held);
    held.open();
    t.wait_for("serving it");
    t.keys("/jobs");
    t.keys(ENTER);
    t.wait("the list with the job running", |s| {
        s.contains("background jobs") && s.contains("#1   running") && s.contains("while :; do")
    });
    t.keys("s");
    assert!(stops(&ws, Duration::from_secs(10)), "s stops the job");
    t.wait("the list showing it stopped", |s| {
        s.contains("#1   stopped")
    });
    t.keys(ESC);
    t.wait("the list closed, no job counted", |s| {
        !s.contains("background jobs ·") && !s.contains("1 job")
    });
    t.quit();
}

#[test]
fn sigterm_and_a_closed_terminal_stop_the_jobs() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    for how in ["SIGTERM", "a closed terminal"] {
        let held = Gate::new();
        let (mut t, ws) = with_heartbeat(&server, &held);
        match how {
            "SIGTERM" => t.signal("-TERM"),
            _ => t.hang_up("x"),
        }
        t.wait_exit();
        assert!(stops(&ws, Duration::from_secs(8)), "no job outlives {how}");
        held.open();
    }
}
