//! What the fault guards cost: a ledger save that merges one step under the run's lock (against
//! the plain rewrite it replaced), and a `bash` call with its lifeline watcher (against spawning
//! the same shell bare).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use flower_tui::engine::ledger;
use flower_tui::engine::ledger::{
    GenerationRecord, HandoffCause, HandoffReason, HandoffRecord, Manifest, StepRecord,
};
use flower_tui::engine::tools::{self, ToolCtx};

use crate::median_of;

/// A ledger as a long run leaves it: six steps, the last with eight generations and handoffs.
fn busy_manifest() -> Manifest {
    let step = |name: &str| StepRecord {
        name: name.into(),
        task: "t".repeat(1_200),
        session_id: "s".repeat(32),
        generations: 8,
        per_generation: (1..=8)
            .map(|g| GenerationRecord {
                generation: g,
                session_id: format!("session-{g}"),
                ..Default::default()
            })
            .collect(),
        handoffs: (1..=8)
            .map(|g| HandoffRecord {
                path: Some(PathBuf::from(format!("/w/.flower/notes/handoff-{name}.md"))),
                reason: HandoffReason::clean(HandoffCause::Pressure),
                generation: g,
                ..Default::default()
            })
            .collect(),
        touched: (0..40).map(|i| format!("src/file_{i}.rs")).collect(),
        ..Default::default()
    };
    Manifest {
        run_id: "bench".into(),
        workspace: PathBuf::from("/w"),
        steps: (0..6).map(|i| step(&format!("step-{i}"))).collect(),
        ..Default::default()
    }
}

pub fn run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("manifest.json");
    let mut m = busy_manifest();
    m.save(&path).expect("first save");
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let plain = median_of(201, || {
        let t = Instant::now();
        m.save(&path).expect("save");
        t.elapsed()
    });
    let merged = median_of(201, || {
        m.steps[5].figures.num_turns += 1;
        let t = Instant::now();
        ledger::save_step(&m, Some(5), &path, true).expect("save_step");
        t.elapsed()
    });
    println!(
        "ledger save ({size} bytes, 6 steps): plain rewrite {plain:?}, one step merged under the \
         lock {merged:?} (median of 201)"
    );

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let ws = std::fs::canonicalize(dir.path()).expect("workspace");
    let ctx = ToolCtx::new(ws.clone(), "bench");
    let input = serde_json::json!({ "command": "true" });
    let guarded = median_of(51, || {
        rt.block_on(async {
            let t = Instant::now();
            let out = tools::run("bash", &input, &ctx).await;
            assert!(!out.is_error, "{}", out.content);
            t.elapsed()
        })
    });
    let bare = median_of(51, || {
        rt.block_on(async {
            let t = Instant::now();
            let status = tokio::process::Command::new("bash")
                .args(["-c", "true"])
                .current_dir(&ws)
                .process_group(0)
                .status()
                .await
                .expect("bash");
            assert!(status.success());
            t.elapsed()
        })
    });
    // Let the watchers of the last calls see their groups empty and leave.
    std::thread::sleep(Duration::from_millis(1_200));
    println!(
        "bash `true`: the tool with its guards {guarded:?}; the same shell spawned bare {bare:?} \
         (median of 51; the tool also drains its output for up to 300 ms only when background \
         processes keep it open)"
    );
}
