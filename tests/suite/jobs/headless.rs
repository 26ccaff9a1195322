//! The real binary headless: its jobs are stopped at the end and the final `result` lists them;
//! SIGTERM and SIGHUP mid-turn leave no job process behind; `--continue` tells the model the
//! jobs of the run before are gone.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{HEARTBEAT, background, beats, notice, read_heartbeat, stopped};
use crate::support::fake::{U, anthropic as a};
use crate::support::headless::{Scenario, lines};

/// The `result` line's jobs, as `(id, state)`.
fn result_jobs(events: &[Value]) -> Vec<(u64, String)> {
    let last = events.last().expect("a result line");
    assert_eq!(last["type"], "result", "{last}");
    last["jobs"]
        .as_array()
        .unwrap_or_else(|| panic!("no jobs in {last}"))
        .iter()
        .map(|j| {
            (
                j["id"].as_u64().unwrap_or_default(),
                j["state"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn headless_stops_its_jobs_at_the_end_and_a_continue_is_told_they_are_gone() {
    let s = Scenario::new().await;
    s.server.push(background("t1", HEARTBEAT));
    s.server.push(read_heartbeat("t2"));
    s.server.push(a::text("serving", U::new(1200, 20)));
    let run = s.headless(&["-p", "serve it", "--yes"]).await.success();
    assert_eq!(result_jobs(&run.events()), [(1, "stopped".to_string())]);
    assert!(
        stopped(s.home(), Duration::from_secs(3)).await,
        "no job outlives the run"
    );
    // The next run on the same step: the model hears the server is gone, unasked.
    s.server
        .push(a::text("starting it again", U::new(1300, 20)));
    s.headless(&["--continue", "-p", "is it up?", "--yes"])
        .await
        .success();
    let notice = notice(s.server.requests().last().unwrap());
    assert!(
        notice.contains("Job #1 `while :; do date") && notice.contains("is gone"),
        "{notice}"
    );
}

/// A headless run with the heartbeat running and a reply that never comes: `signal` ends it.
async fn signalled(signal: i32, name: &str) {
    let s = Scenario::new().await;
    s.server.push(background("t1", HEARTBEAT));
    s.server
        .push(a::text("never finishes", U::new(1100, 20)).with_delay(Duration::from_secs(60)));
    let mut c = s.command();
    c.args(["-p", "serve it", "--yes"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    assert!(
        beats(s.home(), Duration::from_secs(10)).await,
        "{name}: the job beats"
    );
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(pid, signal) };
    let output = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        while child.try_wait().unwrap().is_none() {
            assert!(started.elapsed() < Duration::from_secs(20), "still running");
            std::thread::sleep(Duration::from_millis(20));
        }
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    assert_eq!(output.status.code(), Some(128 + signal), "{name}");
    assert_eq!(
        result_jobs(&lines(&output)),
        [(1, "stopped".to_string())],
        "{name}"
    );
    assert!(
        stopped(s.home(), Duration::from_secs(3)).await,
        "{name}: no job outlives the run"
    );
}

#[tokio::test]
async fn sigterm_and_sighup_of_headless_leave_no_job_behind() {
    for (signal, name) in [(libc::SIGTERM, "SIGTERM"), (libc::SIGHUP, "SIGHUP")] {
        signalled(signal, name).await;
    }
}
