//! The pure parts of hooks: config shapes and their errors, matchers with Claude Code's tool
//! names, the stdin JSON, and what exit codes and JSON answers mean alone and together.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use super::config::{DEFAULT_TIMEOUT, HookConfigError, Matcher};
use super::run::Finished;
use super::*;

fn toml_hooks(text: &str) -> Result<Vec<Hook>, HookConfigError> {
    let value: toml::Value = toml::from_str(text).unwrap();
    config::from_toml(value.get("hooks").unwrap())
}

#[test]
fn config_toml_entries_and_their_errors() {
    let hooks = toml_hooks(
        r#"
        [[hooks.PreToolUse]]
        matcher = "Bash|Edit"
        command = "check.sh"
        timeout = 5

        [[hooks.PreToolUse]]
        command = "audit.sh"

        [[hooks.SessionStart]]
        matcher = "startup"
        command = "echo hi"
        timeout = 0.5
        "#,
    )
    .unwrap();
    assert_eq!(hooks.len(), 3);
    assert_eq!(hooks[0].event, HookEvent::PreToolUse);
    assert_eq!(hooks[0].matcher.as_text(), "Bash|Edit");
    assert_eq!(hooks[0].timeout, Duration::from_secs(5));
    assert_eq!(hooks[0].source, HookSource::ConfigFile);
    assert!(matches!(hooks[1].matcher, Matcher::All));
    assert_eq!(hooks[1].timeout, DEFAULT_TIMEOUT);
    assert_eq!(hooks[2].timeout, Duration::from_millis(500));

    let err = |text: &str| toml_hooks(text).unwrap_err().to_string();
    assert_eq!(
        err("[[hooks.PreCompact]]\ncommand = \"x\""),
        format!(
            "key `hooks.PreCompact`: unknown event; accepted: {}",
            HookEvent::accepted()
        )
    );
    assert_eq!(
        err("[[hooks.Stop]]\ncommand = \"x\"\nmatch = \"y\""),
        "key `hooks.Stop[0].match`: unknown key; accepted: matcher, command, timeout"
    );
    assert_eq!(
        err("[[hooks.Stop]]\ncommand = \"x\"\ntimeout = \"10\""),
        "key `hooks.Stop[0].timeout`: expected a number of seconds (got a string)"
    );
    assert_eq!(
        err("[[hooks.Stop]]\ncommand = \"x\"\ntimeout = -1"),
        "key `hooks.Stop[0].timeout`: expected seconds, more than 0 and at most 86400 (got -1)"
    );
    assert_eq!(
        err("[[hooks.Stop]]\ntimeout = 3"),
        "key `hooks.Stop[0].command`: is missing"
    );
    assert_eq!(
        err("[[hooks.Stop]]\ncommand = \"  \""),
        "key `hooks.Stop[0].command`: is empty"
    );
    assert!(
        err("[[hooks.PreToolUse]]\nmatcher = \"mcp__(\"\ncommand = \"x\"")
            .starts_with("key `hooks.PreToolUse[0].matcher`: not a valid regex: "),
    );
    assert_eq!(
        err("[hooks.Stop]\ncommand = \"x\""),
        "key `hooks.Stop`: expected an array of tables, written [[hooks.Stop]] (got an object)"
    );
    assert_eq!(
        err("hooks = 3"),
        "key `hooks`: expected a table of events (got a number)"
    );
}

