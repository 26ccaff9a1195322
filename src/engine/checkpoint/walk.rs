//! Which entries of the workspace a checkpoint covers, found by one walk with git's ignore rules.
//!
//! - `.gitignore` files apply as git applies them: every one from the workspace down (nested ones
//!   too, negations included); when the workspace lies inside a repository, also those of its
//!   parent directories up to the repository's root; inside a nested repository, only that
//!   repository's own. In a workspace that is in no repository, its own `.gitignore` files still
//!   apply (and nothing above it; a nested repository is then no boundary). The exact scoping is
//!   `walk_ignore`'s.
//! - Never covered: any entry named `.git` (a repository's folder, a worktree's or submodule's
//!   file), the paths the caller excludes (flower-tui's workbench), and the store itself should it
//!   lie inside the workspace.
//! - Not read: `.git/info/exclude` and the user's global excludes file. Their contents are not
//!   the project's shared rules, and reading them would mean reading the user's git files; what
//!   they hide is covered (within the caps), never lost.
//! - Symbolic links are entries of their own, never followed.
//!
//! The walk lists one directory at a time, `lstat`s its entries relative to the open directory
//! (a directory's own kind comes from its listing), and hands out what it finds in path order:
//! bytewise, a directory as its path and a `/`, so everything a directory holds comes right
//! after it (the order of git's index and of the stat cache). It holds the listings of the
//! directories on the way to the current entry, and at most [`AHEAD`] listings made ahead of it
//! by a few threads (a full walk's; a walk of a few changed paths lists on its own thread), never
//! a list of the workspace. Reading files is the snapshot's job.

use std::collections::VecDeque;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::index::Stat;
use super::path::RelPath;
use super::walk_ignore::{DirRules, Scope};
use super::walk_list::{Child, Listed, Lister, Next, Pool};
pub(crate) use super::walk_list::{Kind, Plan};

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

/// What a walk finds, in path order.
#[derive(Debug)]
pub(crate) enum Event {
    /// A directory covered (the root first); listed unless the plan does not descend into it.
    Dir(RelPath),
    /// An entry that is not a directory.
    Entry(Found),
    /// A directory that could not be listed (`dir`: it keeps its place), or an entry that could
    /// not be `lstat`ed or a directory gone before it was listed (neither has a place).
    Unreadable {
        path: RelPath,
        dir: bool,
        err: io::Error,
    },
}

/// At most this many threads list directories ahead of a walk (the work is `lstat` calls,
/// which scale with cores).
pub(crate) const MAX_WALKERS: usize = 4;
/// At most this many directories are listed (or being listed) ahead of a walk.
const AHEAD: usize = 64;

/// Walk the workspace, limited to what `plan` admits, handing what it finds to `each` in path
/// order (bytewise, a directory's entries right after it) until `each` says stop (false). With
/// `walkers` above one, up to that many threads list directories ahead of it. The root is
/// always looked at (a plan that watches folders watches it first). True when the walk stopped
/// because more than `max_entries` entries were seen (what it found is not the whole workspace).
pub(crate) fn walk(
    rules: &Rules,
    max_entries: usize,
    walkers: usize,
    plan: &dyn Plan,
    each: &mut dyn FnMut(Event) -> bool,
) -> bool {
    let ws = rules.workspace.as_path();
    let lister = Lister {
        ws,
        plan,
        excluded: rules
            .excluded
            .iter()
            .filter_map(|x| RelPath::under(ws, x))
            .collect(),
        scope: Scope::new(ws, inside_repository(ws)),
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(walkers);
    let ordered = |pool| Ordered {
        lister: &lister,
        pool,
        frames: Vec::new(),
        ahead: 0,
        seen: 0,
        max_entries,
    };
    if threads < 2 {
        return ordered(None).run(each);
    }
    let pool = Pool::default();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| pool.work(&lister));
        }
        // The threads leave however the walk ends.
        let _closing = Closing(&pool);
        ordered(Some(&pool)).run(each)
    })
}

struct Closing<'a>(&'a Pool);

impl Drop for Closing<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// The walk proper: the directories on the way to the current entry, with what is left of
/// their listings.
struct Ordered<'a> {
    lister: &'a Lister<'a>,
    pool: Option<&'a Pool>,
    frames: Vec<Frame>,
    /// Directories handed to the pool and not yet reached.
    ahead: usize,
    seen: usize,
    max_entries: usize,
}

struct Frame {
    rules: Arc<DirRules>,
    children: VecDeque<Child>,
    /// How many of the first children were looked at for listing ahead.
    scanned: usize,
}

