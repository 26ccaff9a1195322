//! Oversized input: a 10 MB message is spilled to a file the model can read, the model gets a
//! preview and the path, the user is told, and the ledger keeps only the task's head.

use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};

use serde_json::Value;

use crate::support::check::{assert_contains, assert_file, assert_success};
use crate::support::fake::{FakeServer, U, anthropic as a};
use crate::support::harness::all_files;
use crate::support::headless::{bin_for, lines, run, stderr};

/// A message of about `bytes` bytes: numbered lines, with markers at its start, middle and end.
pub(crate) fn big_message(bytes: usize) -> String {
    let mut s = String::from("BEGIN-MARKER of the paste\n");
    let mut n = 0;
    while s.len() < bytes / 2 {
        n += 1;
        s.push_str(&format!(
            "line {n} of the big paste, with some words to fill it\n"
        ));
    }
    s.push_str("MIDDLE-MARKER\n");
    while s.len() < bytes {
        n += 1;
        s.push_str(&format!(
            "line {n} of the big paste, with some words to fill it\n"
        ));
    }
    s.push_str("END-MARKER");
    s
}

/// `flower-tui -p - ARGS` with `task` on stdin.
async fn run_stdin(server: &FakeServer, home: &Path, task: String, args: &[&str]) -> Output {
    let mut c = bin_for(home, server);
    c.args(["-p", "-", "--yes", "--step", "big"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    tokio::task::spawn_blocking(move || {
        let mut child = c.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || stdin.write_all(task.as_bytes()));
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        out
    })
    .await
    .unwrap()
}

/// The text of the first user message of a request body.
fn first_user_text(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<String>()
        })
        .unwrap_or_default()
}

/// The one tool result of the last request.
fn last_tool_result(server: &FakeServer) -> String {
    let body = server.requests().last().unwrap().clone();
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    last["content"][0]["content"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| last["content"][0]["content"].to_string())
}

#[tokio::test]
async fn a_ten_megabyte_message_is_spilled_and_read_back_in_pages() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let task = big_message(10_000_000);
    server
        .script()
        .usage(U::new(2_000, 20))
        .tool(
            "read_file",
            r#"{"path": ".flower/spill/input-1.txt", "offset": 1, "limit": 3}"#,
        )
        .usage(U::new(2_100, 10))
        .text("read the start");
    let out = run_stdin(&server, home.path(), task.clone(), &[]).await;
    assert_success(&out);

    // The file holds all of it, byte for byte.
    let spilled = home.path().join(".flower/spill/input-1.txt");
    assert_file(&spilled, task);
    // The model got the preview, the path and how to read the rest.
    let first = first_user_text(&server.requests()[0]);
    assert!(first.len() < 3_000, "{} characters sent", first.len());
    for want in [
        "10000",
        "over the 100000-character limit",
        ".flower/spill/input-1.txt",
        "read_file",
        "BEGIN-MARKER",
        "END-MARKER",
    ] {
        assert!(first.contains(want), "{want:?} missing: {first}");
    }
    assert!(!first.contains("MIDDLE-MARKER"));
    // …and read it in pages.
    let page = last_tool_result(&server);
    assert!(
        page.contains("BEGIN-MARKER") && page.contains("line 2 of the big paste"),
        "{page}"
    );
    // The user is told.
    let notice = lines(&out)
        .into_iter()
        .find(|e| e["type"] == "notice")
        .expect("a notice");
    let notice = notice["message"].as_str().unwrap().to_string();
    assert!(
        notice.contains(&spilled.display().to_string()) && notice.contains("10000"),
        "{notice}"
    );
    // The ledger keeps the task's head only, and no file on disk but the spill holds 10 MB.
    let runs = home.path().join("data/flower/runs");
    let manifest_path = all_files(&runs)
        .into_iter()
        .find(|f| f.ends_with("manifest.json"))
        .unwrap();
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
    let kept = manifest["steps"][0]["task"].as_str().unwrap();
    assert_eq!(kept.chars().count(), 1_201, "{kept}");
    assert!(kept.starts_with("BEGIN-MARKER") && kept.ends_with('…'));
    for f in all_files(home.path()) {
        let size = std::fs::metadata(&f).unwrap().len();
        assert!(
            f == spilled || size < 200_000,
            "{} is {size} bytes",
            f.display()
        );
    }
}

