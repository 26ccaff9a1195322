//! A run kept outside the data dir (`--run-dir`) is found by `--resume RUN_ID` and `--continue`
//! like any other, and the command printed on quit continues it; the id shown is the run's own,
//! never its folder's name.

use std::path::Path;

use crate::support::check::{assert_contains, assert_success};
use crate::support::fake::FakeServer;
use crate::support::headless::{bin_for, lines, stderr};
use crate::support::pty::{Pty, READY, rfind, served};

/// Quit an idle TUI and return the run id of its `continue it:` line.
fn quit_and_read_the_hint(t: &mut Pty) -> String {
    t.wait("the turn to end", |s| !s.contains("to interrupt"));
    assert!(t.quit().success());
    let raw = t.raw();
    let left = rfind(&raw, b"\x1b[?1049l").expect("left the alternate screen");
    let after = String::from_utf8_lossy(&raw[left..]).into_owned();
    let line = after
        .lines()
        .find_map(|l| l.trim().strip_prefix("continue it: flower-tui --resume "))
        .unwrap_or_else(|| panic!("no command to continue: {after:?}"));
    line.split_once(' ').map_or(line, |(id, _)| id).to_string()
}

fn recorded_id(run: &Path) -> String {
    flower_tui::engine::ledger::Manifest::load(&run.join("manifest.json"))
        .unwrap()
        .run_id
}

#[test]
fn a_run_with_its_own_directory_is_continued_by_the_printed_command() {
    let (_rt, server) = served();
    server.script().a_number_to_remember();
    let home = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let run = home.path().join("elsewhere/myrun");
    let run_arg = run.to_string_lossy().into_owned();

    let mut t = Pty::start_in(home.clone(), &server, &["--yes", "--run-dir", &run_arg]);
    t.wait_for(READY);
    t.ask("pick a number");
    t.wait_for("Remember the number 7431.");
    let id = quit_and_read_the_hint(&mut t);
    assert_eq!(id, recorded_id(&run));
    assert_ne!(id, "myrun");
    assert!(!home.path().join("data/flower/runs").join(&id).exists());

    // The printed command (the workspace is the same: `Pty` passes it).
    let mut again = Pty::start_in(home.clone(), &server, &["--yes", "--resume", &id]);
    again.wait_for("pick a number");
    again.wait_for(READY);
    again.ask("what was it?");
    again.wait_for("It was 7431.");
    let history = server.requests()[1]["messages"].to_string();
    assert_contains(&history, "Remember the number 7431.");
    assert_eq!(quit_and_read_the_hint(&mut again), id);

    // `--continue` with the directory names the run by its id too.
    let mut third = Pty::start_in(
        home.clone(),
        &server,
        &["--yes", "--continue", "--run-dir", &run_arg],
    );
    third.wait_for("It was 7431.");
    third.wait_for(READY);
    assert_eq!(quit_and_read_the_hint(&mut third), id);
}

#[tokio::test]
async fn headless_resume_and_continue_find_a_run_outside_the_data_dir() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let run = home.path().join("elsewhere/nightly");
    let headless = |args: Vec<String>| {
        let mut c = bin_for(home.path(), &server);
        c.args(args);
        tokio::task::spawn_blocking(move || c.output().unwrap())
    };
    let args = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    server.script().text("first run done");
    let run_dir = run.to_string_lossy().into_owned();
    let out = headless(args(&["-p", "first task", "--run-dir", &run_dir]))
        .await
        .unwrap();
    assert_success(&out);
    let id = recorded_id(&run);

    // `--resume` alone lists it; `--resume ID` continues it.
    let out = headless(args(&["--resume", "-p", "x"])).await.unwrap();
    assert!(
        stderr(&out).contains(&format!("  {id}  ")),
        "{}",
        stderr(&out)
    );
    server.script().at(1_200).text("resumed");
    let out = headless(args(&["--resume", &id, "-p", "second task"]))
        .await
        .unwrap();
    assert_success(&out);
    assert!(
        lines(&out)
            .iter()
            .any(|e| e["type"] == "resumed" && e["run_id"] == id.as_str()),
        "{:?}",
        lines(&out)
    );
    // `--continue` without the flag: the workspace's newest run, wherever it is.
    server.script().at(1_400).text("continued");
    let out = headless(args(&["--continue", "-p", "third task"]))
        .await
        .unwrap();
    assert_success(&out);
    let reqs = server.requests();
    let history = reqs[2]["messages"].to_string();
    assert!(
        history.contains("first task") && history.contains("second task"),
        "{history}"
    );
    // Moved away: not found, and nothing breaks.
    std::fs::rename(&run, home.path().join("moved")).unwrap();
    let out = headless(args(&["--resume", &id, "-p", "again"]))
        .await
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("has the id"), "{}", stderr(&out));
}
