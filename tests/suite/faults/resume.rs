//! Continue honestly: a damaged newest ledger is named, never silently replaced by an older run;
//! torn transcript lines are counted and said; consecutive user messages merge on reload.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::check::{assert_contains, assert_starts_with, assert_success, each_str};
use crate::support::fake::FakeServer;
use crate::support::harness::all_files;
use crate::support::headless::{bin_for, lines, stderr};

/// `flower-tui ARGS` against the fake, in `home`.
async fn run(server: &FakeServer, home: &Path, args: &[&str]) -> Output {
    let mut c = bin_for(home, server);
    c.args(args);
    crate::support::headless::run(c).await.output
}

/// The run directory a headless run announced on stderr.
fn run_dir_of(out: &Output) -> PathBuf {
    let err = stderr(out);
    let line = err
        .lines()
        .find_map(|l| l.strip_prefix("flower-tui: run directory "))
        .unwrap_or_else(|| panic!("no run directory in {err}"));
    PathBuf::from(line.trim())
}

#[tokio::test]
async fn a_torn_newest_manifest_is_named_and_never_silently_skipped() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    server.script().text("older run done");
    let older = run(&server, home.path(), &["-p", "older"]).await;
    assert_success(&older);
    let older = run_dir_of(&older);
    // The newer run is modified later (mtime resolution: wait a little).
    std::thread::sleep(std::time::Duration::from_millis(20));
    server.script().text("newer run done");
    let newer = run(&server, home.path(), &["-p", "newer"]).await;
    assert_success(&newer);
    let newer = run_dir_of(&newer);
    // A crash (or a full disk) tore the newest ledger.
    let manifest = newer.join("manifest.json");
    let text = std::fs::read(&manifest).unwrap();
    std::fs::write(&manifest, &text[..text.len() / 2]).unwrap();

    let requests = server.requests().len();
    let out = run(&server, home.path(), &["-p", "go on", "--continue"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "its manifest {} is unreadable",
            manifest.display()
        )) && err.contains("torn or damaged JSON")
            && err.contains(&format!("--continue --run-dir {}", older.display())),
        "{err}"
    );
    assert_eq!(server.requests().len(), requests, "nothing was continued");

    // The flags it names continue the older run.
    server.script().at(1_100).text("continued the older run");
    let older_arg = older.display().to_string();
    let out = run(
        &server,
        home.path(),
        &["-p", "go on", "--continue", "--run-dir", &older_arg],
    )
    .await;
    assert_success(&out);
    let body = serde_json::to_string(&server.requests().last().unwrap()["messages"]).unwrap();
    assert!(
        body.contains("older run done") && !body.contains("newer"),
        "{body}"
    );

    // An explicit --run-dir with a torn ledger names the file.
    let newer_arg = newer.display().to_string();
    let out = run(
        &server,
        home.path(),
        &["-p", "x", "--continue", "--run-dir", &newer_arg],
    )
    .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_contains(
        &err,
        &format!("cannot read the run's manifest {}", manifest.display()),
    );
}

/// The transcript of the only session in `run`.
fn transcript(run: &Path) -> PathBuf {
    all_files(&run.join("sessions")).pop().unwrap()
}

#[tokio::test]
async fn torn_lines_are_counted_and_consecutive_user_messages_merge_on_reload() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    server.script().text("first answer");
    let out = run(&server, home.path(), &["-p", "first question"]).await;
    assert_success(&out);
    let path = transcript(&run_dir_of(&out));
    // What an interrupted turn and a crash leave: a second user message before the answer (two
    // user lines in a row on disk), and a line cut off mid-write at the end.
    let text = std::fs::read_to_string(&path).unwrap();
    let mut fixed = String::new();
    for line in text.lines() {
        fixed.push_str(line);
        fixed.push('\n');
        if line.contains("\"first question\"") && line.contains("\"type\":\"message\"") {
            fixed.push_str(
                r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":"and a second one"}]}}"#,
            );
            fixed.push('\n');
        }
    }
    fixed.push_str(r#"{"type":"message","message":{"role":"assis"#);
    std::fs::write(&path, fixed).unwrap();

    server.script().at(1_200).text("continued");
    let out = run(&server, home.path(), &["-p", "go on", "--continue"]).await;
    assert_success(&out);
    let warning = lines(&out)
        .into_iter()
        .find(|e| e["type"] == "warning")
        .expect("a warning about the torn line");
    let message = warning["message"].as_str().unwrap();
    assert_starts_with(message, &format!("{}: 1 torn line skipped", path.display()));
    let messages = server.requests().last().unwrap()["messages"].clone();
    let roles = each_str(&messages, "role");
    assert_eq!(roles, ["user", "assistant", "user"], "{messages}");
    let first: Vec<&str> = messages[0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b: &Value| b["text"].as_str())
        .collect();
    assert_eq!(first, ["first question", "and a second one"]);
}
