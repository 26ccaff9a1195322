//! The real binary: flags, config file, env, `-v`, headless output, `--continue`, learned windows.

use crate::support::check::{assert_contains, assert_exit, handoff_phases, of};
use crate::support::fake::anthropic as a;
use crate::support::files::write;
use crate::support::harness::{KEY, all_files};
use crate::support::headless::{Scenario, bin, bin_for, lines, run, stderr};
use crate::support::requests::sent;

/// The binary in `home` with `args`, to its end, with no key and no server behind it.
fn offline(home: &std::path::Path, args: &[&str]) -> std::process::Output {
    bin(home).args(args).output().unwrap()
}

#[test]
fn a_bad_flag_value_is_one_line_and_exit_2() {
    let home = tempfile::tempdir().unwrap();
    let out = offline(home.path(), &["--review", "banana"]);
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--review") && err.contains("off"), "{err}");
    let out = offline(home.path(), &["--provider", "gemini", "-p", "x"]);
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("anthropic, openai"));
}

#[test]
fn a_config_file_with_a_wrong_type_names_the_key() {
    let home = tempfile::tempdir().unwrap();
    let cfg = home.path().join("config/flower");
    write(&cfg.join("config.toml"), "window = \"big\"\n");
    let out = offline(home.path(), &["-p", "x", "--demo"]);
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert_contains(&err, "window");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    std::fs::write(cfg.join("config.toml"), "colour = 3\n").unwrap();
    let out = offline(home.path(), &["-p", "x", "--demo"]);
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("colour"));
}

#[test]
fn headless_without_a_key_names_the_env_vars() {
    let home = tempfile::tempdir().unwrap();
    let out = offline(home.path(), &["-p", "hello"]);
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("ANTHROPIC_API_KEY"));
    assert!(stderr(&out).contains("--demo"));
    assert!(out.stdout.is_empty());
}

#[test]
fn demo_headless_runs_a_full_handoff() {
    let home = tempfile::tempdir().unwrap();
    let out = offline(home.path(), &["-p", "fix the calculator", "--demo", "-v"]);
    assert_exit(&out, 0);
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
    let phases = handoff_phases(&ev);
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
    let s = Scenario::new().await;
    s.script()
        .reply(a::too_long(205_030, 200_000))
        .at(3_000)
        .text("after the degraded handoff");
    // Not in the model table (Claude names are 200,000 there): the 1M default applies.
    let go = |args: &'static [&'static str]| {
        let mut c = s.command();
        c.env("ANTHROPIC_MODEL", "gateway-opus-test").args(args);
        run(c)
    };
    let out = go(&["-p", "task", "-v", "--yes"]).await.success();
    let err = out.stderr();
    assert_contains(&err, "window: 1000000");
    assert_contains(&err, "sk-t****");
    assert!(!err.contains(KEY));
    let ev = out.events();
    assert!(
        ev.iter()
            .any(|e| e["type"] == "window_learned" && e["window"] == 200_000)
    );

    s.script().at(3_000).text("second run");
    let out = go(&["-p", "again", "-v"]).await.success();
    let err = out.stderr();
    assert_contains(&err, "window: 200000 (learned");
    let started = &out.events()[0];
    assert_eq!(started["window"], 200_000);
    assert_eq!(started["at"], 150_000);
    for f in all_files(s.home()) {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        assert!(!text.contains(KEY), "key in {}", f.display());
    }
}

