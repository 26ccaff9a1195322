//! Hooks as real child processes: bash and python3 scripts written by the tests, configured
//! through `config.toml` entries, run through `HookSet::run` as the engine will.

use std::path::{Path, PathBuf};

use flower_tui::engine::hooks::{
    self, Decision, HandoffTrigger, HookEvent, HookExit, HookInput, HookSession, HookSet,
    HookStatus, OUTPUT_CAP, PermissionMode, StartSource, ToolCall,
};
use flower_tui::engine::tools::ToolOutput;
use serde_json::{Value, json};

use crate::suite::faults::{gone, read_pid, wait_until};
use crate::support::check::{assert_contains, assert_file, assert_lacks};

/// A workspace with a place for the scripts and what they write.
struct Ws {
    dir: tempfile::TempDir,
}

impl Ws {
    fn new() -> Ws {
        Ws {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Write an executable script; its path, quoted for a command line.
    fn script(&self, name: &str, text: &str) -> String {
        use std::os::unix::fs::PermissionsExt;
        let path = self.path().join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        format!("'{}'", path.display())
    }

    fn session(&self) -> HookSession {
        HookSession {
            session_id: "sess-1".into(),
            transcript_path: self.path().join("transcript.jsonl"),
            workspace: self.path().to_path_buf(),
            permission_mode: PermissionMode::Default,
        }
    }

    fn out(&self, name: &str) -> PathBuf {
        self.path().join(name)
    }
}

/// The hooks of a `config.toml` text.
fn hook_set(toml_text: &str) -> HookSet {
    let value: toml::Value = toml::from_str(toml_text).unwrap();
    HookSet::new(hooks::config::from_toml(&value["hooks"]).unwrap())
}

/// `[[hooks.EVENT]]` with `command` (a TOML literal string) and the rest of the entry.
fn entry(event: &str, command: &str, rest: &str) -> String {
    format!("[[hooks.{event}]]\ncommand = '''{command}'''\n{rest}\n")
}

fn bash_call(command: &str) -> HookInput {
    HookInput::PreToolUse {
        call: ToolCall {
            id: "toolu_9".into(),
            name: "bash".into(),
            input: json!({"command": command}),
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_json_reaches_bash_and_python_hooks_field_by_field() {
    let ws = Ws::new();
    let bash = ws.script(
        "echo.sh",
        &format!("#!/bin/bash\ncat > '{}'\n", ws.out("bash.json").display()),
    );
    let python = ws.script(
        "fields.py",
        &format!(
            "#!/usr/bin/env python3\nimport json, os, sys\nd = json.load(sys.stdin)\n\
             d['env_project_dir'] = os.environ.get('CLAUDE_PROJECT_DIR')\n\
             d['env_cwd'] = os.getcwd()\n\
             json.dump(d, open('{}', 'w'))\n",
            ws.out("python.json").display()
        ),
    );
    let set = hook_set(&format!(
        "{}{}{}",
        entry("PreToolUse", &bash, "matcher = \"Bash\""),
        entry("PreToolUse", &python, "matcher = \"bash\""),
        entry("PostToolUse", &bash, "matcher = \"Read\""),
    ));
    let input = bash_call("cargo test");
    let batch = set.run(&input, &ws.session());
    assert_eq!(batch.labels().len(), 2);
    let outcome = batch.await;
    assert_eq!(outcome.decision, Decision::None, "{outcome:?}");
    assert!(outcome.notices.is_empty(), "{:?}", outcome.notices);
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(ws.out(name)).unwrap()).unwrap()
    };
    for got in [read("bash.json"), read("python.json")] {
        assert_eq!(got["session_id"], "sess-1");
        assert_eq!(
            got["transcript_path"],
            ws.out("transcript.jsonl").to_string_lossy().as_ref()
        );
        assert_eq!(got["cwd"], ws.path().to_string_lossy().as_ref());
        assert_eq!(got["hook_event_name"], "PreToolUse");
        assert_eq!(got["permission_mode"], "default");
        assert_eq!(got["tool_name"], "Bash");
        assert_eq!(got["tool_input"], json!({"command": "cargo test"}));
        assert_eq!(got["tool_use_id"], "toolu_9");
    }
    let py = read("python.json");
    assert_eq!(py["env_project_dir"], ws.path().to_string_lossy().as_ref());
    let cwd = std::fs::canonicalize(ws.path()).unwrap();
    assert_eq!(py["env_cwd"], cwd.to_string_lossy().as_ref());

    // PostToolUse of read_file: the Read matcher, the response and Claude Code's file_path.
    std::fs::remove_file(ws.out("bash.json")).unwrap();
    let post = HookInput::PostToolUse {
        call: ToolCall {
            id: "toolu_10".into(),
            name: "read_file".into(),
            input: json!({"path": "src/lib.rs"}),
        },
        response: hooks::tool_response("read_file", &ToolOutput::ok("1\tfn main() {}")),
    };
    let outcome = set.run(&post, &ws.session()).await;
    assert_eq!(outcome.reports.len(), 1);
    let got = read("bash.json");
    assert_eq!(got["hook_event_name"], "PostToolUse");
    assert_eq!(got["tool_name"], "Read");
    assert_eq!(
        got["tool_input"]["file_path"],
        ws.path().join("src/lib.rs").to_string_lossy().as_ref()
    );
    assert_eq!(got["tool_response"]["content"], "1\tfn main() {}");
    assert_eq!(got["tool_response"]["success"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_2_blocks_with_stderr_and_other_codes_only_tell_the_user() {
    let ws = Ws::new();
    let guard = ws.script(
        "guard.sh",
        "#!/bin/bash\ninput=$(cat)\nif grep -q 'rm -rf' <<<\"$input\"; then\n  echo 'rm -rf is not allowed here' >&2\n  exit 2\nfi\nexit 0\n",
    );
    let broken = ws.script(
        "broken.sh",
        "#!/bin/bash\necho 'half done'\necho 'lint crashed' >&2\nexit 1\n",
    );
    let set = hook_set(&format!(
        "{}{}{}",
        entry("PreToolUse", &guard, "matcher = \"Bash\""),
        entry("PreToolUse", &broken, ""),
        entry("PreToolUse", "/nonexistent/flower-hook", ""),
    ));
    let outcome = set.run(&bash_call("rm -rf /"), &ws.session()).await;
    assert_eq!(
        outcome.decision,
        Decision::Block {
            reason: "rm -rf is not allowed here".into()
        }
    );
    let statuses: Vec<_> = outcome.reports.iter().map(|r| r.status.clone()).collect();
    assert_eq!(
        statuses,
        vec![HookStatus::Blocked, HookStatus::Failed, HookStatus::Failed]
    );
    assert_eq!(outcome.reports[1].exit, HookExit::Code(1));
    assert_eq!(outcome.reports[1].output, "half done\nlint crashed");
    assert_eq!(outcome.reports[2].exit, HookExit::Code(127));
    assert_eq!(outcome.notices.len(), 2, "{:?}", outcome.notices);
    assert!(
        outcome.notices[0].ends_with("failed (exit code 1): lint crashed"),
        "{}",
        outcome.notices[0]
    );
    assert!(outcome.notices[1].contains("failed (exit code 127)"));

    // The same hooks let a harmless command through (the failing ones change nothing).
    let outcome = set.run(&bash_call("ls"), &ws.session()).await;
    assert_eq!(outcome.decision, Decision::None);
    assert_eq!(outcome.notices.len(), 2);

    // UserPromptSubmit: exit 2 blocks the prompt (the reason is for the user).
    let prompt_guard = ws.script(
        "prompt.sh",
        "#!/bin/bash\necho 'prompts may not name the staging password' >&2\nexit 2\n",
    );
    let set = hook_set(&entry("UserPromptSubmit", &prompt_guard, ""));
    let outcome = set
        .run(
            &HookInput::UserPromptSubmit {
                prompt: "hello".into(),
            },
            &ws.session(),
        )
        .await;
    assert_eq!(
        outcome.block_reason(),
        Some("prompts may not name the staging password")
    );
    assert_eq!(
        HookEvent::UserPromptSubmit.blocks_for(),
        Some(hooks::Audience::User)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_decisions_from_hooks_running_side_by_side() {
    let ws = Ws::new();
    // Each hook waits for the other's mark: run one after the other, both would fail.
    let answer = |name: &str, theirs: &str, decision: &str| {
        ws.script(
            name,
            &format!(
                "#!/usr/bin/env python3\nimport json, os, sys, time\nd = json.load(sys.stdin)\n\
                 open('{mine}', 'w').close()\n\
                 for _ in range(400):\n    if os.path.exists('{theirs}'): break\n    time.sleep(0.05)\n\
                 else:\n    sys.exit(1)\n\
                 print(json.dumps({{'hookSpecificOutput': {{'hookEventName': d['hook_event_name'], \
                 'permissionDecision': '{decision}', 'permissionDecisionReason': '{decision} from {name}'}}}}))\n",
                mine = ws.out(&format!("{name}.mark")).display(),
                theirs = ws.out(theirs).display(),
            ),
        )
    };
    let ask = answer("ask.py", "allow.py.mark", "ask");
    let allow = answer("allow.py", "ask.py.mark", "allow");
    let set = hook_set(&format!(
        "{}{}",
        entry("PreToolUse", &ask, "timeout = 30"),
        entry("PreToolUse", &allow, "timeout = 30"),
    ));
    let outcome = set.run(&bash_call("git push"), &ws.session()).await;
    assert!(outcome.notices.is_empty(), "{:?}", outcome.notices);
    assert_eq!(
        outcome.decision,
        Decision::Ask {
            reason: Some("ask from ask.py".into())
        }
    );

    // A deny beats both; its reason is the model's.
    let deny = ws.script(
        "deny.sh",
        "#!/bin/bash\ncat >/dev/null\necho '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"pushes go through CI\"}}'\n",
    );
    let set = hook_set(&format!(
        "{}{}{}",
        entry("PreToolUse", &ask.replace("ask.py", "ask2.py"), ""),
        entry("PreToolUse", &deny, ""),
        entry("PreToolUse", "echo '{\"decision\": \"approve\"}'", ""),
    ));
    std::fs::copy(ws.out("ask.py"), ws.out("ask2.py")).unwrap();
    std::fs::write(ws.out("allow.py.mark"), "").unwrap();
    let outcome = set.run(&bash_call("git push"), &ws.session()).await;
    assert_eq!(outcome.block_reason(), Some("pushes go through CI"));

    // Stop: a block keeps the turn going unless the hook sees it already did.
    let stop = ws.script(
        "stop.py",
        "#!/usr/bin/env python3\nimport json, sys\nd = json.load(sys.stdin)\n\
         if not d['stop_hook_active']:\n    print(json.dumps({'decision': 'block', 'reason': 'run the tests first'}))\n",
    );
    let set = hook_set(&entry("Stop", &stop, ""));
    let first = set
        .run(
            &HookInput::Stop {
                stop_hook_active: false,
            },
            &ws.session(),
        )
        .await;
    assert_eq!(first.block_reason(), Some("run the tests first"));
    let again = set
        .run(
            &HookInput::Stop {
                stop_hook_active: true,
            },
            &ws.session(),
        )
        .await;
    assert_eq!(again.decision, Decision::None);

    // Context: plain stdout on SessionStart, additionalContext on UserPromptSubmit.
    let set = hook_set(&format!(
        "{}{}",
        entry(
            "SessionStart",
            "echo \"on branch main\"",
            "matcher = \"startup|handoff\""
        ),
        entry(
            "UserPromptSubmit",
            "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"UserPromptSubmit\", \"additionalContext\": \"ticket 42 is open\"}, \"systemMessage\": \"added ticket context\"}'",
            ""
        ),
    ));
    let start = |source| HookInput::SessionStart { source };
    let o = set.run(&start(StartSource::Handoff), &ws.session()).await;
    assert_eq!(o.context, vec!["on branch main"]);
    let o = set.run(&start(StartSource::Resume), &ws.session()).await;
    assert!(
        o.reports.is_empty(),
        "the matcher names startup and handoff"
    );
    let o = set
        .run(
            &HookInput::UserPromptSubmit {
                prompt: "fix it".into(),
            },
            &ws.session(),
        )
        .await;
    assert_eq!(o.context, vec!["ticket 42 is open"]);
    assert_eq!(o.notices, vec!["added ticket context"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_that_hangs_is_killed_at_its_timeout_with_its_children() {
    let ws = Ws::new();
    let hang = ws.script(
        "hang.sh",
        &format!(
            "#!/bin/bash\nsleep 300 &\necho $! > '{child}'\necho $$ > '{me}'\necho started\nsleep 300\n",
            child = ws.out("child.pid").display(),
            me = ws.out("hook.pid").display(),
        ),
    );
    let set = hook_set(&entry("PreToolUse", &hang, "timeout = 1"));
    let outcome = set.run(&bash_call("ls"), &ws.session()).await;
    let hook_pid = read_pid(&ws.out("hook.pid"));
    let child_pid = read_pid(&ws.out("child.pid"));
    assert_eq!(
        outcome.reports[0].exit,
        HookExit::TimedOut(std::time::Duration::from_secs(1))
    );
    assert_eq!(outcome.reports[0].status, HookStatus::Failed);
    assert_eq!(outcome.reports[0].output, "started");
    assert_eq!(outcome.decision, Decision::None);
    assert!(
        outcome.notices[0].ends_with("failed (timed out after 1s)"),
        "{:?}",
        outcome.notices
    );
    wait_until("the hook and its child to die", 10, || {
        gone(hook_pid) && gone(child_pid)
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_batch_kills_the_hooks_still_running() {
    let ws = Ws::new();
    let hang = ws.script(
        "hang.sh",
        &format!(
            "#!/bin/bash\nsleep 300 &\necho $! > '{}'\nwait\n",
            ws.out("child.pid").display()
        ),
    );
    let set = hook_set(&entry("Notification", &hang, ""));
    let batch = set.run(
        &HookInput::Notification {
            message: "flower-tui needs your approval".into(),
        },
        &ws.session(),
    );
    let child = tokio::task::spawn_blocking({
        let file = ws.out("child.pid");
        move || read_pid(&file)
    })
    .await
    .unwrap();
    drop(batch);
    tokio::task::spawn_blocking(move || wait_until("the hook's child to die", 10, || gone(child)))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_floods_are_capped() {
    let ws = Ws::new();
    let set = hook_set(&format!(
        "{}{}",
        // Never stops writing: killed at its timeout, having cost no more than the cap.
        entry("PostToolUse", "yes 'flood flood flood'", "timeout = 1"),
        // Writes 5 MB and exits 0.
        entry(
            "PostToolUse",
            "head -c 5000000 /dev/zero | tr '\\0' x; echo; echo done >&2",
            ""
        ),
    ));
    let input = HookInput::PostToolUse {
        call: ToolCall {
            id: "t".into(),
            name: "bash".into(),
            input: json!({"command": "ls"}),
        },
        response: json!({}),
    };
    let outcome = set.run(&input, &ws.session()).await;
    let [flood, big] = &outcome.reports[..] else {
        panic!("{outcome:?}");
    };
    assert!(
        matches!(flood.exit, HookExit::TimedOut(_)),
        "{:?}",
        flood.exit
    );
    assert!(
        flood.output.len() <= OUTPUT_CAP + 100,
        "{}",
        flood.output.len()
    );
    assert!(flood.output.starts_with("flood flood flood\n"));
    assert!(flood.output.ends_with("more bytes of output not kept]"));
    assert_eq!(big.exit, HookExit::Code(0));
    assert_eq!(big.status, HookStatus::Succeeded);
    assert!(big.output.len() <= OUTPUT_CAP + 100, "{}", big.output.len());
    // One word of 5 MB: nothing of it is kept (a cut word could be part of a secret).
    assert!(
        big.output
            .ends_with("[… 5000001 more bytes of output not kept]"),
        "{}",
        &big.output[big.output.len().saturating_sub(80)..]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_are_masked_in_what_a_hook_reads_and_writes() {
    let secret = "sk-hook-test-secret-0123456789";
    flower_tui::engine::secrets::register(secret);
    let ws = Ws::new();
    let echo = ws.script(
        "echo.sh",
        &format!(
            "#!/bin/bash\ncat > '{}'\necho \"out {secret}\"\necho \"err {secret}\" >&2\nexit 1\n",
            ws.out("stdin.json").display()
        ),
    );
    let set = hook_set(&entry("UserPromptSubmit", &echo, ""));
    let outcome = set
        .run(
            &HookInput::UserPromptSubmit {
                prompt: format!("my key is {secret}"),
            },
            &ws.session(),
        )
        .await;
    let everything = format!(
        "{:?} {}",
        outcome,
        std::fs::read_to_string(ws.out("stdin.json")).unwrap()
    );
    assert_lacks(&everything, secret);
    assert_contains(&everything, "sk-h****");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handoff_hooks_refuse_add_focus_and_edit_the_frozen_document() {
    let ws = Ws::new();
    let doc = ws.out("handoff-main.md");
    std::fs::write(&doc, "# Handoff\n## Next\nRun the tests.\n").unwrap();
    let editor = ws.script(
        "edit.py",
        "#!/usr/bin/env python3\nimport json, sys\nd = json.load(sys.stdin)\n\
         with open(d['handoff_path'], 'a') as f:\n    f.write('Also: generation %d of %s, %s.\\n' % (d['generation'], d['step'], d['trigger']))\n",
    );
    let set = hook_set(&format!(
        "{}{}",
        entry("HandoffFrozen", &editor, ""),
        entry(
            "PreHandoff",
            "python3 -c 'import json,sys; d=json.load(sys.stdin); print(\"keep the parser work\" if d[\"trigger\"]==\"manual\" else \"\"); sys.exit(0 if d[\"focus\"] else 2)'",
            ""
        ),
    ));
    let frozen = HookInput::HandoffFrozen {
        trigger: HandoffTrigger::Auto,
        path: doc.clone(),
        step: "main".into(),
        generation: 3,
    };
    let o = set.run(&frozen, &ws.session()).await;
    assert_eq!(o.reports[0].status, HookStatus::Succeeded, "{o:?}");
    assert_file(
        &doc,
        "# Handoff\n## Next\nRun the tests.\nAlso: generation 3 of main, auto.\n",
    );
    let pre = |focus: Option<&str>| HookInput::PreHandoff {
        trigger: HandoffTrigger::Manual,
        focus: focus.map(str::to_string),
    };
    let o = set.run(&pre(Some("the parser")), &ws.session()).await;
    assert_eq!(o.context_text().as_deref(), Some("keep the parser work"));
    let o = set.run(&pre(None), &ws.session()).await;
    assert!(
        matches!(&o.decision, Decision::Block { reason } if reason.starts_with("blocked by the hook `python3 -c")),
        "{o:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_runs_in_a_session_and_process_group_of_its_own() {
    let ws = Ws::new();
    // /proc/PID/stat: pid (comm) state ppid pgrp session …
    let set = hook_set(&entry(
        "SessionEnd",
        "read -r -a f < /proc/$$/stat; echo \"${f[0]} ${f[4]} ${f[5]}\"",
        "",
    ));
    let outcome = set
        .run(
            &HookInput::SessionEnd {
                reason: hooks::EndReason::Other,
            },
            &ws.session(),
        )
        .await;
    let ids: Vec<u32> = outcome.reports[0]
        .output
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    assert_eq!(ids.len(), 3, "{outcome:?}");
    assert_eq!(ids[1], ids[0], "its own process group");
    assert_eq!(ids[2], ids[0], "its own session, without our terminal");
}
