//! Hooks wired into sessions, through the real binary headless against the loopback fake
//! provider: bash and python3 scripts configured in `config.toml` see every event with Claude
//! Code's fields, block tools and prompts by exit code 2 and by JSON, keep a turn going from
//! `Stop` (a few times at most), and a hook that hangs, floods or fails loses nothing. A
//! workspace settings file never approved does not run headless.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::check::{assert_contains, assert_success, strs_of};
use crate::support::fake::{FakeServer, U, anthropic as a};
use crate::support::harness::KEY;

/// A home that is also the workspace, with the config file's hooks and the scripts.
pub(super) struct Home {
    pub(super) dir: tempfile::TempDir,
}

impl Home {
    pub(super) fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("config/flower")).unwrap();
        Home { dir }
    }

    pub(super) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// An executable script in the workspace; its path quoted for a command line.
    pub(super) fn script(&self, name: &str, text: &str) -> String {
        use std::os::unix::fs::PermissionsExt;
        let path = self.path().join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        format!("'{}'", path.display())
    }

    /// `edit.py`, a `HandoffFrozen` hook that saves its input as `frozen.json` beside itself,
    /// sleeps `pause` seconds, then replaces `old` with `new` in the frozen document; how a
    /// command line names it.
    pub(super) fn editing_hook(&self, pause: f64, old: &str, new: &str) -> String {
        let body = format!(
            r#"#!/usr/bin/env python3
import json, os, sys, time
d = json.load(sys.stdin)
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "frozen.json"), "w") as f:
    json.dump(d, f)
time.sleep({pause})
p = d["handoff_path"]
text = open(p).read()
open(p, "w").write(text.replace({old:?}, {new:?}))
"#
        );
        self.script("edit.py", &body)
    }

    /// The `HandoffFrozen` hook of [`Home::editing_hook`] was given the event, `trigger`, the step
    /// `step` in generation 2 and its handoff file `handoff-<step>.md`; the failure shows what it
    /// was given.
    #[track_caller]
    pub(super) fn assert_frozen_hook_given(&self, trigger: &str, step: &str) {
        let given = self.json("frozen.json");
        assert_eq!(given["hook_event_name"], "HandoffFrozen", "{given}");
        assert_eq!(given["trigger"], trigger, "{given}");
        assert_eq!(given["step"], step, "{given}");
        assert_eq!(given["generation"], 2, "{given}");
        let path = given["handoff_path"].as_str().unwrap_or_default();
        assert!(path.ends_with(&format!("handoff-{step}.md")), "{given}");
    }

    pub(super) fn config(&self, toml: &str) {
        std::fs::write(self.path().join("config/flower/config.toml"), toml).unwrap();
    }

    pub(super) fn file(&self, name: &str) -> PathBuf {
        self.path().join(name)
    }

    /// The JSON a hook left in the file `name`.
    pub(super) fn json(&self, name: &str) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.file(name)).unwrap()).unwrap()
    }

    pub(super) fn command(&self, server: &FakeServer) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_flower-tui"));
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.path())
            .env("XDG_DATA_HOME", self.path().join("data"))
            .env("XDG_CONFIG_HOME", self.path().join("config"))
            .env("ANTHROPIC_API_KEY", KEY)
            .env("ANTHROPIC_BASE_URL", server.base_url())
            .current_dir(self.path());
        c
    }

    /// Run `-p task --yes` headless to its end.
    async fn run(&self, server: &FakeServer, task: &str, extra: &[&str]) -> Output {
        let mut c = self.command(server);
        c.args(["-p", task, "--yes", "--output", "json"])
            .args(extra);
        crate::support::headless::run(c).await.output
    }
}

pub(super) fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

fn hooks_of(events: &[Value]) -> Vec<&Value> {
    events.iter().filter(|e| e["type"] == "hook").collect()
}

fn notices(events: &[Value]) -> Vec<String> {
    strs_of(events, "notice", "message")
}

fn entry(event: &str, command: &str, rest: &str) -> String {
    format!("[[hooks.{event}]]\ncommand = {command:?}\n{rest}\n")
}

/// The stdin objects a logging hook appended, one a line.
fn logged(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn request_text(server: &FakeServer, i: usize) -> String {
    serde_json::to_string(&server.requests()[i]["messages"]).unwrap()
}

/// Logs what it reads; answers with context on the two events whose stdout is context.
const LOG_SH: &str = r#"#!/bin/bash
input=$(cat)
printf '%s\n' "$input" >> "$(dirname "$0")/events.log"
case "$input" in
  *'"hook_event_name":"SessionStart"'*) echo "context-from-session-start" ;;
  *'"hook_event_name":"UserPromptSubmit"'*) echo "context-from-prompt-hook" ;;
esac
"#;

