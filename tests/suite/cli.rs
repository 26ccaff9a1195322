//! The real binary: flags, config file, env, `-v`, headless output, `--continue`, learned windows.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::fake::{FakeServer, Reply, U, anthropic as a};
use crate::support::harness::{KEY, all_files};

pub(crate) fn bin(home: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_flower-tui"));
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .current_dir(home);
    c
}

pub(crate) fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn u(input: u64) -> U {
    U {
        input,
        output: 10,
        cache_creation: 0,
        cache_read: 0,
    }
}

#[test]
fn a_bad_flag_value_is_one_line_and_exit_2() {
    let home = tempfile::tempdir().unwrap();
    let out = bin(home.path())
        .args(["--review", "banana"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--review") && err.contains("off"), "{err}");
    let out = bin(home.path())
        .args(["--provider", "gemini", "-p", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("anthropic, openai"));
}

#[test]
fn a_config_file_with_a_wrong_type_names_the_key() {
    let home = tempfile::tempdir().unwrap();
    let cfg = home.path().join("config/flower");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("config.toml"), "window = \"big\"\n").unwrap();
    let out = bin(home.path())
        .args(["-p", "x", "--demo"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("window"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    std::fs::write(cfg.join("config.toml"), "colour = 3\n").unwrap();
    let out = bin(home.path())
        .args(["-p", "x", "--demo"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("colour"));
}

#[test]
fn headless_without_a_key_names_the_env_vars() {
    let home = tempfile::tempdir().unwrap();
    let out = bin(home.path()).args(["-p", "hello"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("ANTHROPIC_API_KEY"));
    assert!(stderr(&out).contains("--demo"));
    assert!(out.stdout.is_empty());
}

#[test]
fn demo_headless_runs_a_full_handoff() {
    let home = tempfile::tempdir().unwrap();
    let out = bin(home.path())
        .args(["-p", "fix the calculator", "--demo", "-v"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("window: 40000")
            && err.contains("at: 30000")
            && err.contains("warn_at: 10000"),
        "{err}"
    );
    assert!(
        err.contains("sandbox: workspace-write, network off ("),
        "the default sandbox: {err}"
    );
    let ev = lines(&out);
    let phases: Vec<&str> = ev
        .iter()
        .filter(|e| e["type"] == "handoff")
        .filter_map(|e| e["phase"].as_str())
        .collect();
    assert!(
        phases.starts_with(&["near", "writing", "frozen", "done"]),
        "{phases:?}"
    );
    let last = ev.last().unwrap();
    assert_eq!(last["type"], "result");
    assert_eq!(last["is_error"], false);
    assert!(last["text"].as_str().unwrap().contains("mul"));
}

#[tokio::test]
async fn verbose_masks_the_key_and_the_window_is_learned_for_the_next_run() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    server.push(Reply::Status {
        status: 400,
        headers: vec![],
        body: r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 205030 tokens > 200000 maximum"}}"#.into(),
    });
    server.push(a::text("after the degraded handoff", u(3_000)));
    let run = |args: &'static [&'static str]| {
        let mut c = bin(home.path());
        c.env("ANTHROPIC_API_KEY", KEY)
            .env("ANTHROPIC_BASE_URL", server.base_url())
            // Not in the model table (Claude names are 200,000 there): the 1M default applies.
            .env("ANTHROPIC_MODEL", "gateway-opus-test")
            .args(args);
        tokio::task::spawn_blocking(move || c.output().unwrap())
    };
    let out = run(&["-p", "task", "-v", "--yes"]).await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("window: 1000000"), "{err}");
    assert!(err.contains("sk-t****"), "{err}");
    assert!(!err.contains(KEY));
    let ev = lines(&out);
    assert!(
        ev.iter()
            .any(|e| e["type"] == "window_learned" && e["window"] == 200_000)
    );

    server.push(a::text("second run", u(3_000)));
    let out = run(&["-p", "again", "-v"]).await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("window: 200000 (learned"), "{err}");
    let started = &lines(&out)[0];
    assert_eq!(started["window"], 200_000);
    assert_eq!(started["at"], 150_000);
    for f in all_files(home.path()) {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        assert!(!text.contains(KEY), "key in {}", f.display());
    }
}

#[tokio::test]
async fn continue_attaches_to_the_latest_successor() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let doc = "## Doing\nA.\n## Next\nB.\n";
    server.push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    server.push(a::text(doc, u(31_500)));
    server.push(a::text("first run done", u(4_000)));
    let run = |args: &'static [&'static str]| {
        let mut c = bin(home.path());
        c.env("ANTHROPIC_API_KEY", KEY)
            .env("ANTHROPIC_BASE_URL", server.base_url())
            .args(["--window", "40000", "--headroom", "10000"])
            .args(args);
        tokio::task::spawn_blocking(move || c.output().unwrap())
    };
    let out = run(&["-p", "first"]).await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ev = lines(&out);
    let sessions: Vec<String> = ev
        .iter()
        .filter(|e| e["type"] == "session_started")
        .map(|e| e["session_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(sessions.len(), 2);

    server.push(a::text("continued", u(4_500)));
    let out = run(&["-p", "second", "--continue"]).await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ev = lines(&out);
    assert_eq!(
        ev[0]["session_id"],
        sessions[1].as_str(),
        "the successor, never the retired one"
    );
    let last_req = server.requests().last().unwrap().clone();
    let msgs = last_req["messages"].as_array().unwrap();
    let all = serde_json::to_string(msgs).unwrap();
    assert!(all.contains("first run done") && all.contains("second"));
    assert!(
        all.contains("B."),
        "the successor's handoff briefing is in its history"
    );
}

#[tokio::test]
async fn handoff_after_triggers_a_manual_handoff_headless() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    server.push(a::tool_use("t1", "list_dir", "{}", u(2_000)));
    server.push(a::text("## Doing\nListing.\n## Next\nFinish.\n", u(2_500)));
    server.push(a::text("finished in generation 2", u(1_500)));
    let mut c = bin(home.path());
    c.env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .args([
            "-p",
            "list",
            "--handoff-after",
            "1",
            "--step",
            "manual",
            "--output",
            "json",
        ]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ev = lines(&out);
    let writing = ev
        .iter()
        .find(|e| e["type"] == "handoff" && e["phase"] == "writing")
        .unwrap();
    assert_eq!(writing["manual"], true);
    assert!(
        ev.iter()
            .any(|e| e["type"] == "handoff" && e["phase"] == "done" && e["generation"] == 2)
    );
    assert!(home.path().join(".flower/notes/handoff-manual.md").exists());
    assert_eq!(ev.last().unwrap()["text"], "finished in generation 2");
}

#[tokio::test]
async fn text_output_prints_only_the_answer() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    server.push(a::text("just the answer", u(1_000)));
    let mut c = bin(home.path());
    c.env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .args(["-p", "q", "--output", "text"]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "just the answer\n");
}

#[tokio::test]
async fn commands_never_see_the_api_key() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    server.push(a::tool_use(
        "t1",
        "bash",
        r#"{"command":"env; echo done"}"#,
        u(1_000),
    ));
    server.push(a::text("ok", u(1_100)));
    let mut c = bin(home.path());
    c.env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .args(["-p", "show env", "--yes"]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body = serde_json::to_string(&server.requests()[1]).unwrap();
    assert!(body.contains("done"), "the command ran: {body}");
    assert!(!body.contains(KEY), "the key reached the model");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(KEY));
}

#[tokio::test]
async fn continue_only_attaches_to_a_run_of_this_workspace() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let other = home.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    server.push(a::text("first", u(1_000)));
    let mut c = bin(home.path());
    c.env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .args(["-p", "one"]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut c = bin(home.path());
    c.env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .args(["-p", "two", "--continue", "--workspace"])
        .arg(&other);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("no earlier run for"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        server.requests().len(),
        1,
        "nothing was sent for the other workspace"
    );
}

#[tokio::test]
async fn a_local_openai_compatible_server_runs_without_a_key() {
    use crate::support::fake::openai as o;
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    server.push(o::text("hello from a local model", u(500)));
    let mut c = bin(home.path());
    c.env("OPENAI_BASE_URL", format!("{}/v1", server.base_url()))
        .args([
            "-p",
            "hi",
            "--provider",
            "openai",
            "--model",
            "llama3.1",
            "--output",
            "text",
        ]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "hello from a local model\n"
    );
    assert_eq!(server.request_paths(), ["/v1/chat/completions"]);
    let headers = &server.request_headers()[0];
    assert!(
        !headers.iter().any(|(k, _)| k == "authorization"),
        "{headers:?}"
    );
    assert_eq!(server.requests()[0]["model"], "llama3.1");
}

#[tokio::test]
async fn the_log_file_has_the_turn_the_requests_and_the_retries_but_never_the_key() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("config/flower");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "retry_base_ms = 1\nlog_level = \"debug\"\n",
    )
    .unwrap();
    server.push(a::overloaded());
    server.push(a::text(&format!("done, and {KEY} is not logged"), u(2_000)));
    let mut c = bin(home.path());
    c.env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .args(["-p", "task", "--yes"]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let logs = home.path().join("data/flower/logs");
    let files: Vec<_> = std::fs::read_dir(&logs).unwrap().flatten().collect();
    assert_eq!(files.len(), 1, "one file a day");
    let log = std::fs::read_to_string(files[0].path()).unwrap();
    for want in [
        "flower-tui started",
        "session started",
        "turn started",
        "retrying",
        "request_id=req_fake_0001",
        "request done",
        "turn ended: completed",
    ] {
        assert!(log.contains(want), "{want:?} missing from the log:\n{log}");
    }
    assert!(!log.contains(KEY), "the key reached the log:\n{log}");
    assert!(!log.contains("hyper"), "only this crate's events:\n{log}");
    let pid = log.split_whitespace().next().unwrap();
    assert!(log.lines().all(|l| l.starts_with(pid)), "{log}");

    // `off` writes nothing; a bad level is one line and exit 2.
    let quiet = tempfile::tempdir().unwrap();
    server.push(a::text("quiet", u(2_000)));
    let mut c = bin(quiet.path());
    c.env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .args(["-p", "task", "--log-level", "off"]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!quiet.path().join("data/flower/logs").exists());
    let out = bin(quiet.path())
        .args(["--log-level", "loud"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("off, error, warn, info, debug, trace"));
}

#[tokio::test]
async fn headless_prints_the_plan_as_a_todo_event() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    server.push(a::tool_use(
        "t1",
        "todo",
        r#"{"items": [{"text": "read the parser", "status": "done"}, {"text": "fix it", "status": "in_progress"}]}"#,
        u(1_000),
    ));
    server.push(a::text("planned", u(1_100)));
    let mut c = bin(home.path());
    c.env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .args(["-p", "plan it", "--output", "json"]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ev = lines(&out);
    let todo: Vec<&Value> = ev.iter().filter(|e| e["type"] == "todo").collect();
    assert_eq!(todo.len(), 1, "{ev:#?}");
    assert_eq!(
        todo[0]["items"],
        serde_json::json!([
            {"text": "read the parser", "status": "done"},
            {"text": "fix it", "status": "in_progress"}
        ])
    );
    // The tool result comes after it, and the ledger keeps the plan.
    let at = |t: &str| ev.iter().position(|e| e["type"] == t).unwrap();
    assert!(at("todo") < at("tool_result"));
    let err = stderr(&out);
    let run = err
        .lines()
        .find_map(|l| l.strip_prefix("flower-tui: run directory "))
        .unwrap_or_else(|| panic!("{err}"));
    let m =
        flower_tui::engine::ledger::Manifest::load(&Path::new(run).join("manifest.json")).unwrap();
    assert_eq!(m.steps[0].memory.todo.len(), 2);
    let body = &server.requests()[0];
    assert!(
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "todo")
    );
}
