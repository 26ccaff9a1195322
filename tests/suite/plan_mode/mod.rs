//! Plan mode end to end: the real binary, the loopback fake as the model. Headless `--mode plan`
//! offers only the tools that change nothing (read from the request's bytes), refuses a write
//! the model tries anyway, writes the plan file, names it in the result and ends without
//! implementing; a second plan of the step never overwrites the first. In a terminal, Shift-Tab
//! cycles the modes in the status line, and a presented plan is edited in the side editor and
//! implemented here or in a fresh session that starts from the file (`tui.rs`).

mod engine;
mod tui;

use std::path::{Path, PathBuf};

use flower_tui::engine::lsp::spec;
use flower_tui::engine::tools::sandbox::Support;
use serde_json::{Value, json};

use crate::support::check::{assert_contains, assert_exit, assert_file, assert_lacks, tool_result};
use crate::support::fake::{FakeServer, Reply, U, anthropic as a};
use crate::support::files::write;
use crate::support::headless::{Run, bin, bin_for, run, stderr};
use crate::support::requests::tool_names;

/// The plan the fake model presents.
pub(crate) const PLAN: &str = "# Rename the parser\n\n1. Rename `parse_all` to `parse` in src/lib.rs.\n2. Update the two callers in src/main.rs.\n3. Run cargo test.\n";

/// A `present_plan` call with `plan`.
pub(crate) fn present(id: &str, plan: &str) -> Reply {
    a::tool_use(
        id,
        "present_plan",
        &json!({ "plan": plan }).to_string(),
        U::new(1_000, 40),
    )
}

/// A home with an empty workspace `ws`.
fn home() -> (tempfile::TempDir, PathBuf) {
    let home = tempfile::tempdir().unwrap();
    let ws = home.path().join("ws");
    write(&ws.join("lib.rs"), "pub fn parse_all() {}\n");
    (home, ws)
}

/// `flower-tui --mode plan --step rename -p TASK` in `ws`, against `server`, run to its end; the
/// test fails unless it exits 0.
async fn plan_run(home: &Path, ws: &Path, server: &FakeServer, extra: &[&str]) -> Run {
    let mut c = bin_for(home, server);
    c.args(["--workspace", ws.to_str().unwrap(), "--step", "rename"])
        .args(["--mode", "plan", "--sandbox", "off"])
        .args(extra)
        .args(["-p", "plan the rename of parse_all"]);
    run(c).await.success()
}

#[tokio::test]
async fn headless_plan_mode_offers_read_only_tools_refuses_writes_and_ends_in_a_plan_file() {
    let (home, ws) = home();
    let server = FakeServer::start().await;
    server
        .script()
        .usage(U::new(900, 20))
        .call("r1", "read_file", r#"{"path":"lib.rs"}"#)
        .at(950)
        .call(
            "w1",
            "write_file",
            r#"{"path":"lib.rs","content":"pub fn parse() {}\n"}"#,
        );
    server.push(present("p1", PLAN));
    // Were the turn to go on after the plan, this would be its next reply.
    server.script().at(1_100).text("IMPLEMENTED ANYWAY");
    let out = plan_run(home.path(), &ws, &server, &[]).await;
    let events = out.events();

    // Only tools that change nothing reached the provider, and the prompt says it plans.
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "no request after the plan: {requests:?}");
    let tools = tool_names(&requests[0]);
    // `recall` reads the step's own transcripts (old tool output is masked).
    let mut expected = vec![
        "read_file",
        "grep",
        "glob",
        "list_dir",
        "web_fetch",
        "todo",
        "recall",
        "job_output",
        "job_stop",
    ];
    if Support::current().confines_writes() {
        expected.insert(1, "bash");
    }
    // `diagnostics` reads what language servers say; offered where one is found on PATH.
    let path = std::env::var("PATH").ok();
    if spec::builtins()
        .iter()
        .any(|s| spec::find_program(s.program(), path.as_deref()).is_some())
    {
        expected.push("diagnostics");
    }
    expected.push("present_plan");
    assert_eq!(tools, expected, "{tools:?}");
    for writer in ["write_file", "edit_file", "task"] {
        assert!(!tools.iter().any(|t| t == writer), "{writer} offered");
    }
    let system = requests[0]["system"].to_string();
    assert_contains(&system, "# Plan mode");

    // The write the model tried anyway was refused with a clear error; the file is untouched.
    let refused = tool_result(&events, "w1");
    assert_eq!(refused["is_error"], true);
    let why = refused["output"].as_str().unwrap();
    assert_contains(why, "refused: plan mode changes nothing");
    assert_file(ws.join("lib.rs"), "pub fn parse_all() {}\n");

    // The plan is a file, named in a `plan` event and in the result line.
    let path = ws.join(".flower/notes/plan-rename.md");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), PLAN);
    let plan = events.iter().find(|e| e["type"] == "plan").unwrap();
    assert_eq!(plan["path"], path.to_str().unwrap());
    let result = events.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["plan"], path.to_str().unwrap(), "{result}");
    assert_eq!(result["is_error"], false);
    assert_lacks(&out.stdout(), "IMPLEMENTED ANYWAY");
}

