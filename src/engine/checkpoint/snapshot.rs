//! Taking a checkpoint: walk the workspace, apply the caps, read what the stat cache cannot vouch
//! for (on a few threads when there is much of it), store new contents, write the trees bottom-up,
//! save the cache. Files over a cap, unreadable ones and special files are entries without
//! content in the tree and are named in the result, never silently dropped.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

use super::error::CheckpointError;
use super::git::Seen;
use super::index::{CacheReader, CacheWriter, Stat};
use super::object::Objects;
use super::object_id::ObjectId;
use super::path::RelPath;
use super::tree::{Node, Stamp};
use super::tree_writer;
use super::walk::{self, Found, Kind, Plan, Rules};
use super::{Limits, SnapshotId};
use crate::engine::fsutil::{now_unix, rfc3339};

/// From this many files to read, git's index is asked which of them git stores unchanged: from
/// one, so a file's id never depends on how many others changed with it (one pass over the
/// index is cheap).
const GIT_FROM: usize = 1;
/// Below this many files to read, one thread reads them all.
const PARALLEL_FROM: usize = 16;
/// At most this many reader threads.
const MAX_READERS: usize = 4;
/// From this many new objects a walk may write, they go into one pack (see `pack`).
const PACK_FROM: usize = 512;

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

/// Take a checkpoint of `rules.workspace` into `objects`, with the stat cache at `cache_path`;
/// `now` decides which files are too recent to cache. The caller holds the store's lock.
#[cfg(test)]
pub(crate) fn take(
    objects: &Objects,
    cache_path: &Path,
    rules: &Rules,
    limits: &Limits,
    now: Stamp,
) -> Result<Snapshot, CheckpointError> {
    let whole: Arc<dyn Plan> = Arc::new(walk::Whole(|_: &RelPath| {}));
    take_planned(objects, cache_path, rules, limits, now, whole)
}

/// [`take`] with the walk's `plan` (a change feed watches each folder before it is listed).
pub(crate) fn take_planned(
    objects: &Objects,
    cache_path: &Path,
    rules: &Rules,
    limits: &Limits,
    now: Stamp,
    plan: Arc<dyn Plan>,
) -> Result<Snapshot, CheckpointError> {
    let mut clock = Clock::start();
    let scan = walk::scan_planned(rules, limits.max_entries, walk::MAX_WALKERS, plan);
    clock.lap("walk");
    if scan.cut {
        return Err(CheckpointError::TooManyFiles {
            limit: limits.max_entries,
        });
    }
    let ws = &rules.workspace;
    let mut b = Building::default();
    let dirs = b.unreadable(ws, scan.dirs, scan.unreadable);
    // The list of files is the walk's, kept in place (it is the largest thing a walk holds).
    let mut files = scan.entries;
    for found in files.iter().filter(|f| f.kind != Kind::File) {
        match found.kind {
            Kind::Symlink => b.link(objects, ws, found.clone())?,
            _ => b.unstored(found.clone(), SkipReason::Special),
        }
    }
    files.retain(|f| f.kind == Kind::File);
    b.cap(&mut files, limits);
    let mut got = vec![Got::Pending; files.len()];
    let old_count = look_up(cache_path, &mut files, &mut got);
    clock.lap("stat cache read and looked up");
    take_from_git(objects, &mut files, &mut got, now);
    clock.lap("git's index");
    let pending: Vec<usize> = (0..files.len())
        .filter(|&i| matches!(got.get(i), Some(Got::Pending)))
        .collect();
    b.read = pending.len();
    let packing = b.read + dirs.len() >= PACK_FROM && objects.begin_pack().is_ok();
    let to_read: Vec<Found> = pending
        .iter()
        .filter_map(|&i| files.get(i).cloned())
        .collect();
    for (&i, (found, outcome)) in pending.iter().zip(read_all(objects, ws, to_read, limits)) {
        let Some(slot) = got.get_mut(i) else { continue };
        *slot = match outcome {
            Outcome::Stored { id, size, new } => {
                b.new_bytes += if new { size } else { 0 };
                Got::Id {
                    id,
                    size,
                    cache: !found.stat.is_racy(now),
                    hit: false,
                }
            }
            Outcome::Gone => Got::Gone,
            Outcome::Skip(reason) => Got::Skip(reason),
        };
    }
    clock.lap("files read and stored");
    save_cache(cache_path, &files, &got, old_count)?;
    clock.lap("stat cache written");
    // The files and the other entries, each sorted by path, merged into the trees.
    let mut others = std::mem::take(&mut b.nodes);
    others.sort_unstable_by(|x, y| x.0.cmp(&y.0));
    let skipped = &mut b.skipped;
    let mut from_files = files
        .into_iter()
        .zip(got)
        .filter_map(|(found, got)| match got {
            Got::Id { id, size, .. } => Some((found.path, file_node(&found.stat, id, size))),
            Got::Skip(reason) => {
                skipped.push(skip(&found, reason));
                Some((found.path, unstored(Some(found.stat))))
            }
            Got::Gone | Got::Pending => None,
        })
        .peekable();
    let mut others = others.into_iter().peekable();
    let merged = std::iter::from_fn(|| match (from_files.peek(), others.peek()) {
        (Some(f), Some(o)) if o.0 < f.0 => others.next(),
        (Some(_), _) => from_files.next(),
        (None, _) => others.next(),
    });
    let dir_count = dirs.len().saturating_sub(1);
    let root = tree_writer::write(objects, dirs, merged);
    if packing {
        objects
            .finish_pack()
            .map_err(CheckpointError::store(objects.dir()))?;
    }
    let (root, tally) = root?;
    let (files, bytes, entries) = (tally.files, tally.bytes, tally.entries + dir_count);
    clock.lap("trees written");
    tracing::debug!(
        "checkpoint: a full walk of {entries} entries:{}",
        clock.laps
    );
    b.skipped.sort_by(|x, y| x.path.cmp(&y.path));
    Ok(Snapshot {
        id: SnapshotId(root),
        files,
        bytes,
        read: b.read,
        new_bytes: b.new_bytes,
        skipped: b.skipped,
        entries,
    })
}

