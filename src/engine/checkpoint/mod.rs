//! Checkpoints of the workspace: its files as they were before and after a turn, kept outside
//! the workspace, so a turn's changes (by the edit tools and by `bash` alike) can be undone and
//! redone byte for byte.
//!
//! **Where.** `<data_dir>/checkpoints/<workspace name>-<hash of its path>/`, owner-only
//! (a workspace's files may hold secrets): `objects/` (contents and directory listings, each
//! stored once under its SHA-256, in a file of its own or in a pack of many, see `pack`),
//! `stat-cache`, `lock`, `workspace` (the path, for people) and `checkpoints.log` (one line per
//! checkpoint). The workspace and its `.git` are only read.
//!
//! **A store of our own, not a shadow git repository.** Both keep contents by hash and reuse
//! unchanged directories; the differences decided it:
//! - *Nested repositories*: `git add` records a directory holding a `.git` as a gitlink, without
//!   its files, and has no switch to descend; a shadow repository would silently not cover a
//!   vendored or nested project. This store walks into it (leaving its `.git` out).
//! - *Ignore rules*: the walk applies `.gitignore` files (with the `ignore` crate's matchers,
//!   already a dependency) with git's scoping, including the parents of a workspace that is a
//!   subdirectory of a repository, which a shadow repository rooted at the workspace would miss
//!   (see `walk` and `walk_ignore`).
//! - *Caps*: git has no per-file size limit, so a shadow repository needs this walk anyway to
//!   find the files over the cap, then a second walk by git.
//! - *Modes*: git keeps only the executable bit; this store keeps all permission bits
//!   (`0o7777`) of files, and symbolic links as links (git does that too).
//! - *Dependencies*: none new (`ignore`, `sha2` and `similar` are already built), and no `git`
//!   binary is needed on the machine.
//! - *Cost*: no process is started. Measured on this 2-core machine with 5,000 files / 100 MB
//!   (`cargo bench --bench perf -- checkpoint`): a turn that changed one file costs 18 ms
//!   (median at load average ~2; 43 ms at ~13), the first checkpoint 0.25 s; a shadow repository
//!   (`git add -A` + `write-tree`, `core.compression 1`) took about 75 ms for the turn and 7.3 s
//!   for the first one.
//! - *What git would give us*: compression (this store keeps contents as they are: the first
//!   checkpoint of a 100 MB workspace takes 100 MB) and packing. Neither is needed for undo.
//!
//! **Cost that follows the change.** A session's store keeps a change feed (see `watch`): the
//! first checkpoint walks the workspace and watches each covered folder; each later one looks
//! only at the paths the feed reported since the last (see `update`), and walks again only when
//! the feed cannot say (an overflow, a `.gitignore` changed, no inotify). In a git workspace a
//! walk takes the files git's index vouches for from git's own store instead of reading them
//! (see `git`), so the first checkpoint of a large repository copies almost nothing.
//!
//! **Clean-up.** [`Checkpoints::prune`] deletes what no kept checkpoint needs (see `prune`): the
//! caller names the checkpoints the ledgers still hold; anything taken in the last day is kept
//! whether named yet or not.
//!
//! **What a checkpoint is.** The id of the workspace root's listing (see `tree`): regular files
//! with their permission bits, symbolic links with their target, empty directories too. Files
//! over [`Limits::max_file_bytes`], past [`Limits::max_checkpoint_bytes`] (smallest files are
//! taken first), unreadable ones and sockets/fifos are listed without content and returned in
//! [`Snapshot::skipped`] so the caller can name them; a restore never writes over or removes them.
//! Not kept: times, owners, directories' permission bits, extended attributes, hard-link sharing.
//!
//! **Undo and redo** are restores between a turn's two checkpoints ([`Checkpoints::undo`],
//! [`Checkpoints::redo`]), limited to the paths the two differ in, after a conflict check (see
//! `restore`); the stacks are [`UndoStack`], kept by the ledger.
//!
//! **Threads and processes.** Everything here blocks (it walks and reads files); the engine calls
//! it through [`Checkpoints::in_background`], on the runtime's blocking pool. A snapshot or
//! restore holds the store's lock (see `lock`), so two processes in one workspace take turns and
//! share the stat cache; objects are written whole under their final name or not at all.