#[test]
fn a_settings_file_keeps_what_it_can_use_and_says_what_it_skips() {
    let path = Path::new("/ws/.claude/settings.json");
    let text = r#"{
      "permissions": {"allow": ["Bash(ls:*)"]},
      "hooks": {
        "PreToolUse": [
          {"matcher": "Bash", "hooks": [
            {"type": "command", "command": "a.sh", "timeout": 30},
            {"type": "prompt", "prompt": "is this fine?"},
            {"type": "command"}
          ]},
          {"matcher": "(", "hooks": [{"type": "command", "command": "b.sh"}]},
          "not a group"
        ],
        "PreCompact": [{"hooks": [{"type": "command", "command": "c.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "d.sh"}]}]
      }
    }"#;
    let (hooks, notices) = config::from_settings(text, path);
    let got: Vec<(HookEvent, &str, String)> = hooks
        .iter()
        .map(|h| (h.event, h.command.as_str(), h.matcher.as_text()))
        .collect();
    assert_eq!(
        got,
        vec![
            (HookEvent::PreToolUse, "a.sh", "Bash".to_string()),
            (HookEvent::Stop, "d.sh", "*".to_string()),
        ]
    );
    assert_eq!(hooks[0].timeout, Duration::from_secs(30));
    assert_eq!(hooks[0].source, HookSource::Settings(path.to_path_buf()));
    let lines: Vec<String> = notices.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        vec![
            "/ws/.claude/settings.json: `PreCompact` hooks are not supported by flower-tui and are skipped".to_string(),
            "/ws/.claude/settings.json: `hooks.PreToolUse[0].hooks[1]`: hooks of type `prompt` are not supported (only `command`); skipped".into(),
            "/ws/.claude/settings.json: `hooks.PreToolUse[0].hooks[2].command`: is missing; skipped".into(),
            "/ws/.claude/settings.json: `hooks.PreToolUse[1].matcher`: not a valid regex: error: unclosed group; skipped".into(),
            "/ws/.claude/settings.json: `hooks.PreToolUse[2]`: expected an object (got a string); skipped".into(),
        ]
    );

    let (hooks, notices) = config::from_settings("{\"hooks\": [", path);
    assert!(hooks.is_empty());
    assert_eq!(
        notices[0].to_string(),
        "/ws/.claude/settings.json: not valid JSON (line 1, column 11): EOF while parsing a list; neither its hooks nor its permission rules are used"
    );
    let (_, notices) = config::from_settings("[1]", path);
    assert_eq!(
        notices[0].to_string(),
        "/ws/.claude/settings.json: the file must hold a JSON object (got an array); neither its hooks nor its permission rules are used"
    );
    let (hooks, notices) = config::from_settings("{\"model\": \"x\"}", path);
    assert!(hooks.is_empty() && notices.is_empty());
}

#[test]
fn matchers_take_claude_code_names_as_aliases_of_ours() {
    let call = |name: &str| HookInput::PreToolUse {
        call: ToolCall {
            id: "t1".into(),
            name: name.into(),
            input: json!({}),
        },
    };
    let m = |s: &str| Matcher::parse(s).unwrap();
    let cases = [
        ("Bash", "bash", true),
        ("bash", "bash", true),
        ("Bash", "grep", false),
        ("Edit|Write", "edit_file", true),
        ("Edit|Write", "write_file", true),
        ("Edit|Write", "read_file", false),
        ("Read", "read_file", true),
        ("Grep", "grep", true),
        ("Glob", "glob", true),
        ("Task", "task", true),
        ("BASH", "bash", false),
        ("*", "anything", true),
        ("", "anything", true),
        (
            "mcp__github__create_issue",
            "mcp__github__create_issue",
            true,
        ),
        ("mcp__github__create_issue", "mcp__github__list", false),
        ("mcp__github__.*", "mcp__github__list", true),
        ("mcp__.*", "bash", false),
        ("Notebook.*", "Notebook", true),
        ("Wri", "write_file", false),
        (".*_file", "read_file", true),
    ];
    for (matcher, tool, want) in cases {
        let input = call(tool);
        assert_eq!(
            m(matcher).matches(&input.match_subjects()),
            want,
            "{matcher} vs {tool}"
        );
    }
    // Events without a matcher run every hook; SessionStart matches its source.
    let stop = HookInput::Stop {
        stop_hook_active: false,
    };
    assert!(m("Bash").matches(&stop.match_subjects()));
    let start = HookInput::SessionStart {
        source: StartSource::Handoff,
    };
    assert!(m("handoff|resume").matches(&start.match_subjects()));
    assert!(!m("startup").matches(&start.match_subjects()));
    assert_eq!(event::our_name("Bash"), Some("bash"));
    assert_eq!(event::claude_name("list_dir"), Some("LS"));
    assert_eq!(event::claude_name("mcp__a__b"), None);
}

#[test]
fn one_command_runs_once_and_only_for_its_event() {
    let hook = |event, matcher: &str, command: &str| Hook {
        event,
        matcher: Matcher::parse(matcher).unwrap(),
        command: command.into(),
        timeout: DEFAULT_TIMEOUT,
        source: HookSource::ConfigFile,
    };
    let set = HookSet::new(vec![
        hook(HookEvent::PreToolUse, "Bash", "a"),
        hook(HookEvent::PreToolUse, "bash", "a"),
        hook(HookEvent::PreToolUse, "*", "b"),
        hook(HookEvent::PostToolUse, "*", "c"),
        hook(HookEvent::PreToolUse, "Read", "d"),
    ]);
    let input = HookInput::PreToolUse {
        call: ToolCall {
            id: "t".into(),
            name: "bash".into(),
            input: json!({"command": "ls"}),
        },
    };
    let commands: Vec<&str> = set
        .matching(&input)
        .iter()
        .map(|h| h.command.as_str())
        .collect();
    assert_eq!(commands, vec!["a", "b"]);
    assert!(set.has(HookEvent::PostToolUse) && !set.has(HookEvent::Stop));
}

#[test]
fn stdin_carries_claude_code_field_names() {
    let session = HookSession {
        session_id: "s-1".into(),
        transcript_path: PathBuf::from("/runs/r/sessions/s-1.jsonl"),
        workspace: PathBuf::from("/ws"),
        permission_mode: PermissionMode::AcceptEdits,
    };
    let call = ToolCall {
        id: "toolu_1".into(),
        name: "write_file".into(),
        input: json!({"path": "src/a.rs", "content": "x"}),
    };
    let pre = HookInput::PreToolUse { call: call.clone() }.stdin_json(&session);
    assert_eq!(
        pre,
        json!({
            "session_id": "s-1",
            "transcript_path": "/runs/r/sessions/s-1.jsonl",
            "cwd": "/ws",
            "permission_mode": "acceptEdits",
            "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "tool_input": {"path": "src/a.rs", "content": "x", "file_path": "/ws/src/a.rs"},
            "tool_use_id": "toolu_1",
        })
    );
    let out = crate::engine::tools::ToolOutput::ok("wrote 1 line");
    let post = HookInput::PostToolUse {
        call,
        response: tool_response("write_file", &out),
    }
    .stdin_json(&session);
    assert_eq!(
        post["tool_response"],
        json!({"content": "wrote 1 line", "is_error": false, "success": true})
    );
    let mcp = HookInput::PreToolUse {
        call: ToolCall {
            id: "t".into(),
            name: "mcp__gh__list".into(),
            input: json!({"path": "x"}),
        },
    }
    .stdin_json(&session);
    assert_eq!(mcp["tool_name"], "mcp__gh__list");
    assert_eq!(mcp["tool_input"], json!({"path": "x"}));

    let frozen = HookInput::HandoffFrozen {
        trigger: HandoffTrigger::Auto,
        path: PathBuf::from("/ws/.flower/notes/handoff-main.md"),
        step: "main".into(),
        generation: 2,
    }
    .stdin_json(&session);
    assert_eq!(frozen["hook_event_name"], "HandoffFrozen");
    assert_eq!(frozen["handoff_path"], "/ws/.flower/notes/handoff-main.md");
    assert_eq!(frozen["generation"], 2);
    assert_eq!(frozen["trigger"], "auto");
    let end = HookInput::SessionEnd {
        reason: EndReason::Exit,
    }
    .stdin_json(&session);
    assert_eq!(end["reason"], "prompt_input_exit");
    let note = HookInput::Notification {
        message: "flower-tui needs your approval for bash: ls".into(),
    }
    .stdin_json(&session);
    assert_eq!(note["notification_type"], "permission_prompt");
}

fn finished(code: i32, stdout: &str, stderr: &str) -> Finished {
    Finished {
        exit: HookExit::Code(code),
        stdout: Captured {
            text: stdout.into(),
            dropped: 0,
        },
        stderr: Captured {
            text: stderr.into(),
            dropped: 0,
        },
        elapsed: Duration::from_millis(5),
    }
}

fn outcome_of(event: HookEvent, runs: Vec<Finished>) -> Outcome {
    let mut outcome = Outcome::default();
    for (i, done) in runs.into_iter().enumerate() {
        outcome.add(event, &format!("hook{i}.sh"), &HookSource::ConfigFile, done);
    }
    outcome
}

#[test]
fn deny_beats_ask_beats_allow() {
    let allow = r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "safe"}}"#;
    let ask = r#"{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "check it"}}"#;
    let deny = r#"{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no rm"}}"#;
    let pre = HookEvent::PreToolUse;
    let o = outcome_of(pre, vec![finished(0, allow, ""), finished(0, ask, "")]);
    assert_eq!(
        o.decision,
        Decision::Ask {
            reason: Some("check it".into())
        }
    );
    let o = outcome_of(
        pre,
        vec![
            finished(0, deny, ""),
            finished(0, allow, ""),
            finished(0, ask, ""),
            finished(2, "", "also no"),
        ],
    );
    assert_eq!(
        o.decision,
        Decision::Block {
            reason: "no rm\nalso no".into()
        }
    );
    assert_eq!(o.block_reason(), Some("no rm\nalso no"));
    let statuses: Vec<&HookStatus> = o.reports.iter().map(|r| &r.status).collect();
    assert_eq!(
        statuses,
        vec![
            &HookStatus::Blocked,
            &HookStatus::Succeeded,
            &HookStatus::Succeeded,
            &HookStatus::Blocked
        ]
    );
    let o = outcome_of(
        pre,
        vec![
            finished(0, allow, ""),
            finished(0, "{}", ""),
            finished(0, "plain", ""),
        ],
    );
    assert_eq!(
        o.decision,
        Decision::Allow {
            reason: Some("safe".into())
        }
    );
    // The legacy `decision` field; permissionDecision wins over it in one answer.
    let legacy = r#"{"decision": "block", "reason": "legacy"}"#;
    let both = r#"{"decision": "approve", "hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "modern"}}"#;
    assert_eq!(
        outcome_of(pre, vec![finished(0, legacy, "")]).block_reason(),
        Some("legacy")
    );
    assert_eq!(
        outcome_of(pre, vec![finished(0, both, "")]).block_reason(),
        Some("modern")
    );
}

