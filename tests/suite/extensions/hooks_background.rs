//! The handoff's own hooks when the handoff is written in the background (the default mode),
//! through the real binary against the fake: `PreHandoff`'s focus reaches the background writing
//! request, its exit 2 cancels that handoff while the main turn completes (the ledger keeps the
//! refusal), `HandoffFrozen` edits the frozen file and the successor's first request carries the
//! edit, and a `HandoffFrozen` hook that hangs is cut by its timeout while the successor starts.
//!
//! The window is 40,000 with a 10,000 headroom: the handoff line at 30,000, the hard limit at
//! 40,000 - 1,024 = 38,976 (`max_tokens = 1024`). A main-thread response at 39,000 makes the
//! main thread wait for the background document, so the request after it is the successor's.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::hooks_wired::{Home, lines};
use crate::support::check::{assert_contains, assert_success};
use crate::support::fake::{FakeServer, is_writing};

const DOC: &str = "## Doing\nRefactoring the parser.\n## Decided\n- Keep the old API.\n## Dead ends\n(empty)\n## Next\nRun the parser tests.\n## Scene\n- src/parser.rs\n";

/// `config.toml` with a small writing reserve and these hooks (`event`, `command`, `timeout`).
fn config(home: &Home, hooks: &[(&str, &str, Option<u64>)]) {
    let mut toml = String::from("max_tokens = 1024\n");
    for (event, command, timeout) in hooks {
        toml.push_str(&format!("[[hooks.{event}]]\ncommand = {command:?}\n"));
        if let Some(t) = timeout {
            toml.push_str(&format!("timeout = {t}\n"));
        }
    }
    home.config(&toml);
}

async fn run(home: &Home, server: &FakeServer) -> std::process::Output {
    let mut c = home.command(server);
    c.args([
        "-p",
        "refactor the parser",
        "--yes",
        "--window",
        "40000",
        "--headroom",
        "10000",
        "--step",
        "bg",
        "--output",
        "json",
    ]);
    crate::support::headless::run(c).await.output
}

fn ok(out: &std::process::Output) -> Vec<Value> {
    assert_success(out);
    lines(out)
}

fn phase<'a>(events: &'a [Value], name: &str) -> Option<&'a Value> {
    events
        .iter()
        .find(|e| e["type"] == "handoff" && e["phase"] == name)
}

/// The main thread's requests and the writing requests, in the order they came.
fn split(server: &FakeServer) -> (Vec<Value>, Vec<Value>) {
    server.requests().into_iter().partition(|b| !is_writing(b))
}

