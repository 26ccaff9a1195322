//! What a checkpoint is made of, whichever way it is taken (a full walk, `full_walk`, or an
//! update from the change feed, `update`): files read and stored (on a few threads when there are
//! many), symbolic links stored as their target, and entries kept without content. Files over a
//! cap, unreadable ones and special files are entries without content in the tree and are named
//! in the result, never silently dropped.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

use super::error::CheckpointError;
use super::index::Stat;
use super::object::Objects;
use super::object_id::ObjectId;
use super::path::RelPath;
use super::tree::{Node, Stamp};
use super::walk::Found;
#[cfg(test)]
use super::walk::{self, Rules};
use super::{Limits, SnapshotId};
use crate::engine::fsutil::{now_unix, rfc3339};

/// Below this many files to read, one thread reads them all.
const PARALLEL_FROM: usize = 16;
/// At most this many reader threads.
const MAX_READERS: usize = 4;

/// A checkpoint just taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub id: SnapshotId,
    /// Files and symbolic links stored.
    pub files: usize,
    /// Their bytes (what the checkpoint cap counts).
    pub bytes: u64,
    /// Files read this time (the others were vouched for by the stat cache).
    pub read: usize,
    /// Bytes the store did not hold before.
    pub new_bytes: u64,
    /// What is in the workspace but not in the checkpoint, and why.
    pub skipped: Vec<Skipped>,
    /// Entries in its trees: files, links, folders and unstored entries (the root not counted).
    pub(crate) entries: usize,
}

/// An entry the checkpoint saw but could not store: a restore leaves it as it finds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub path: RelPath,
    pub size: u64,
    pub reason: SkipReason,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Larger than [`Limits::max_file_bytes`].
    OverFileCap,
    /// Would have taken the checkpoint past [`Limits::max_checkpoint_bytes`] (files are taken
    /// smallest first, so the largest are the ones left out).
    OverCheckpointCap,
    /// Could not be read (permissions, an I/O error); for a directory, nothing in it is stored.
    Unreadable,
    /// A socket, fifo or device: not file content.
    Special,
}

/// The clock, as the stat cache compares it.
pub(crate) fn now() -> Stamp {
    let (secs, nanos) = now_unix();
    Stamp {
        secs: i64::try_from(secs).unwrap_or(i64::MAX),
        nanos,
    }
}

/// Take a checkpoint of `rules.workspace` into `objects` by a full walk, with the stat cache at
/// `cache_path`; `now` decides which files are too recent to cache. The caller holds the store's
/// lock.
#[cfg(test)]
pub(crate) fn take(
    objects: &Objects,
    cache_path: &Path,
    rules: &Rules,
    limits: &Limits,
    now: Stamp,
) -> Result<Snapshot, CheckpointError> {
    let whole = walk::Whole(|_: &RelPath| {});
    super::full_walk::take(objects, cache_path, rules, limits, now, &whole)
}

/// Store the target of the symbolic link `path`; None when it cannot be read.
pub(super) fn store_link(
    objects: &Objects,
    ws: &Path,
    path: &RelPath,
) -> Result<Option<ObjectId>, CheckpointError> {
    let Ok(target) = fs::read_link(path.on(ws)) else {
        return Ok(None);
    };
    let bytes = target.as_os_str().as_bytes();
    let id = ObjectId::of(bytes);
    objects
        .put(&id, bytes)
        .map_err(CheckpointError::store(objects.dir()))?;
    Ok(Some(id))
}

pub(super) fn skip(found: &Found, reason: SkipReason) -> Skipped {
    Skipped {
        path: found.path.clone(),
        size: found.stat.size,
        reason,
    }
}

pub(super) fn unstored(stat: Option<Stat>) -> Node {
    let stat = stat.unwrap_or(Stat {
        size: 0,
        mtime: Stamp { secs: 0, nanos: 0 },
        ctime: Stamp { secs: 0, nanos: 0 },
        ino: 0,
        dev: 0,
        mode: 0,
    });
    Node::Unstored {
        mode: stat.mode & 0o7777,
        size: stat.size,
        mtime: stat.mtime,
    }
}

