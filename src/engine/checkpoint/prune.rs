//! Cleaning the store: a mark and sweep that deletes the contents and listings no kept
//! checkpoint needs.
//!
//! - *Kept*: the checkpoints the caller names (those the ledgers of the workspace still hold;
//!   the session decides which, see [`KEEP_DAYS`]) and every checkpoint the store's log says was
//!   taken within [`GRACE`]: a process may have taken one and not yet written its ledger.
//! - *Mark*: every listing and content reachable from a kept checkpoint.
//! - *Sweep*: every other object whose file is older than [`GRACE`] is deleted, with leftover
//!   temporary files; the stat cache forgets the contents it named, and the log keeps the lines of
//!   checkpoints still stored.
//! - The whole runs under the store's lock, so no snapshot or restore of another process runs
//!   meanwhile, and it runs at most once a day per store (the `pruned` file's time says when),
//!   and not before the store is older than the grace time (the `workspace` file, written when
//!   the store was made, says when): until then nothing in it can be deleted, and a first
//!   session's checkpoints need not wait for a clean-up that finds nothing.

use std::collections::HashSet;
use std::fs;
use std::io::{BufRead, BufReader};
use std::time::{Duration, SystemTime};

use super::error::CheckpointError;
use super::index::{CacheReader, CacheWriter};
use super::object_id::ObjectId;
use super::pack::Packs;
use super::tree::{self, Node};
use super::{Checkpoints, SnapshotId};
use crate::engine::fsutil::{atomic_write_unsynced, now_unix, rfc3339};

/// The turns of the last this many days keep their checkpoints (older ones leave the undo stack).
pub const KEEP_DAYS: u64 = 30;
/// A checkpoint taken this recently is kept whether or not a ledger names it yet.
const GRACE: Duration = Duration::from_secs(24 * 3600);
/// A store is cleaned at most this often.
const EVERY: Duration = Duration::from_secs(24 * 3600);

/// What a clean-up did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Pruned {
    /// Objects deleted, and their bytes.
    pub deleted: usize,
    pub bytes: u64,
    /// Objects kept.
    pub kept: usize,
}

impl Checkpoints {
    /// Delete what neither `keep` nor a checkpoint of the last day needs. None when the store was
    /// cleaned less than a day ago and `force` is false.
    pub fn prune(
        &self,
        keep: &[SnapshotId],
        force: bool,
    ) -> Result<Option<Pruned>, CheckpointError> {
        let _lock = self.lock()?;
        let dir = &self.inner.dir;
        let stamp = dir.join("pruned");
        let recent = fs::metadata(&stamp)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age < EVERY);
        // A store younger than the grace time holds nothing old enough to delete.
        let young = fs::metadata(dir.join("workspace"))
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age < GRACE);
        if (recent || young) && !force {
            return Ok(None);
        }
        let since = rfc3339(now_unix().0.saturating_sub(GRACE.as_secs()));
        let mut roots: Vec<ObjectId> = keep.iter().map(|s| s.0).collect();
        roots.extend(logged_since(dir, &since).into_iter().map(|s| s.0));
        let marked = self.mark(&roots);
        let pruned = self.sweep(&marked)?;
        let cache_path = dir.join("stat-cache");
        forget_deleted(&cache_path, &marked).map_err(CheckpointError::store(&cache_path))?;
        keep_log_lines(dir, &marked);
        atomic_write_unsynced(&stamp, rfc3339(now_unix().0).as_bytes())
            .map_err(CheckpointError::store(&stamp))?;
        Ok(Some(pruned))
    }

    /// Every object reachable from `roots` (a missing or damaged listing marks what it can).
    fn mark(&self, roots: &[ObjectId]) -> HashSet<ObjectId> {
        let objects = &self.inner.objects;
        let mut marked = HashSet::new();
        let mut todo: Vec<ObjectId> = roots.to_vec();
        while let Some(id) = todo.pop() {
            if !marked.insert(id) {
                continue;
            }
            let Ok(tree) = tree::load(objects, &id) else {
                continue;
            };
            for (_, node) in tree {
                match node {
                    Node::Dir(sub) => todo.push(sub),
                    Node::File { id, .. } | Node::Link(id) => {
                        marked.insert(id);
                    }
                    Node::Unstored { .. } => {}
                }
            }
        }
        marked
    }

    /// Delete every object not in `marked` and older than the grace time.
    fn sweep(&self, marked: &HashSet<ObjectId>) -> Result<Pruned, CheckpointError> {
        let root = self.inner.objects.dir();
        let mut done = Pruned::default();
        let fans = fs::read_dir(root).map_err(CheckpointError::store(root))?;
        for fan in fans.flatten() {
            let fan_name = fan.file_name().to_string_lossy().into_owned();
            if fan.path() == self.inner.objects.pack_dir() {
                sweep_packs(&fan.path(), marked, &mut done);
                continue;
            }
            let Ok(entries) = fs::read_dir(fan.path()) else {
                // A leftover temporary file at the top.
                if fan_name.starts_with("tmp-") && old(&fan.path()) {
                    let _ = fs::remove_file(fan.path());
                }
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let id: Option<ObjectId> = format!("{fan_name}{name}").parse().ok();
                if id.is_some_and(|id| marked.contains(&id)) {
                    done.kept += 1;
                    continue;
                }
                let path = entry.path();
                if !old(&path) {
                    done.kept += 1;
                    continue;
                }
                let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                if fs::remove_file(&path).is_ok() {
                    done.deleted += 1;
                    done.bytes += size;
                }
            }
            let _ = fs::remove_dir(fan.path());
        }
        Ok(done)
    }
}

