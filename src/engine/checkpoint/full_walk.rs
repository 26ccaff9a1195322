//! A checkpoint by a full walk, streamed: the walk hands its entries in path order, and each is
//! looked up in the stat cache and git's index (both sorted by path, read alongside), read when
//! neither vouches for it (a batch at a time, on a few threads), written into the trees and the
//! next stat cache, and forgotten. What is held is a batch of entries and the directories on the
//! way to the current one, never a list of every file.
//!
//! - *The checkpoint cap* takes files smallest first, which needs every size before any file can
//!   be left out. The walk goes on as if the cap were not in play and stops once the files pass
//!   it; then a walk of sizes alone finds the line (files below a size, and of that size the
//!   first in path order), and a third walk takes the checkpoint by it. Only a workspace over the
//!   cap pays for that.
//! - *The stat cache* is written only when it would change (every file it vouched for still as
//!   it was, nothing new to add): until the first difference nothing is written, and at the first
//!   one the entries vouched for so far, which are the old cache's first ones, are copied.
//! - *Objects*: from [`PACK_FROM`] files read or directories walked, or in a cold walk (the stat
//!   cache vouched for less than half of its files, so its trees are new too) longer than one
//!   batch, the walk's new objects go into one pack.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use super::error::CheckpointError;
use super::git::{Entries, Entry, Repo, Seen};
use super::index::{CacheReader, CacheWriter, Stat};
use super::object::Objects;
use super::object_id::ObjectId;
use super::path::RelPath;
use super::snapshot::{
    Outcome, SkipReason, Skipped, Snapshot, file_node, read_all, skip, store_link, unstored,
};
use super::tree::{Node, Stamp};
use super::tree_writer::TreeWriter;
use super::walk::{self, Event, Found, Kind, MAX_WALKERS, Plan, Rules};
use super::{Limits, SnapshotId};

/// From this many files read or directories walked, a walk's new objects go into one pack.
const PACK_FROM: usize = 512;
/// Files to read gathered before they are read (on a few threads) and written out (a few in
/// tests, so their walks take several batches).
const BATCH_READS: usize = if cfg!(test) { 16 } else { 2048 };
/// At most this many entries wait to be written out.
const BATCH_ENTRIES: usize = if cfg!(test) { 40 } else { 16384 };

