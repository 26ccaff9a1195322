//! Plan mode end to end: the real binary, the loopback fake as the model. Headless `--mode plan`
//! offers only the tools that change nothing (read from the request's bytes), refuses a write
//! the model tries anyway, writes the plan file, names it in the result and ends without
//! implementing; a second plan of the step never overwrites the first. In a terminal, Shift-Tab
//! cycles the modes in the status line, and a presented plan is edited in the side editor and
//! implemented here or in a fresh session that starts from the file (`tui.rs`).

mod engine;
mod tui;

use std::path::{Path, PathBuf};

use flower_tui::engine::tools::sandbox::Support;
use serde_json::{Value, json};

use crate::suite::cli::{bin, lines, stderr};
use crate::support::fake::{FakeServer, Reply, U, anthropic as a};
use crate::support::harness::KEY;

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

/// The names of the tools a request offered.
pub(crate) fn offered(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A home with an empty workspace `ws`.
fn home() -> (tempfile::TempDir, PathBuf) {
    let home = tempfile::tempdir().unwrap();
    let ws = home.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("lib.rs"), "pub fn parse_all() {}\n").unwrap();
    (home, ws)
}

/// `flower-tui --mode plan --step rename -p TASK` in `ws`, against `server`.
fn plan_run(home: &Path, ws: &Path, base_url: &str, extra: &[&str]) -> std::process::Output {
    let mut c = bin(home);
    c.env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", base_url)
        .args(["--workspace", ws.to_str().unwrap(), "--step", "rename"])
        .args(["--mode", "plan", "--sandbox", "off"])
        .args(extra)
        .args(["-p", "plan the rename of parse_all"]);
    c.output().unwrap()
}

#[tokio::test]
async fn headless_plan_mode_offers_read_only_tools_refuses_writes_and_ends_in_a_plan_file() {
    let (home, ws) = home();
    let server = FakeServer::start().await;
    server.push(a::tool_use(
        "r1",
        "read_file",
        r#"{"path":"lib.rs"}"#,
        U::new(900, 20),
    ));
    server.push(a::tool_use(
        "w1",
        "write_file",
        r#"{"path":"lib.rs","content":"pub fn parse() {}\n"}"#,
        U::new(950, 20),
    ));
    server.push(present("p1", PLAN));
    // Were the turn to go on after the plan, this would be its next reply.
    server.push(a::text("IMPLEMENTED ANYWAY", U::new(1_100, 10)));
    let (h, w, url) = (home.path().to_path_buf(), ws.clone(), server.base_url());
    let out = tokio::task::spawn_blocking(move || plan_run(&h, &w, &url, &[]))
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = lines(&out);

    // Only tools that change nothing reached the provider, and the prompt says it plans.
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "no request after the plan: {requests:?}");
    let tools = offered(&requests[0]);
    // `recall` reads the step's own transcripts (old tool output is masked).
    let mut expected = vec![
        "read_file",
        "grep",
        "glob",
        "list_dir",
        "todo",
        "recall",
        "job_output",
        "job_stop",
    ];
    if Support::current().confines_writes() {
        expected.insert(1, "bash");
    }
    expected.push("present_plan");
    assert_eq!(tools, expected, "{tools:?}");
    for writer in ["write_file", "edit_file", "task"] {
        assert!(!tools.iter().any(|t| t == writer), "{writer} offered");
    }
    let system = requests[0]["system"].to_string();
    assert!(system.contains("# Plan mode"), "{system}");

    // The write the model tried anyway was refused with a clear error; the file is untouched.
    let refused = events
        .iter()
        .find(|e| e["type"] == "tool_result" && e["id"] == "w1")
        .unwrap();
    assert_eq!(refused["is_error"], true);
    let why = refused["output"].as_str().unwrap();
    assert!(why.contains("refused: plan mode changes nothing"), "{why}");
    assert_eq!(
        std::fs::read_to_string(ws.join("lib.rs")).unwrap(),
        "pub fn parse_all() {}\n"
    );

    // The plan is a file, named in a `plan` event and in the result line.
    let path = ws.join(".flower/notes/plan-rename.md");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), PLAN);
    let plan = events.iter().find(|e| e["type"] == "plan").unwrap();
    assert_eq!(plan["path"], path.to_str().unwrap());
    let result = events.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["plan"], path.to_str().unwrap(), "{result}");
    assert_eq!(result["is_error"], false);
    assert!(!out.stdout.windows(18).any(|w| w == b"IMPLEMENTED ANYWAY"));
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
    let run = |extra: &'static [&'static str]| {
        let (h, w, url) = (home.path().to_path_buf(), ws.clone(), server.base_url());
        tokio::task::spawn_blocking(move || plan_run(&h, &w, &url, extra))
    };
    let first = run(&[]).await.unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let second = run(&["--output", "text"]).await.unwrap();
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
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
    let text = String::from_utf8_lossy(&second.stdout);
    assert!(
        text.contains(&format!("Plan: {}", again.display())),
        "{text}"
    );

    // `--continue` without `--mode` goes on in the mode the step last used.
    server.push(a::text("Still planning.", U::new(1_000, 10)));
    let mut c = bin(home.path());
    c.env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .args(["--workspace", ws.to_str().unwrap(), "--sandbox", "off"])
        .args(["--continue", "-p", "and the tests?"]);
    let third = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert_eq!(third.status.code(), Some(0), "{}", stderr(&third));
    let events = lines(&third);
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "mode" && e["mode"] == "plan"),
        "{events:?}"
    );
    let last = server.requests().pop().unwrap();
    assert!(offered(&last).iter().any(|t| t == "present_plan"));
    assert!(!offered(&last).iter().any(|t| t == "write_file"));
}

