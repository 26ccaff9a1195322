//! Large tool results spilled to the workbench (or the temp dir): the preview the model gets,
//! the file kept, a turn's total budget, and the failures that fall back to the preview.

use super::*;
use crate::engine::tools::{ToolCtx, run as run_tool};
use serde_json::json;
use std::fs;

fn ctx() -> (tempfile::TempDir, ToolCtx) {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let mut ctx = ToolCtx::new(root.clone(), "sess-1");
    ctx.spill_dir = Some(root.join(".flower/spill"));
    (dir, ctx)
}

fn text(n: usize) -> ToolOutput {
    ToolOutput::ok("x".repeat(n))
}

#[tokio::test]
async fn big_bash_output_is_spilled_with_a_preview() {
    let (_t, ctx) = ctx();
    let command = "for i in $(seq 1 15000); do echo \"line $i 0123456789\"; done";
    let out = run_tool("bash", &json!({ "command": command }), &ctx).await;
    assert!(out.content.len() > 300_000, "{}", out.content.len());
    let full = out.content.clone();
    let mut spiller = Spiller::new();
    let shown = spiller.apply("bash", out, &ctx);
    let path = shown.spilled.clone().expect("spilled");
    assert_eq!(path, ctx.workspace.join(".flower/spill/sess-1-1.txt"));
    assert_eq!(fs::read_to_string(&path).unwrap(), full);
    assert!(
        shown.content.contains(".flower/spill/sess-1-1.txt"),
        "{}",
        shown.content
    );
    assert!(shown.content.contains("read_file"));
    // The preview: the first 1,000 and the last 500 characters of the result.
    let head: String = full.chars().take(1_000).collect();
    let tail: String = full.chars().skip(full.chars().count() - 500).collect();
    assert!(shown.content.contains(&head));
    assert!(shown.content.ends_with(&tail));
    assert!(tail.ends_with("[exit code 0]"));
    assert!(shown.content.chars().count() < SPILL_PREVIEW_CHARS + 800);
    assert_eq!(spiller.turn_total(), shown.content.chars().count());
    // The model can read the rest from the spill file.
    let page = run_tool(
        "read_file",
        &json!({"path": ".flower/spill/sess-1-1.txt", "offset": 14_999, "limit": 2}),
        &ctx,
    )
    .await;
    assert!(
        page.content.contains(" 14999\tline 14999 0123456789"),
        "{}",
        page.content
    );
}

#[test]
fn turn_total_over_200k_spills_and_resets_per_turn() {
    let (_t, ctx) = ctx();
    let mut s = Spiller::new();
    assert!(s.apply("grep", text(90_000), &ctx).spilled.is_none());
    assert!(s.apply("bash", text(90_000), &ctx).spilled.is_none());
    assert_eq!(s.turn_total(), 180_000);
    let third = s.apply("bash", text(90_000), &ctx);
    assert!(third.spilled.is_some());
    assert!(
        third.content.contains("over 200000 characters"),
        "{}",
        third.content
    );
    // Exactly at the limit still fits.
    s.start_turn();
    assert!(s.apply("bash", text(100_000), &ctx).spilled.is_none());
    assert!(s.apply("bash", text(100_000), &ctx).spilled.is_none());
    assert!(s.apply("bash", text(1), &ctx).spilled.is_some());
    s.start_turn();
    let single = s.apply("bash", text(100_001), &ctx);
    assert!(
        single.content.contains("limit for one result"),
        "{}",
        single.content
    );
}

#[test]
fn read_file_is_never_spilled_but_counts() {
    let (_t, ctx) = ctx();
    let mut s = Spiller::new();
    let out = s.apply("read_file", text(150_000), &ctx);
    assert!(out.spilled.is_none());
    assert_eq!(out.content.len(), 150_000);
    assert_eq!(s.turn_total(), 150_000);
    assert!(s.apply("list_dir", text(60_000), &ctx).spilled.is_some());
}

#[test]
fn errors_stay_errors_and_files_are_never_overwritten() {
    let (_t, ctx) = ctx();
    let dir = ctx.spill_dir.clone().unwrap();
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("sess-1-1.txt"), "keep").unwrap();
    let mut s = Spiller::new();
    let out = s.apply("bash", ToolOutput::error("e".repeat(120_000)), &ctx);
    assert!(out.is_error);
    assert_eq!(
        out.spilled.as_deref(),
        Some(dir.join("sess-1-2.txt").as_path())
    );
    // A new spiller for the same session (e.g. after a restart) goes on after the last file.
    let out = Spiller::new().apply("bash", text(120_000), &ctx);
    assert_eq!(
        out.spilled.as_deref(),
        Some(dir.join("sess-1-3.txt").as_path())
    );
    assert_eq!(
        fs::read_to_string(dir.join("sess-1-1.txt")).unwrap(),
        "keep"
    );
    assert_eq!(
        fs::read_to_string(dir.join("sess-1-2.txt")).unwrap().len(),
        120_000
    );
}

#[test]
fn unwritable_spill_dir_falls_back_to_the_preview() {
    let (_t, mut ctx) = ctx();
    let blocker = ctx.workspace.join("not-a-dir");
    fs::write(&blocker, "").unwrap();
    ctx.spill_dir = Some(blocker.join("spill"));
    let out = Spiller::new().apply("bash", text(150_000), &ctx);
    assert!(out.spilled.is_none());
    assert!(
        out.content.contains("could not be saved"),
        "{}",
        out.content
    );
    assert!(out.content.chars().count() < 2_500);
}

#[tokio::test]
async fn without_a_workbench_spills_go_to_the_temp_dir_and_stay_readable() {
    let (_t, mut ctx) = ctx();
    ctx.spill_dir = None;
    ctx.session_id = format!("test/{}", crate::engine::fsutil::new_id());
    let out = Spiller::new().apply("bash", text(120_000), &ctx);
    let path = out.spilled.clone().expect("spilled");
    assert!(path.starts_with(default_spill_dir()));
    assert!(!path.file_name().unwrap().to_string_lossy().contains('/'));
    let raw = path.to_string_lossy().into_owned();
    assert!(!crate::engine::tools::needs_approval(
        "read_file",
        &json!({"path": raw}),
        &ctx.workspace
    ));
    let page = run_tool("read_file", &json!({"path": raw, "limit": 1}), &ctx).await;
    assert!(!page.is_error, "{}", page.content);
    fs::remove_file(&path).unwrap();
}

#[test]
fn preview_respects_char_boundaries() {
    let s = "é".repeat(3_000);
    let p = preview(&s, 3_000);
    assert_eq!(p.matches('é').count(), SPILL_PREVIEW_CHARS);
    assert_eq!(safe_file_stem("../a b"), "_a_b");
    assert_eq!(safe_file_stem(""), "session");
}
