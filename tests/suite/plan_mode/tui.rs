//! Plan mode in the real binary in a pseudo-terminal: Shift-Tab cycles normal → accept edits →
//! plan → normal with the mode in the status line and in what the next request offers; a plan
//! presented in plan mode opens in the side editor, the user edits it, Esc saves and asks, and
//! the choice is carried out from the file as it is on disk: implemented here (the next message
//! of the same session) or in a fresh session whose first and only message is the edited file,
//! with a handoff record of cause `plan` in the ledger.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{PLAN, present};
use crate::support::check::assert_contains;
use crate::support::fake::FakeServer;
use crate::support::pty::{ESC, Pty, READY, served};
use crate::support::requests::tool_names;

const SHIFT_TAB: &str = "\x1b[Z";

/// The status line: the screen's last row.
fn status(screen: &str) -> String {
    screen.lines().last().unwrap_or_default().to_string()
}

/// The one plan file of the workspace.
fn plan_file(ws: &Path) -> PathBuf {
    let notes = ws.join(".flower/notes");
    let mut plans: Vec<PathBuf> = std::fs::read_dir(&notes)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("plan-"))
        })
        .collect();
    assert_eq!(plans.len(), 1, "{plans:?}");
    plans.remove(0)
}

/// The text of every block of a message.
fn text_of(message: &Value) -> String {
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str().or(b["content"].as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Shift-Tab twice (normal → accept edits → plan), checked in the status line each time.
fn into_plan_mode(t: &mut Pty) {
    t.keys(SHIFT_TAB);
    t.wait("accept edits in the status line", |s| {
        status(s).contains("accept edits")
    });
    t.keys(SHIFT_TAB);
    t.wait("plan mode in the status line", |s| {
        status(s).contains("plan mode") && !status(s).contains("accept edits")
    });
}

/// Plan mode, a message, the plan presented and open in the side editor; `EDITED` typed into it.
fn present_and_edit(t: &mut Pty, server: &FakeServer) -> PathBuf {
    into_plan_mode(t);
    t.keys("plan the rename");
    t.keys("\r");
    t.wait_for("Plan saved to");
    let reqs = t.wait_requests(server, 1);
    let tools = tool_names(&reqs[0]);
    assert!(tools.iter().any(|n| n == "present_plan"), "{tools:?}");
    assert!(!tools.iter().any(|n| n == "write_file"), "{tools:?}");
    let ws = t.workspace();
    let path = plan_file(&ws);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), PLAN);
    t.wait_for("Rename the parser");
    t.keys("EDITED ");
    t.wait_for("EDITED");
    // Esc saves the edits, then asks.
    t.keys(ESC);
    t.wait_for("i implement here");
    let on_disk = std::fs::read_to_string(&path).unwrap();
    assert_contains(&on_disk, "EDITED");
    path
}

#[test]
fn shift_tab_cycles_the_modes_in_the_status_line_and_in_the_tools_offered() {
    let (_rt, server) = served();
    server.script().at(900).text("Normal again.");
    let mut t = Pty::start(&server, &[]);
    let screen = t.wait_for(READY);
    assert!(!status(&screen).contains("plan mode"), "{screen}");
    into_plan_mode(&mut t);
    t.keys(SHIFT_TAB);
    t.wait("the badge gone (normal)", |s| {
        !status(s).contains("plan mode") && !status(s).contains("accept edits")
    });
    t.keys("hello");
    t.keys("\r");
    t.wait_for("Normal again.");
    let reqs = t.wait_requests(&server, 1);
    let tools = tool_names(&reqs[0]);
    assert!(tools.iter().any(|n| n == "write_file"), "{tools:?}");
    assert!(!tools.iter().any(|n| n == "present_plan"), "{tools:?}");
}

#[test]
fn a_reviewed_plan_is_implemented_in_a_fresh_session_from_the_edited_file() {
    let (_rt, server) = served();
    server.push(present("p1", PLAN));
    server.script().at(1_500).text("Implemented from the plan.");
    let home = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let mut t = Pty::start_in(home.clone(), &server, &[]);
    t.wait_for(READY);
    let path = present_and_edit(&mut t, &server);
    t.keys("f");
    t.wait_for("Implemented from the plan.");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    // The successor's first and only message is the edited file, read back from disk.
    let messages = reqs[1]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "{messages:?}");
    let first = text_of(&messages[0]);
    let on_disk = std::fs::read_to_string(&path).unwrap();
    assert_contains(&first, &on_disk);
    assert_contains(&first, "chose to have it implemented in this fresh session");
    assert!(
        !first.contains("plan the rename\n"),
        "the old conversation is not carried"
    );
    // Back in normal mode: the successor may edit.
    assert!(tool_names(&reqs[1]).iter().any(|n| n == "write_file"));
    assert!(!status(&t.screen()).contains("plan mode"));
    // The ledger records it like a handoff, with its lineage.
    let runs = home.path().join("data/flower/runs");
    let run = std::fs::read_dir(&runs)
        .unwrap()
        .flatten()
        .find(|e| e.path().join("manifest.json").exists())
        .unwrap();
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(run.path().join("manifest.json")).unwrap())
            .unwrap();
    let step = &m["steps"][0];
    let record = &step["handoffs"][0];
    assert_eq!(record["trigger"], "plan", "{record}");
    assert_eq!(record["path"], path.to_str().unwrap());
    assert_eq!(record["edited"], true);
    assert_eq!(record["generation"], 2);
    assert_eq!(step["retired"].as_array().unwrap().len(), 1);
    assert!(step["frozen"].is_null());
}

#[test]
fn a_reviewed_plan_is_implemented_here_as_the_next_message() {
    let (_rt, server) = served();
    server.push(present("p1", PLAN));
    server.script().at(1_500).text("Implemented here.");
    let mut t = Pty::open(&server, &[]);
    let path = present_and_edit(&mut t, &server);
    t.keys("i");
    t.wait_for("Implemented here.");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let messages = reqs[1]["messages"].as_array().unwrap();
    assert!(
        messages.len() >= 3,
        "the same session goes on: {messages:?}"
    );
    let last = text_of(messages.last().unwrap());
    let on_disk = std::fs::read_to_string(&path).unwrap();
    assert_contains(&last, "Implement this plan");
    assert_contains(&last, &on_disk);
    assert!(tool_names(&reqs[1]).iter().any(|n| n == "write_file"));
}