#[test]
fn a_bad_mode_is_one_line_naming_the_accepted_ones() {
    let home = tempfile::tempdir().unwrap();
    let out = bin(home.path())
        .args(["--mode", "yolo", "-p", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("normal, accept-edits, plan"), "{err}");
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
    assert_eq!(out.status.code(), Some(2));
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
    server.push(a::tool_use(
        "w1",
        "write_file",
        r#"{"path":"made.txt","content":"made\n"}"#,
        U::new(900, 20),
    ));
    server.push(a::tool_use(
        "e1",
        "edit_file",
        r#"{"path":"lib.rs","old_string":"parse_all","new_string":"parse"}"#,
        U::new(950, 20),
    ));
    server.push(a::tool_use(
        "b1",
        "bash",
        r#"{"command":"touch ran.txt"}"#,
        U::new(1_000, 20),
    ));
    server.push(a::tool_use(
        "o1",
        "write_file",
        &json!({"path": outside.to_str().unwrap(), "content": "no\n"}).to_string(),
        U::new(1_050, 20),
    ));
    server.push(a::text("Edited.", U::new(1_100, 10)));
    let mut c = bin(home.path());
    c.env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .args(["--workspace", ws.to_str().unwrap(), "--sandbox", "off"])
        .args(["--mode", "accept-edits", "-p", "rename parse_all"]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = lines(&out);
    assert_eq!(
        events
            .iter()
            .find(|e| e["type"] == "mode")
            .map(|e| &e["mode"]),
        Some(&Value::from("accept-edits"))
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("made.txt")).unwrap(),
        "made\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("lib.rs")).unwrap(),
        "pub fn parse() {}\n"
    );
    let result = |id: &str| {
        events
            .iter()
            .find(|e| e["type"] == "tool_result" && e["id"] == id)
            .unwrap()
            .clone()
    };
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
    assert!(offered(&server.requests()[0]).iter().any(|t| t == "bash"));
}

#[tokio::test]
async fn a_plan_that_restates_its_instructions_is_refused_and_no_file_is_written() {
    let (home, ws) = home();
    let server = FakeServer::start().await;
    let echo = flower_tui::engine::tools::present_plan::PLAN_MODE_PROMPT;
    server.push(present("p1", echo));
    server.push(a::text("I could not plan it.", U::new(1_000, 10)));
    let (h, w, url) = (home.path().to_path_buf(), ws.clone(), server.base_url());
    let out = tokio::task::spawn_blocking(move || plan_run(&h, &w, &url, &[]))
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = lines(&out);
    let refused = events
        .iter()
        .find(|e| e["type"] == "tool_result" && e["id"] == "p1")
        .unwrap();
    assert_eq!(refused["is_error"], true);
    let why = refused["output"].as_str().unwrap();
    assert!(why.contains("restates its instructions"), "{why}");
    assert!(!ws.join(".flower/notes/plan-rename.md").exists());
    assert!(!events.iter().any(|e| e["type"] == "plan"));
    assert!(events.last().unwrap().get("plan").is_none());
}
