//! `jobs.json` in a run's jobs folder: every job of the run, rewritten when one starts or ends.
//! A later process on the same run reads it back; a job it says was running died with the
//! process that started it, and one its process stopped on leaving ended with it: both are read
//! as [`JobState::Gone`].

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::output::OutputLog;
use super::{Job, JobState};

/// The file's name in the jobs folder.
pub(super) const FILE: &str = "jobs.json";

/// One job as the file keeps it.
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    id: u32,
    command: String,
    /// `running`, `exited`, `killed`, `stopped`, `unknown`, `gone`.
    state: String,
    code: Option<i32>,
    signal: Option<i32>,
    started_unix: u64,
    ended_unix: Option<u64>,
    bytes: u64,
    lines: u64,
    url: Option<String>,
    log: PathBuf,
}

fn entry(job: &Job) -> Entry {
    let (state, code, signal) = match job.state {
        _ if job.leaving => ("gone", None, None),
        JobState::Running => ("running", None, None),
        JobState::Exited { code } => ("exited", Some(code), None),
        JobState::Killed { signal } => ("killed", None, Some(signal)),
        JobState::Stopped => ("stopped", None, None),
        JobState::Unknown => ("unknown", None, None),
        JobState::Gone => ("gone", None, None),
    };
    Entry {
        id: job.id,
        command: job.command.clone(),
        state: state.into(),
        code,
        signal,
        started_unix: job.started_unix,
        ended_unix: job.ended_unix,
        bytes: job.log.total(),
        lines: job.log.lines(),
        url: job.log.url().map(str::to_string),
        log: job.log.path().to_path_buf(),
    }
}

/// Write `jobs` to `path` (best effort: the jobs run on without their record).
pub(super) fn save(path: &Path, jobs: &[Job]) {
    let entries: Vec<Entry> = jobs.iter().map(entry).collect();
    if let Ok(bytes) = serde_json::to_vec_pretty(&entries)
        && let Err(e) = crate::engine::fsutil::atomic_write_unsynced(path, &bytes)
    {
        tracing::warn!("cannot record the jobs in {}: {e}", path.display());
    }
}

/// The jobs an earlier process recorded in `path`; the running ones are gone.
pub(super) fn load(path: &Path) -> Vec<Job> {
    let Ok(bytes) = std::fs::read(path) else {
        return Vec::new();
    };
    let entries: Vec<Entry> = serde_json::from_slice(&bytes).unwrap_or_default();
    entries
        .into_iter()
        .map(|e| {
            let state = match (e.state.as_str(), e.code, e.signal) {
                ("exited", Some(code), _) => JobState::Exited { code },
                ("killed", _, Some(signal)) => JobState::Killed { signal },
                ("stopped", _, _) => JobState::Stopped,
                ("running" | "gone", _, _) => JobState::Gone,
                _ => JobState::Unknown,
            };
            Job {
                id: e.id,
                command: e.command,
                started_unix: e.started_unix,
                started: Instant::now(),
                ended_unix: e.ended_unix,
                state,
                log: OutputLog::on_disk(e.log, e.bytes, e.lines, e.url),
                pgid: None,
                ports: Vec::new(),
                cursor: e.bytes,
                stop: None,
                done: None,
                end_told: true,
                leaving: false,
                formerly: None,
            }
        })
        .collect()
}