impl Ordered<'_> {
    /// Walk to the end, or until `each` says stop; true when cut at the entry cap.
    fn run(&mut self, each: &mut dyn FnMut(Event) -> bool) -> bool {
        if !self.count() {
            return true;
        }
        let root = self.reach(RelPath::root(), Next::Unasked);
        if !each(root) {
            return false;
        }
        loop {
            let Some(frame) = self.frames.last_mut() else {
                return false;
            };
            let Some(child) = frame.children.pop_front() else {
                self.frames.pop();
                continue;
            };
            frame.scanned = frame.scanned.saturating_sub(1);
            if !self.count() {
                return true;
            }
            let event = match child.what {
                Listed::Dir(next) => self.reach(child.path, next),
                Listed::Entry(kind, stat) => Event::Entry(Found {
                    path: child.path,
                    kind,
                    stat,
                    git: None,
                }),
                Listed::Failed(err) => Event::Unreadable {
                    path: child.path,
                    dir: false,
                    err,
                },
            };
            if !each(event) {
                return false;
            }
        }
    }

    /// Count one more entry seen; false past the cap.
    fn count(&mut self) -> bool {
        self.seen += 1;
        self.seen <= self.max_entries
    }

    /// The rules of the directories entered, from the root down.
    fn chain(&self) -> Vec<Arc<DirRules>> {
        self.frames.iter().map(|f| f.rules.clone()).collect()
    }

    /// A directory reached: entered (its entries next) when it is listed.
    fn reach(&mut self, path: RelPath, next: Next) -> Event {
        let listing = match next {
            Next::Skip => return Event::Dir(path),
            Next::Unasked if !self.lister.plan.descend(&path) => return Event::Dir(path),
            Next::Unasked => self.lister.list(&path, &self.chain()),
            Next::Job(job) => {
                self.ahead = self.ahead.saturating_sub(1);
                job.take(self.lister)
            }
        };
        match listing {
            Ok(listing) => {
                self.frames.push(Frame {
                    rules: listing.rules,
                    children: listing.children.into(),
                    scanned: 0,
                });
                self.look_ahead();
                Event::Dir(path)
            }
            // Gone since its parent was listed: named, without a place in the checkpoint.
            Err(err) if err.kind() == io::ErrorKind::NotFound => Event::Unreadable {
                path,
                dir: false,
                err,
            },
            Err(err) => Event::Unreadable {
                path,
                dir: true,
                err,
            },
        }
    }

    /// Hand the pool the next directories to list, in the order the walk will reach them (the
    /// deepest directory's first).
    fn look_ahead(&mut self) {
        let Some(pool) = self.pool else { return };
        for depth in (0..self.frames.len()).rev() {
            let mut chain = None;
            let Some(frame) = self.frames.get(depth) else {
                continue;
            };
            if frame.scanned >= frame.children.len() {
                continue;
            }
            let chain = chain.get_or_insert_with(|| {
                self.frames
                    .get(..=depth)
                    .unwrap_or_default()
                    .iter()
                    .map(|f| f.rules.clone())
                    .collect::<Vec<_>>()
            });
            let Some(frame) = self.frames.get_mut(depth) else {
                continue;
            };
            while let Some(child) = frame.children.get_mut(frame.scanned) {
                if self.ahead >= AHEAD {
                    return;
                }
                frame.scanned += 1;
                if let Listed::Dir(next @ Next::Unasked) = &mut child.what {
                    *next = if self.lister.plan.descend(&child.path) {
                        self.ahead += 1;
                        Next::Job(pool.submit(child.path.clone(), chain.clone()))
                    } else {
                        Next::Skip
                    };
                }
            }
        }
    }
}

/// Walk the workspace (see [`walk`]) and keep what it found.
pub(crate) fn scan_planned(
    rules: &Rules,
    max_entries: usize,
    walkers: usize,
    plan: Arc<dyn Plan>,
) -> Scan {
    let mut scan = Scan::default();
    let cut = walk(rules, max_entries, walkers, plan.as_ref(), &mut |event| {
        match event {
            Event::Dir(path) => scan.dirs.push(path),
            Event::Entry(found) => scan.entries.push(found),
            Event::Unreadable { path, dir, err } => {
                if dir {
                    scan.dirs.push(path.clone());
                }
                scan.unreadable.push((path, err));
            }
        }
        true
    });
    scan.cut = cut;
    scan
}

/// Whether `dir` or a directory above it holds a `.git` entry (looked at, never read).
pub(crate) fn inside_repository(dir: &Path) -> bool {
    dir.ancestors()
        .any(|d| fs::symlink_metadata(d.join(".git")).is_ok())
}