/// A python hook after tools: logs, and answers with JSON context.
const POST_PY: &str = r#"#!/usr/bin/env python3
import json, os, sys
d = json.load(sys.stdin)
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "post.log"), "a") as f:
    f.write(json.dumps(d) + "\n")
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse",
                  "additionalContext": "python-saw-" + d["tool_name"]}}))
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_session_event_reaches_bash_and_python_hooks() {
    let home = Home::new();
    let log = home.script("log.sh", LOG_SH);
    let post = home.script("post.py", POST_PY);
    let mut toml = String::new();
    for event in ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"] {
        toml.push_str(&entry(event, &log, ""));
    }
    toml.push_str(&entry("PreToolUse", &log, "matcher = \"Bash\""));
    toml.push_str(&entry("PostToolUse", &post, "matcher = \"Bash|Read\""));
    // Never runs: no `grep` call.
    toml.push_str(&entry("PreToolUse", "touch never", "matcher = \"Grep\""));
    home.config(&toml);

    let server = FakeServer::start().await;
    server
        .script()
        .tool("bash", r#"{"command":"echo hi-from-bash"}"#)
        .at(1100)
        .text("done");
    let out = home.run(&server, "use the tool", &[]).await;
    assert_success(&out);
    let events = lines(&out);

    let seen = logged(&home.file("events.log"));
    let names: Vec<&str> = seen
        .iter()
        .map(|e| e["hook_event_name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "Stop",
            "SessionEnd"
        ]
    );
    let start = &seen[0];
    assert_eq!(start["source"], "startup");
    assert_eq!(start["cwd"], home.path().to_string_lossy().as_ref());
    assert_eq!(start["permission_mode"], "bypassPermissions");
    let session = start["session_id"].as_str().unwrap();
    assert!(!session.is_empty());
    assert!(seen.iter().all(|e| e["session_id"] == session));
    assert!(
        start["transcript_path"]
            .as_str()
            .unwrap()
            .ends_with(".jsonl"),
        "{start}"
    );
    assert_eq!(seen[1]["prompt"], "use the tool");
    assert_eq!(seen[2]["tool_name"], "Bash");
    assert_eq!(seen[2]["tool_input"]["command"], "echo hi-from-bash");
    assert_eq!(seen[2]["tool_use_id"], "t1");
    assert_eq!(seen[3]["stop_hook_active"], false);
    assert_eq!(seen[4]["reason"], "other");

    let post_seen = logged(&home.file("post.log"));
    assert_eq!(post_seen.len(), 1);
    assert_eq!(post_seen[0]["hook_event_name"], "PostToolUse");
    assert!(
        post_seen[0]["tool_response"]["stdout"]
            .as_str()
            .unwrap()
            .contains("hi-from-bash")
    );
    assert_eq!(post_seen[0]["tool_response"]["exit_code"], 0);
    assert!(!home.file("never").exists());

    // Context: the start's and the prompt's with the first request, the python hook's with the
    // tool's result.
    let first = request_text(&server, 0);
    assert_contains(&first, "context-from-session-start");
    assert_contains(&first, "context-from-prompt-hook");
    assert!(first.contains("use the tool"));
    let second = request_text(&server, 1);
    assert_contains(&second, "python-saw-Bash");
    assert!(second.contains("hi-from-bash"));

    // Every hook that ran is a `hook` line (SessionEnd runs after the result line).
    let ran: Vec<&str> = hooks_of(&events)
        .iter()
        .map(|h| h["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        ran,
        [
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "Stop"
        ]
    );
    assert!(
        hooks_of(&events)
            .iter()
            .all(|h| h["outcome"] == "succeeded")
    );
    assert_eq!(events.last().unwrap()["type"], "result");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_2_and_a_json_deny_block_tool_calls_with_the_reason_for_the_model() {
    let home = Home::new();
    let bash_guard = home.script(
        "guard.sh",
        "#!/bin/bash\ncat > /dev/null\necho 'no touching here' >&2\nexit 2\n",
    );
    let py_guard = home.script(
        "guard.py",
        r#"#!/usr/bin/env python3
import json, sys
d = json.load(sys.stdin)
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
    "permissionDecision": "deny",
    "permissionDecisionReason": "writes to " + d["tool_input"]["file_path"] + " are off"}}))
