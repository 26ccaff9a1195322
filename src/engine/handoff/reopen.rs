//! Finding a review to reopen: a run of this workspace whose last step holds a
//! handoff frozen but never turned over, by a process that is gone.

use std::path::Path;

use super::workbench_locks::{self, TryLock};
use crate::engine::ledger::{Manifest, RunDir};

/// The newest run of `workspace` under `<data_dir>/runs` whose last step has a frozen handoff
/// that no live process reviews (the step's claim is free). Runs whose manifest cannot be read
/// are skipped here (`--continue` reports them).
pub fn frozen_run(data_dir: &Path, workspace: &Path, workbench: Option<&Path>) -> Option<RunDir> {
    let mut best: Option<(std::time::SystemTime, RunDir)> = None;
    for dir in crate::engine::ledger::run_index::run_dirs(data_dir) {
        let manifest = dir.join("manifest.json");
        let Ok(mtime) = std::fs::metadata(&manifest).and_then(|m| m.modified()) else {
            continue;
        };
        if best.as_ref().is_some_and(|(t, _)| *t >= mtime) {
            continue;
        }
        let Ok(m) = Manifest::load(&manifest) else {
            continue;
        };
        if m.workspace != workspace {
            continue;
        }
        let Some(step) = m.steps.last() else { continue };
        let Some(frozen) = &step.frozen else { continue };
        // Only a review `--continue` can reopen: the session that froze it is the step's latest
        // and its transcript is there (a plain start must not fail on a broken old run).
        let run = RunDir::open(&dir);
        if frozen.retired_session != step.session_id
            || !run.transcript_path(&step.session_id).is_file()
        {
            continue;
        }
        if let Some(wb) = workbench
            && !claim_is_free(wb, &step.name)
        {
            continue;
        }
        best = Some((mtime, run));
    }
    best.map(|(_, f)| f)
}

/// No live process holds the step's claim (checked by taking it and letting it go).
fn claim_is_free(workbench: &Path, step: &str) -> bool {
    matches!(
        workbench_locks::claim_exact(workbench, step),
        Ok(TryLock::Acquired(_))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ledger::{FrozenHandoff, StepRecord};

    fn run_with(data: &Path, ws: &Path, frozen: bool) -> RunDir {
        let run = RunDir::create(data, None).unwrap();
        let m = Manifest {
            run_id: run.run_id.clone(),
            workspace: ws.to_path_buf(),
            steps: vec![StepRecord {
                name: "s".into(),
                session_id: "s1".into(),
                frozen: frozen.then(|| FrozenHandoff {
                    retired_session: "s1".into(),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        };
        m.save(&run.manifest_path()).unwrap();
        std::fs::write(run.transcript_path("s1"), "{}\n").unwrap();
        run
    }

    #[test]
    fn finds_the_run_with_a_frozen_handoff_nobody_reviews() {
        let dir = tempfile::tempdir().unwrap();
        let (data, ws, wb) = (
            dir.path().join("d"),
            dir.path().join("w"),
            dir.path().join("wb"),
        );
        assert!(frozen_run(&data, &ws, Some(&wb)).is_none());
        let frozen = run_with(&data, &ws, true);
        // A newer run without one, and one of another workspace with one.
        std::thread::sleep(std::time::Duration::from_millis(20));
        run_with(&data, &ws, false);
        run_with(&data, &dir.path().join("elsewhere"), true);
        let found = frozen_run(&data, &ws, Some(&wb)).expect("found");
        assert_eq!(found.root, frozen.root);
        let step = Manifest::load(&found.manifest_path()).unwrap().steps.pop();
        assert_eq!(step.map(|s| s.name).as_deref(), Some("s"));
        // A live process holds the step: its review is its own.
        let held = workbench_locks::claim_step(&wb, "s").unwrap();
        assert!(frozen_run(&data, &ws, Some(&wb)).is_none());
        drop(held);
        assert!(frozen_run(&data, &ws, Some(&wb)).is_some());
        assert!(
            !workbench_locks::claim_path(&wb, "s").exists(),
            "the check leaves no lock file"
        );
        // A run whose session cannot be continued is not offered (a plain start must start).
        std::fs::remove_file(frozen.transcript_path("s1")).unwrap();
        assert!(frozen_run(&data, &ws, Some(&wb)).is_none());
    }
}
