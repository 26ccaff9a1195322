//! A headless run stopped by a signal: the turn ends the way Esc ends it (its transcript says so),
//! the last line is a `result` that names the signal, and the exit code is 128 + its number.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::fake::{FakeServer, U, anthropic as a};
use crate::support::headless::bin_for;

async fn stopped_by(signal: i32, name: &str) {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    // A reply that takes a minute: the signal arrives while it streams.
    server.push(
        a::text("slow words that never finish", U::new(1_000, 10))
            .with_delay(Duration::from_secs(10)),
    );
    let mut c = bin_for(home.path(), &server);
    c.args(["-p", "a long task", "--step", "sig"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.requests().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.requests().len(), 1, "the request never came");
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, signal) };
    let out = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                break (status, started.elapsed(), child);
            }
            assert!(started.elapsed() < Duration::from_secs(10), "still running");
            std::thread::sleep(Duration::from_millis(20));
        }
    })
    .await
    .unwrap();
    let (status, took, child) = out;
    let output = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(128 + signal), "{name}");
    assert!(took < Duration::from_secs(5), "{name} took {took:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let last: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "result", "{stdout}");
    assert_eq!(last["is_error"], true);
    assert_eq!(last["text"], format!("stopped by {name}"));
    assert!(
        stdout.contains("\"type\":\"turn_end\"") && stdout.contains("\"reason\":\"interrupted\""),
        "{stdout}"
    );
}

#[tokio::test]
async fn sigterm_ends_the_turn_and_the_result_names_it() {
    stopped_by(libc::SIGTERM, "SIGTERM").await;
}

#[tokio::test]
async fn sighup_and_sigint_do_the_same() {
    stopped_by(libc::SIGHUP, "SIGHUP").await;
    stopped_by(libc::SIGINT, "SIGINT").await;
}
