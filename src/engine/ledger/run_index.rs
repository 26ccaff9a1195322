//! Where a workspace's runs are: every directory under `<data_dir>/runs`, and the runs kept
//! elsewhere (`--run-dir`), which register themselves in a small index file under the data dir
//! (`run-index.json`, a list of absolute paths). `--continue`, `--resume`, `/resume` and the
//! reopening of an unfinished review read the runs through [`run_dirs`], so a run is found
//! wherever its directory is. A directory that was moved or deleted is skipped when read and
//! dropped from the index at the next registration; a damaged index is read as empty and
//! rewritten.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ledger_lock::LedgerLock;
use crate::engine::fsutil::atomic_write;

/// The index file, under the data dir.
const INDEX: &str = "run-index.json";
/// Its lock (the index is read, changed and rewritten under it).
const LOCK: &str = "run-index.lock";

#[derive(Debug, Default, Serialize, Deserialize)]
struct Index {
    /// Run directories outside `<data_dir>/runs`, absolute.
    runs: Vec<PathBuf>,
}

fn load(data_dir: &Path) -> Index {
    std::fs::read(data_dir.join(INDEX))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// Record the run directory `root` in the index under `data_dir` (once), and drop the entries
/// whose directory is gone.
pub(crate) fn register(data_dir: &Path, root: &Path) -> io::Result<()> {
    let root = std::path::absolute(root)?;
    let root = root.canonicalize().unwrap_or(root);
    std::fs::create_dir_all(data_dir)?;
    let _lock = LedgerLock::acquire_file(&data_dir.join(LOCK))?;
    let mut index = load(data_dir);
    let before = index.runs.len();
    index.runs.retain(|r| r.is_dir());
    if index.runs.contains(&root) {
        if index.runs.len() == before {
            return Ok(());
        }
    } else {
        index.runs.push(root);
    }
    let json = serde_json::to_vec_pretty(&index).map_err(io::Error::other)?;
    atomic_write(&data_dir.join(INDEX), &json)
}

/// Every run directory known under `data_dir`: those under `<data_dir>/runs`, then the indexed
/// ones that still exist, each once.
pub(crate) fn run_dirs(data_dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(data_dir.join("runs"))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    let mut seen: BTreeSet<PathBuf> = out.iter().map(|p| canonical(p)).collect();
    for run in load(data_dir).runs {
        if run.is_dir() && seen.insert(canonical(&run)) {
            out.push(run);
        }
    }
    out
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_elsewhere_are_indexed_once_and_gone_ones_are_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let inside = data.join("runs/r1");
        let elsewhere = tmp.path().join("elsewhere/run-a");
        let gone = tmp.path().join("run-b");
        for d in [&inside, &elsewhere, &gone] {
            std::fs::create_dir_all(d).unwrap();
        }
        assert_eq!(run_dirs(&data), std::slice::from_ref(&inside));
        register(&data, &elsewhere).unwrap();
        register(&data, &elsewhere).unwrap();
        register(&data, &gone).unwrap();
        // A run under the data dir registered too (`--run-dir <data>/runs/r1`) is listed once.
        register(&data, &inside).unwrap();
        let elsewhere = elsewhere.canonicalize().unwrap();
        let gone = gone.canonicalize().unwrap();
        assert_eq!(
            run_dirs(&data),
            [inside.clone(), elsewhere.clone(), gone.clone()]
        );
        // Deleted: skipped at once, dropped from the file at the next registration.
        std::fs::remove_dir(&gone).unwrap();
        assert_eq!(run_dirs(&data), [inside.clone(), elsewhere.clone()]);
        assert_eq!(load(&data).runs.len(), 3);
        register(&data, &elsewhere).unwrap();
        assert_eq!(load(&data).runs.len(), 2);
        // A damaged index reads as empty and is rewritten by the next registration.
        std::fs::write(data.join(INDEX), "{\"runs\": [").unwrap();
        assert_eq!(run_dirs(&data), std::slice::from_ref(&inside));
        register(&data, &elsewhere).unwrap();
        assert_eq!(run_dirs(&data), [inside, elsewhere]);
    }

    #[test]
    fn concurrent_registrations_lose_no_run() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let runs: Vec<PathBuf> = (0..16)
            .map(|i| {
                let d = tmp.path().join(format!("run-{i}"));
                std::fs::create_dir_all(&d).unwrap();
                d.canonicalize().unwrap()
            })
            .collect();
        std::thread::scope(|s| {
            for run in &runs {
                let data = &data;
                s.spawn(move || register(data, run).unwrap());
            }
        });
        let mut found = run_dirs(&data);
        found.sort();
        let mut want = runs.clone();
        want.sort();
        assert_eq!(found, want);
        // The file is whole JSON: no half-written index is ever read.
        assert_eq!(load(&data).runs.len(), 16);
    }
}