/// Take a checkpoint of `rules.workspace` by a full walk with `plan` (a change feed watches each
/// folder before it is listed), with the stat cache at `cache_path`; `now` decides which files
/// are too recent to cache. The caller holds the store's lock.
pub(crate) fn take(
    objects: &Objects,
    cache_path: &Path,
    rules: &Rules,
    limits: &Limits,
    now: Stamp,
    plan: &dyn Plan,
) -> Result<Snapshot, CheckpointError> {
    let mut cap = Cap::Open;
    loop {
        let mut pass = Pass::new(objects, cache_path, limits, now, cap);
        let taken = pass.run(rules, plan);
        if pass.packing
            && let Err(e) = objects.finish_pack()
            && matches!(taken, Ok(Some(_)))
        {
            return Err(CheckpointError::store(objects.dir())(e));
        }
        match taken {
            Ok(Some(snap)) => return Ok(snap),
            Ok(None) => {
                tracing::debug!("checkpoint: the checkpoint cap is in play: sizes walked first");
                cap = fit(rules, limits, plan)?;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Which files the checkpoint cap leaves in.
#[derive(Debug, Clone, Copy)]
enum Cap {
    /// Not known to be in play: the pass stops should the files pass it.
    Open,
    /// In play: files smaller than `size` are in, and of those of `size` the first `left`.
    Fit { size: u64, left: usize },
}

/// The line the checkpoint cap draws, from a walk of the files' sizes.
fn fit(rules: &Rules, limits: &Limits, plan: &dyn Plan) -> Result<Cap, CheckpointError> {
    let mut sizes = Vec::new();
    let cut = walk::walk(rules, limits.max_entries, MAX_WALKERS, plan, &mut |e| {
        if let Event::Entry(f) = e
            && f.kind == Kind::File
            && f.stat.size <= limits.max_file_bytes
        {
            sizes.push(f.stat.size);
        }
        true
    });
    if cut {
        return Err(CheckpointError::TooManyFiles {
            limit: limits.max_entries,
        });
    }
    sizes.sort_unstable();
    let mut total = 0u64;
    let fit = sizes
        .iter()
        .take_while(|&&s| {
            total = total.saturating_add(s);
            total <= limits.max_checkpoint_bytes
        })
        .count();
    Ok(match sizes.get(fit) {
        Some(&size) => Cap::Fit {
            size,
            left: fit - sizes.partition_point(|&s| s < size),
        },
        None => Cap::Fit {
            size: u64::MAX,
            left: usize::MAX,
        },
    })
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
}

/// An entry waiting to be written out.
enum Item {
    Dir(RelPath),
    Node(RelPath, Node),
    /// `gap`: the stat cache named a file before it that this walk did not take from it.
    File {
        found: Found,
        got: Got,
        gap: bool,
    },
}

/// One walk taking a checkpoint.
struct Pass<'a> {
    objects: &'a Objects,
    limits: &'a Limits,
    now: Stamp,
    cap: Cap,
    /// The files' bytes so far (while the cap is not known to be in play).
    total: u64,
    cache: CacheReader,
    /// Files the stat cache vouched for so far, of `files` within the caps.
    hits: usize,
    files: usize,
    git: Git,
    items: Vec<Item>,
    /// Files among `items` to read.
    to_read: usize,
    read: usize,
    dirs: usize,
    new_bytes: u64,
    skipped: Vec<Skipped>,
    cache_out: CacheOut<'a>,
    packing: bool,
    laps: Laps,
}

impl<'a> Pass<'a> {
    fn new(
        objects: &'a Objects,
        cache_path: &'a Path,
        limits: &'a Limits,
        now: Stamp,
        cap: Cap,
    ) -> Pass<'a> {
        Pass {
            objects,
            limits,
            now,
            cap,
            total: 0,
            cache: CacheReader::open(cache_path),
            hits: 0,
            files: 0,
            git: Git::Unopened,
            items: Vec::new(),
            to_read: 0,
            read: 0,
            dirs: 0,
            new_bytes: 0,
            skipped: Vec::new(),
            cache_out: CacheOut {
                path: cache_path,
                writer: None,
                hits: 0,
            },
            packing: false,
            laps: Laps::default(),
        }
    }

    /// The checkpoint, or None when the files passed the checkpoint cap (with [`Cap::Open`]).
    fn run(&mut self, rules: &Rules, plan: &dyn Plan) -> Result<Option<Snapshot>, CheckpointError> {
        let taken = self.walk(rules, plan);
        if !matches!(taken, Ok(Some(_))) {
            self.cache_out.abandon();
        }
        taken
    }

    fn walk(
        &mut self,
        rules: &Rules,
        plan: &dyn Plan,
    ) -> Result<Option<Snapshot>, CheckpointError> {
        let ws = rules.workspace.as_path();
        let started = Instant::now();
        let mut tree = TreeWriter::new(self.objects);
        let mut failed = None;
        let mut over_cap = false;
        let cut = walk::walk(
            rules,
            self.limits.max_entries,
            MAX_WALKERS,
            plan,
            &mut |event| {
                let added = self.add(ws, event).and_then(|fits| {
                    over_cap = !fits;
                    if fits && (self.to_read >= BATCH_READS || self.items.len() >= BATCH_ENTRIES) {
                        self.flush(ws, &mut tree, false)?;
                    }
                    Ok(fits)
                });
                added.unwrap_or_else(|e| {
                    failed = Some(e);
                    false
                })
            },
        );
        if let Some(e) = failed {
            return Err(e);
        }
        if over_cap {
            return Ok(None);
        }
        if cut {
            return Err(CheckpointError::TooManyFiles {
                limit: self.limits.max_entries,
            });
        }
        self.flush(ws, &mut tree, true)?;
        self.laps.walk =
            (started.elapsed()).saturating_sub(self.laps.look_up + self.laps.read + self.laps.out);
        let at = Instant::now();
        let (root, tally) = tree.finish()?;
        self.cache.drain();
        let old = self.cache.read;
        self.cache_out
            .finish(old)
            .map_err(CheckpointError::store(self.cache_out.path))?;
        self.laps.out += at.elapsed();
        let entries = tally.entries + self.dirs;
        tracing::debug!(
            "checkpoint: a full walk of {entries} entries ({} read): {}",
            self.read,
            self.laps
        );
        let mut skipped = std::mem::take(&mut self.skipped);
        skipped.sort_by(|x, y| x.path.cmp(&y.path));
        Ok(Some(Snapshot {
            id: SnapshotId(root),
            files: tally.files,
            bytes: tally.bytes,
            read: self.read,
            new_bytes: self.new_bytes,
            skipped,
            entries,
        }))
    }

    /// Take in one event of the walk; false when the files passed the checkpoint cap.
    fn add(&mut self, ws: &Path, event: Event) -> Result<bool, CheckpointError> {
        match event {
            Event::Dir(path) => {
                self.dirs += usize::from(!path.is_root());
                self.items.push(Item::Dir(path));
            }
            Event::Unreadable { path, dir, err } => {
                tracing::debug!("checkpoint: {path} is unreadable: {err}");
                if dir {
                    // A directory that cannot be listed keeps its place without content.
                    let stat = fs::symlink_metadata(path.on(ws)).ok();
                    let node = unstored(stat.as_ref().map(Stat::of));
                    self.items.push(Item::Node(path.clone(), node));
                }
                self.skipped.push(Skipped {
                    path,
                    size: 0,
                    reason: SkipReason::Unreadable,
                });
            }
            Event::Entry(found) => match found.kind {
                Kind::Symlink => match store_link(self.objects, ws, &found.path)? {
                    Some(id) => self.items.push(Item::Node(found.path, Node::Link(id))),
                    None => self.unstored(found, SkipReason::Unreadable),
                },
                Kind::Special => self.unstored(found, SkipReason::Special),
                Kind::File => return Ok(self.file(found)),
            },
        }
        Ok(true)
    }

    /// An entry kept without content, and why.
    fn unstored(&mut self, found: Found, reason: SkipReason) {
        self.skipped.push(skip(&found, reason));
        self.items
            .push(Item::Node(found.path, unstored(Some(found.stat))));
    }

    /// A file: the caps applied, then what the stat cache and git's index say of it. False when
    /// the files passed the checkpoint cap.
    fn file(&mut self, mut found: Found) -> bool {
        let size = found.stat.size;
        if size > self.limits.max_file_bytes {
            self.unstored(found, SkipReason::OverFileCap);
            return true;
        }
        match &mut self.cap {
            Cap::Open => {
                self.total = self.total.saturating_add(size);
                if self.total > self.limits.max_checkpoint_bytes {
                    return false;
                }
            }
            Cap::Fit { size: line, left } => {
                let fits = size < *line || (size == *line && *left > 0);
                if size == *line && *left > 0 {
                    *left -= 1;
                }
                if !fits {
                    self.unstored(found, SkipReason::OverCheckpointCap);
                    return true;
                }
            }
        }
        let at = Instant::now();
        self.files += 1;
        let mut got = Got::Pending;
        let mut gap = false;
        if let Some(rec) = self.cache.find(found.path.as_bytes()) {
            if rec.stat == found.stat {
                got = Got::Id {
                    id: rec.id,
                    size,
                    cache: true,
                    hit: true,
                };
                self.hits += 1;
                gap = self.cache.read != self.hits;
            } else {
                found.git = rec.id.git_blob();
            }
        }
        if matches!(got, Got::Pending)
            && let Some(e) = self.git.find(self.objects.repo(), found.path.as_bytes())
        {
            if e.matches(seen(&found.stat)) {
                got = Got::Id {
                    id: ObjectId::git(e.blob),
                    size,
                    cache: !found.stat.is_racy(self.now),
                    hit: false,
                };
            } else {
                found.git = found.git.or(Some(e.blob));
            }
        }
        self.to_read += usize::from(matches!(got, Got::Pending));
        self.items.push(Item::File { found, got, gap });
        self.laps.look_up += at.elapsed();
        true
    }

    /// Read the files waiting, then write every entry waiting into the trees and the cache.
    fn flush(
        &mut self,
        ws: &Path,
        tree: &mut TreeWriter,
        last: bool,
    ) -> Result<(), CheckpointError> {
        let items = std::mem::take(&mut self.items);
        let at = Instant::now();
        self.read += self.to_read;
        self.to_read = 0;
        // Many files to read or folders, or a cold walk (the stat cache vouched for less than
        // half of its files) longer than a batch: many new objects, packed.
        let cold = !last && self.hits < self.files / 2;
        if !self.packing && (self.read + self.dirs + 1 >= PACK_FROM || cold) {
            self.packing = self.objects.begin_pack().is_ok();
        }
        let to_read: Vec<Found> = items
            .iter()
            .filter_map(|i| match i {
                Item::File {
                    found,
                    got: Got::Pending,
                    ..
                } => Some(found.clone()),
                _ => None,
            })
            .collect();
        let mut outcomes = read_all(self.objects, ws, to_read, self.limits).into_iter();
        self.laps.read += at.elapsed();
        let at = Instant::now();
        for item in items {
            let (found, got, gap) = match item {
                Item::Dir(path) => {
                    tree.dir(&path)?;
                    continue;
                }
                Item::Node(path, node) => {
                    tree.node(&path, node)?;
                    continue;
                }
                Item::File { found, got, gap } => (found, got, gap),
            };
            let got = match got {
                Got::Id { .. } => got,
                Got::Pending => match outcomes.next().map(|(_, o)| o) {
                    Some(Outcome::Stored { id, size, new }) => {
                        self.new_bytes += if new { size } else { 0 };
                        Got::Id {
                            id,
                            size,
                            cache: !found.stat.is_racy(self.now),
                            hit: false,
                        }
                    }
                    Some(Outcome::Skip(reason)) => {
                        self.skipped.push(skip(&found, reason));
                        tree.node(&found.path, unstored(Some(found.stat)))?;
                        continue;
                    }
                    // Removed since the walk saw it.
                    Some(Outcome::Gone) | None => continue,
                },
            };
            if let Got::Id {
                id,
                size,
                cache,
                hit,
            } = got
            {
                if cache {
                    self.cache_out
                        .keep(&found, &id, hit, gap)
                        .map_err(CheckpointError::store(self.cache_out.path))?;
                }
                tree.node(&found.path, file_node(&found.stat, id, size))?;
            }
        }
        self.laps.out += at.elapsed();
        Ok(())
    }
}

/// Git's index, opened when a file is first missing from the stat cache.
enum Git {
    Unopened,
    Open {
        entries: Entries,
        current: Option<Entry>,
    },
    /// No index, or all of it passed.
    Done,
}

impl Git {
    /// The usable entry for `path` (asked in path order).
    fn find(&mut self, repo: Option<&Repo>, path: &[u8]) -> Option<Entry> {
        if let Git::Unopened = self {
            *self = match repo.and_then(Repo::entries) {
                Some(entries) => Git::Open {
                    entries,
                    current: None,
                },
                None => Git::Done,
            };
        }
        let Git::Open { entries, current } = self else {
            return None;
        };
        loop {
            if let Some(e) = current {
                match entries.rel().cmp(path) {
                    std::cmp::Ordering::Equal => return Some(*e),
                    std::cmp::Ordering::Greater => return None,
                    std::cmp::Ordering::Less => {}
                }
            }
            match entries.next_entry() {
                Some((_, e)) => *current = Some(e),
                None => {
                    *self = Git::Done;
                    return None;
                }
            }
        }
    }
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

/// The next stat cache, begun at the first difference from the last one.
struct CacheOut<'a> {
    path: &'a Path,
    writer: Option<CacheWriter>,
    /// Files kept so far, all vouched for by the last cache (while nothing is written).
    hits: usize,
}

impl CacheOut<'_> {
    /// Name `found` with `id` in the next cache (`hit`: the last one did, as it is; `gap`: it
    /// named a file before this one that is not kept).
    fn keep(&mut self, found: &Found, id: &ObjectId, hit: bool, gap: bool) -> std::io::Result<()> {
        if self.writer.is_none() && (gap || !hit) {
            self.begin()?;
        }
        match &mut self.writer {
            Some(w) => w.push(found.path.as_bytes(), &found.stat, id),
            None => {
                self.hits += 1;
                Ok(())
            }
        }
    }

    /// Start writing: the files kept so far are the last cache's first ones.
    fn begin(&mut self) -> std::io::Result<()> {
        let mut w = CacheWriter::create(self.path)?;
        let mut old = CacheReader::open(self.path);
        for _ in 0..self.hits {
            let Some(r) = old.next_record() else { break };
            if let Err(e) = w.push(&r.path, &r.stat, &r.id) {
                w.abandon();
                return Err(e);
            }
        }
        self.writer = Some(w);
        Ok(())
    }

    /// Put the next cache in place, unless it would be the last one (which had `old` entries).
    fn finish(&mut self, old: usize) -> std::io::Result<()> {
        if self.writer.is_none() && old != self.hits {
            self.begin()?;
        }
        match self.writer.take() {
            Some(w) => w.finish(),
            None => Ok(()),
        }
    }

    fn abandon(&mut self) {
        if let Some(w) = self.writer.take() {
            w.abandon();
        }
    }
}

/// Where a walk's time went, for the log.
#[derive(Default)]
struct Laps {
    walk: Duration,
    look_up: Duration,
    read: Duration,
    out: Duration,
}

impl std::fmt::Display for Laps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "walk {} ms, stat cache and git's index {} ms, files read and stored {} ms, trees and \
             stat cache written {} ms",
            self.walk.as_millis(),
            self.look_up.as_millis(),
            self.read.as_millis(),
            self.out.as_millis()
        )
    }
}