mod attribution;
mod changes;
mod error;
mod feed;
mod full_walk;
mod git;
mod index;
mod keeper;
mod object;
mod object_id;
mod pack;
mod path;
mod prune;
mod report;
mod restore;
mod route;
mod snapshot;
mod store_lock;
mod tree;
mod tree_writer;
mod undo_stack;
mod update;
mod walk;
mod walk_back;
mod walk_ignore;
mod walk_list;
mod watch;

use std::fmt;
use std::fs::{self, DirBuilder};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub(crate) use attribution::Closed;
pub use changes::{ChangeKind, FileChange, LineCounts};
pub(crate) use error::CheckpointError;
pub use feed::{COMMAND as KEEPER_COMMAND, describe_keeper, set_keeper_program};
pub use keeper::serve as serve_keeper;
pub(crate) use object_id::{BadObjectId, ObjectId};
pub(crate) use path::RelPath;
pub(crate) use prune::KEEP_DAYS;
pub use report::{RestoreReport, TurnRef, UndoAction};
pub use restore::{Conflict, ConflictKind, Failure, OnConflict, Untouched};
pub use snapshot::{SkipReason, Skipped, Snapshot};
pub(crate) use store_lock::LOCK_WAIT;
pub use undo_stack::{
    CallSpan, MAX_TURNS, NotOnTop, PendingTurn, Recorded, TurnCheckpoint, UndoStack,
};

use attribution::Scope;

use object::Objects;
use route::Feed;
use store_lock::StoreLock;
use walk::{Plan, Rules, Whole};
use watch::Watcher;

/// One file larger than this is not stored (it is named in the checkpoint's result instead).
pub(crate) const DEFAULT_MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;
/// One checkpoint stores at most this many bytes of files (smallest files first).
pub(crate) const DEFAULT_MAX_CHECKPOINT_BYTES: u64 = 512 * 1024 * 1024;
/// A workspace with more files and folders than this gets no checkpoint: the walk stops there.
pub(crate) const DEFAULT_MAX_ENTRIES: usize = 1_000_000;

/// The id of a checkpoint (its root listing's id): equal workspaces give equal ids.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SnapshotId(pub(crate) ObjectId);

impl fmt::Display for SnapshotId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for SnapshotId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SnapshotId({})",
            self.0.hex().get(..12).unwrap_or_default()
        )
    }
}

impl FromStr for SnapshotId {
    type Err = BadObjectId;

    fn from_str(s: &str) -> Result<SnapshotId, BadObjectId> {
        s.parse().map(SnapshotId)
    }
}

/// How much a checkpoint stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_file_bytes: u64,
    pub max_checkpoint_bytes: u64,
    /// Files, links and folders one walk looks at before it gives up.
    pub max_entries: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            max_checkpoint_bytes: DEFAULT_MAX_CHECKPOINT_BYTES,
            max_entries: DEFAULT_MAX_ENTRIES,
        }
    }
}

/// How a store is opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub limits: Limits,
    /// Never covered, with what lies below: paths relative to the workspace or absolute.
    /// Default: flower-tui's workbench, `.flower`.
    pub excluded: Vec<PathBuf>,
    /// How long a snapshot or restore waits for another process holding the store.
    pub lock_wait: Duration,
    /// Whether a change feed (see `watch`) lets a checkpoint look only at what changed since
    /// the last one; off (the default: a store opened for one look keeps no inotify instance),
    /// every checkpoint walks the workspace. A session turns it on.
    pub watch: bool,
    /// Whether the feed outlives the session (see `feed`): a walk starts the workspace's keeper
    /// when none answers, and a start builds on the keeper's base. Needs `watch`.
    pub keeper: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            limits: Limits::default(),
            excluded: vec![PathBuf::from(".flower")],
            lock_wait: LOCK_WAIT,
            watch: false,
            keeper: false,
        }
    }
}

