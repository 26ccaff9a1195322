//! Listing one directory for the walk: its entries read, its `.gitignore` rules taken in, those
//! not covered left out (ignored, `.git`, excluded, not admitted by the plan), the others that
//! are not directories `lstat`ed relative to the open directory, all sorted in path order.
//!
//! Listings may be made ahead of the walk by a few threads ([`Pool`]): the walk hands out a
//! directory's listing as jobs, in the order it will need them, and a listing it reaches before
//! a thread took it up, it makes itself.

use std::collections::VecDeque;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::index::Stat;
use super::path::RelPath;
use super::walk_ignore::{DirRules, Names, Scope};

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Symlink,
    /// A socket, fifo or device: seen, never read.
    Special,
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

/// One entry of a listing, admitted.
#[derive(Debug)]
pub(super) struct Child {
    pub path: RelPath,
    pub what: Listed,
}

#[derive(Debug)]
pub(super) enum Listed {
    Dir(Next),
    Entry(Kind, Stat),
    /// Its `lstat` failed.
    Failed(io::Error),
}

/// What becomes of a directory found in a listing.
#[derive(Debug)]
pub(super) enum Next {
    /// Not yet asked whether it is listed.
    Unasked,
    /// Reported, not listed (the plan does not descend into it, or it became a directory after
    /// it was listed as something else).
    Skip,
    /// Listed ahead by the pool.
    Job(Arc<Job>),
}

/// A directory listed: its rules and its admitted entries, sorted.
#[derive(Debug)]
pub(super) struct Listing {
    pub rules: Arc<DirRules>,
    pub children: Vec<Child>,
}

/// What every listing of one walk shares.
pub(super) struct Lister<'a> {
    pub ws: &'a Path,
    pub plan: &'a dyn Plan,
    pub excluded: Vec<RelPath>,
    pub scope: Scope,
}

impl Lister<'_> {
    /// List the directory `rel` below the directories whose rules are `chain`.
    pub(super) fn list(&self, rel: &RelPath, chain: &[Arc<DirRules>]) -> io::Result<Listing> {
        let dir = rel.on(self.ws);
        let mut names = Names::default();
        let mut raw = Vec::new();
        for entry in fs::read_dir(&dir)? {
            let entry = entry?;
            let name = entry.file_name().into_vec();
            names.note(&name);
            raw.push((name, entry));
        }
        let rules = self.scope.rules_of(
            &dir,
            rel.as_bytes(),
            names,
            chain.last().map(|r| r.as_ref()),
        );
        let every_file = self.plan.admits_every_file();
        let mut children = Vec::with_capacity(raw.len());
        for (name, entry) in raw {
            if name == b".git" {
                continue;
            }
            let path = rel.join(&name);
            let is_dir = match entry.file_type() {
                Ok(t) => t.is_dir(),
                Err(err) => {
                    children.push(Child {
                        path,
                        what: Listed::Failed(err),
                    });
                    continue;
                }
            };
            if self.scope.ignored(chain, &rules, path.as_bytes(), is_dir)
                || self.excluded.contains(&path)
                || !((every_file && !is_dir) || self.plan.admit(&path, is_dir))
            {
                continue;
            }
            let what = if is_dir {
                Listed::Dir(Next::Unasked)
            } else {
                match entry.metadata() {
                    Ok(meta) => {
                        let ft = meta.file_type();
                        if ft.is_dir() {
                            Listed::Dir(Next::Skip)
                        } else if ft.is_file() {
                            Listed::Entry(Kind::File, Stat::of(&meta))
                        } else if ft.is_symlink() {
                            Listed::Entry(Kind::Symlink, Stat::of(&meta))
                        } else {
                            Listed::Entry(Kind::Special, Stat::of(&meta))
                        }
                    }
                    // Gone since it was listed: not part of this walk.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => Listed::Failed(e),
                }
            };
            children.push(Child { path, what });
        }
        let at = if rel.is_root() {
            0
        } else {
            rel.as_bytes().len() + 1
        };
        children.sort_unstable_by(|a, b| order(a, b, at));
        Ok(Listing {
            rules: Arc::new(rules),
            children,
        })
    }
}

