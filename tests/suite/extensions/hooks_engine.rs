//! Hooks in the engine driven through its queue pair, for what headless cannot show: Esc kills a
//! hook still running (with its process group) and every call still gets its result; an approval
//! that waits runs the `Notification` hooks; `permissionDecision` `ask` forces the question where
//! `--yes` would allow, and `allow` skips it; `SubagentStop` runs after a `task` reported, and a
//! `task` call passes `PreToolUse` (which may block it) and `PostToolUse` like other tools.

use std::path::Path;

use flower_tui::engine::hooks::{self, Hook};
use flower_tui::engine::policy::{ApprovalPolicy, FrontEnd};
use flower_tui::engine::protocol::{Approval, Event, ExitReason, Op};
use flower_tui::engine::session::HookParams;

use crate::suite::faults::{gone, wait_until};
use crate::support::check::{assert_contains, assert_event};
use crate::support::fake::{Gate, U, anthropic as a};
use crate::support::harness::{Harness, start};

fn config_hooks(toml_text: &str) -> Vec<Hook> {
    let value: toml::Value = toml::from_str(toml_text).unwrap();
    hooks::config::from_toml(value.get("hooks").unwrap()).unwrap()
}

fn script(dir: &Path, name: &str, text: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("'{}'", path.display())
}

fn with_hooks(h: &Harness, toml_text: &str) -> flower_tui::engine::session::EngineParams {
    let mut p = h.params(200_000, 20_000);
    p.hooks = HookParams {
        hooks: config_hooks(toml_text),
        ..HookParams::default()
    };
    p
}

