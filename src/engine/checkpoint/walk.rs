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
//! directories on the way to the current entry, never a list of the workspace. Reading files is
//! the snapshot's job.

use std::fs;
use std::io;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::index::Stat;
use super::path::RelPath;
use super::walk_ignore::{Names, Scope};

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

/// What a walk finds, in path order.
#[derive(Debug)]
pub(crate) enum Event {
    /// A directory covered (the root first); listed unless the plan does not descend into it.
    Dir(RelPath),
    /// An entry that is not a directory.
    Entry(Found),
    /// A directory that could not be listed (`dir`), or an entry that could not be `lstat`ed.
    Unreadable {
        path: RelPath,
        dir: bool,
        err: io::Error,
    },
}

/// A walk in progress: an iterator of [`Event`]s in path order (bytewise, a directory's entries
/// right after it), so what follows it can stream. It holds the listings of the directories on
/// the way to the current entry, nothing else.
pub(crate) struct Walk<'a> {
    ws: &'a Path,
    plan: &'a dyn Plan,
    excluded: Vec<RelPath>,
    scope: Scope,
    /// The directories being walked, from the root down, with what is left of their listings.
    stack: Vec<std::vec::IntoIter<Child>>,
    seen: usize,
    max_entries: usize,
    started: bool,
    /// The walk stopped at the entry cap: what it found is not the whole workspace.
    pub cut: bool,
}

/// One entry of a listing, admitted.
#[derive(Debug)]
struct Child {
    path: RelPath,
    what: Listed,
}

#[derive(Debug)]
enum Listed {
    Dir,
    Entry(Kind, Stat),
    /// Its `lstat` failed.
    Failed(io::Error),
}

impl<'a> Walk<'a> {
    /// A walk of `rules.workspace` limited to what `plan` admits, stopping once more than
    /// `max_entries` entries were seen (`cut`). The root is always looked at (a plan that watches
    /// folders watches it first).
    pub(crate) fn new(rules: &'a Rules, max_entries: usize, plan: &'a dyn Plan) -> Walk<'a> {
        let ws = rules.workspace.as_path();
        let excluded = rules
            .excluded
            .iter()
            .filter_map(|x| RelPath::under(ws, x))
            .collect();
        Walk {
            ws,
            plan,
            excluded,
            scope: Scope::new(ws, inside_repository(ws)),
            stack: Vec::new(),
            seen: 0,
            max_entries,
            started: false,
            cut: false,
        }
    }

    /// Count one more entry seen; false (and `cut`) past the cap.
    fn count(&mut self) -> bool {
        self.seen += 1;
        if self.seen > self.max_entries {
            self.cut = true;
            self.stack.clear();
        }
        !self.cut
    }

    /// A directory reached: listed (its entries next) when the plan descends into it.
    fn reach_dir(&mut self, path: RelPath) -> Event {
        if !self.plan.descend(&path) {
            return Event::Dir(path);
        }
        match self.list(&path) {
            Ok(children) => {
                self.stack.push(children.into_iter());
                Event::Dir(path)
            }
            Err(err) => Event::Unreadable {
                path,
                dir: true,
                err,
            },
        }
    }

    /// List the directory `rel`: its admitted entries, sorted, those not directories `lstat`ed;
    /// its rules entered.
    fn list(&mut self, rel: &RelPath) -> io::Result<Vec<Child>> {
        let dir = rel.on(self.ws);
        let mut names = Names::default();
        let mut raw = Vec::new();
        for entry in fs::read_dir(&dir)? {
            let entry = entry?;
            let name = entry.file_name().into_vec();
            names.note(&name);
            raw.push((name, entry));
        }
        let rules = self.scope.rules_of(&dir, rel.as_bytes(), names);
        self.scope.push(rules);
        let every_file = self.plan.admits_every_file();
        let mut children = Vec::with_capacity(raw.len());
        for (name, entry) in raw {
            if name == b".git" {
                continue;
            }
            let path = rel.join(&name);
            let file_type = match entry.file_type() {
                Ok(t) => t,
                Err(err) => {
                    children.push(Child {
                        path,
                        what: Listed::Failed(err),
                    });
                    continue;
                }
            };
            let is_dir = file_type.is_dir();
            if self.scope.ignored(path.as_bytes(), is_dir)
                || self.excluded.contains(&path)
                || !((every_file && !is_dir) || self.plan.admit(&path, is_dir))
            {
                continue;
            }
            let what = if is_dir {
                Listed::Dir
            } else {
                match entry.metadata() {
                    Ok(meta) => {
                        let ft = meta.file_type();
                        let kind = if ft.is_dir() {
                            // It became a directory since it was listed: not walked.
                            children.push(Child {
                                path,
                                what: Listed::Dir,
                            });
                            continue;
                        } else if ft.is_file() {
                            Kind::File
                        } else if ft.is_symlink() {
                            Kind::Symlink
                        } else {
                            Kind::Special
                        };
                        Listed::Entry(kind, Stat::of(&meta))
                    }
                    // Gone since it was listed: not part of this walk.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => Listed::Failed(e),
                }
            };
            children.push(Child { path, what });
        }
        children.sort_unstable_by(|a, b| order(a, b));
        Ok(children)
    }
}

/// Path order: bytewise, a directory as its name and a `/` (so everything it holds, which comes
/// right after it, sorts among its siblings as it does in a list of whole paths).
fn order(a: &Child, b: &Child) -> std::cmp::Ordering {
    let key = |c: &Child| matches!(c.what, Listed::Dir).then_some(b'/');
    let (x, y) = (a.path.name(), b.path.name());
    x.iter().chain(key(a).iter()).cmp(y.iter().chain(key(b).iter()))
}

impl Iterator for Walk<'_> {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        if self.cut {
            return None;
        }
        if !self.started {
            self.started = true;
            if !self.count() {
                return None;
            }
            return Some(self.reach_dir(RelPath::root()));
        }
        loop {
            let top = self.stack.last_mut()?;
            let Some(child) = top.next() else {
                self.stack.pop();
                self.scope.pop();
                continue;
            };
            if !self.count() {
                return None;
            }
            return Some(match child.what {
                Listed::Dir => self.reach_dir(child.path),
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
            });
        }
    }
}

/// Walk the workspace, limited to what `plan` admits, stopping once more than `max_entries`
/// entries were seen (`Scan::cut`), and keep what it found.
pub(crate) fn scan_planned(rules: &Rules, max_entries: usize, plan: Arc<dyn Plan>) -> Scan {
    let mut walk = Walk::new(rules, max_entries, plan.as_ref());
    let mut scan = Scan::default();
    for event in walk.by_ref() {
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
    }
    scan.cut = walk.cut;
    scan
}

/// Whether `dir` or a directory above it holds a `.git` entry (looked at, never read).
pub(crate) fn inside_repository(dir: &Path) -> bool {
    dir.ancestors()
        .any(|d| fs::symlink_metadata(d.join(".git")).is_ok())
}
