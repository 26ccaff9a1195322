//! Run directories hold steps: a second invocation with the same `--run-dir` and a new `--step`
//! adds that step to the run's ledger; the same step without `--continue` is refused; many
//! processes sharing a run directory lose none of each other's steps.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::support::check::{assert_contains, assert_lacks, assert_success};
use crate::support::fake::FakeServer;
use crate::support::headless::{bin_for, flags, stderr};

fn command(server: &FakeServer, home: &Path, args: &[&str]) -> std::process::Command {
    let mut c = bin_for(home, server);
    c.args(args);
    c
}

async fn run(server: &FakeServer, home: &Path, args: &[&str]) -> Output {
    let c = command(server, home, args);
    crate::support::headless::run(c).await.output
}

fn ledger(run: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap()
}

fn steps(run: &Path) -> Vec<(String, String)> {
    ledger(run)["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["session_id"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_second_step_joins_the_run_and_the_same_step_is_refused() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let run_dir = home.path().join("shared-run");
    let dir = run_dir.display().to_string();
    server.script().text("step one done");
    let out = run(
        &server,
        home.path(),
        &["-p", "one", "--run-dir", &dir, "--step", "one"],
    )
    .await;
    assert_success(&out);
    server.script().text("step two done");
    let out = run(
        &server,
        home.path(),
        &["-p", "two", "--run-dir", &dir, "--step", "two"],
    )
    .await;
    assert_success(&out);
    let both = steps(&run_dir);
    assert_eq!(
        both.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["one", "two"]
    );
    assert!(both.iter().all(|(_, s)| !s.is_empty()), "{both:?}");
    // Step two started fresh: it never saw step one's conversation.
    let second = server.requests()[1]["messages"].to_string();
    assert_lacks(&second, "step one done");

    // The same step again, and no step at all: clear refusals, nothing sent.
    let sent = server.requests().len();
    let out = run(
        &server,
        home.path(),
        &["-p", "x", "--run-dir", &dir, "--step", "one"],
    )
    .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("--run-dir {dir} already has step one"))
            && err.contains("--continue --step one"),
        "{err}"
    );
    let out = run(&server, home.path(), &["-p", "x", "--run-dir", &dir]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_contains(&err, "--step NAME to add a step");
    assert_eq!(server.requests().len(), sent);
    assert_eq!(steps(&run_dir), both, "the refusals changed nothing");

    // --continue --step picks that step of the run.
    server.script().at(1_100).text("more of step one");
    let out = run(
        &server,
        home.path(),
        &flags(&format!("-p more --run-dir {dir} --step one --continue")),
    )
    .await;
    assert_success(&out);
    let body = server.requests().last().unwrap()["messages"].to_string();
    assert!(
        body.contains("step one done") && !body.contains("step two done"),
        "{body}"
    );
    let out = run(
        &server,
        home.path(),
        &flags(&format!("-p more --run-dir {dir} --step three --continue")),
    )
    .await;
    let err = stderr(&out);
    assert_contains(&err, "the run has no step three (its steps: one, two)");
}

#[tokio::test]
async fn eight_processes_sharing_a_run_directory_keep_every_step() {
    const N: usize = 8;
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let run_dir = home.path().join("busy-run");
    let dir = run_dir.display().to_string();
    // The run exists first; then N invocations join it at once, each with its own step.
    server.script().text("seed done");
    let out = run(
        &server,
        home.path(),
        &["-p", "seed", "--run-dir", &dir, "--step", "seed"],
    )
    .await;
    assert_success(&out);
    for _ in 0..N {
        server
            .script()
            .tool("list_dir", "{}")
            .at(1_100)
            .text("done");
    }
    let children: Vec<_> = (0..N)
        .map(|i| {
            let step = format!("s{i}");
            command(
                &server,
                home.path(),
                &["-p", "list", "--run-dir", &dir, "--step", &step],
            )
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    let outs = tokio::task::spawn_blocking(move || {
        children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for out in &outs {
        assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    }
    let got = steps(&run_dir);
    let mut names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    let mut want: Vec<String> = (0..N).map(|i| format!("s{i}")).collect();
    want.push("seed".into());
    want.sort();
    assert_eq!(names, want, "every step is in the ledger");
    for step in ledger(&run_dir)["steps"].as_array().unwrap() {
        assert!(!step["session_id"].as_str().unwrap().is_empty(), "{step}");
        assert_eq!(step["num_turns"], 1, "{step}");
    }
}