/// How long each step of a walk took, for the log.
struct Clock {
    at: std::time::Instant,
    laps: String,
}

impl Clock {
    fn start() -> Clock {
        Clock {
            at: std::time::Instant::now(),
            laps: String::new(),
        }
    }

    fn lap(&mut self, what: &str) {
        use std::fmt::Write as _;
        let _ = write!(self.laps, " {what} {} ms,", self.at.elapsed().as_millis());
        self.at = std::time::Instant::now();
    }
}

/// A checkpoint being put together: the entries of its trees, what it skipped, the new cache.
#[derive(Default)]
struct Building {
    nodes: Vec<(RelPath, Node)>,
    skipped: Vec<Skipped>,
    read: usize,
    new_bytes: u64,
}

impl Building {
    /// Record what could not be read; a directory that cannot be listed keeps its place without
    /// content. The directories left to list.
    fn unreadable(
        &mut self,
        ws: &Path,
        mut dirs: Vec<RelPath>,
        unreadable: Vec<(RelPath, io::Error)>,
    ) -> Vec<RelPath> {
        for (path, err) in unreadable {
            if let Some(at) = dirs.iter().position(|d| *d == path) {
                dirs.swap_remove(at);
                let stat = fs::symlink_metadata(path.on(ws)).ok();
                self.nodes
                    .push((path.clone(), unstored(stat.as_ref().map(Stat::of))));
            }
            tracing::debug!("checkpoint: {path} is unreadable: {err}");
            self.skipped.push(Skipped {
                path,
                size: 0,
                reason: SkipReason::Unreadable,
            });
        }
        dirs
    }

    /// An entry kept without content, and why.
    fn unstored(&mut self, found: Found, reason: SkipReason) {
        self.skipped.push(skip(&found, reason));
        self.nodes.push((found.path, unstored(Some(found.stat))));
    }

    /// A symbolic link: its target's bytes, stored.
    fn link(&mut self, objects: &Objects, ws: &Path, found: Found) -> Result<(), CheckpointError> {
        match store_link(objects, ws, &found.path)? {
            Some(id) => self.nodes.push((found.path, Node::Link(id))),
            None => self.unstored(found, SkipReason::Unreadable),
        }
        Ok(())
    }

