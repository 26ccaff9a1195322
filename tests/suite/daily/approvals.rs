//! Honest approvals: the whole command, the whole diff, what "always" grants, `/permissions`.

use flower_tui::engine::policy::{ApprovalPolicy, FrontEnd};
use flower_tui::engine::protocol::{AllowRule, Approval, Event, LineKind, Op};
use serde_json::json;

use crate::support::check::picked;
use crate::support::fake::{Reply, U, anthropic as a};
use crate::support::harness::{Harness, Running, start, turn_end};

fn u(input: u64) -> U {
    U::new(input, 20)
}

fn interactive(h: &Harness) -> Running {
    let mut p = h.params(200_000, 50_000);
    p.tools.approvals = ApprovalPolicy::Ask;
    p.front_end = FrontEnd::Interactive { review: false };
    start(p)
}

async fn approval(r: &mut Running) -> Event {
    let ev = r
        .until(|e| matches!(e, Event::ApprovalRequest { .. }))
        .await;
    ev.last().cloned().unwrap()
}

fn bash(id: &str, command: &str) -> crate::support::fake::Reply {
    a::tool_use(
        id,
        "bash",
        &json!({ "command": command }).to_string(),
        u(1000),
    )
}

#[tokio::test]
async fn the_prompt_carries_the_whole_command_and_always_covers_its_prefix_only() {
    let h = Harness::new().await;
    let long = "ls -a \\\n  -l \\\n  .\n# and a second line that a one-line summary would hide";
    h.server.push(bash("t1", long));
    h.server.push(bash("t2", "ls -la ."));
    h.server.push(bash("t3", "ls && touch made-by-t3"));
    h.script().usage(U::new(1300, 20)).text("done");
    let mut r = interactive(&h);
    let turn = r.send_turn("list").await;

    let Event::ApprovalRequest {
        command,
        always,
        summary,
        ..
    } = approval(&mut r).await
    else {
        unreachable!()
    };
    assert_eq!(
        command.as_deref(),
        Some(long),
        "the whole command, not its first line"
    );
    assert!(summary.ends_with('…'), "{summary}");
    let always = always.expect("always is offered");
    assert_eq!(always.label, "always allow `ls …` this session");
    r.answer("t1", Approval::Always).await;
    // `ls -la .` is covered: no prompt. `ls && touch …` is not: `touch` was never allowed.
    let Event::ApprovalRequest { id, always, .. } = approval(&mut r).await else {
        unreachable!()
    };
    assert_eq!(id, "t3");
    assert_eq!(
        always.unwrap().rules,
        [
            AllowRule::BashPrefix {
                prefix: "ls".into()
            },
            AllowRule::BashPrefix {
                prefix: "touch".into()
            }
        ]
    );
    r.answer("t3", Approval::Deny).await;
    let ev = r.until_end(turn).await;
    assert_eq!(turn_end(&ev), "completed");
    assert!(!h.workspace.join("made-by-t3").exists(), "denied, not run");

    // `/permissions` lists the grant; `/new` revokes it, and says so.
    r.send(Op::Permissions).await;
    let ev = r.until(|e| matches!(e, Event::Permissions { .. })).await;
    let Some(Event::Permissions { allowances, .. }) = ev.last() else {
        unreachable!()
    };
    assert_eq!(allowances.len(), 1);
    assert_eq!(allowances[0].label, "bash: `ls …`");
    r.send(Op::NewSession).await;
    let ev = r
        .until(|e| matches!(e, Event::Notice { message } if message.starts_with("new session")))
        .await;
    assert!(
        matches!(ev.last(), Some(Event::Notice { message }) if message.contains("1 \"always\" approval(s) of the last session revoked")),
        "{ev:?}"
    );
    h.server.push(bash("t4", "ls"));
    h.script().usage(U::new(1400, 20)).text("listed");
    r.send_turn("list again").await;
    let Event::ApprovalRequest { id, .. } = approval(&mut r).await else {
        unreachable!()
    };
    assert_eq!(id, "t4", "asked again after /new");
    r.answer("t4", Approval::Once).await;
    r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    r.shutdown().await;
}