fn turn_end(events: &[Event]) -> ExitReason {
    events
        .iter()
        .find_map(|e| match e {
            Event::TurnEnd { reason, .. } => Some(*reason),
            _ => None,
        })
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_kills_a_running_hook_with_its_group_and_the_call_still_gets_a_result() {
    let h = Harness::new().await;
    let hang = script(
        &h.workspace,
        "hang.sh",
        "#!/bin/bash\ncat > /dev/null\nsleep 300 &\necho $! > \"$(dirname \"$0\")/child.pid\"\nsleep 300\n",
    );
    let p = with_hooks(
        &h,
        &format!("[[hooks.PreToolUse]]\ncommand = {hang:?}\ntimeout = 600\n"),
    );
    h.script()
        .tool("bash", r#"{"command":"touch never-ran"}"#)
        .at(1100)
        .text("after the abort");
    let mut r = start(p);
    let turn = r.send_turn("go").await;
    let pid_file = h.workspace.join("child.pid");
    wait_until("the hook to start", 20, || {
        std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n'))
    });
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    r.send(Op::Abort { turn }).await;
    let events = r.until_end(turn).await;
    assert_eq!(turn_end(&events), ExitReason::Interrupted);
    wait_until("the hook's child to be killed", 5, || gone(pid));
    assert!(!h.workspace.join("never-ran").exists());
    // The next turn's request is valid: the cut call has its result.
    r.completed_turn("again").await;
    let last = h.server.requests().last().unwrap().to_string();
    assert_contains(&last, "\"tool_use_id\":\"t1\"");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notification_and_permission_decisions_around_the_approval() {
    let h = Harness::new().await;
    let ask = script(
        &h.workspace,
        "ask.py",
        r#"#!/usr/bin/env python3
import json, sys
d = json.load(sys.stdin)
decision = "ask" if "asked" in d["tool_input"]["command"] else "allow"
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                  "permissionDecision": decision}}))
"#,
    );
    let notify = script(
        &h.workspace,
        "notify.sh",
        "#!/bin/bash\ncat >> \"$(dirname \"$0\")/notified.log\"\n",
    );
    let mut p = with_hooks(
        &h,
        &format!(
            "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\ncommand = {ask:?}\n\
             [[hooks.Notification]]\ncommand = {notify:?}\n"
        ),
    );
    // `--yes` would run every call unasked; the hook asks for one of them.
    p.tools.approvals = ApprovalPolicy::Auto;
    p.front_end = FrontEnd::Interactive { review: false };
    h.server.push(a::text_then_tools(
        "two",
        &[
            ("t1", "bash", r#"{"command":"echo asked > asked.txt"}"#),
            ("t2", "bash", r#"{"command":"echo free > free.txt"}"#),
        ],
        U::new(1000, 10),
    ));
    h.script().at(1100).text("done");
    let mut r = start(p);
    let turn = r.send_turn("go").await;
    let asked = r
        .until(|e| matches!(e, Event::ApprovalRequest { .. }))
        .await;
    let Some(Event::ApprovalRequest { id, .. }) = asked.last() else {
        unreachable!()
    };
    assert_eq!(id, "t1");
    let log = h.workspace.join("notified.log");
    wait_until("the Notification hook", 20, || {
        std::fs::read_to_string(&log).is_ok_and(|s| s.ends_with('\n'))
    });
    let seen: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&log).unwrap().trim()).unwrap();
    assert_eq!(seen["hook_event_name"], "Notification");
    assert_eq!(seen["notification_type"], "permission_prompt");
    assert!(seen["message"].as_str().unwrap().contains("bash"));
    r.answer("t1", Approval::Deny).await;
    let events = r.until_end(turn).await;
    assert_eq!(turn_end(&events), ExitReason::Completed);
    assert!(
        !h.workspace.join("asked.txt").exists(),
        "denied, yet it ran"
    );
    assert!(
        h.workspace.join("free.txt").exists(),
        "allowed, yet not run"
    );
    let asked_again = events
        .iter()
        .filter(|e| matches!(e, Event::ApprovalRequest { .. }))
        .count();
    assert_eq!(asked_again, 0, "the allowed call was asked for");
    // Under `Ask`, a hook's `allow` skips the question.
    let h = Harness::new().await;
    let allow = script(
        &h.workspace,
        "allow.sh",
        "#!/bin/bash\ncat > /dev/null\necho '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\"}}'\n",
    );
    let mut p = with_hooks(&h, &format!("[[hooks.PreToolUse]]\ncommand = {allow:?}\n"));
    p.tools.approvals = ApprovalPolicy::Ask;
    p.front_end = FrontEnd::Interactive { review: false };
    h.script()
        .tool("bash", r#"{"command":"echo ok > allowed.txt"}"#)
        .at(1100)
        .text("done");
    let mut r = start(p);
    let events = r.completed_turn("go").await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequest { .. }))
    );
    assert!(h.workspace.join("allowed.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subagent_stop_runs_after_a_task_reported_and_its_block_reaches_the_parent() {
    let h = Harness::new().await;
    let check = script(
        &h.workspace,
        "check.sh",
        "#!/bin/bash\ncat >> \"$(dirname \"$0\")/sub.log\"\necho 'check the report twice' >&2\nexit 2\n",
    );
    let p = with_hooks(
        &h,
        &format!("[[hooks.SubagentStop]]\ncommand = {check:?}\n"),
    );
    h.script().call(
        "task_a",
        "task",
        serde_json::json!({"description": "look", "prompt": "SUB-JOB look around"}).to_string(),
    );
    h.server
        .push_for("SUB-JOB", a::text("SUB REPORT: all fine.", U::new(900, 10)));
    h.script().at(1100).text("done");
    let mut r = start(p);
    let events = r.completed_turn("delegate").await;
    let seen: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(h.workspace.join("sub.log"))
            .unwrap()
            .trim(),
    )
    .unwrap();
    assert_eq!(seen["hook_event_name"], "SubagentStop");
    assert_eq!(seen["agent_id"], "task_a");
    let last = h.server.requests().last().unwrap().to_string();
    assert_contains(&last, "SUB REPORT: all fine.");
    assert_contains(&last, "check the report twice");
    assert_event!(events, Event::Hook(n) if n.event == "SubagentStop" && n.outcome == "blocked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_calls_pass_pre_tool_use_and_post_tool_use_like_other_tools() {
    let h = Harness::new().await;
    let pre = script(
        &h.workspace,
        "pre.py",
        r#"#!/usr/bin/env python3
import json, os, sys
d = json.load(sys.stdin)
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pre.log"), "a") as f:
    f.write(json.dumps(d) + "\n")
if "SUB-B" in d["tool_input"]["prompt"]:
    print("no second agent today", file=sys.stderr)
    sys.exit(2)
"#,
    );
    let post = script(
        &h.workspace,
        "post.sh",
        "#!/bin/bash\ncat >> \"$(dirname \"$0\")/post.log\"\necho 'post-check: read the report twice' >&2\nexit 2\n",
    );
    let p = with_hooks(
        &h,
        &format!(
            "[[hooks.PreToolUse]]\nmatcher = \"Task\"\ncommand = {pre:?}\n\
             [[hooks.PostToolUse]]\nmatcher = \"Task\"\ncommand = {post:?}\n"
        ),
    );
    let call =
        |prompt: &str| serde_json::json!({"description": "look", "prompt": prompt}).to_string();
    h.server.push(
        a::Stream::new(U::new(1000, 10))
            .tool("task_a", "task", &call("SUB-A look around"))
            .tool("task_b", "task", &call("SUB-B look elsewhere"))
            .reply(),
    );
    h.server
        .push_for("SUB-A", a::text("SUB REPORT A: all fine.", U::new(900, 10)));
    h.script().at(1100).text("done");
    let mut r = start(p);
    r.completed_turn("delegate").await;
    let requests = h.server.requests();
    // The parent, the one child, the parent again: the blocked task's child never ran.
    assert_eq!(requests.len(), 3, "{requests:#?}");
    let last = requests.last().unwrap().to_string();
    assert_contains(&last, "SUB REPORT A: all fine.");
    assert_contains(&last, "denied by a PreToolUse hook: no second agent today");
    assert_contains(&last, "post-check: read the report twice");
    let pre_log = std::fs::read_to_string(h.workspace.join("pre.log")).unwrap();
    let seen: Vec<serde_json::Value> = pre_log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(seen.len(), 2);
    assert!(seen.iter().all(|s| s["tool_name"] == "Task"), "{seen:?}");
    let post_log = std::fs::read_to_string(h.workspace.join("post.log")).unwrap();
    let post: serde_json::Value = serde_json::from_str(post_log.trim()).unwrap();
    assert_eq!(post["hook_event_name"], "PostToolUse");
    assert_eq!(post["tool_input"]["prompt"], "SUB-A look around");
    assert!(
        post["tool_response"]["content"]
            .as_str()
            .unwrap()
            .contains("SUB REPORT A"),
        "{post}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_kills_a_background_handoff_frozen_hook_and_the_document_goes_to_its_review() {
    use flower_tui::engine::policy::HandoffMode;
    use flower_tui::engine::protocol::HandoffPhase;
    let h = Harness::new().await;
    let hang = script(
        &h.workspace,
        "hang.sh",
        "#!/bin/bash\ncat > /dev/null\nsleep 300 &\necho $! > \"$(dirname \"$0\")/child.pid\"\nsleep 300\n",
    );
    // The line at 30,000 of a 40,000 window: the handoff is written in the background.
    let mut p = h.params(40_000, 10_000);
    p.handoff.mode = HandoffMode::Background;
    p.hooks = HookParams {
        hooks: config_hooks(&format!(
            "[[hooks.HandoffFrozen]]\ncommand = {hang:?}\ntimeout = 600\n"
        )),
        ..HookParams::default()
    };
    let held = Gate::new();
    h.script().at(31_000).tool("list_dir", "{}");
    h.script().at(31_200).held(&held).call("t2", "list_dir", "{}").at(31_100).writing().text("## Doing\nParsing.\n## Decided\n- Keep it.\n## Dead ends\n(empty)\n## Next\nTest it.\n## Scene\n- src/p.rs\n");
    let mut r = start(p);
    let turn = r.send_turn("work").await;
    let pid_file = h.workspace.join("child.pid");
    wait_until("the HandoffFrozen hook to start", 20, || {
        std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n'))
    });
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    r.send(Op::Abort { turn }).await;
    let events = r.until_end(turn).await;
    assert_eq!(turn_end(&events), ExitReason::Interrupted);
    wait_until("the hook's child to be killed", 5, || gone(pid));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Notice { message } if message.contains("HandoffFrozen hooks were stopped"))),
        "{events:#?}"
    );
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::Handoff(HandoffPhase::Frozen {
                background: true,
                ..
            })
        )),
        "the review opens: {events:#?}"
    );
    held.open();
}