/// What a restore did.
#[derive(Debug)]
pub enum Restore {
    /// Files changed since the `from` state and the caller said [`OnConflict::Stop`]: nothing
    /// was changed.
    Stopped {
        conflicts: Vec<Conflict>,
    },
    Done(Restored),
}

/// A restore that ran.
#[derive(Debug, Default)]
pub struct Restored {
    /// What was put back, as changes from the state before the restore to the state after it.
    pub changed: Vec<FileChange>,
    /// Conflicts left as the user had them ([`OnConflict::KeepUsers`]).
    pub kept: Vec<Conflict>,
    /// Conflicts written over ([`OnConflict::Overwrite`]); their content is in `backup`.
    pub overwritten: Vec<Conflict>,
    /// The checkpoint taken before anything was overwritten.
    pub backup: Option<SnapshotId>,
    /// Paths left as they are, and why.
    pub untouched: Vec<(RelPath, Untouched)>,
    /// Paths that could not be written or removed.
    pub failed: Vec<Failure>,
}

/// The checkpoint store of one workspace. Cheap to clone (shared).
#[derive(Debug, Clone)]
pub struct Checkpoints {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    dir: PathBuf,
    objects: Objects,
    rules: Rules,
    limits: Limits,
    lock_wait: Duration,
    feed: Mutex<Feed>,
}

impl Inner {
    /// The data dir the store was opened under (`<data_dir>/checkpoints/<name>`).
    fn data_dir(&self) -> &Path {
        self.dir
            .parent()
            .and_then(Path::parent)
            .unwrap_or(&self.dir)
    }
}

