//! The handoff's own hooks through the real binary: `PreHandoff` adds focus text or refuses the
//! handoff, `HandoffFrozen` gets the frozen document's path and edits it, and the successor
//! (whose `SessionStart` says `handoff`) reads the edited file. In the real TUI: the question
//! about a workspace settings file, then its hook running as a cell.

use std::time::Duration;

use serde_json::Value;

use super::hooks_wired::{Home, lines};
use crate::support::check::{assert_contains, assert_success};
use crate::support::fake::FakeServer;
use crate::support::headless::{flags, run};
use crate::support::pty::{Pty, served};

fn entry(event: &str, command: &str) -> String {
    format!("[[hooks.{event}]]\ncommand = {command:?}\n")
}

async fn run_handoff(home: &Home, server: &FakeServer) -> std::process::Output {
    let mut c = home.command(server);
    c.args(flags(
        "-p list --yes --handoff-after 1 --step hooked --output json",
    ));
    run(c).await.output
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handoff_hooks_add_focus_and_the_successor_reads_the_edited_document() {
    let home = Home::new();
    let focus = home.script(
        "focus.sh",
        "#!/bin/bash\ncat > /dev/null\necho 'focus-from-hook: keep the parser notes'\n",
    );
    let edit = home.editing_hook(0.0, "Finish.", "Finish. EDITED-BY-HOOK");
    let starts = home.script(
        "starts.sh",
        "#!/bin/bash\ncat >> \"$(dirname \"$0\")/starts.log\"\n",
    );
    home.config(&format!(
        "{}{}{}",
        entry("PreHandoff", &focus),
        entry("HandoffFrozen", &edit),
        entry("SessionStart", &starts),
    ));
    let server = FakeServer::start().await;
    server.script().handed_off_after_one_turn();
    let out = run_handoff(&home, &server).await;
    assert_success(&out);
    let events = lines(&out);
    assert_eq!(events.last().unwrap()["text"], "finished in generation 2");

    let writing = serde_json::to_string(&server.requests()[1]).unwrap();
    assert_contains(&writing, "focus-from-hook: keep the parser notes");

    home.assert_frozen_hook_given("manual", "hooked");

    let successor = serde_json::to_string(&server.requests()[2]["messages"]).unwrap();
    assert_contains(&successor, "EDITED-BY-HOOK");

    let starts: Vec<Value> = std::fs::read_to_string(home.file("starts.log"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let sources: Vec<&str> = starts
        .iter()
        .map(|s| s["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["startup", "handoff"]);
    assert_ne!(starts[0]["session_id"], starts[1]["session_id"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_handoff_hook_that_exits_2_refuses_the_handoff_and_the_turn_goes_on() {
    let home = Home::new();
    let refuse = home.script(
        "refuse.sh",
        "#!/bin/bash\ncat > /dev/null\necho 'not during the release' >&2\nexit 2\n",
    );
    home.config(&entry("PreHandoff", &refuse));
    let server = FakeServer::start().await;
    server
        .script()
        .at(2_000)
        .tool("list_dir", "{}")
        .at(2_100)
        .text("done in one generation");
    let out = run_handoff(&home, &server).await;
    assert_success(&out);
    let events = lines(&out);
    let failed = events
        .iter()
        .find(|e| e["type"] == "handoff" && e["phase"] == "failed")
        .unwrap_or_else(|| panic!("{events:?}"));
    assert!(
        failed["message"]
            .as_str()
            .unwrap()
            .contains("refused by a PreHandoff hook: not during the release")
    );
    assert_eq!(server.requests().len(), 2, "no writing request");
    assert_eq!(events.last().unwrap()["text"], "done in one generation");
    // The ledger keeps the refusal with the step.
    let runs = home.file("data/flower/runs");
    let found = walk(&runs).into_iter().any(|p| {
        p.file_name().is_some_and(|n| n == "manifest.json")
            && std::fs::read_to_string(&p)
                .unwrap_or_default()
                .contains("handoff refused by a PreHandoff hook: not during the release")
    });
    assert!(found, "no manifest under {} records it", runs.display());
}

/// The text of every run's manifest under `runs`.
pub(super) fn manifests(runs: &std::path::Path) -> Vec<String> {
    walk(runs)
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "manifest.json"))
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .collect()
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn the_tui_asks_about_a_settings_file_and_then_shows_its_hook_as_a_cell() {
    let (_rt, server) = served();
    let home = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let ws = home.path().join("ws");
    std::fs::create_dir_all(ws.join(".claude")).unwrap();
    let settings = serde_json::json!({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "echo context-from-approved-hook"}]}]}});
    std::fs::write(ws.join(".claude/settings.json"), settings.to_string()).unwrap();
    server.script().text("hello back");

    let mut t = Pty::start_in(home.clone(), &server, &[]);
    let asked = t.wait_for("This workspace's settings.json: run its hooks?");
    assert_contains(&asked, "UserPromptSubmit: echo context-from-approved-hook");
    std::thread::sleep(Duration::from_millis(700));
    t.keys("y");
    t.wait_for("its 1 hook(s) and rule(s) apply from now on");
    t.ask("hi");
    let bodies = t.wait_requests(&server, 1);
    let sent = serde_json::to_string(&bodies[0]["messages"]).unwrap();
    assert_contains(&sent, "context-from-approved-hook");
    let screen = t.wait_for("UserPromptSubmit hook");
    assert_contains(&screen, "succeeded");
    t.wait_for("hello back");
}