"#,
    );
    home.config(&format!(
        "{}{}",
        entry("PreToolUse", &bash_guard, "matcher = \"Bash\""),
        entry("PreToolUse", &py_guard, "matcher = \"Write\""),
    ));
    let server = FakeServer::start().await;
    server.push(a::text_then_tools(
        "trying",
        &[
            ("t1", "bash", r#"{"command":"touch made-by-bash"}"#),
            (
                "t2",
                "write_file",
                r#"{"path":"made-by-write","content":"x"}"#,
            ),
        ],
        U::new(1000, 10),
    ));
    server.script().at(1100).text("stopped");
    let out = home.run(&server, "make files", &[]).await;
    assert_success(&out);
    assert!(!home.file("made-by-bash").exists(), "the bash call ran");
    assert!(!home.file("made-by-write").exists(), "the write ran");
    let second = request_text(&server, 1);
    assert_contains(&second, "no touching here");
    let abs = home.file("made-by-write");
    assert_contains(&second, &format!("writes to {} are off", abs.display()));
    let events = lines(&out);
    let blocked: Vec<&Value> = hooks_of(&events)
        .into_iter()
        .filter(|h| h["outcome"] == "blocked")
        .collect();
    assert_eq!(blocked.len(), 2, "{events:?}");
    assert_eq!(blocked[0]["exit"], "exit code 2");
    assert_eq!(blocked[0]["output"], "no touching here");
    let results: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .collect();
    assert!(results.iter().all(|r| r["is_error"] == true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_hook_that_exits_2_drops_the_prompt_before_the_model() {
    let home = Home::new();
    let refuse = home.script(
        "refuse.sh",
        "#!/bin/bash\ncat > /dev/null\necho 'prompts mentioning secrets are refused' >&2\nexit 2\n",
    );
    home.config(&entry("UserPromptSubmit", &refuse, ""));
    let server = FakeServer::start().await;
    server.script().text("never asked");
    let out = home.run(&server, "tell me the secrets", &[]).await;
    let events = lines(&out);
    assert!(server.requests().is_empty(), "the prompt reached the model");
    assert!(
        notices(&events)
            .iter()
            .any(|n| n.contains("prompt blocked by a UserPromptSubmit hook")
                && n.contains("prompts mentioning secrets are refused")),
        "{events:?}"
    );
    let end = events.iter().find(|e| e["type"] == "turn_end").unwrap();
    assert_eq!(end["reason"], "unchanged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_hook_keeps_the_turn_going_once_and_an_endless_one_is_cut_off() {
    // A python hook in Claude Code's manner: block unless the stop was already blocked.
    let home = Home::new();
    let once = home.script(
        "once.py",
        r#"#!/usr/bin/env python3
import json, sys
d = json.load(sys.stdin)
if not d["stop_hook_active"]:
    print(json.dumps({"decision": "block", "reason": "run the tests before stopping"}))
"#,
    );
    home.config(&entry("Stop", &once, ""));
    let server = FakeServer::start().await;
    server
        .script()
        .text("done early")
        .at(1100)
        .text("tests ran, done");
    let out = home.run(&server, "work", &[]).await;
    assert_success(&out);
    assert_eq!(server.requests().len(), 2);
    assert!(request_text(&server, 1).contains("run the tests before stopping"));
    let text = lines(&out).last().unwrap()["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.ends_with("tests ran, done"), "{text}");

    // A bash hook that blocks every stop: the turn still ends, and says why.
    let home = Home::new();
    let always = home.script(
        "always.sh",
        "#!/bin/bash\ncat > /dev/null\necho 'never stop' >&2\nexit 2\n",
    );
    home.config(&entry("Stop", &always, ""));
    let server = FakeServer::start().await;
    for i in 0..6 {
        server.script().text(&format!("answer {i}"));
    }
    let out = home.run(&server, "work", &[]).await;
    assert_success(&out);
    assert_eq!(server.requests().len(), 4, "one answer and three more");
    let events = lines(&out);
    assert!(
        notices(&events)
            .iter()
            .any(|n| n.contains("kept the turn going 3 times")),
        "{events:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_that_hang_flood_or_fail_lose_nothing() {
    let home = Home::new();
    let hang = home.script(
        "hang.sh",
        "#!/bin/bash\ncat > /dev/null\nsleep 300 &\necho $! > \"$(dirname \"$0\")/child.pid\"\nsleep 300\n",
    );
    let flood = home.script(
        "flood.sh",
        "#!/bin/bash\ncat > /dev/null\nhead -c 3000000 /dev/zero | tr '\\0' 'y'\n",
    );
    let fail = home.script(
        "fail.py",
        "#!/usr/bin/env python3\nimport sys\nsys.stdin.read()\nprint('it broke', file=sys.stderr)\nsys.exit(1)\n",
    );
    home.config(&format!(
        "{}{}{}",
        entry("PreToolUse", &hang, "timeout = 1"),
        entry("PostToolUse", &flood, ""),
        entry("PostToolUse", &fail, ""),
    ));
    let server = FakeServer::start().await;
    server
        .script()
        .tool("bash", r#"{"command":"echo still-ran > ran.txt"}"#)
        .at(1100)
        .text("all done");
    let started = std::time::Instant::now();
    let out = home.run(&server, "go", &[]).await;
    assert_success(&out);
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    assert_eq!(
        std::fs::read_to_string(home.file("ran.txt"))
            .unwrap()
            .trim(),
        "still-ran",
        "a failed hook does not stop the call"
    );
    let events = lines(&out);
    assert_eq!(events.last().unwrap()["text"], "all done");
    let ran = hooks_of(&events);
    let hung = ran.iter().find(|h| h["event"] == "PreToolUse").unwrap();
    assert_eq!(hung["outcome"], "failed");
    assert!(
        hung["exit"].as_str().unwrap().starts_with("timed out"),
        "{hung}"
    );
    let pid: u32 = std::fs::read_to_string(home.file("child.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    crate::suite::faults::wait_until("the hook's child to be killed", 5, || {
        crate::suite::faults::gone(pid)
    });
    let flooded = ran
        .iter()
        .find(|h| h["name"].as_str().unwrap().contains("flood.sh"))
        .unwrap();
    assert!(
        flooded["output"].as_str().unwrap().len() < 4_000,
        "{flooded}"
    );
    let failed = ran
        .iter()
        .find(|h| h["name"].as_str().unwrap().contains("fail.py"))
        .unwrap();
    assert_eq!(failed["outcome"], "failed");
    assert_eq!(failed["exit"], "exit code 1");
    assert!(
        notices(&events)
            .iter()
            .any(|n| n.contains("failed (exit code 1): it broke")),
        "{events:?}"
    );
    // The model got the whole result, and none of the flood.
    let second = request_text(&server, 1);
    assert!(
        !second.contains("yyyyyyyyyy"),
        "the flood reached the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_settings_never_approved_do_not_run_headless_and_bad_ones_are_a_notice() {
    let home = Home::new();
    let hook = serde_json::json!({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "touch ran-from-settings"}]}]}});
    std::fs::create_dir_all(home.file(".claude")).unwrap();
    std::fs::write(home.file(".claude/settings.json"), hook.to_string()).unwrap();
    std::fs::create_dir_all(home.file(".flower")).unwrap();
    std::fs::write(home.file(".flower/settings.json"), "{\"hooks\": [1,").unwrap();
    home.config(&entry("Stop", "touch ran-from-config", "timeout = 5"));
    let server = FakeServer::start().await;
    server.script().text("ok");
    let out = home.run(&server, "hello", &[]).await;
    assert_success(&out);
    assert!(!home.file("ran-from-settings").exists());
    assert!(
        home.file("ran-from-config").exists(),
        "the config's hook still runs"
    );
    let told = notices(&lines(&out));
    let claude = home.file(".claude/settings.json").display().to_string();
    let flower = home.file(".flower/settings.json").display().to_string();
    assert!(
        told.iter()
            .any(|n| n.starts_with(&claude) && n.contains("never approved")),
        "{told:?}"
    );
    let bad: Vec<&String> = told.iter().filter(|n| n.starts_with(&flower)).collect();
    assert_eq!(bad.len(), 1, "{told:?}");
    assert!(!bad[0].contains('\n'));

    // Trusted workspace files run.
    let server = FakeServer::start().await;
    server.script().text("ok");
    let out = home.run(&server, "hello", &["--mcp-json", "trust"]).await;
    assert_success(&out);
    assert!(home.file("ran-from-settings").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_config_entry_is_a_notice_and_the_others_run() {
    let home = Home::new();
    home.config(&format!(
        "{}{}",
        entry("Stop", "touch first", "timeout = \"soon\""),
        entry("Stop", "touch second", ""),
    ));
    let server = FakeServer::start().await;
    server.script().text("ok");
    let out = home.run(&server, "hello", &[]).await;
    assert_success(&out);
    assert!(!home.file("first").exists());
    assert!(home.file("second").exists());
    let told = notices(&lines(&out));
    assert!(
        told.iter()
            .any(|n| n.contains("config.toml") && n.contains("hooks.Stop[0].timeout")),
        "{told:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_starts_the_session_again_with_source_resume() {
    let home = Home::new();
    let log = home.script(
        "starts.sh",
        "#!/bin/bash\ncat >> \"$(dirname \"$0\")/starts.log\"\n",
    );
    home.config(&entry("SessionStart", &log, ""));
    let server = FakeServer::start().await;
    server.script().text("first").at(1100).text("second");
    let out = home.run(&server, "one", &[]).await;
    assert_success(&out);
    let out = home.run(&server, "two", &["--continue"]).await;
    assert_success(&out);
    let starts = logged(&home.file("starts.log"));
    let sources: Vec<&str> = starts
        .iter()
        .map(|s| s["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["startup", "resume"]);
    assert_eq!(starts[0]["session_id"], starts[1]["session_id"]);
}
