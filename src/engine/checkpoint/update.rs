//! A checkpoint made from the last one and what the change feed reported since (see `watch`):
//! only the reported paths are looked at again, so its cost follows the change, not the tree.
//!
//! - The reported paths are found by a walk with the same rules as a full one (`.gitignore`
//!   files with git's scoping, `.git` and the excluded paths left out) that lists only the
//!   directories holding a reported path, and the directories on the way to them. A reported
//!   path the walk does not find is gone (or not covered).
//! - A directory that is new (reported as created or moved in, or not a directory in the last
//!   checkpoint) is walked whole, each of its directories watched before it is listed.
//! - The trees on the way from each change to the root are written again; every other tree is
//!   the last checkpoint's, shared. The result is the checkpoint a full walk would give (the
//!   tests compare both ids).
//! - Not attempted, so the caller walks instead: a `.gitignore` or `.git` among the reported
//!   paths (what is covered may change anywhere), a directory that cannot be listed, the
//!   checkpoint cap in play (which files it leaves out depends on all of them), or more entries
//!   than one walk may see.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::error::CheckpointError;
use super::object::Objects;
use super::object_id::ObjectId;
use super::path::RelPath;
use super::snapshot::{self, Outcome, SkipReason, Skipped, Snapshot};
use super::tree::{self, Node};
use super::walk::{self, Found, Kind, Plan, Rules};
use super::watch::{Drained, Watcher};
use super::{Limits, SnapshotId};

/// What the next checkpoint starts from: the last one and its figures.
#[derive(Debug, Clone)]
pub(crate) struct Base {
    pub root: ObjectId,
    pub files: usize,
    pub bytes: u64,
    /// Files, links, folders and unstored entries (the root not counted).
    pub entries: usize,
    pub skipped: Vec<Skipped>,
}

impl Base {
    pub(crate) fn of(snap: &Snapshot) -> Base {
        Base {
            root: snap.id.0,
            files: snap.files,
            bytes: snap.bytes,
            entries: snap.entries,
            skipped: snap.skipped.clone(),
        }
    }
}

/// What a reported path is now.
#[derive(Debug)]
enum Entry {
    Gone,
    Leaf(Node),
    /// A directory; `new`: its content is all in the report (walked whole), nothing is kept.
    Dir {
        new: bool,
    },
}