/// A formatter run by `PostToolUse` changes the file the call wrote: that change is the call's,
/// so `/undo` puts the file back as it was before the turn with no conflict to ask about.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_post_tool_use_formatter_change_belongs_to_its_call_and_undo_sees_no_conflict() {
    use flower_tui::engine::checkpoint::{OnConflict, RestoreReport, UndoAction};
    let h = Harness::new().await;
    std::fs::write(h.workspace.join("a.txt"), "before\n").unwrap();
    let fmt = script(
        &h.workspace,
        "fmt.sh",
        "#!/bin/bash\ncat > /dev/null\nsleep 0.2\necho '// formatted' >> \"$(dirname \"$0\")/a.txt\"\n",
    );
    let p = with_hooks(
        &h,
        &format!("[[hooks.PostToolUse]]\nmatcher = \"Write|Edit\"\ncommand = {fmt:?}\n"),
    );
    let mut p = p;
    p.tools.approvals = ApprovalPolicy::Auto;
    h.server.push(a::tool_use(
        "w1",
        "write_file",
        r#"{"path":"a.txt","content":"written\n"}"#,
        U::new(1000, 10),
    ));
    h.server.push(a::text("done", U::new(1100, 10)));
    let mut r = start(p);
    let events = r.turn("write it").await;
    assert_eq!(turn_end(&events), ExitReason::Completed, "{events:#?}");
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("a.txt")).unwrap(),
        "written\n// formatted\n",
        "the formatter ran after the write"
    );
    r.send(Op::Restore {
        action: UndoAction::Undo,
        on_conflict: OnConflict::Stop,
    })
    .await;
    let report = r
        .until(|e| matches!(e, Event::Restore(_)))
        .await
        .into_iter()
        .find_map(|e| match e {
            Event::Restore(report) => Some(report),
            _ => None,
        })
        .unwrap();
    assert!(
        matches!(report, RestoreReport::Restored { .. }),
        "no false conflict: {report:?}"
    );
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("a.txt")).unwrap(),
        "before\n"
    );
    r.shutdown().await;
}
