//! `/undo` against what a hostile pass tried, on the real binary through the loopback fake:
//! a file someone else changes between two calls of one turn is not the turn's (never undone) or,
//! when a call changed it too, is asked about first; a process killed by SIGKILL in the middle of
//! a turn (between calls, or while a slow `bash` runs) leaves the turn on the undo stack, closed
//! by the next `--continue`; `--no-checkpoints` takes none and `/undo` says why.

use std::fs;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::undo_cli::{Home, paths, restore_event, state, u};
use crate::support::check::{assert_exit, assert_file, assert_success};
use crate::support::fake::anthropic::{self as a, Stream};
use crate::support::fake::{FakeServer, Gate};
use crate::support::headless::{lines, stderr};

/// Wait until `server` has been asked `n` requests.
async fn until_asked(server: &FakeServer, n: usize) {
    let start = Instant::now();
    while server.requests().len() < n {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "request {n} never came"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Start the binary (its output is not read).
fn spawn(home: &Home, server: &FakeServer, args: &[&str]) -> Child {
    home.command(server, args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn notices(out: &std::process::Output) -> Vec<String> {
    lines(out)
        .into_iter()
        .filter(|e| e["type"] == "notice")
        .filter_map(|e| e["message"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn a_file_changed_by_someone_else_during_the_turn_is_not_undone_without_asking() {
    let server = FakeServer::start().await;
    let home = Home::new();
    let ws = home.ws();
    fs::write(ws.join("a.txt"), "a\n").unwrap();
    fs::write(ws.join("mine.txt"), "mine\n").unwrap();
    fs::write(ws.join("both.txt"), "both\n").unwrap();
    let start = state(&ws);

    // Call 1 changes a.txt and both.txt; between the calls the user edits mine.txt (which no
    // call touches) and both.txt; call 2 changes a.txt again.
    server.script().tool(
        "bash",
        r#"{"command":"printf 'A\\n' >> a.txt && printf 'turn\\n' >> both.txt"}"#,
    );
    let gate = Gate::new();
    server
        .script()
        .at(1_100)
        .held(&gate)
        .tool("bash", r#"{"command":"printf 'again\\n' >> a.txt"}"#);
    server.script().at(1_200).text("done");
    let home_ref = &home;
    let server_ref = &server;
    let run = async move { home_ref.run(server_ref, &["-p", "change things"]).await };
    let edit = async {
        until_asked(&server, 2).await;
        fs::write(ws.join("mine.txt"), "mine, edited during the turn\n").unwrap();
        fs::write(ws.join("both.txt"), "both\nturn\nuser\n").unwrap();
        gate.open();
    };
    let (out, ()) = tokio::join!(run, edit);
    assert_success(&out);
    assert_file(ws.join("a.txt"), b"a\nA\nagain\n");
    assert!(
        notices(&out)
            .iter()
            .any(|n| n.contains("not by it") && n.contains("mine.txt")),
        "{:?}",
        notices(&out)
    );
    let step = home.step();
    let end = step["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "after")
        .unwrap()
        .clone();
    assert_eq!(end["files"], serde_json::json!(["a.txt", "both.txt"]));

    // both.txt holds the user's line too: the undo asks first and changes nothing.
    let out = home.run(&server, &["--continue", "-p", "/undo"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = restore_event(&out);
    assert_eq!(report["outcome"], "conflict");
    assert_eq!(report["files"], serde_json::json!(["both.txt"]));
    assert_file(ws.join("a.txt"), b"a\nA\nagain\n");

    // Skip: the turn's own file goes back; both.txt and mine.txt stay as the user has them.
    let out = home.run(&server, &["--continue", "-p", "/undo skip"]).await;
    assert_success(&out);
    assert_eq!(paths(&restore_event(&out)), ["a.txt"]);
    assert_file(ws.join("a.txt"), b"a\n");
    assert_file(ws.join("both.txt"), b"both\nturn\nuser\n");
    assert_eq!(
        fs::read(ws.join("mine.txt")).unwrap(),
        b"mine, edited during the turn\n",
        "a file no call touched is never reverted"
    );

    // Redo and undo again, overwriting: both.txt goes back too, mine.txt still stays.
    let out = home.run(&server, &["--continue", "-p", "/redo"]).await;
    assert_success(&out);
    let out = home
        .run(&server, &["--continue", "-p", "/undo overwrite"])
        .await;
    assert_success(&out);
    let mut expected = start.clone();
    expected.get_mut("mine.txt").unwrap().1 = b"mine, edited during the turn\n".to_vec();
    assert_eq!(state(&ws), expected);
}

/// The manifest's undo stack as JSON.
fn undo_of(home: &Home) -> Value {
    home.step()["undo"].clone()
}

#[tokio::test]
async fn a_turn_killed_between_calls_is_undone_after_continue() {
    let server = FakeServer::start().await;
    let home = Home::new();
    let ws = home.ws();
    fs::write(ws.join("a.txt"), "one\ntwo\n").unwrap();
    let start = state(&ws);
    server.push(
        Stream::new(u(1_000))
            .tool(
                "w1",
                "write_file",
                r#"{"path":"new.txt","content":"new\n"}"#,
            )
            .tool(
                "e1",
                "edit_file",
                r#"{"path":"a.txt","old_string":"two","new_string":"TWO"}"#,
            )
            .reply(),
    );
    // The next answer never comes: the process is killed while it waits.
    let never = Gate::new();
    server.script().at(1_100).held(&never).text("never");
    let mut child = spawn(&home, &server, &["-p", "change things"]);
    until_asked(&server, 2).await;
    child.kill().unwrap();
    child.wait().unwrap();
    assert_file(ws.join("a.txt"), b"one\nTWO\n");
    let undo = undo_of(&home);
    assert!(
        undo["pending"]["calls"]
            .as_array()
            .is_some_and(|c| !c.is_empty()),
        "the open turn is in the ledger: {undo}"
    );

    let out = home.run(&server, &["--continue", "-p", "/undo"]).await;
    assert_success(&out);
    assert!(
        notices(&out).iter().any(|n| n.contains("cut short")),
        "{:?}",
        notices(&out)
    );
    let report = restore_event(&out);
    assert_eq!(report["outcome"], "restored");
    assert_eq!(paths(&report), ["a.txt", "new.txt"]);
    assert_eq!(state(&ws), start, "the files as before the killed turn");
    assert!(undo_of(&home).get("pending").is_none());
}

#[tokio::test]
async fn a_turn_killed_during_a_slow_command_is_undone_after_continue() {
    let server = FakeServer::start().await;
    let home = Home::new();
    let ws = home.ws();
    fs::write(ws.join("log.txt"), "start\n").unwrap();
    let start = state(&ws);
    server.script().tool(
        "bash",
        r#"{"command":"printf 'more\\n' >> log.txt && touch made.txt && sleep 20"}"#,
    );
    let mut child = spawn(&home, &server, &["--sandbox", "off", "-p", "slow"]);
    let started = Instant::now();
    while !ws.join("made.txt").exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "never ran");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_file(ws.join("log.txt"), b"start\nmore\n");

    let out = home.run(&server, &["--continue", "-p", "/undo"]).await;
    assert_success(&out);
    assert_eq!(paths(&restore_event(&out)), ["log.txt", "made.txt"]);
    assert_eq!(state(&ws), start);
}

#[tokio::test]
async fn no_checkpoints_takes_none_and_undo_says_why() {
    let server = FakeServer::start().await;
    let home = Home::new();
    let ws = home.ws();
    fs::write(ws.join("a.txt"), "a\n").unwrap();
    let write = |text: &str| {
        let input = serde_json::json!({"path": "a.txt", "content": text}).to_string();
        a::tool_use("w1", "write_file", &input, u(1_000))
    };
    server.push(write("b\n"));
    server.script().at(1_200).text("done");
    let out = home.run(&server, &["--no-checkpoints", "-p", "go"]).await;
    assert_success(&out);
    assert!(!home.dir.path().join("data/flower/checkpoints").exists());
    assert!(home.step().get("checkpoints").is_none());
    assert!(home.step().get("undo").is_none());

    // A turn with checkpoints, then an undo with them off: refused with the reason.
    server.push(write("c\n"));
    server.script().at(1_200).text("done");
    let out = home.run(&server, &["--continue", "-p", "again"]).await;
    assert_success(&out);
    let out = home
        .run(&server, &["--continue", "--no-checkpoints", "-p", "/undo"])
        .await;
    assert_exit(&out, 1);
    let report = restore_event(&out);
    assert_eq!(report["outcome"], "failed", "{report}");
    assert!(
        report["message"]
            .as_str()
            .unwrap()
            .contains("--no-checkpoints"),
        "{report}"
    );
    assert_file(ws.join("a.txt"), b"c\n");
}