/// Path order: bytewise, a directory as its name and a `/` (so everything it holds, which comes
/// right after it, sorts among its siblings as it does in a list of whole paths). The names
/// start at `at` in the children's paths.
fn order(a: &Child, b: &Child, at: usize) -> std::cmp::Ordering {
    let (x, y) = (
        a.path.as_bytes().get(at..).unwrap_or_default(),
        b.path.as_bytes().get(at..).unwrap_or_default(),
    );
    let n = x.len().min(y.len());
    match x.get(..n).cmp(&y.get(..n)) {
        std::cmp::Ordering::Equal => {}
        other => return other,
    }
    // One name starts the other: what follows it decides (nothing, or a directory's `/`).
    let next = |name: &[u8], c: &Child| {
        name.get(n)
            .copied()
            .or_else(|| matches!(c.what, Listed::Dir(_)).then_some(b'/'))
    };
    next(x, a).cmp(&next(y, b))
}

/// A directory to list ahead of the walk.
#[derive(Debug)]
pub(super) struct Job {
    rel: RelPath,
    chain: Vec<Arc<DirRules>>,
    state: Mutex<State>,
    done: Condvar,
}

#[derive(Debug)]
enum State {
    Queued,
    Taken,
    Done(io::Result<Listing>),
    Handed,
}

/// The listings waiting for a thread, and whether the walk is over.
#[derive(Default)]
pub(super) struct Pool {
    queue: Mutex<(VecDeque<Arc<Job>>, bool)>,
    more: Condvar,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Pool {
    /// Queue the listing of `rel` (below the directories whose rules are `chain`).
    pub(super) fn submit(&self, rel: RelPath, chain: Vec<Arc<DirRules>>) -> Arc<Job> {
        let job = Arc::new(Job {
            rel,
            chain,
            state: Mutex::new(State::Queued),
            done: Condvar::new(),
        });
        lock(&self.queue).0.push_back(job.clone());
        self.more.notify_one();
        job
    }

    /// Make listings until the walk is over.
    pub(super) fn work(&self, lister: &Lister) {
        loop {
            let job = {
                let mut q = lock(&self.queue);
                loop {
                    if q.1 {
                        return;
                    }
                    if let Some(job) = q.0.pop_front() {
                        break job;
                    }
                    q = self.more.wait(q).unwrap_or_else(|p| p.into_inner());
                }
            };
            {
                let mut state = lock(&job.state);
                if !matches!(*state, State::Queued) {
                    continue;
                }
                *state = State::Taken;
            }
            let listing = lister.list(&job.rel, &job.chain);
            *lock(&job.state) = State::Done(listing);
            job.done.notify_all();
        }
    }

    /// The walk is over: the threads leave, what is queued is dropped.
    pub(super) fn close(&self) {
        let mut q = lock(&self.queue);
        q.1 = true;
        q.0.clear();
        drop(q);
        self.more.notify_all();
    }
}

impl Job {
    /// The listing, made here if no thread took it up yet, else waited for.
    pub(super) fn take(&self, lister: &Lister) -> io::Result<Listing> {
        let mut state = lock(&self.state);
        loop {
            match std::mem::replace(&mut *state, State::Handed) {
                State::Queued => {
                    *state = State::Taken;
                    drop(state);
                    return lister.list(&self.rel, &self.chain);
                }
                State::Done(listing) => return listing,
                State::Taken => {
                    *state = State::Taken;
                    state = self.done.wait(state).unwrap_or_else(|p| p.into_inner());
                }
                State::Handed => return Err(io::Error::other("listed twice")),
            }
        }
    }
}