#[test]
fn exit_codes_per_event() {
    // Exit 2 blocks where the event can be blocked, with stderr as the reason.
    let o = outcome_of(
        HookEvent::UserPromptSubmit,
        vec![finished(2, "ignored", "no secrets in prompts\n")],
    );
    assert_eq!(o.block_reason(), Some("no secrets in prompts"));
    assert_eq!(
        HookEvent::UserPromptSubmit.blocks_for(),
        Some(Audience::User)
    );
    assert_eq!(HookEvent::Stop.blocks_for(), Some(Audience::Model));
    // Where it cannot, its stderr is shown to the user and nothing changes.
    let o = outcome_of(
        HookEvent::SessionEnd,
        vec![finished(2, "", "cleanup failed")],
    );
    assert_eq!(o.decision, Decision::None);
    assert_eq!(
        o.notices,
        vec!["SessionEnd hook `hook0.sh` failed (exit code 2): cleanup failed"]
    );
    // Other codes: a notice, no decision.
    let o = outcome_of(
        HookEvent::PreToolUse,
        vec![finished(1, "out", "boom\nmore")],
    );
    assert_eq!(o.decision, Decision::None);
    assert_eq!(
        o.notices,
        vec!["PreToolUse hook `hook0.sh` failed (exit code 1): boom"]
    );
    assert_eq!(o.reports[0].status, HookStatus::Failed);
    assert_eq!(o.reports[0].output, "out\nboom\nmore");
    // Exit 0: stdout is context where the event takes it, output elsewhere.
    let o = outcome_of(
        HookEvent::SessionStart,
        vec![finished(0, "branch: main\n", ""), finished(0, "", "")],
    );
    assert_eq!(o.context, vec!["branch: main"]);
    assert_eq!(o.context_text().as_deref(), Some("branch: main"));
    let o = outcome_of(HookEvent::PostToolUse, vec![finished(0, "formatted", "")]);
    assert!(o.context.is_empty());
    assert_eq!(o.reports[0].output, "formatted");
}