#[tokio::test]
async fn without_a_workbench_the_input_goes_to_the_run_directory() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let task = big_message(300_000);
    server.script().usage(U::new(2_000, 20)).text("fine");
    // The workspace apart from the data dir, as it is for a user.
    let ws = home.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let ws_arg = ws.display().to_string();
    let out = run_stdin(
        &server,
        home.path(),
        task.clone(),
        &["--no-workbench", "--workspace", &ws_arg],
    )
    .await;
    assert_success(&out);
    let spilled = all_files(&home.path().join("data/flower/runs"))
        .into_iter()
        .find(|f| f.ends_with("spill/input-1.txt"))
        .expect("the input in <run>/spill");
    assert_file(&spilled, task);
    assert!(!ws.join(".flower").exists());
    // The model is pointed at it, and may read it without an approval (its own spill folder).
    let first = first_user_text(&server.requests()[0]);
    assert!(first.contains(&spilled.display().to_string()), "{first}");
    let path = serde_json::to_string(&spilled.display().to_string()).unwrap();
    server
        .script()
        .usage(U::new(2_100, 20))
        .tool(
            "read_file",
            format!(r#"{{"path": {path}, "offset": 2, "limit": 1}}"#),
        )
        .usage(U::new(2_200, 10))
        .text("read it");
    let mut c = bin_for(home.path(), &server);
    c.args([
        "-p",
        "read the paste",
        "--continue",
        "--no-workbench",
        "--workspace",
        &ws_arg,
    ]);
    // Off the runtime: the fake answers on it.
    let out = run(c).await.output;
    assert_success(&out);
    let page = last_tool_result(&server);
    assert_contains(&page, "line 1 of the big paste");
}

#[tokio::test]
async fn a_message_that_cannot_fit_below_the_handoff_line_is_spilled_too() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    // A 20k window with 5k headroom: the line is at 15k tokens; 64,000 characters are ~16k.
    let task = big_message(64_000);
    server.script().usage(U::new(2_000, 20)).text("fine");
    let out = run_stdin(
        &server,
        home.path(),
        task,
        &["--window", "20000", "--headroom", "5000"],
    )
    .await;
    assert_success(&out);
    let first = first_user_text(&server.requests()[0]);
    assert!(
        first.contains("too large to fit below the handoff line"),
        "{}",
        &first[..first.len().min(500)]
    );
    assert!(home.path().join(".flower/spill/input-1.txt").exists());
}

#[tokio::test]
async fn an_empty_or_blank_task_on_the_command_line_is_refused_as_stdin_is() {
    // `-p -` with nothing on stdin is a clear error; `-p ""` and `-p "  "` must be too, not an
    // empty user message the provider rejects (Anthropic: "text content blocks must be non-empty").
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    for task in ["", "   \n\t"] {
        let mut c = bin_for(home.path(), &server);
        c.args(["-p", task]);
        let out = run(c).await.output;
        assert_eq!(out.status.code(), Some(2), "{task:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("-p: the task is empty"),
            "{}",
            stderr(&out)
        );
    }
    assert!(server.requests().is_empty(), "nothing was sent");
}

#[tokio::test]
async fn a_request_that_cannot_fit_the_successor_of_a_learned_window_is_spilled() {
    // The message fits the model's table window when it is admitted; the provider's real window is
    // far smaller: the first request overflows, the window is learned, the handoff's successor
    // would carry the message verbatim and overflow again. It gets a spilled reference instead.
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let task = big_message(99_000);
    assert!(
        task.chars().count() < 100_000,
        "under the one-message limit"
    );
    server.set_window(Some(25_000));
    server.push_when(
        std::sync::Arc::new(|body: &Value| !crate::support::fake::is_writing(body)),
        a::text_counted("continued from the spilled request", 10),
    );
    let out = run_stdin(&server, home.path(), task.clone(), &["--headroom", "5000"]).await;
    assert_success(&out);
    let result = lines(&out)
        .into_iter()
        .find(|e| e["type"] == "result")
        .expect("a result line");
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(result["text"], "continued from the spilled request");

    let spilled = home.path().join(".flower/spill/input-1.txt");
    assert_file(&spilled, task);
    let last = server.recorded().last().unwrap().clone();
    assert!(last.tokens <= 25_000, "{} tokens sent", last.tokens);
    let first = first_user_text(&last.body);
    for want in [
        "<handoff>",
        "too large for the successor",
        ".flower/spill/input-1.txt",
        "BEGIN-MARKER",
    ] {
        assert!(first.contains(want), "{want:?} missing: {first}");
    }
    assert!(!first.contains("MIDDLE-MARKER"));
}