/// Crosses the line, then reaches the hard limit (the wait for the document), then the
/// successor's answer.
fn push_main(server: &FakeServer) {
    server
        .script()
        .at(31_000)
        .tool("list_dir", "{}")
        .at(39_000)
        .tool("list_dir", "{}")
        .at(5_000)
        .text("successor: the parser tests pass");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_handoff_hook_focus_reaches_the_background_writing_request() {
    let home = Home::new();
    let focus = home.script(
        "focus.sh",
        "#!/bin/bash\ncat > \"$(dirname \"$0\")/pre.json\"\necho 'focus-from-hook: keep the parser notes'\n",
    );
    config(&home, &[("PreHandoff", &focus, None)]);
    let server = FakeServer::start().await;
    push_main(&server);
    server.script().at(31_100).writing().text(DOC);
    let events = ok(&run(&home, &server).await);
    let writing = phase(&events, "writing").unwrap_or_else(|| panic!("{events:#?}"));
    assert_eq!(writing["background"], true, "{writing}");
    assert!(phase(&events, "done").is_some(), "{events:#?}");
    assert_eq!(
        events.last().unwrap()["text"],
        "successor: the parser tests pass"
    );

    let (main, written) = split(&server);
    assert_eq!(written.len(), 1, "one background writing request");
    let sent = serde_json::to_string(&written[0]).unwrap();
    assert_contains(&sent, "focus-from-hook: keep the parser notes");
    assert_eq!(main.len(), 3);
    let pre: Value =
        serde_json::from_str(&std::fs::read_to_string(home.file("pre.json")).unwrap()).unwrap();
    assert_eq!(pre["hook_event_name"], "PreHandoff");
    assert_eq!(pre["trigger"], "auto");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_handoff_hook_that_exits_2_cancels_the_background_handoff_and_the_turn_completes() {
    let home = Home::new();
    let refuse = home.script(
        "refuse.sh",
        "#!/bin/bash\ncat > /dev/null\necho 'not during the release' >&2\nexit 2\n",
    );
    config(&home, &[("PreHandoff", &refuse, None)]);
    let server = FakeServer::start().await;
    server.script().at(31_000).tool("list_dir", "{}");
    // Slow enough that the hook's verdict comes while it streams, not after the turn.
    server
        .script()
        .at(31_200)
        .after(Duration::from_millis(800))
        .tool("list_dir", "{}");
    server.script().at(31_400).text("done in one generation");
    let events = ok(&run(&home, &server).await);
    let refused = events
        .iter()
        .find(|e| {
            e["type"] == "notice"
                && e["message"].as_str().is_some_and(|m| {
                    m.contains("refused by a PreHandoff hook: not during the release")
                })
        })
        .unwrap_or_else(|| panic!("{events:#?}"));
    assert!(refused["message"].as_str().unwrap().contains("background"));
    assert!(phase(&events, "cancelled").is_some(), "{events:#?}");
    assert!(phase(&events, "frozen").is_none(), "{events:#?}");
    assert_eq!(events.last().unwrap()["text"], "done in one generation");
    let (main, written) = split(&server);
    assert!(written.is_empty(), "no writing request: {written:#?}");
    assert_eq!(main.len(), 3, "the main turn went on to its end");
    // Later boundaries of the same turn do not ask again: the hook ran once.
    let hooks = events
        .iter()
        .filter(|e| e["type"] == "hook" && e.to_string().contains("PreHandoff"))
        .count();
    assert_eq!(hooks, 1, "{events:#?}");
    // The ledger keeps the refusal with the step.
    let manifests = super::hooks_handoff::manifests(&home.file("data/flower/runs"));
    assert!(
        manifests
            .iter()
            .any(|m| m.contains("handoff refused by a PreHandoff hook: not during the release")),
        "{manifests:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handoff_frozen_hook_edits_the_background_document_and_the_successor_reads_the_edit() {
    let home = Home::new();
    let edit = home.editing_hook(
        0.5,
        "Run the parser tests.",
        "Run the parser tests. EDITED-BY-HOOK",
    );
    config(&home, &[("HandoffFrozen", &edit, None)]);
    let server = FakeServer::start().await;
    push_main(&server);
    server.script().at(31_100).writing().text(DOC);
    let events = ok(&run(&home, &server).await);
    assert_eq!(
        events.last().unwrap()["text"],
        "successor: the parser tests pass"
    );
    home.assert_frozen_hook_given("auto", "bg");
    // The review is shown what the hook left on disk.
    let shown = phase(&events, "frozen").unwrap_or_else(|| panic!("{events:#?}"));
    assert!(
        shown.to_string().contains("EDITED-BY-HOOK"),
        "the frozen phase after the hook: {shown}"
    );

    let (main, _) = split(&server);
    assert_eq!(main.len(), 3);
    let successor = serde_json::to_string(&main[2]["messages"]).unwrap();
    assert_contains(&successor, "EDITED-BY-HOOK");
    let before = serde_json::to_string(&main[1]["messages"]).unwrap();
    assert!(!before.contains("EDITED-BY-HOOK"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_handoff_frozen_hook_is_cut_by_its_timeout_and_the_successor_starts() {
    let home = Home::new();
    let hang = home.script(
        "hang.sh",
        "#!/bin/bash\ncat > /dev/null\necho $$ > \"$(dirname \"$0\")/hang.pid\"\nsleep 600\n",
    );
    config(&home, &[("HandoffFrozen", &hang, Some(1))]);
    let server = FakeServer::start().await;
    push_main(&server);
    server.script().at(31_100).writing().text(DOC);
    let started = Instant::now();
    let events = ok(&run(&home, &server).await);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(30), "{took:?}");
    assert_eq!(
        events.last().unwrap()["text"],
        "successor: the parser tests pass"
    );
    let hook = events
        .iter()
        .find(|e| e["type"] == "hook" && e.to_string().contains("HandoffFrozen"))
        .unwrap_or_else(|| panic!("{events:#?}"));
    assert!(hook.to_string().contains("timed out"), "{hook}");
    let (main, _) = split(&server);
    assert_eq!(main.len(), 3);
    let successor = serde_json::to_string(&main[2]["messages"]).unwrap();
    assert_contains(&successor, "Run the parser tests.");
    // The hook's process is gone with its group.
    let pid = std::fs::read_to_string(home.file("hang.pid")).unwrap();
    let alive = std::path::Path::new(&format!("/proc/{}", pid.trim())).exists();
    assert!(!alive, "the hanging hook {pid} still runs");
}