#[test]
fn json_answers() {
    let o = outcome_of(
        HookEvent::UserPromptSubmit,
        vec![finished(
            0,
            r#"{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "ticket ABC-1 is open"}, "systemMessage": "context added", "suppressOutput": true}"#,
            "",
        )],
    );
    assert_eq!(o.context, vec!["ticket ABC-1 is open"]);
    assert_eq!(o.notices, vec!["context added"]);
    assert_eq!(o.reports[0].output, "");
    assert_eq!(o.decision, Decision::None);

    let o = outcome_of(
        HookEvent::Stop,
        vec![finished(
            0,
            r#"{"decision": "block", "reason": "tests are red"}"#,
            "",
        )],
    );
    assert_eq!(o.block_reason(), Some("tests are red"));

    let o = outcome_of(
        HookEvent::PreToolUse,
        vec![finished(
            0,
            r#"{"continue": false, "stopReason": "budget spent"}"#,
            "",
        )],
    );
    assert_eq!(o.stop.as_deref(), Some("budget spent"));

    let o = outcome_of(
        HookEvent::PreToolUse,
        vec![finished(
            0,
            r#"{"continue": "no", "decision": "maybe", "hookSpecificOutput": {"permissionDecision": "perhaps"}}"#,
            "",
        )],
    );
    assert_eq!(o.decision, Decision::None);
    assert_eq!(o.stop, None);
    assert_eq!(
        o.notices,
        vec![
            "PreToolUse hook `hook0.sh`: `continue` must be true or false; ignored",
            "PreToolUse hook `hook0.sh`: `decision` must be \"block\" or \"approve\"; ignored",
            "PreToolUse hook `hook0.sh`: unknown permissionDecision `perhaps` (allow, deny or ask); ignored",
        ]
    );
    // An answer meant for another event changes nothing here.
    let o = outcome_of(
        HookEvent::PreToolUse,
        vec![finished(
            0,
            r#"{"hookSpecificOutput": {"hookEventName": "PostToolUse", "permissionDecision": "deny"}}"#,
            "",
        )],
    );
    assert_eq!(o.decision, Decision::None);
    assert_eq!(o.notices.len(), 1, "{:?}", o.notices);
    // `block` on an event that cannot be blocked is not a block.
    let o = outcome_of(
        HookEvent::SessionStart,
        vec![finished(0, r#"{"decision": "block", "reason": "x"}"#, "")],
    );
    assert_eq!(o.decision, Decision::None);
    // PreHandoff: exit 0 stdout is focus text; a block refuses the handoff.
    let o = outcome_of(
        HookEvent::PreHandoff,
        vec![finished(0, "focus on the parser", "")],
    );
    assert_eq!(o.context_text().as_deref(), Some("focus on the parser"));
    let o = outcome_of(HookEvent::PreHandoff, vec![finished(2, "", "not now")]);
    assert_eq!(o.block_reason(), Some("not now"));
}

#[test]
fn failures_that_are_not_exit_codes() {
    let mut timed_out = finished(0, "partial", "");
    timed_out.exit = HookExit::TimedOut(Duration::from_secs(2));
    let mut missing = finished(0, "", "");
    missing.exit = HookExit::Failed("No such file or directory (os error 2)".into());
    let o = outcome_of(HookEvent::PreToolUse, vec![timed_out, missing]);
    assert_eq!(o.decision, Decision::None);
    assert_eq!(
        o.notices,
        vec![
            "PreToolUse hook `hook0.sh` failed (timed out after 2s)",
            "PreToolUse hook `hook1.sh` failed (could not run: No such file or directory (os error 2))",
        ]
    );
}
