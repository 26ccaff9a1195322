//! The real binary in a pseudo-terminal: a running job is counted in the status line, and a
//! `kill -9` of flower-tui leaves no job process behind.

use std::process::Command;
use std::time::Duration;

use serde_json::json;

use super::{HEARTBEAT, beating, stops};
use crate::support::fake::{FakeServer, Gate, U, anthropic as a};
use crate::support::pty::{ENTER, Pty, READY, runtime};

#[test]
fn kill_9_of_flower_tui_stops_its_jobs() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    let held = Gate::new();
    server.push(a::tool_use(
        "t1",
        "bash",
        &json!({"command": HEARTBEAT, "run_in_background": true}).to_string(),
        U::new(1000, 10),
    ));
    server.push(a::text("never answered", U::new(1100, 10)).gated(&held));
    let mut t = Pty::start(&server, &["--yes"]);
    t.wait_for(READY);
    t.keys("start the heartbeat");
    t.keys(ENTER);
    t.wait("the job counted in the status line", |s| {
        s.contains("1 job")
    });
    let ws = t.workspace();
    assert!(beating(&ws, Duration::from_secs(5)), "the job beats");
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
}