#[tokio::test]
async fn continue_attaches_to_the_latest_successor() {
    let s = Scenario::new().await;
    s.script()
        .over_the_line("## Doing\nA.\n## Next\nB.\n")
        .at(4_000)
        .text("first run done");
    let window = ["--window", "40000", "--headroom", "10000"];
    let out = s
        .headless(&[&window[..], &["-p", "first"]].concat())
        .await
        .success();
    let sessions: Vec<String> = of(&out.events(), "session_started")
        .into_iter()
        .map(|e| e["session_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(sessions.len(), 2);

    s.script().at(4_500).text("continued");
    let args = [&window[..], &["-p", "second", "--continue"]].concat();
    let ev = s.headless(&args).await.success().events();
    assert_eq!(
        ev[0]["session_id"],
        sessions[1].as_str(),
        "the successor, never the retired one"
    );
    let all = sent(s.server.requests().last().unwrap());
    assert!(all.contains("first run done") && all.contains("second"));
    assert!(
        all.contains("B."),
        "the successor's handoff briefing is in its history"
    );
}

#[tokio::test]
async fn handoff_after_triggers_a_manual_handoff_headless() {
    let s = Scenario::new().await;
    s.script().handed_off_after_one_turn();
    let args = ["-p", "list", "--handoff-after", "1", "--step", "manual"];
    let ev = s
        .headless(&[&args[..], &["--output", "json"]].concat())
        .await
        .success()
        .events();
    let writing = ev
        .iter()
        .find(|e| e["type"] == "handoff" && e["phase"] == "writing")
        .unwrap();
    assert_eq!(writing["manual"], true);
    assert!(
        ev.iter()
            .any(|e| e["type"] == "handoff" && e["phase"] == "done" && e["generation"] == 2)
    );
    assert!(s.path(".flower/notes/handoff-manual.md").exists());
    assert_eq!(ev.last().unwrap()["text"], "finished in generation 2");
}

#[tokio::test]
async fn text_output_prints_only_the_answer() {
    let s = Scenario::new().await;
    s.script().text("just the answer");
    let out = s.headless(&["-p", "q", "--output", "text"]).await.success();
    assert_eq!(out.stdout(), "just the answer\n");
}

#[tokio::test]
async fn commands_never_see_the_api_key() {
    let s = Scenario::new().await;
    s.script()
        .tool("bash", r#"{"command":"env; echo done"}"#)
        .at(1_100)
        .text("ok");
    let out = s.headless(&["-p", "show env", "--yes"]).await.success();
    let body = serde_json::to_string(&s.server.requests()[1]).unwrap();
    assert!(body.contains("done"), "the command ran: {body}");
    assert!(!body.contains(KEY), "the key reached the model");
    assert!(!out.stdout().contains(KEY));
}

#[tokio::test]
async fn continue_only_attaches_to_a_run_of_this_workspace() {
    let s = Scenario::new().await;
    let other = s.path("other");
    std::fs::create_dir_all(&other).unwrap();
    s.script().text("first");
    s.headless(&["-p", "one"]).await.success();
    let mut c = s.command();
    c.args(["-p", "two", "--continue", "--workspace"])
        .arg(&other);
    let out = run(c).await;
    assert_ne!(out.code(), Some(0));
    assert!(
        out.stderr().contains("no earlier run for"),
        "{}",
        out.stderr()
    );
    assert_eq!(
        s.server.requests().len(),
        1,
        "nothing was sent for the other workspace"
    );
}

#[tokio::test]
async fn a_local_openai_compatible_server_runs_without_a_key() {
    let s = Scenario::new().await;
    s.script().openai().at(500).text("hello from a local model");
    let mut c = bin(s.home());
    c.env("OPENAI_BASE_URL", format!("{}/v1", s.server.base_url()))
        .args(["-p", "hi", "--provider", "openai", "--model", "llama3.1"])
        .args(["--output", "text"]);
    let out = run(c).await.success();
    assert_eq!(out.stdout(), "hello from a local model\n");
    assert_eq!(s.server.request_paths(), ["/v1/chat/completions"]);
    let headers = &s.server.request_headers()[0];
    assert!(
        !headers.iter().any(|(k, _)| k == "authorization"),
        "{headers:?}"
    );
    assert_eq!(s.server.requests()[0]["model"], "llama3.1");
}

#[tokio::test]
async fn the_log_file_has_the_turn_the_requests_and_the_retries_but_never_the_key() {
    let s = Scenario::new().await;
    s.config("retry_base_ms = 1\nlog_level = \"debug\"\n");
    s.script()
        .reply(a::overloaded())
        .at(2_000)
        .text(&format!("done, and {KEY} is not logged"));
    s.headless(&["-p", "task", "--yes"]).await.success();
    let logs = s.path("data/flower/logs");
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
    s.script().at(2_000).text("quiet");
    let mut c = bin_for(quiet.path(), &s.server);
    c.args(["-p", "task", "--log-level", "off"]);
    run(c).await.success();
    assert!(!quiet.path().join("data/flower/logs").exists());
    let out = offline(quiet.path(), &["--log-level", "loud"]);
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("off, error, warn, info, debug, trace"));
}

#[tokio::test]
async fn headless_prints_the_plan_as_a_todo_event() {
    let s = Scenario::new().await;
    s.script()
        .tool(
            "todo",
            r#"{"items": [{"text": "read the parser", "status": "done"}, {"text": "fix it", "status": "in_progress"}]}"#,
        )
        .at(1_100)
        .text("planned");
    let out = s
        .headless(&["-p", "plan it", "--output", "json"])
        .await
        .success();
    let ev = out.events();
    let todo = of(&ev, "todo");
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
    let m =
        flower_tui::engine::ledger::Manifest::load(&out.run_dir().join("manifest.json")).unwrap();
    assert_eq!(m.steps[0].memory.todo.len(), 2);
    let body = &s.server.requests()[0];
    assert!(
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "todo")
    );
}

/// `git -C dir ARGS`, which must succeed.
fn git(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

#[tokio::test]
async fn the_first_request_carries_the_git_status_of_the_start_looked_at_beside_it() {
    let s = Scenario::new().await;
    let repo = s.path("repo");
    s.write("repo/kept.txt", "one\n");
    s.write("repo/changed.txt", "one\n");
    git(&repo, &["init", "-q", "-b", "trunk"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "start"]);
    s.write("repo/changed.txt", "two\n");
    s.write("repo/new.txt", "new\n");
    s.script().text("seen");
    let ws = repo.to_str().unwrap();
    let run = s.headless(&["-p", "hello", "--workspace", ws]).await;
    let run = run.success();
    let system = s.server.requests()[0]["system"].to_string();
    for line in [
        "a repository, branch trunk, 2 changed or untracked file(s)",
        " M changed.txt",
        "?? new.txt",
    ] {
        assert_contains(&system, line);
    }
    assert!(!system.contains("kept.txt"), "{system}");
    // The front end is told the same block the model was sent.
    let events = run.events();
    let told = &of(&events, "session_prompt")[0]["environment"];
    assert_contains(told.as_str().unwrap(), "?? new.txt");

    // `--continue` looks again when it attaches: a file made since is in its block.
    s.write("repo/later.txt", "later\n");
    s.script().text("again");
    s.headless(&["-p", "more", "--continue", "--workspace", ws])
        .await
        .success();
    let system = s.server.requests()[1]["system"].to_string();
    assert_contains(&system, "?? later.txt");
}
