//! The bash tool with real processes: output, exit codes, timeouts, interrupts, live output and
//! the process group killed at the end.

use super::*;
use crate::engine::tools::{ToolCtx, run as run_tool};
use serde_json::json;
use std::time::Instant as StdInstant;

fn ctx() -> (tempfile::TempDir, ToolCtx) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    (dir, ToolCtx::new(root, "s"))
}

async fn bash(ctx: &ToolCtx, command: &str) -> ToolOutput {
    run_tool("bash", &json!({ "command": command }), ctx).await
}

#[tokio::test]
async fn echo_and_cwd() {
    let (_t, ctx) = ctx();
    let out = bash(&ctx, "echo hello; pwd").await;
    assert!(!out.is_error, "{}", out.content);
    let expected = format!("hello\n{}\n\n[exit code 0]", ctx.workspace.display());
    assert_eq!(out.content, expected);
}

#[tokio::test]
async fn exit_code_and_stderr_in_order() {
    let (_t, ctx) = ctx();
    let out = bash(&ctx, "echo a; echo b >&2; echo c; exit 3").await;
    assert!(out.is_error);
    assert_eq!(out.content, "a\nb\nc\n\n[exit code 3]");
}

#[tokio::test]
async fn stdin_is_empty_and_colours_are_stripped() {
    let (_t, ctx) = ctx();
    let out = bash(&ctx, "cat; printf '\\033[31mred\\033[0m\\n'").await;
    assert_eq!(out.content, "red\n\n[exit code 0]");
    let out = bash(&ctx, "true").await;
    assert_eq!(out.content, "(no output)\n\n[exit code 0]");
}

#[tokio::test]
async fn timeout_kills_the_group_and_keeps_output() {
    let (_t, ctx) = ctx();
    let marker = ctx.workspace.join("grandchild-survived");
    let command = format!(
        "echo started; (sleep 2; touch '{}') & sleep 5",
        marker.display()
    );
    let start = StdInstant::now();
    let out = run_tool("bash", &json!({ "command": command, "timeout": 1 }), &ctx).await;
    let took = start.elapsed();
    assert!(took < Duration::from_secs(4), "took {took:?}");
    assert!(out.is_error);
    assert!(out.content.starts_with("started\n"), "{}", out.content);
    assert!(
        out.content.contains("timed out after 1s"),
        "{}",
        out.content
    );
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(!marker.exists(), "a grandchild outlived the timeout");
}

#[tokio::test]
async fn dropping_the_future_kills_child_and_grandchildren() {
    let (_t, ctx) = ctx();
    let child_marker = ctx.workspace.join("child");
    let grand_marker = ctx.workspace.join("grandchild");
    let command = format!(
        "(sleep 2; touch '{}') & sleep 2; touch '{}'",
        grand_marker.display(),
        child_marker.display()
    );
    let input = json!({ "command": command });
    let cancelled =
        tokio::time::timeout(Duration::from_millis(500), run_tool("bash", &input, &ctx)).await;
    assert!(
        cancelled.is_err(),
        "the command should still have been running"
    );
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(!child_marker.exists(), "the shell survived the drop");
    assert!(!grand_marker.exists(), "a grandchild survived the drop");
}

#[tokio::test]
async fn huge_output_is_capped_in_memory() {
    let (_t, ctx) = ctx();
    let out = bash(
        &ctx,
        "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo END",
    )
    .await;
    assert!(!out.is_error);
    assert!(
        out.content.len() < HEAD_BYTES + TAIL_BYTES + 1000,
        "{}",
        out.content.len()
    );
    assert!(out.content.contains("bytes of output omitted"));
    assert!(out.content.ends_with("END\n\n[exit code 0]"));
}

#[tokio::test]
async fn background_processes_do_not_block() {
    let (_t, ctx) = ctx();
    let start = StdInstant::now();
    let out = bash(&ctx, "echo hi; sleep 3 &").await;
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(out.content.starts_with("hi\n"), "{}", out.content);
    assert!(out.content.contains("still running"), "{}", out.content);
}

#[tokio::test]
async fn bad_arguments() {
    let (_t, ctx) = ctx();
    let out = run_tool("bash", &json!({}), &ctx).await;
    assert!(
        out.is_error && out.content.contains("`command`"),
        "{}",
        out.content
    );
    let out = run_tool("bash", &json!({"command": "  "}), &ctx).await;
    assert!(out.is_error && out.content.contains("empty"));
}

