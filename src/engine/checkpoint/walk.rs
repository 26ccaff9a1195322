//! Which entries of the workspace a checkpoint covers, found by one walk with git's ignore rules.
//!
//! - `.gitignore` files apply as git applies them: every one from the workspace down (nested ones
//!   too, negations included); when the workspace lies inside a repository, also those of its
//!   parent directories up to the repository's root; inside a nested repository, only that
//!   repository's own. In a workspace that is in no repository, its own `.gitignore` files still
//!   apply (and nothing above it).
//! - Never covered: any entry named `.git` (a repository's folder, a worktree's or submodule's
//!   file), the paths the caller excludes (flower-tui's workbench), and the store itself should it
//!   lie inside the workspace.
//! - Not read: `.git/info/exclude` and the user's global excludes file. Their contents are not
//!   the project's shared rules, and reading them would mean reading the user's git files; what
//!   they hide is covered (within the caps), never lost.
//! - Symbolic links are entries of their own, never followed.
//!
//! The walk only finds entries and their `lstat` (on a few threads); reading them is the
//! snapshot's job.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::index::Stat;
use super::path::RelPath;

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Symlink,
    /// A socket, fifo or device: seen, never read.
    Special,
}

/// One entry found (not a directory).
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub path: RelPath,
    pub kind: Kind,
    pub stat: Stat,
    /// The git blob this file held last time (see `git`): kept as its id if it still does.
    pub git: Option<[u8; 20]>,
}

/// What the walk found.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// Every directory covered, the root (the empty path) included.
    pub dirs: Vec<RelPath>,
    pub entries: Vec<Found>,
    /// Directories that could not be listed, or entries that could not be `lstat`ed.
    pub unreadable: Vec<(RelPath, io::Error)>,
    /// The walk stopped at the entry cap: what it found is not the whole workspace.
    pub cut: bool,
}

/// The rules of one walk.
#[derive(Debug, Clone)]
pub(crate) struct Rules {
    pub workspace: PathBuf,
    /// Absolute paths never covered (with what lies below them).
    pub excluded: Vec<PathBuf>,
}

/// At most this many threads walk (the work is `lstat` calls, which scale with cores).
pub(crate) const MAX_WALKERS: usize = 4;

/// Which part of the workspace a walk looks at (beyond the rules every walk keeps).
pub(crate) trait Plan: Send + Sync {
    /// Whether an entry found in a listing is looked at at all (false: neither reported nor
    /// descended into). Asked before a directory is listed.
    fn admit(&self, rel: &RelPath, is_dir: bool) -> bool;
    /// Whether a reported directory is listed.
    fn descend(&self, rel: &RelPath) -> bool;
    /// Whether every entry that is not a directory is admitted (so `admit` need not be asked).
    fn admits_every_file(&self) -> bool {
        false
    }
}

/// The whole workspace, each directory handed to `on_dir` before it is listed (a change feed
/// adds its watch there).
pub(crate) struct Whole<F>(pub F);

impl<F: Fn(&RelPath) + Send + Sync> Plan for Whole<F> {
    fn admit(&self, rel: &RelPath, is_dir: bool) -> bool {
        if is_dir {
            (self.0)(rel);
        }
        true
    }
    fn descend(&self, _rel: &RelPath) -> bool {
        true
    }
    fn admits_every_file(&self) -> bool {
        true
    }
}

