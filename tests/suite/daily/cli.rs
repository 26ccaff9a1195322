//! The real binary: `--resume`, `--effort`, the user's AGENTS.md from the config dir.

use std::path::Path;

use crate::support::check::{assert_contains, assert_exit, assert_success};
use crate::support::fake::{FakeServer, U};
use crate::support::files::write;
use crate::support::headless::{bin_for, lines, run, stderr};

fn api(home: &Path, server: &FakeServer, args: &[&str]) -> std::process::Command {
    let mut c = bin_for(home, server);
    c.args(args);
    c
}

async fn output(c: std::process::Command) -> std::process::Output {
    run(c).await.output
}

#[tokio::test]
async fn resume_by_run_id_headless_and_a_clear_error_without_one() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let out = output(api(h, &server, &["--resume", "-p", "x"])).await;
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("no earlier session of"),
        "{}",
        stderr(&out)
    );

    server.script().usage(U::new(100, 5)).text("First answer.");
    let out = output(api(h, &server, &["-p", "remember the word kiwi"])).await;
    assert_success(&out);
    let run_dir = stderr(&out)
        .lines()
        .find_map(|l| l.strip_prefix("flower-tui: run directory "))
        .map(str::to_string)
        .unwrap();
    let run_id = Path::new(&run_dir)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    // A fresh run in between: --resume RUN_ID is not "the last run".
    server.script().usage(U::new(100, 5)).text("Other.");
    assert_eq!(
        output(api(h, &server, &["-p", "other task"]))
            .await
            .status
            .code(),
        Some(0)
    );

    let out = output(api(h, &server, &["--resume", "-p", "x"])).await;
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert_contains(&err, "--resume needs a run id");
    assert!(
        err.contains(&run_id) && err.contains("remember the word kiwi"),
        "{err}"
    );

    server
        .script()
        .usage(U::new(200, 5))
        .text("The word was kiwi.");
    let prefix = run_id.get(..run_id.len() - 1).unwrap();
    let out = output(api(h, &server, &["--resume", prefix, "-p", "which word?"])).await;
    assert_success(&out);
    let ev = lines(&out);
    assert!(
        ev.iter()
            .any(|e| e["type"] == "resumed" && e["run_id"] == run_id.as_str())
    );
    let last = server.requests().last().cloned().unwrap();
    let first = &last["messages"][0]["content"][0]["text"];
    assert_eq!(
        first, "remember the word kiwi",
        "continued that run's session"
    );

    let out = output(api(h, &server, &["--resume", "zzz", "-p", "x"])).await;
    assert_exit(&out, 1);
    assert!(stderr(&out).contains("\"zzz\""), "{}", stderr(&out));
    let out = output(api(h, &server, &["--resume", "--continue", "-p", "x"])).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[tokio::test]
async fn effort_and_the_users_agents_md_reach_the_request() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let out = output(api(h, &server, &["--effort", "extreme", "-p", "x"])).await;
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("--effort") && err.contains("low, medium, high"),
        "{err}"
    );

    let cfg = h.join("config/flower");
    write(&cfg.join("AGENTS.md"), "USER-RULE-42\n");
    std::fs::write(cfg.join("config.toml"), "effort = \"medium\"\n").unwrap();
    server.script().usage(U::new(100, 5)).text("ok");
    let out = output(api(h, &server, &["-p", "hi"])).await;
    assert_success(&out);
    let req = &server.requests()[0];
    assert_eq!(req["thinking"]["budget_tokens"], 10_000);
    let system = req["system"][0]["text"].as_str().unwrap();
    assert_contains(system, "USER-RULE-42");
    // Labelled with its path (relative: the test's config dir is inside the workspace).
    assert_contains(system, "## config/flower/AGENTS.md\n");
    std::fs::write(cfg.join("config.toml"), "effort = \"lots\"\n").unwrap();
    let out = output(api(h, &server, &["-p", "hi"])).await;
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("`effort`"), "{}", stderr(&out));
}
