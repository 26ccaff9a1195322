//! The sessions of a workspace, for `--resume` and `/resume`: every run directory whose ledger
//! names this workspace (under the data dir or indexed there, [`super::run_index`]), newest
//! first, with what a picker shows (time, first message, generations, cost). Continuing one
//! attaches to its latest successor, like `--continue`.
//!
//! Also what the workspace's checkpoint store must keep ([`kept_checkpoints`]): in every ledger
//! of the workspace, the checkpoints of the undo stacks' turns that ended since a given time (and
//! of a turn still open), the checkpoint records taken since then, and each step's newest record
//! (the base of the next handoff's list of changed files).

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::Serialize;

use super::checkpoints::CheckpointKind;
use super::manifest::Manifest;
use super::run_dir::RunDir;
use crate::engine::checkpoint::SnapshotId;
use crate::engine::error::ResumeError;
use crate::engine::fsutil::rfc3339;

/// At most this many characters of the first message are listed.
const FIRST_MESSAGE_CHARS: usize = 120;

/// One run of this workspace, as a picker lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionSummary {
    /// The run's id as its ledger records it (else its directory's name): what `--resume RUN_ID`
    /// and `Op::Resume` take.
    pub run_id: String,
    pub run_dir: PathBuf,
    /// When the run started (RFC 3339).
    pub created: String,
    /// When its ledger last changed (RFC 3339), and the same in milliseconds since the epoch.
    pub updated: String,
    pub updated_unix_ms: u64,
    /// The step's name and its first message (one line, cut to 120 characters).
    pub step: String,
    pub first_message: String,
    pub generations: u32,
    pub num_turns: u32,
    pub cost_usd: f64,
    pub model: String,
    /// The latest successor: where continuing attaches.
    pub session_id: String,
}

/// The runs of `workspace` known under `data_dir` that recorded a step, newest first. Runs
/// whose ledger cannot be read are skipped.
pub fn list(data_dir: &Path, workspace: &Path) -> Vec<SessionSummary> {
    let mut out: Vec<SessionSummary> = super::run_index::run_dirs(data_dir)
        .iter()
        .filter_map(|dir| summary(dir, workspace))
        .collect();
    out.sort_by(|a, b| {
        b.updated_unix_ms
            .cmp(&a.updated_unix_ms)
            .then_with(|| b.run_id.cmp(&a.run_id))
    });
    out
}

fn summary(dir: &Path, workspace: &Path) -> Option<SessionSummary> {
    let path = dir.join("manifest.json");
    let updated = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .unwrap_or_default();
    let m = Manifest::load(&path).ok()?;
    if m.workspace != workspace {
        return None;
    }
    let step = m.steps.last()?;
    let first_line = step
        .task
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let mut first_message: String = first_line
        .trim()
        .chars()
        .take(FIRST_MESSAGE_CHARS)
        .collect();
    if first_line.trim().chars().count() > FIRST_MESSAGE_CHARS
        || step.task.trim().lines().nth(1).is_some()
    {
        first_message.push('…');
    }
    Some(SessionSummary {
        run_id: if m.run_id.is_empty() {
            dir.file_name()?.to_string_lossy().into_owned()
        } else {
            m.run_id.clone()
        },
        run_dir: dir.to_path_buf(),
        created: m.created.clone(),
        updated: rfc3339(updated.as_secs()),
        updated_unix_ms: u64::try_from(updated.as_millis()).unwrap_or(u64::MAX),
        step: step.name.clone(),
        first_message,
        generations: m.steps.iter().map(|s| s.generations).sum(),
        num_turns: m.steps.iter().map(|s| s.num_turns).sum(),
        cost_usd: m.steps.iter().map(|s| s.cost_usd).sum(),
        model: m.model.clone(),
        session_id: step.session_id.clone(),
    })
}

/// The run of `workspace` named `id`: its whole id or a prefix that only it has.
pub fn find(data_dir: &Path, workspace: &Path, id: &str) -> Result<RunDir, ResumeError> {
    let id = id.trim();
    let all = list(data_dir, workspace);
    if let Some(s) = all.iter().find(|s| s.run_id == id) {
        return Ok(RunDir::open(&s.run_dir));
    }
    let matching: Vec<&SessionSummary> = all
        .iter()
        .filter(|s| !id.is_empty() && s.run_id.starts_with(id))
        .collect();
    match matching.as_slice() {
        [one] => Ok(RunDir::open(&one.run_dir)),
        [] => Err(ResumeError::UnknownRun {
            id: id.to_string(),
            workspace: workspace.to_path_buf(),
        }),
        _ => Err(ResumeError::AmbiguousRun {
            id: id.to_string(),
            matches: matching.len(),
        }),
    }
}

/// The listing as lines for a terminal (headless `--resume` without a run id says them).
pub(crate) fn describe(sessions: &[SessionSummary], max: usize) -> String {
    let mut out = String::new();
    for s in sessions.iter().take(max) {
        out.push_str(&format!(
            "  {}  {}  {} gen, ${:.2}  {}\n",
            s.run_id,
            s.updated.replace('T', " ").trim_end_matches('Z'),
            s.generations,
            s.cost_usd,
            s.first_message
        ));
    }
    if sessions.len() > max {
        out.push_str(&format!("  … and {} older\n", sessions.len() - max));
    }
    out
}