/// Walk the workspace (on at most `walkers` threads; the order of what is found is not fixed),
/// limited to what `plan` admits, stopping once more than `max_entries` entries were seen
/// (`Scan::cut`). The root is always looked at (a plan that watches folders watches it first).
pub(crate) fn scan_planned(
    rules: &Rules,
    max_entries: usize,
    walkers: usize,
    plan: Arc<dyn Plan>,
) -> Scan {
    let ws = &rules.workspace;
    let in_repo = inside_repository(ws);
    let excluded = rules.excluded.clone();
    let mut builder = ignore::WalkBuilder::new(ws);
    builder
        .hidden(false)
        .ignore(false)
        .git_ignore(true)
        .git_exclude(false)
        .git_global(false)
        // Inside a repository, git's scoping: parents up to its root, nested repositories apart.
        // Outside one, `require_git(false)` makes the workspace's own files apply, and
        // `parents(false)` keeps a stray `.gitignore` above the workspace out.
        .require_git(in_repo)
        .parents(in_repo)
        .follow_links(false)
        .threads(
            std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(walkers.max(1)),
        );
    let (root, admit) = (ws.clone(), plan.clone());
    builder.filter_entry(move |e| {
        if e.file_name() == ".git" || excluded.iter().any(|x| e.path() == x.as_path()) {
            return false;
        }
        let is_dir = e.file_type().is_some_and(|t| t.is_dir());
        if !is_dir && admit.admits_every_file() {
            return true;
        }
        RelPath::under(&root, e.path()).is_some_and(|rel| admit.admit(&rel, is_dir))
    });
    let found = Mutex::new(Scan::default());
    let seen = AtomicUsize::new(0);
    let cut = AtomicBool::new(false);
    builder.build_parallel().run(|| {
        let mut batch = Batch {
            ws,
            scan: Scan::default(),
            into: &found,
            plan: plan.as_ref(),
        };
        let (seen, cut) = (&seen, &cut);
        Box::new(move |entry| {
            if seen.fetch_add(1, Ordering::Relaxed) >= max_entries {
                cut.store(true, Ordering::Relaxed);
                return ignore::WalkState::Quit;
            }
            batch.add(entry)
        })
    });
    let mut scan = found.into_inner().unwrap_or_else(|p| p.into_inner());
    scan.cut = cut.load(Ordering::Relaxed);
    scan
}

/// What one walking thread found; it joins the whole when the thread's visitor is dropped.
struct Batch<'a> {
    ws: &'a Path,
    scan: Scan,
    into: &'a Mutex<Scan>,
    plan: &'a dyn Plan,
}

impl Batch<'_> {
    fn add(&mut self, entry: Result<ignore::DirEntry, ignore::Error>) -> ignore::WalkState {
        use ignore::WalkState::{Continue, Skip};
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                if let Some(found) = unreadable(self.ws, err) {
                    self.scan.unreadable.push(found);
                }
                return Continue;
            }
        };
        let Some(path) = RelPath::under(self.ws, entry.path()) else {
            return Continue;
        };
        let meta = match fs::symlink_metadata(entry.path()) {
            Ok(meta) => meta,
            // Gone since it was listed: not part of this checkpoint.
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Continue,
            Err(e) => {
                self.scan.unreadable.push((path, e));
                return Continue;
            }
        };
        let ft = meta.file_type();
        let kind = if ft.is_dir() {
            let descend = self.plan.descend(&path);
            self.scan.dirs.push(path);
            return if descend { Continue } else { Skip };
        } else if ft.is_file() {
            Kind::File
        } else if ft.is_symlink() {
            Kind::Symlink
        } else {
            Kind::Special
        };
        self.scan.entries.push(Found {
            path,
            kind,
            stat: Stat::of(&meta),
            git: None,
        });
        Continue
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        let mut all = self.into.lock().unwrap_or_else(|p| p.into_inner());
        all.dirs.append(&mut self.scan.dirs);
        all.entries.append(&mut self.scan.entries);
        all.unreadable.append(&mut self.scan.unreadable);
    }
}

/// The path and error of a walk error that names an entry of the workspace.
fn unreadable(ws: &Path, err: ignore::Error) -> Option<(RelPath, io::Error)> {
    let path = error_path(&err).and_then(|p| RelPath::under(ws, p))?;
    let io = err
        .into_io_error()
        .unwrap_or_else(|| io::Error::other("the walk could not read it"));
    Some((path, io))
}

fn error_path(err: &ignore::Error) -> Option<&Path> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        _ => None,
    }
}

/// Whether `dir` or a directory above it holds a `.git` entry (looked at, never read).
pub(crate) fn inside_repository(dir: &Path) -> bool {
    dir.ancestors()
        .any(|d| fs::symlink_metadata(d.join(".git")).is_ok())
}