/// Rewrite the stat cache at `path` without the entries whose content is not in `marked` (when
/// there are any).
fn forget_deleted(path: &std::path::Path, marked: &HashSet<ObjectId>) -> std::io::Result<()> {
    let mut old = CacheReader::open(path);
    let mut all_kept = true;
    while let Some(rec) = old.next_record() {
        all_kept &= marked.contains(&rec.id);
    }
    if all_kept {
        return Ok(());
    }
    let mut old = CacheReader::open(path);
    let mut w = CacheWriter::create(path)?;
    while let Some(rec) = old.next_record() {
        if marked.contains(&rec.id)
            && let Err(e) = w.push(&rec.path, &rec.stat, &rec.id)
        {
            w.abandon();
            return Err(e);
        }
    }
    w.finish()
}

/// Delete every pack none of whose objects is in `marked` (a pack is kept or deleted whole), and
/// the leftovers of packs never completed; both only when older than the grace time.
fn sweep_packs(dir: &std::path::Path, marked: &HashSet<ObjectId>, done: &mut Pruned) {
    let mut indexed = HashSet::new();
    for index in Packs::list(dir) {
        let (count, needed) = index.count_and_any(marked);
        indexed.insert(index.pack.clone());
        if needed || !old(&index.pack) {
            done.kept += count;
            continue;
        }
        let size = fs::metadata(&index.pack).map(|m| m.len()).unwrap_or(0);
        if fs::remove_file(index.pack.with_extension("idx")).is_ok() {
            let _ = fs::remove_file(&index.pack);
            done.deleted += count;
            done.bytes += size;
        }
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let complete = indexed.contains(&path) || indexed.contains(&path.with_extension("pack"));
        if !complete && old(&path) {
            let _ = fs::remove_file(&path);
        }
    }
}

/// Whether the file at `path` was last written before the grace time.
fn old(path: &std::path::Path) -> bool {
    fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age >= GRACE)
}

/// One line of the log, as far as a clean-up reads it.
#[derive(serde::Deserialize)]
struct LogLine {
    at: String,
    id: SnapshotId,
}

/// The checkpoints the log says were taken at or after `since` (an RFC 3339 time).
fn logged_since(dir: &std::path::Path, since: &str) -> Vec<SnapshotId> {
    let Ok(file) = fs::File::open(dir.join("checkpoints.log")) else {
        return Vec::new();
    };
    BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str::<LogLine>(&l).ok())
        .filter(|l| l.at.as_str() >= since)
        .map(|l| l.id)
        .collect()
}

/// Rewrite the log with the lines of checkpoints still stored (best effort: the log is for
/// people and for the grace rule, which only reads recent lines).
fn keep_log_lines(dir: &std::path::Path, marked: &HashSet<ObjectId>) {
    let path = dir.join("checkpoints.log");
    let Ok(text) = fs::read_to_string(&path) else {
        return;
    };
    let kept: String = text
        .lines()
        .filter(|l| {
            serde_json::from_str::<LogLine>(l)
                .ok()
                .is_none_or(|line| marked.contains(&line.id.0))
        })
        .flat_map(|l| [l, "\n"])
        .collect();
    if kept.len() != text.len()
        && let Err(e) = atomic_write_unsynced(&path, kept.as_bytes())
    {
        tracing::warn!("checkpoint log: {e}");
    }
}