#[test]
fn capture_keeps_head_and_tail() {
    let mut c = Capture::default();
    c.push(&vec![b'a'; HEAD_BYTES + 10]);
    for _ in 0..5 {
        c.push(&vec![b'b'; TAIL_BYTES / 2]);
    }
    c.push(b"z");
    let omitted = 10 + 5 * (TAIL_BYTES as u64 / 2) + 1 - TAIL_BYTES as u64;
    assert_eq!(c.omitted, omitted);
    assert_eq!(c.tail.len(), TAIL_BYTES);
    let s = c.finish();
    assert!(s.starts_with("aaa") && s.ends_with("bbz"));
    assert!(s.contains(&format!("[... {omitted} bytes of output omitted ...]")));
    let mut c = Capture::default();
    c.push(&vec![b'a'; HEAD_BYTES]);
    c.push(&vec![b'c'; 3 * TAIL_BYTES]);
    assert_eq!(c.omitted, 2 * TAIL_BYTES as u64);
    assert_eq!(c.tail.len(), TAIL_BYTES);
}

#[tokio::test]
async fn output_streams_while_the_command_runs_and_the_exit_is_structured() {
    use crate::engine::tools::{Live, run_live};
    let (_t, ctx) = ctx();
    let mut pieces: Vec<(StdInstant, String)> = Vec::new();
    let start = StdInstant::now();
    let out = {
        let mut on = |t: String| pieces.push((StdInstant::now(), t));
        let live = Live {
            on_output: &mut on,
            interrupt: None,
            terminal: None,
        };
        let input = json!({"command": "for i in 1 2 3; do echo line $i; sleep 0.2; done; exit 4"});
        run_live("bash", &input, &ctx, live).await
    };
    let joined: String = pieces.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(joined, "line 1\nline 2\nline 3\n");
    assert!(pieces.len() >= 3, "{pieces:?}");
    // The first line was shown long before the command ended.
    assert!(
        pieces[0].0 - start < Duration::from_millis(300),
        "{pieces:?}"
    );
    let exit = out.exit.expect("bash reports how it ended");
    assert_eq!(
        (exit.code(), exit.interrupted(), exit.timed_out()),
        (Some(4), false, false)
    );
    assert_eq!(exit.summary, "exit code 4");
    assert!(exit.elapsed_ms >= 600, "{exit:?}");
    assert!(out.content.ends_with("[exit code 4]"), "{}", out.content);
}

#[tokio::test]
async fn an_interrupt_keeps_the_partial_output_and_kills_the_group() {
    use crate::engine::tools::{Live, run_live};
    let (_t, ctx) = ctx();
    let marker = ctx.workspace.join("grandchild-survived");
    let command = format!(
        "echo started; (sleep 1; touch '{}') & sleep 10; echo never",
        marker.display()
    );
    let (tx, rx) = tokio::sync::oneshot::channel();
    let mut tx = Some(tx);
    let start = StdInstant::now();
    let out = {
        // Stop the command as soon as its first output is shown.
        let mut on = |_: String| {
            if let Some(tx) = tx.take() {
                let _ = tx.send(());
            }
        };
        let live = Live {
            on_output: &mut on,
            interrupt: Some(rx),
            terminal: None,
        };
        run_live("bash", &json!({ "command": command }), &ctx, live).await
    };
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    assert!(out.is_error);
    assert!(out.content.starts_with("started\n"), "{}", out.content);
    assert!(!out.content.contains("never"));
    assert!(
        out.content.contains("the user stopped the command"),
        "{}",
        out.content
    );
    let exit = out.exit.unwrap();
    assert!(exit.interrupted() && exit.code().is_none(), "{exit:?}");
    assert!(exit.summary.starts_with("interrupted after 0."), "{exit:?}");
    tokio::time::sleep(Duration::from_millis(1300)).await;
    assert!(
        !marker.exists(),
        "the background child died with the command"
    );
    // A dropped sender is not an interrupt.
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    drop(tx);
    let mut ignore = |_: String| {};
    let live = Live {
        on_output: &mut ignore,
        interrupt: Some(rx),
        terminal: None,
    };
    let out = run_live(
        "bash",
        &json!({"command": "sleep 0.3; echo done"}),
        &ctx,
        live,
    )
    .await;
    assert_eq!(out.content, "done\n\n[exit code 0]");
}