pub(super) fn file_node(stat: &Stat, id: ObjectId, size: u64) -> Node {
    Node::File {
        mode: stat.mode & 0o7777,
        id,
        size,
    }
}

pub(super) enum Outcome {
    Stored {
        id: ObjectId,
        size: u64,
        new: bool,
    },
    /// Removed since the walk saw it.
    Gone,
    Skip(SkipReason),
}

/// Read and store `files`, on several threads when there are many.
pub(super) fn read_all(
    objects: &Objects,
    ws: &Path,
    files: Vec<Found>,
    limits: &Limits,
) -> Vec<(Found, Outcome)> {
    let readers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_READERS);
    if files.len() < PARALLEL_FROM || readers < 2 {
        return files
            .into_iter()
            .map(|f| {
                let r = read_one(objects, ws, &f, limits);
                (f, r)
            })
            .collect();
    }
    let next = AtomicUsize::new(0);
    let mut results: Vec<(usize, Outcome)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..readers)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(f) = files.get(i) else { break };
                        done.push((i, read_one(objects, ws, f, limits)));
                    }
                    done
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    let mut results = results.into_iter().peekable();
    let mut out = Vec::with_capacity(files.len());
    for (i, f) in files.into_iter().enumerate() {
        // A reader that died (it cannot panic on a file, but a thread can fail) leaves a gap: the
        // file is then read here.
        let read = match results.next_if(|(at, _)| *at == i) {
            Some((_, r)) => r,
            None => read_one(objects, ws, &f, limits),
        };
        out.push((f, read));
    }
    out
}

/// Read one file (never following a link, never blocking on a fifo swapped in) and store it.
fn read_one(objects: &Objects, ws: &Path, found: &Found, limits: &Limits) -> Outcome {
    let opened = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(found.path.on(ws));
    let file = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Outcome::Gone,
        Err(_) => return Outcome::Skip(SkipReason::Unreadable),
    };
    match read_capped(file, limits.max_file_bytes) {
        Ok(Some(bytes)) => {
            if let Some(blob) = found.git
                && ObjectId::git(blob).names(&bytes)
            {
                return Outcome::Stored {
                    id: ObjectId::git(blob),
                    size: bytes.len() as u64,
                    new: false,
                };
            }
            let id = ObjectId::of(&bytes);
            match objects.put(&id, &bytes) {
                Ok(new) => Outcome::Stored {
                    id,
                    size: bytes.len() as u64,
                    new,
                },
                Err(e) => {
                    tracing::warn!("checkpoint: cannot store {}: {e}", found.path);
                    Outcome::Skip(SkipReason::Unreadable)
                }
            }
        }
        Ok(None) => Outcome::Skip(SkipReason::OverFileCap),
        Err(_) => Outcome::Skip(SkipReason::Unreadable),
    }
}

/// The file's bytes, or None when it holds more than `cap` (it grew since the walk).
fn read_capped(file: File, cap: u64) -> io::Result<Option<Vec<u8>>> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other("not a regular file any more"));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(cap)).unwrap_or(0));
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= cap).then_some(bytes))
}

/// Append one line to the store's log of checkpoints (for people and for a later clean-up: which
/// checkpoints exist, when and why they were taken). Best effort.
pub(crate) fn log(store_dir: &Path, label: &str, snap: &Snapshot, route: &str) {
    let line = serde_json::json!({
        "route": route,
        "at": rfc3339(now_unix().0),
        "id": snap.id,
        "label": label,
        "files": snap.files,
        "bytes": snap.bytes,
        "read": snap.read,
        "skipped": snap.skipped.len(),
    });
    let appended = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(store_dir.join("checkpoints.log"))
        .and_then(|mut f| writeln!(f, "{line}"));
    if let Err(e) = appended {
        tracing::warn!("checkpoint log: {e}");
    }
}