/// The checkpoints the ledgers of `workspace` under `data_dir` still need, for turns that ended
/// at or after `since` (seconds since the epoch). Err: a ledger that exists but cannot be read
/// (it may name checkpoints, so nothing may be deleted).
pub fn kept_checkpoints(
    data_dir: &Path,
    workspace: &Path,
    since: u64,
) -> Result<Vec<SnapshotId>, PathBuf> {
    let stamp = rfc3339(since);
    let mut keep = Vec::new();
    for dir in super::run_index::run_dirs(data_dir) {
        let path = dir.join("manifest.json");
        if !path.exists() {
            continue;
        }
        let manifest = Manifest::load(&path).map_err(|_| path.clone())?;
        if manifest.workspace != workspace {
            continue;
        }
        for step in &manifest.steps {
            keep.extend(
                step.undo
                    .named()
                    .filter(|(_, at)| at.is_none_or(|at| at >= since))
                    .map(|(id, _)| id),
            );
            keep.extend(
                step.checkpoints
                    .iter()
                    .filter(|c| c.time >= stamp)
                    .filter_map(|c| c.id),
            );
            keep.extend(
                step.checkpoints
                    .iter()
                    .rev()
                    .filter(|c| c.kind != CheckpointKind::Backup)
                    .find_map(|c| c.id),
            );
        }
    }
    keep.sort();
    keep.dedup();
    Ok(keep)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ledger::{GenerationRecord, StepRecord};

    fn run(data: &Path, id: &str, workspace: &Path, task: &str, cost: f64) -> PathBuf {
        let dir = data.join("runs").join(id);
        std::fs::create_dir_all(dir.join("sessions")).unwrap();
        let m = Manifest {
            run_id: id.into(),
            created: "2026-11-29T10:00:00Z".into(),
            workspace: workspace.to_path_buf(),
            provider: "anthropic".into(),
            model: "claude-x".into(),
            steps: vec![StepRecord {
                name: "step".into(),
                task: task.into(),
                session_id: format!("{id}-latest"),
                generations: 2,
                num_turns: 5,
                cost_usd: cost,
                per_generation: vec![GenerationRecord::default()],
                ..Default::default()
            }],
        };
        m.save(&dir.join("manifest.json")).unwrap();
        dir
    }

    #[test]
    fn lists_this_workspaces_runs_newest_first_and_finds_by_prefix() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path();
        let ws = Path::new("/work/calc");
        run(
            data,
            "20261129-aaa111",
            ws,
            "fix the add bug\nand more",
            1.5,
        );
        run(data, "20261129-bbb222", ws, &"x".repeat(300), 0.25);
        run(
            data,
            "20261129-ccc333",
            Path::new("/elsewhere"),
            "other",
            9.0,
        );
        // A run that never got a step, and a broken ledger: skipped.
        std::fs::create_dir_all(data.join("runs/empty")).unwrap();
        std::fs::create_dir_all(data.join("runs/broken")).unwrap();
        std::fs::write(data.join("runs/broken/manifest.json"), "{").unwrap();
        // The order is the ledgers' modification times: set them.
        let set = |id: &str, secs: u64| {
            let f = std::fs::File::options()
                .write(true)
                .open(data.join("runs").join(id).join("manifest.json"))
                .unwrap();
            f.set_modified(UNIX_EPOCH + std::time::Duration::from_secs(secs))
                .unwrap();
        };
        set("20261129-aaa111", 2_000_000_000);
        set("20261129-bbb222", 1_000_000_000);
        let all = list(data, ws);
        let ids: Vec<&str> = all.iter().map(|s| s.run_id.as_str()).collect();
        assert_eq!(ids, ["20261129-aaa111", "20261129-bbb222"]);
        let a = &all[0];
        assert_eq!(a.first_message, "fix the add bug…");
        assert_eq!((a.generations, a.num_turns, a.cost_usd), (2, 5, 1.5));
        assert_eq!(a.session_id, "20261129-aaa111-latest");
        assert_eq!(a.updated, "2033-05-18T03:33:20Z");
        assert_eq!(all[1].first_message.chars().count(), 121);

        assert_eq!(
            find(data, ws, "20261129-bbb").unwrap().run_id,
            "20261129-bbb222"
        );
        assert_eq!(
            find(data, ws, "20261129-aaa111").unwrap().run_id,
            "20261129-aaa111"
        );
        assert!(matches!(
            find(data, ws, "20261129-"),
            Err(ResumeError::AmbiguousRun { matches: 2, .. })
        ));
        assert!(matches!(
            find(data, ws, "20261129-ccc"),
            Err(ResumeError::UnknownRun { .. })
        ));
        assert!(matches!(
            find(data, ws, ""),
            Err(ResumeError::UnknownRun { .. })
        ));
        let text = describe(&all, 1);
        assert!(
            text.starts_with(
                "  20261129-aaa111  2033-05-18 03:33:20  2 gen, $1.50  fix the add bug…\n"
            ),
            "{text}"
        );
        assert!(text.ends_with("  … and 1 older\n"));
        assert!(list(&data.join("nothing"), ws).is_empty());
    }
}