/// The checkpoint after `fed`'s changes to `base`, or why a full walk must take it. New folders
/// are watched by `watcher` before they are listed (None: the feed's keeper already watches
/// them).
pub(crate) fn update(
    objects: &Objects,
    rules: &Rules,
    limits: &Limits,
    base: &Base,
    fed: &Drained,
    watcher: Option<&Arc<Watcher>>,
    restored: &HashMap<RelPath, [u8; 20]>,
) -> Result<Snapshot, String> {
    let ws = &rules.workspace;
    if fed.dirty.is_empty() {
        return Ok(Snapshot {
            id: SnapshotId(base.root),
            files: base.files,
            bytes: base.bytes,
            read: 0,
            new_bytes: 0,
            skipped: base.skipped.clone(),
            entries: base.entries,
        });
    }
    if let Some(p) = fed
        .dirty
        .iter()
        .find(|p| p.name() == b".gitignore" || p.name() == b".git")
    {
        return Err(format!("{p} changed"));
    }
    if base
        .skipped
        .iter()
        .any(|s| s.reason == SkipReason::OverCheckpointCap)
    {
        return Err("the checkpoint cap is in play".into());
    }
    let listed: HashSet<RelPath> = fed.dirty.iter().filter_map(RelPath::parent).collect();
    let mut on_path: HashSet<RelPath> = HashSet::new();
    for dir in &listed {
        let mut at = Some(dir.clone());
        while let Some(d) = at {
            at = d.parent();
            if !on_path.insert(d) {
                break;
            }
        }
    }
    let mut prev = Prev::new(objects, base.root);
    let mut prev_dirs = HashMap::new();
    for dir in &listed {
        let names: HashSet<Vec<u8>> = prev
            .tree(dir)
            .map_err(|e| e.to_string())?
            .map(|t| {
                t.iter()
                    .filter(|(_, n)| n.is_dir())
                    .map(|(name, _)| name.clone())
                    .collect()
            })
            .unwrap_or_default();
        prev_dirs.insert(dir.clone(), names);
    }
    let plan = Arc::new(Targeted {
        ws: ws.clone(),
        listed,
        on_path,
        dirty: fed.dirty.clone(),
        new_dirs: fed.new_dirs.clone(),
        prev_dirs,
        deep: Mutex::new(HashSet::new()),
        watcher: watcher.cloned(),
    });
    let room = limits
        .max_entries
        .saturating_sub(base.entries.min(limits.max_entries));
    let scan = walk::scan_planned(rules, room.saturating_add(1), 1, plan.clone());
    if scan.cut {
        return Err("too many new entries".into());
    }
    if let Some((path, e)) = scan.unreadable.first() {
        return Err(format!("{path} cannot be read: {e}"));
    }
    let deep = plan.deep.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let mut overlay: BTreeMap<RelPath, Entry> =
        fed.dirty.iter().map(|p| (p.clone(), Entry::Gone)).collect();
    for dir in scan.dirs.into_iter().filter(|d| !d.is_root()) {
        if deep.contains(&dir) {
            overlay.insert(dir, Entry::Dir { new: true });
        } else if fed.dirty.contains(&dir) {
            overlay.insert(dir, Entry::Dir { new: false });
        }
    }
    let mut skipped = Vec::new();
    let mut read = 0;
    let mut new_bytes = 0;
    let mut files = Vec::new();
    for found in scan.entries {
        match found.kind {
            Kind::File if found.stat.size > limits.max_file_bytes => {
                overlay.insert(
                    found.path.clone(),
                    unstored(&found, &mut skipped, SkipReason::OverFileCap),
                );
            }
            Kind::File => files.push(found),
            Kind::Symlink => {
                let entry = link(objects, ws, &found, &mut skipped).map_err(|e| e.to_string())?;
                overlay.insert(found.path, entry);
            }
            Kind::Special => {
                overlay.insert(
                    found.path.clone(),
                    unstored(&found, &mut skipped, SkipReason::Special),
                );
            }
        }
    }
    for f in &mut files {
        let parent = f.path.parent().unwrap_or_default();
        if let Ok(Some(tree)) = prev.tree(&parent)
            && let Some((_, Node::File { id, .. })) = tree.iter().find(|(n, _)| n == f.path.name())
        {
            f.git = id.git_blob();
        }
        f.git = f.git.or_else(|| restored.get(&f.path).copied());
    }
    read += files.len();
    for (found, outcome) in snapshot::read_all(objects, ws, files, limits) {
        let entry = match outcome {
            Outcome::Stored { id, size, new } => {
                new_bytes += if new { size } else { 0 };
                Entry::Leaf(snapshot::file_node(&found.stat, id, size))
            }
            Outcome::Gone => Entry::Gone,
            Outcome::Skip(reason) => unstored(&found, &mut skipped, reason),
        };
        overlay.insert(found.path, entry);
    }
    let mut builder = Builder::new(objects, &overlay);
    let root = builder
        .build(&RelPath::root(), Some(base.root))
        .map_err(|e| e.to_string())?;
    let count = builder.count;
    let files = add(base.files, count.files);
    let bytes = u64::try_from(i128::from(base.bytes) + count.bytes).unwrap_or(0);
    let entries = add(base.entries, count.entries);
    if bytes > limits.max_checkpoint_bytes {
        return Err("the checkpoint cap is in play".into());
    }
    if entries > limits.max_entries {
        return Err("too many entries".into());
    }
    skipped.extend(
        base.skipped
            .iter()
            .filter(|s| !replaced(&overlay, &s.path))
            .cloned(),
    );
    skipped.sort_by(|x, y| x.path.cmp(&y.path));
    skipped.dedup_by(|x, y| x.path == y.path);
    Ok(Snapshot {
        id: SnapshotId(root),
        files,
        bytes,
        read,
        new_bytes,
        skipped,
        entries,
    })
}

fn add(n: usize, delta: i64) -> usize {
    usize::try_from(i64::try_from(n).unwrap_or(i64::MAX).saturating_add(delta)).unwrap_or(0)
}