impl Checkpoints {
    /// Open (creating it if needed) the store of `workspace` under `data_dir`.
    pub fn open(
        data_dir: &Path,
        workspace: &Path,
        options: Options,
    ) -> Result<Checkpoints, CheckpointError> {
        let ws = fs::canonicalize(workspace).map_err(|source| CheckpointError::Workspace {
            path: workspace.to_path_buf(),
            source,
        })?;
        if !ws.is_dir() {
            return Err(CheckpointError::Workspace {
                path: ws,
                source: std::io::Error::from(std::io::ErrorKind::NotADirectory),
            });
        }
        let dir = data_dir.join("checkpoints").join(store_name(&ws));
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir.join("objects"))
            .map_err(CheckpointError::store(&dir))?;
        let note = dir.join("workspace");
        if fs::symlink_metadata(&note).is_err() {
            let mut text = ws.as_os_str().as_bytes().to_vec();
            text.push(b'\n');
            crate::engine::fsutil::atomic_write_unsynced(&note, &text)
                .map_err(CheckpointError::store(&note))?;
        }
        let mut excluded: Vec<PathBuf> = options.excluded.iter().map(|p| ws.join(p)).collect();
        // The store itself, should the data dir lie inside the workspace.
        if let Ok(store) = fs::canonicalize(&dir)
            && store.starts_with(&ws)
        {
            excluded.push(store);
        }
        Ok(Checkpoints {
            inner: Arc::new(Inner {
                objects: Objects::with_git(dir.join("objects"), git::Repo::find(&ws)),
                dir,
                rules: Rules {
                    workspace: ws,
                    excluded,
                },
                limits: options.limits,
                lock_wait: options.lock_wait,
                feed: Mutex::new(Feed::new(options.watch, options.keeper)),
            }),
        })
    }

    /// The store's folder.
    pub fn store_dir(&self) -> &Path {
        &self.inner.dir
    }

    /// The workspace (resolved: no symbolic links in it).
    pub fn workspace(&self) -> &Path {
        &self.inner.rules.workspace
    }

    /// Take a checkpoint of the workspace now. `label` goes to the store's log (e.g. `turn 4
    /// before`).
    pub fn snapshot(&self, label: &str) -> Result<Snapshot, CheckpointError> {
        let _lock = self.lock()?;
        self.snapshot_locked(label)
    }

    /// A checkpoint from a change feed when one can say what changed since the last one; else
    /// a full walk, which starts a new feed (see `route`).
    fn snapshot_locked(&self, label: &str) -> Result<Snapshot, CheckpointError> {
        let i = &self.inner;
        let mut feed = i.feed.lock().unwrap_or_else(|p| p.into_inner());
        let restored = std::mem::take(&mut feed.restored);
        let why = match feed.update(i, &restored) {
            Ok((snap, route)) => {
                snapshot::log(&i.dir, label, &snap, route);
                return Ok(snap);
            }
            Err(why) => why,
        };
        tracing::debug!("checkpoint: a full walk ({why})");
        feed.reset();
        let watch = feed.off.is_none();
        let (snap, watcher) = self.walk(label, &why, watch)?;
        feed.walked(&snap, watcher, i);
        Ok(snap)
    }

    /// A checkpoint by a full walk (`why` goes to the log), watching each folder before it is
    /// listed when `watch` (the feed is returned unless it could not start).
    fn walk(
        &self,
        label: &str,
        why: &str,
        watch: bool,
    ) -> Result<(Snapshot, Option<Arc<Watcher>>), CheckpointError> {
        let i = &self.inner;
        let ws = i.rules.workspace.clone();
        let watcher = if watch {
            Watcher::start(&ws)
                .map_err(|e| tracing::debug!("checkpoint: no change feed: {e}"))
                .ok()
                .map(Arc::new)
        } else {
            None
        };
        let plan: Arc<dyn Plan> = match &watcher {
            Some(w) => {
                w.add(&ws, &RelPath::root());
                let w = w.clone();
                Arc::new(Whole(move |rel: &RelPath| w.add(&rel.on(&ws), rel)))
            }
            None => Arc::new(Whole(|_: &RelPath| {})),
        };
        let cache = i.dir.join("stat-cache");
        let now = snapshot::now();
        let snap = full_walk::take(&i.objects, &cache, &i.rules, &i.limits, now, plan.as_ref())?;
        snapshot::log(&i.dir, label, &snap, &format!("walk: {why}"));
        Ok((snap, watcher))
    }

    /// What changed from checkpoint `from` to checkpoint `to`, file by file, sorted by path.
    pub fn changes(
        &self,
        from: &SnapshotId,
        to: &SnapshotId,
    ) -> Result<Vec<FileChange>, CheckpointError> {
        let deltas = tree::diff(&self.inner.objects, Some(&from.0), Some(&to.0))?;
        changes::file_changes(&self.inner.objects, &deltas)
    }

    /// Which files differ from checkpoint `from` to checkpoint `to`, and how (no line counts:
    /// cheap enough to ask after every call).
    pub(crate) fn changed_files(
        &self,
        from: &SnapshotId,
        to: &SnapshotId,
    ) -> Result<Vec<(RelPath, ChangeKind)>, CheckpointError> {
        let deltas = tree::diff(&self.inner.objects, Some(&from.0), Some(&to.0))?;
        Ok(changes::file_kinds(&deltas))
    }

    /// Bring the paths that differ between `from` and `to` to their state in `to`, if they are
    /// still as in `from`; what happens to those that are not is `on_conflict`'s.
    pub fn restore(
        &self,
        from: &SnapshotId,
        to: &SnapshotId,
        on_conflict: OnConflict,
    ) -> Result<Restore, CheckpointError> {
        self.restore_within(from, to, &Scope::default(), on_conflict)
    }

    /// [`Checkpoints::restore`] limited to `scope`'s paths, with its paths to ask about.
    fn restore_within(
        &self,
        from: &SnapshotId,
        to: &SnapshotId,
        scope: &Scope,
        on_conflict: OnConflict,
    ) -> Result<Restore, CheckpointError> {
        let _lock = self.lock()?;
        let i = &self.inner;
        let ws = &i.rules.workspace;
        let mut deltas = tree::diff(&i.objects, Some(&from.0), Some(&to.0))?;
        deltas.retain(|d| scope.holds(&d.path));
        let content = |n: &Option<tree::Node>| match n {
            Some(tree::Node::File { id, .. } | tree::Node::Link(id)) => Some(*id),
            _ => None,
        };
        i.objects.prefetch(
            deltas
                .iter()
                .flat_map(|d| [content(&d.before), content(&d.after)])
                .flatten(),
        );
        // Every content the restore needs must be there before anything changes (a damaged one
        // is found when it is read, and that path alone fails).
        for d in &deltas {
            if let Some(tree::Node::File { id, .. } | tree::Node::Link(id)) = d.after
                && !i.objects.has(&id)
            {
                return Err(CheckpointError::Missing { id });
            }
        }
        let mut conflicts = restore::conflicts(ws, &mut deltas);
        scope.add_asked(&deltas, &mut conflicts);
        let mut done = Restored::default();
        if !conflicts.is_empty() {
            match on_conflict {
                OnConflict::Stop => return Ok(Restore::Stopped { conflicts }),
                OnConflict::KeepUsers => {
                    deltas.retain(|d| !conflicts.iter().any(|c| c.path == d.path));
                    done.kept = conflicts;
                }
                OnConflict::Overwrite => {
                    let backup = self.snapshot_locked("before an overwriting restore")?;
                    // What the backup could not store (over a cap) is not overwritten.
                    for c in conflicts {
                        if backup.skipped.iter().any(|s| s.path == c.path) {
                            deltas.retain(|d| d.path != c.path);
                            done.untouched.push((c.path, Untouched::CurrentNotStored));
                        } else {
                            done.overwritten.push(c);
                        }
                    }
                    done.backup = Some(backup.id);
                }
            }
        }
        let applied = restore::apply(ws, &i.objects, deltas);
        let mut feed = i.feed.lock().unwrap_or_else(|p| p.into_inner());
        for d in &applied.done {
            if let Some(tree::Node::File { id, .. }) = d.after
                && let Some(blob) = id.git_blob()
            {
                feed.restored.insert(d.path.clone(), blob);
            }
        }
        drop(feed);
        done.changed = changes::file_changes(&i.objects, &applied.done)?;
        done.untouched.extend(applied.untouched);
        done.failed = applied.failed;
        Ok(Restore::Done(done))
    }

    /// Undo `turn`: the files its own calls changed back to their state before it (a file
    /// someone else changed during the turn too is a conflict, asked about like a later change).
    pub fn undo(
        &self,
        turn: &TurnCheckpoint,
        on_conflict: OnConflict,
    ) -> Result<Restore, CheckpointError> {
        let scope = Scope::of(turn, &turn.mixed);
        self.restore_within(&turn.after, &turn.before, &scope, on_conflict)
    }

    /// Redo `turn`: the files its own calls changed to their state after it.
    pub fn redo(
        &self,
        turn: &TurnCheckpoint,
        on_conflict: OnConflict,
    ) -> Result<Restore, CheckpointError> {
        let scope = Scope::of(turn, &[]);
        self.restore_within(&turn.before, &turn.after, &scope, on_conflict)
    }

    /// Run `job` on the runtime's blocking pool (checkpoints walk and read files: they must not
    /// hold one of the runtime's core threads).
    pub async fn in_background<T, F>(&self, job: F) -> Result<T, CheckpointError>
    where
        T: Send + 'static,
        F: FnOnce(&Checkpoints) -> Result<T, CheckpointError> + Send + 'static,
    {
        let this = self.clone();
        tokio::task::spawn_blocking(move || job(&this)).await?
    }

    fn lock(&self) -> Result<StoreLock, CheckpointError> {
        StoreLock::take(&self.inner.dir, self.inner.lock_wait)
    }
}

/// `<last name of the workspace>-<16 hex digits of the SHA-256 of its path>`: readable, and two
/// workspaces with one name never share a store.
fn store_name(ws: &Path) -> String {
    let hash = ObjectId::of(ws.as_os_str().as_bytes()).hex();
    let name: String = ws
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let name = name.trim_start_matches('.');
    let prefix = if name.is_empty() { "root" } else { name };
    format!("{prefix}-{}", hash.get(..16).unwrap_or_default())
}

#[cfg(test)]
mod feed_tests;
#[cfg(test)]
mod full_walk_tests;
#[cfg(test)]
mod git_tests;
#[cfg(test)]
mod keeper_tests;
#[cfg(test)]
mod store_tests;
#[cfg(test)]
mod turn_tests;
#[cfg(test)]
mod walk_tests;