#[tokio::test]
async fn a_file_edit_is_previewed_as_its_diff_and_nothing_is_written_before_the_answer() {
    let h = Harness::new().await;
    let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    h.file("f.txt", &text);
    let edit = json!({"path": "f.txt", "old_string": "line 10\n", "new_string": "line ten\n"});
    h.script()
        .usage(U::new(1000, 20))
        .tool("edit_file", edit.to_string());
    let missing = json!({"path": "f.txt", "old_string": "no such line", "new_string": "x"});
    h.script()
        .usage(U::new(1100, 20))
        .tool("edit_file", missing.to_string())
        .at(1200)
        .text("ok");
    let mut r = interactive(&h);
    let turn = r.send_turn("edit").await;
    let Event::ApprovalRequest { diff, always, .. } = approval(&mut r).await else {
        unreachable!()
    };
    let diff = diff.expect("the preview is the diff");
    assert_eq!((diff.added, diff.removed), (1, 1));
    let changed: Vec<_> = diff.hunks[0]
        .lines
        .iter()
        .filter(|l| l.kind != LineKind::Context)
        .map(|l| (l.kind, l.old, l.new, l.text.as_str()))
        .collect();
    assert_eq!(
        changed,
        [
            (LineKind::Removed, Some(10), None, "line 10"),
            (LineKind::Added, None, Some(10), "line ten")
        ]
    );
    assert_eq!(
        always.unwrap().label,
        "always allow edit_file inside the workspace this session"
    );
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("f.txt")).unwrap(),
        text,
        "nothing written while the user decides"
    );
    r.answer("t1", Approval::Once).await;
    // The second edit cannot apply: the model gets the error and nobody is asked.
    let ev = r.until_end(turn).await;
    assert!(
        !ev.iter()
            .any(|e| matches!(e, Event::ApprovalRequest { .. }))
    );
    let results: Vec<_> = picked!(
        ev,
        Event::ToolResult { id, is_error, diff, output, .. } => (id.as_str(), *is_error, diff.is_some(), output.clone())
    );
    assert_eq!(results.len(), 2);
    assert_eq!(
        (results[0].0, results[0].1, results[0].2),
        ("t1", false, true)
    );
    assert!(
        results[1].1 && results[1].3.contains("was not found"),
        "{results:?}"
    );
    assert!(
        std::fs::read_to_string(h.workspace.join("f.txt"))
            .unwrap()
            .contains("line ten")
    );
    r.shutdown().await;
}

#[tokio::test]
async fn revoking_during_a_turn_is_answered_at_once() {
    use std::time::Duration;
    let h = Harness::new().await;
    h.server.push(bash("t1", "ls"));
    h.script().usage(U::new(1200, 20)).text("ok");
    let mut r = interactive(&h);
    let turn = r.send_turn("go").await;
    approval(&mut r).await;
    r.answer("t1", Approval::Always).await;
    r.until_end(turn).await;
    // The next `ls` streams slowly: the grant is revoked while the reply is on its way.
    let slow = Reply::sse_in_chunks(&bash("t3", "ls").body_bytes(), 64)
        .with_delay(Duration::from_millis(40));
    h.server.push(slow);
    h.script().usage(U::new(1300, 20)).text("again");
    let turn = r.send_turn("again").await;
    while h.server.requests().len() < 3 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    r.send(Op::Revoke { rule: None }).await;
    let ev = r
        .until(|e| matches!(e, Event::Permissions { .. } | Event::ApprovalRequest { .. }))
        .await;
    assert!(
        matches!(ev.last(), Some(Event::Permissions { allowances, .. }) if allowances.is_empty()),
        "the answer comes before the call: {ev:?}"
    );
    let Event::ApprovalRequest { id, .. } = approval(&mut r).await else {
        unreachable!()
    };
    assert_eq!(id, "t3", "no longer covered");
    r.answer("t3", Approval::Deny).await;
    r.until_end(turn).await;
    r.shutdown().await;
}