/// Whether `path`'s entry of the last checkpoint was replaced (it or a folder above it).
fn replaced(overlay: &BTreeMap<RelPath, Entry>, path: &RelPath) -> bool {
    let mut at = Some(path.clone());
    while let Some(p) = at {
        if let Some(e) = overlay.get(&p)
            && !matches!(e, Entry::Dir { new: false })
        {
            return true;
        }
        at = p.parent();
    }
    false
}

fn unstored(found: &Found, skipped: &mut Vec<Skipped>, reason: SkipReason) -> Entry {
    skipped.push(snapshot::skip(found, reason));
    Entry::Leaf(snapshot::unstored(Some(found.stat)))
}

fn link(
    objects: &Objects,
    ws: &std::path::Path,
    found: &Found,
    skipped: &mut Vec<Skipped>,
) -> Result<Entry, CheckpointError> {
    match snapshot::store_link(objects, ws, &found.path)? {
        Some(id) => Ok(Entry::Leaf(Node::Link(id))),
        None => Ok(unstored(found, skipped, SkipReason::Unreadable)),
    }
}

/// The trees of the last checkpoint, loaded along the paths asked about.
struct Prev<'a> {
    objects: &'a Objects,
    root: ObjectId,
    trees: HashMap<RelPath, Option<tree::Tree>>,
}

impl<'a> Prev<'a> {
    fn new(objects: &'a Objects, root: ObjectId) -> Prev<'a> {
        Prev {
            objects,
            root,
            trees: HashMap::new(),
        }
    }

    /// The listing of `dir` in the last checkpoint (None: not a directory there).
    fn tree(&mut self, dir: &RelPath) -> Result<Option<&tree::Tree>, CheckpointError> {
        if !self.trees.contains_key(dir) {
            let id = match dir.parent() {
                None => Some(self.root),
                Some(parent) => self.tree(&parent)?.and_then(|t| {
                    t.iter()
                        .find(|(n, _)| n == dir.name())
                        .and_then(|(_, node)| match node {
                            Node::Dir(id) => Some(*id),
                            _ => None,
                        })
                }),
            };
            let tree = id.map(|id| tree::load(self.objects, &id)).transpose()?;
            self.trees.insert(dir.clone(), tree);
        }
        Ok(self.trees.get(dir).and_then(Option::as_ref))
    }
}

/// The walk of the reported paths: the directories holding them are listed, the folders on the
/// way descended, new folders walked whole (and watched).
struct Targeted {
    ws: PathBuf,
    listed: HashSet<RelPath>,
    on_path: HashSet<RelPath>,
    dirty: BTreeSet<RelPath>,
    new_dirs: BTreeSet<RelPath>,
    /// The folders each listed directory held in the last checkpoint.
    prev_dirs: HashMap<RelPath, HashSet<Vec<u8>>>,
    /// Folders walked whole.
    deep: Mutex<HashSet<RelPath>>,
    watcher: Option<Arc<Watcher>>,
}

impl Plan for Targeted {
    fn admit(&self, rel: &RelPath, is_dir: bool) -> bool {
        let parent = rel.parent().unwrap_or_default();
        let mut deep = self.deep.lock().unwrap_or_else(|p| p.into_inner());
        let in_listed = self.listed.contains(&parent);
        let is_new = is_dir
            && (deep.contains(&parent)
                || (in_listed
                    && (self.new_dirs.contains(rel)
                        || !self
                            .prev_dirs
                            .get(&parent)
                            .is_some_and(|names| names.contains(rel.name())))));
        if is_new {
            deep.insert(rel.clone());
            if let Some(w) = &self.watcher {
                w.add(&rel.on(&self.ws), rel);
            }
            return true;
        }
        if deep.contains(&parent) {
            return true;
        }
        (is_dir && self.on_path.contains(rel)) || (in_listed && self.dirty.contains(rel))
    }