    /// Apply the caps (smallest files first, so the checkpoint cap leaves out the largest) to
    /// `files`, which are left sorted by path.
    fn cap(&mut self, files: &mut Vec<Found>, limits: &Limits) {
        let mut over = Vec::new();
        let mut total = 0u64;
        files.retain(|f| {
            if f.stat.size > limits.max_file_bytes {
                over.push(f.clone());
                false
            } else {
                total = total.saturating_add(f.stat.size);
                true
            }
        });
        for found in over {
            self.unstored(found, SkipReason::OverFileCap);
        }
        if total > limits.max_checkpoint_bytes {
            files.sort_by(|a, b| (a.stat.size, &a.path).cmp(&(b.stat.size, &b.path)));
            let mut total = 0u64;
            let fit = files
                .iter()
                .take_while(|f| {
                    total = total.saturating_add(f.stat.size);
                    total <= limits.max_checkpoint_bytes
                })
                .count();
            for found in files.split_off(fit) {
                self.unstored(found, SkipReason::OverCheckpointCap);
            }
        }
        files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    }
}

/// What a walk knows of one file's content.
#[derive(Debug, Clone, Copy)]
enum Got {
    /// To be read.
    Pending,
    /// `cache`: whether the next stat cache names it; `hit`: the last one did, as it is.
    Id {
        id: ObjectId,
        size: u64,
        cache: bool,
        hit: bool,
    },
    /// Removed since the walk saw it.
    Gone,
    Skip(SkipReason),
}

/// Take from the stat cache at `path` what it vouches for of `files` (sorted by path), in one
/// pass over both; a file it names with another `lstat` notes the git blob it held. The number
/// of entries the cache had.
fn look_up(path: &Path, files: &mut [Found], got: &mut [Got]) -> usize {
    let mut old = CacheReader::open(path);
    for (f, g) in files.iter_mut().zip(got.iter_mut()) {
        if let Some(rec) = old.find(f.path.as_bytes()) {
            if rec.stat == f.stat {
                *g = Got::Id {
                    id: rec.id,
                    size: f.stat.size,
                    cache: true,
                    hit: true,
                };
            } else {
                f.git = rec.id.git_blob();
            }
        }
    }
    old.drain();
    old.read
}

/// Take from git's store what it holds unchanged of the files still to read (when there are
/// many), and note which blob each other file held, so one that still holds it keeps its id.
fn take_from_git(objects: &Objects, files: &mut [Found], got: &mut [Got], now: Stamp) {
    let pending = got.iter().filter(|g| matches!(g, Got::Pending)).count();
    let Some(repo) = objects.repo().filter(|_| pending >= GIT_FROM) else {
        return;
    };
    // One pass over the index and the files, both sorted by path.
    let mut at = 0;
    repo.each_entry(|rel, e| {
        while files.get(at).is_some_and(|f| f.path.as_bytes() < rel) {
            at += 1;
        }
        let (Some(f), Some(g)) = (files.get_mut(at), got.get_mut(at)) else {
            return;
        };
        if f.path.as_bytes() != rel || !matches!(g, Got::Pending) {
            return;
        }
        if e.matches(seen(&f.stat)) {
            *g = Got::Id {
                id: ObjectId::git(e.blob),
                size: f.stat.size,
                cache: !f.stat.is_racy(now),
                hit: false,
            };
        } else {
            f.git = f.git.or(Some(e.blob));
        }
    });
}

/// Write the next stat cache (in path order) unless it would be the last one, which had
/// `old_count` entries.
fn save_cache(
    path: &Path,
    files: &[Found],
    got: &[Got],
    old_count: usize,
) -> Result<(), CheckpointError> {
    let (mut kept, mut hits) = (0usize, 0usize);
    for g in got {
        if let Got::Id {
            cache: true, hit, ..
        } = g
        {
            kept += 1;
            hits += usize::from(*hit);
        }
    }
    if kept == hits && hits == old_count {
        return Ok(());
    }
    let written = (|| {
        let mut w = CacheWriter::create(path)?;
        for (f, g) in files.iter().zip(got) {
            if let Got::Id {
                id, cache: true, ..
            } = g
                && let Err(e) = w.push(f.path.as_bytes(), &f.stat, id)
            {
                w.abandon();
                return Err(e);
            }
        }
        w.finish()
    })();
    written.map_err(CheckpointError::store(path))
}

/// What git's index compares of `stat`.
fn seen(stat: &Stat) -> Seen {
    Seen {
        size: stat.size,
        ino: stat.ino,
        mtime: (stat.mtime.secs, stat.mtime.nanos),
        ctime: (stat.ctime.secs, stat.ctime.nanos),
    }
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
