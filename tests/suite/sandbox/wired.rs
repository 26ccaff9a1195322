//! The sandbox in the engine, with the real kernel sandbox and the loopback fake as the model: a
//! confined command runs unasked, file tools still ask, a command the sandbox stopped carries the
//! reason on its result, and only an interactive user can let it run once outside the sandbox.

use flower_tui::engine::policy::{ApprovalPolicy, FrontEnd, SandboxApproval};
use flower_tui::engine::protocol::{Approval, Event, Op, StopKind};
use flower_tui::engine::session::EngineParams;
use flower_tui::engine::tools::sandbox::{SandboxPolicy, Support};
use serde_json::json;

use super::{Stray, bash_call, place, unique};
use crate::support::check::{assert_contains, assert_file};
use crate::support::fake::U;
use crate::support::harness::{Harness, start, turn_end};

/// The sandbox on, approvals asked for, in `front_end`.
fn sandboxed(h: &Harness, front_end: FrontEnd) -> EngineParams {
    let mut p = h.params(200_000, 50_000);
    p.tools.approvals = ApprovalPolicy::Ask;
    p.front_end = front_end;
    p.tools.sandbox = SandboxPolicy::default();
    p
}

const TUI: FrontEnd = FrontEnd::Interactive { review: false };

/// The tool results the model was sent in the last request, in order.
fn results_sent(h: &Harness) -> Vec<String> {
    let last = h.server.requests().last().cloned().unwrap_or_default();
    last["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn the_kernel_confines() -> bool {
    let support = Support::current();
    if !support.confines_writes() {
        eprintln!("NOT ENFORCED: {support:?}; the sandbox cannot confine writes here");
    }
    support.confines_writes()
}

fn approvals(ev: &[Event]) -> Vec<&Event> {
    ev.iter()
        .filter(|e| matches!(e, Event::ApprovalRequest { .. }))
        .collect()
}

#[tokio::test]
async fn a_confined_command_runs_unasked_while_file_tools_and_configured_asking_still_ask() {
    if !the_kernel_confines() {
        return;
    }
    let h = Harness::new().await;
    h.server.push(bash_call("t1", "echo made > made.txt"));
    let write = json!({"path": "w.txt", "content": "x"}).to_string();
    h.script()
        .usage(U::new(1100, 20))
        .call("t2", "write_file", write)
        .at(1200)
        .text("done");
    let mut r = start(sandboxed(&h, TUI));
    let turn = r.send_turn("make files").await;
    let ev = r
        .until(|e| matches!(e, Event::ApprovalRequest { .. }))
        .await;
    let asked = approvals(&ev);
    assert!(
        matches!(asked.as_slice(), [Event::ApprovalRequest { name, .. }] if name == "write_file"),
        "bash ran unasked, write_file asks: {asked:?}"
    );
    assert!(h.workspace.join("made.txt").exists());
    r.answer("t2", Approval::Once).await;
    assert_eq!(turn_end(&r.until_end(turn).await), "completed");
    r.send(Op::Permissions).await;
    let ev = r.until(|e| matches!(e, Event::Permissions { .. })).await;
    let Some(Event::Permissions { sandbox, .. }) = ev.last() else {
        unreachable!()
    };
    assert!(
        sandbox.starts_with("workspace-write, network off (Landlock ABI ")
            && sandbox.ends_with("; the commands it confines run without asking"),
        "{sandbox}"
    );
    r.shutdown().await;

    // `[sandbox] ask = true`: the same command is asked for.
    let h = Harness::new().await;
    h.server.push(bash_call("t1", "echo made > made.txt"));
    h.script().usage(U::new(1200, 20)).text("done");
    let mut p = sandboxed(&h, TUI);
    p.tools.sandbox_approval = SandboxApproval::Ask;
    let mut r = start(p);
    r.send_turn("make a file").await;
    let ev = r
        .until(|e| matches!(e, Event::ApprovalRequest { .. }))
        .await;
    assert!(!h.workspace.join("made.txt").exists(), "asked first");
    assert!(matches!(
        ev.last(),
        Some(Event::ApprovalRequest {
            unsandboxed: None,
            always: Some(_),
            ..
        })
    ));
    r.shutdown().await;
}

#[tokio::test]
async fn headless_keeps_a_stopped_command_in_the_sandbox_and_its_result_says_why() {
    let p = place();
    if !the_kernel_confines() {
        return;
    }
    let target = p.outside.join(unique("headless"));
    let stray = Stray(target.clone());
    let h = Harness::new().await;
    h.server
        .push(bash_call("t1", &format!("echo out > {}", target.display())));
    h.script().usage(U::new(1200, 20)).text("noted");
    let mut r = start(sandboxed(&h, FrontEnd::Headless));
    let ev = r.completed_turn("write outside").await;
    assert!(approvals(&ev).is_empty(), "{ev:?}");
    assert!(!stray.0.exists(), "the sandbox let the write through");
    let Some(Event::ToolResult {
        sandbox: Some(stopped),
        is_error: true,
        ..
    }) = ev.iter().find(|e| matches!(e, Event::ToolResult { .. }))
    else {
        panic!("a failed result with the sandbox's reason: {ev:?}")
    };
    assert_eq!(
        stopped.kind,
        StopKind::Write {
            path: target.clone()
        }
    );
    let sent = results_sent(&h);
    assert!(
        sent[0].contains(&format!(
            "[sandbox: the sandbox refused the write to `{}`",
            target.display()
        )),
        "{sent:?}"
    );
    assert!(sent[0].contains(&stopped.message), "{sent:?}");
    r.shutdown().await;
}

#[tokio::test]
async fn the_user_lets_a_stopped_command_run_once_outside_the_sandbox_or_keeps_it_in() {
    let p = place();
    if !the_kernel_confines() {
        return;
    }
    let target = p.outside.join(unique("once"));
    let stray = Stray(target.clone());
    let command = format!("echo once >> {}", target.display());
    let h = Harness::new().await;
    h.server.push(bash_call("t1", &command));
    h.server.push(bash_call("t2", &command));
    h.script().usage(U::new(1300, 20)).text("done");
    let mut r = start(sandboxed(&h, TUI));
    let turn = r.send_turn("append outside").await;
    let ev = r
        .until(|e| matches!(e, Event::ApprovalRequest { .. }))
        .await;
    let Some(Event::ApprovalRequest {
        id,
        command: shown,
        always,
        unsandboxed: Some(reason),
        ..
    }) = ev.last()
    else {
        panic!("the question to leave the sandbox: {ev:?}")
    };
    assert_eq!(id, "t1");
    assert_eq!(
        shown.as_deref(),
        Some(command.as_str()),
        "the whole command"
    );
    assert!(always.is_none(), "leaving the sandbox is allowed once only");
    assert_contains(reason, "the sandbox refused the write");
    assert!(!stray.0.exists());
    r.answer("t1", Approval::Once).await;
    // The second call, the same command: the sandbox stops it again and asks again.
    let ev = r
        .until(|e| matches!(e, Event::ApprovalRequest { .. }))
        .await;
    assert_file(&target, "once\n");
    assert!(matches!(
        ev.last(),
        Some(Event::ApprovalRequest { id, unsandboxed: Some(_), .. }) if id == "t2"
    ));
    r.answer("t2", Approval::Deny).await;
    assert_eq!(turn_end(&r.until_end(turn).await), "completed");
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "once\n",
        "denied: not run outside"
    );
    let sent = results_sent(&h);
    assert!(
        sent[0].starts_with("[the sandbox stopped this command; the user allowed it to run once")
            && sent[0].contains("[exit code 0]")
            && !sent[0].contains("[sandbox:"),
        "{sent:?}"
    );
    assert!(
        sent[1].contains("[sandbox: the sandbox refused the write")
            && sent[1].ends_with("[the user chose not to run this command outside the sandbox]"),
        "{sent:?}"
    );
    r.shutdown().await;
}