    fn descend(&self, rel: &RelPath) -> bool {
        self.on_path.contains(rel)
            || self
                .deep
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(rel)
    }
}

/// Signed changes to the figures.
#[derive(Debug, Default, Clone, Copy)]
struct Count {
    files: i64,
    bytes: i128,
    entries: i64,
}

/// Writes the trees on the way from each change to the root.
struct Builder<'a> {
    objects: &'a Objects,
    /// The overlay's entries by the directory holding them.
    by_parent: HashMap<RelPath, Vec<(&'a RelPath, &'a Entry)>>,
    /// Directories below which something changed.
    touched: HashSet<RelPath>,
    count: Count,
}

impl<'a> Builder<'a> {
    fn new(objects: &'a Objects, overlay: &'a BTreeMap<RelPath, Entry>) -> Builder<'a> {
        let mut by_parent: HashMap<RelPath, Vec<(&RelPath, &Entry)>> = HashMap::new();
        let mut touched = HashSet::new();
        for (path, entry) in overlay {
            let mut at = path.parent();
            if let Some(parent) = &at {
                by_parent
                    .entry(parent.clone())
                    .or_default()
                    .push((path, entry));
            }
            while let Some(d) = at {
                at = d.parent();
                if !touched.insert(d) {
                    break;
                }
            }
        }
        Builder {
            objects,
            by_parent,
            touched,
            count: Count::default(),
        }
    }

    /// The new tree of `dir`, from its last one (`prev`; None: a new folder).
    fn build(
        &mut self,
        dir: &RelPath,
        prev: Option<ObjectId>,
    ) -> Result<ObjectId, CheckpointError> {
        let mut tree: BTreeMap<Vec<u8>, Node> = match prev {
            Some(id) => tree::load(self.objects, &id)?.into_iter().collect(),
            None => BTreeMap::new(),
        };
        let here = self.by_parent.get(dir).cloned().unwrap_or_default();
        let mut done = HashSet::new();
        for (path, entry) in here {
            let name = path.name().to_vec();
            let old = tree.remove(&name);
            done.insert(name.clone());
            let keep = match (entry, old) {
                (Entry::Dir { new: false }, Some(Node::Dir(id))) => Some(id),
                _ => None,
            };
            if keep.is_none()
                && let Some(old) = old
            {
                let gone = self.deep_count(&old)?;
                self.count.files -= gone.files;
                self.count.bytes -= gone.bytes;
                self.count.entries -= gone.entries;
            }
            let node = match entry {
                Entry::Gone => continue,
                Entry::Leaf(node) => *node,
                Entry::Dir { .. } => {
                    if keep.is_none() {
                        self.count.entries += 1;
                    }
                    Node::Dir(self.build(path, keep)?)
                }
            };
            if !node.is_dir() {
                let c = leaf_count(&node);
                self.count.files += c.files;
                self.count.bytes += c.bytes;
                self.count.entries += c.entries;
            }
            tree.insert(name, node);
        }
        let below: Vec<(Vec<u8>, ObjectId)> = tree
            .iter()
            .filter(|(name, _)| !done.contains(*name))
            .filter_map(|(name, node)| match node {
                Node::Dir(id) if self.touched.contains(&dir.join(name)) => {
                    Some((name.clone(), *id))
                }
                _ => None,
            })
            .collect();
        for (name, id) in below {
            let new = self.build(&dir.join(&name), Some(id))?;
            tree.insert(name, Node::Dir(new));
        }
        let tree: tree::Tree = tree.into_iter().collect();
        tree::store(self.objects, &tree)
    }

    /// The figures of `node` and all it holds.
    fn deep_count(&self, node: &Node) -> Result<Count, CheckpointError> {
        let Node::Dir(id) = node else {
            return Ok(leaf_count(node));
        };
        let mut total = Count {
            entries: 1,
            ..Count::default()
        };
        for (_, child) in tree::load(self.objects, id)? {
            let c = self.deep_count(&child)?;
            total.files += c.files;
            total.bytes += c.bytes;
            total.entries += c.entries;
        }
        Ok(total)
    }
}

fn leaf_count(node: &Node) -> Count {
    match node {
        Node::File { size, .. } => Count {
            files: 1,
            bytes: i128::from(*size),
            entries: 1,
        },
        Node::Link(_) => Count {
            files: 1,
            bytes: 0,
            entries: 1,
        },
        _ => Count {
            files: 0,
            bytes: 0,
            entries: 1,
        },
    }
}