#[tokio::test]
async fn a_second_plan_of_the_step_gets_a_new_file_and_text_output_names_it() {
    let (home, ws) = home();
    let server = FakeServer::start().await;
    server.push(present("p1", PLAN));
    server.push(present(
        "p2",
        "# Second thoughts\n\n1. Keep `parse_all`; add `parse` beside it.\n",
    ));
    plan_run(home.path(), &ws, &server, &[]).await;
    let second = plan_run(home.path(), &ws, &server, &["--output", "text"]).await;
    let notes = ws.join(".flower/notes");
    assert_eq!(
        std::fs::read_to_string(notes.join("plan-rename.md")).unwrap(),
        PLAN
    );
    let again = notes.join("plan-rename-2.md");
    assert!(
        std::fs::read_to_string(&again)
            .unwrap()
            .contains("Second thoughts")
    );
    assert_contains(&second.stdout(), &format!("Plan: {}", again.display()));

    // `--continue` without `--mode` goes on in the mode the step last used.
    server.script().text("Still planning.");
    let mut c = bin_for(home.path(), &server);
    c.args(["--workspace", ws.to_str().unwrap(), "--sandbox", "off"])
        .args(["--continue", "-p", "and the tests?"]);
    let events = run(c).await.success().events();
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "mode" && e["mode"] == "plan"),
        "{events:?}"
    );
    let last = server.requests().pop().unwrap();
    assert!(tool_names(&last).iter().any(|t| t == "present_plan"));
    assert!(!tool_names(&last).iter().any(|t| t == "write_file"));
}

#[test]
fn a_bad_mode_is_one_line_naming_the_accepted_ones() {
    let home = tempfile::tempdir().unwrap();
    let out = bin(home.path())
        .args(["--mode", "yolo", "-p", "x"])
        .output()
        .unwrap();
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert_contains(&err, "normal, accept-edits, plan");
    std::fs::create_dir_all(home.path().join("config/flower")).unwrap();
    std::fs::write(
        home.path().join("config/flower/config.toml"),
        "mode = \"planning\"\n",
    )
    .unwrap();
    let out = bin(home.path())
        .args(["-p", "x", "--demo"])
        .output()
        .unwrap();
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert!(err.contains("`mode`") && err.contains("planning"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[tokio::test]
async fn accept_edits_runs_file_edits_in_the_workspace_unasked_but_not_commands_nor_outside_paths()
{
    let (home, ws) = home();
    let outside = home.path().join("outside.txt");
    let server = FakeServer::start().await;
    server
        .script()
        .usage(U::new(900, 20))
        .call(
            "w1",
            "write_file",
            r#"{"path":"made.txt","content":"made\n"}"#,
        )
        .at(950)
        .call(
            "e1",
            "edit_file",
            r#"{"path":"lib.rs","old_string":"parse_all","new_string":"parse"}"#,
        )
        .at(1_000)
        .call("b1", "bash", r#"{"command":"touch ran.txt"}"#)
        .at(1_050)
        .call(
            "o1",
            "write_file",
            json!({"path": outside.to_str().unwrap(), "content": "no\n"}).to_string(),
        )
        .usage(U::new(1_100, 10))
        .text("Edited.");
    let mut c = bin_for(home.path(), &server);
    c.args(["--workspace", ws.to_str().unwrap(), "--sandbox", "off"])
        .args(["--mode", "accept-edits", "-p", "rename parse_all"]);
    let events = run(c).await.success().events();
    assert_eq!(
        events
            .iter()
            .find(|e| e["type"] == "mode")
            .map(|e| &e["mode"]),
        Some(&Value::from("accept-edits"))
    );
    assert_file(ws.join("made.txt"), "made\n");
    assert_file(ws.join("lib.rs"), "pub fn parse() {}\n");
    let result = |id: &str| tool_result(&events, id).clone();
    assert_eq!(
        result("b1")["is_error"],
        true,
        "a command is still asked for"
    );
    assert!(!ws.join("ran.txt").exists());
    assert_eq!(
        result("o1")["is_error"],
        true,
        "outside paths are asked for"
    );
    assert!(!outside.exists());
    // The mode is in the request: every tool is offered.
    assert!(
        tool_names(&server.requests()[0])
            .iter()
            .any(|t| t == "bash")
    );
}

#[tokio::test]
async fn a_plan_that_restates_its_instructions_is_refused_and_no_file_is_written() {
    let (home, ws) = home();
    let server = FakeServer::start().await;
    let echo = flower_tui::engine::tools::present_plan::PLAN_MODE_PROMPT;
    server.push(present("p1", echo));
    server.script().text("I could not plan it.");
    let out = plan_run(home.path(), &ws, &server, &[]).await;
    let events = out.events();
    let refused = tool_result(&events, "p1");
    assert_eq!(refused["is_error"], true);
    let why = refused["output"].as_str().unwrap();
    assert_contains(why, "restates its instructions");
    assert!(!ws.join(".flower/notes/plan-rename.md").exists());
    assert!(!events.iter().any(|e| e["type"] == "plan"));
    assert!(events.last().unwrap().get("plan").is_none());
}
