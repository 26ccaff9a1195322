//! The workspace's files for `@path` completion: an index built off the caller's thread (a
//! background walk that respects `.gitignore`, like the search tools), queried with fuzzy
//! matching (`nucleo-matcher`, the matcher of the helix editor, in its path mode).
//!
//! Queries answer at once from what is indexed so far: while the first walk runs they see a
//! growing list (`complete: false`), and while a refresh runs they see the last complete list.
//! A file the agent creates can be added without a walk ([`FileIndex::note`]).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

use nucleo_matcher::pattern::{AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use serde::Serialize;

/// Paths handed from the walker to the index at a time (a query sees them as soon as a batch is
/// in).
const BATCH: usize = 512;
/// At most this many paths are indexed (a larger tree is cut, and says so).
pub(crate) const MAX_PATHS: usize = 1_000_000;

/// One indexed path, relative to the workspace with `/` separators; a directory ends in `/`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Entry(String);

/// How good a match is: a higher score, then a shorter path, then an earlier entry.
type Rank = (u32, Reverse<usize>, Reverse<usize>);

/// One match of a query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileMatch {
    /// Relative to the workspace, `/` separated; a directory ends in `/`.
    pub path: String,
    pub score: u32,
    /// The matched characters (char indices into `path`), sorted, for highlighting.
    pub indices: Vec<u32>,
}

/// The answer to a query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileMatches {
    /// Best first.
    pub matches: Vec<FileMatch>,
    /// Paths looked at (the index so far).
    pub indexed: usize,
    /// The walk had finished: a query now would see every path.
    pub complete: bool,
}

#[derive(Debug, Default)]
struct State {
    entries: Vec<Entry>,
    complete: bool,
    /// The tree had more than [`MAX_PATHS`] paths.
    truncated: bool,
}

#[derive(Debug)]
struct Shared {
    root: PathBuf,
    state: RwLock<State>,
    walking: AtomicBool,
}

/// A cheap handle: clones share one index.
#[derive(Debug, Clone)]
pub struct FileIndex {
    shared: Arc<Shared>,
}

impl FileIndex {
    /// An index of `root`, empty until [`FileIndex::refresh`] walks it.
    pub fn new(root: impl Into<PathBuf>) -> FileIndex {
        FileIndex {
            shared: Arc::new(Shared {
                root: root.into(),
                state: RwLock::new(State::default()),
                walking: AtomicBool::new(false),
            }),
        }
    }

    /// An index of `root` whose first walk starts now, in the background.
    pub fn start(root: impl Into<PathBuf>) -> FileIndex {
        let index = FileIndex::new(root);
        index.refresh();
        index
    }

    pub fn root(&self) -> &Path {
        &self.shared.root
    }

    /// Walk the tree again in a background thread (nothing happens while a walk runs). The first
    /// walk fills the index as it goes; a later one replaces the list when it is done.
    pub fn refresh(&self) {
        if self.shared.walking.swap(true, Ordering::AcqRel) {
            return;
        }
        let shared = Arc::clone(&self.shared);
        let spawned = std::thread::Builder::new()
            .name("flower-file-index".into())
            .spawn(move || {
                walk(&shared);
                shared.walking.store(false, Ordering::Release);
            });
        if spawned.is_err() {
            self.shared.walking.store(false, Ordering::Release);
        }
    }

    /// Whether a walk is running.
    pub fn is_walking(&self) -> bool {
        self.shared.walking.load(Ordering::Acquire)
    }

    /// Add a path (relative to the root) the agent just created, without a walk.
    pub fn note(&self, rel: &str) {
        let entry = Entry(rel.replace('\\', "/"));
        let mut st = write(&self.shared.state);
        if let Err(at) = st.entries.binary_search(&entry) {
            st.entries.insert(at, entry);
        }
    }

    /// The best `limit` matches of `query` (fuzzy, smart case: a capital letter makes it case
    /// sensitive). An empty query lists the shallowest paths first, directories before files.
    pub fn query(&self, query: &str, limit: usize) -> FileMatches {
        let st = read(&self.shared.state);
        let indexed = st.entries.len();
        let complete = st.complete;
        let query = query.trim();
        if query.is_empty() {
            // Shallow first, directories before files, then by name: the first `limit` picked in
            // linear time, each name lower-cased once and only where it competes (a full sort
            // lower-cased two names per comparison, n·log n of them; the popup opens with this
            // query, over 100,000 paths).
            let rank = |e: &Entry| {
                let name = e.0.trim_end_matches('/');
                (name.matches('/').count(), !e.0.ends_with('/'))
            };
            let mut ranks: Vec<(usize, bool)> = st.entries.iter().map(rank).collect();
            let cut = match limit.checked_sub(1) {
                None => None,
                Some(_) if ranks.len() <= limit => ranks.iter().max().copied(),
                Some(n) => Some(*ranks.select_nth_unstable(n).1),
            };
            // Every entry ranked above the cut is in; those at the cut compete by name.
            let mut all: Vec<((usize, bool), String, &str)> = st
                .entries
                .iter()
                .filter(|e| cut.is_some_and(|c| rank(e) <= c))
                .map(|e| {
                    (
                        rank(e),
                        e.0.trim_end_matches('/').to_lowercase(),
                        e.0.as_str(),
                    )
                })
                .collect();
            if all.len() > limit && limit > 0 {
                all.select_nth_unstable(limit - 1);
                all.truncate(limit);
            }
            all.sort_unstable();
            let matches = all
                .into_iter()
                .map(|e| FileMatch {
                    path: e.2.to_string(),
                    score: 0,
                    indices: Vec::new(),
                })
                .collect();
            return FileMatches {
                matches,
                indexed,
                complete,
            };
        }
        let pattern = Pattern::new(
            query,
            CaseMatching::Smart,
            Normalization::Smart,
            AtomKind::Fuzzy,
        );
        let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
        let mut buf = Vec::new();
        // The best `limit`: a min-heap of ranks, by index into the list.
        let mut best: BinaryHeap<Reverse<Rank>> = BinaryHeap::with_capacity(limit + 1);
        for (i, e) in st.entries.iter().enumerate() {
            let Some(score) = pattern.score(Utf32Str::new(&e.0, &mut buf), &mut matcher) else {
                continue;
            };
            best.push(Reverse((score, Reverse(e.0.len()), Reverse(i))));
            if best.len() > limit {
                best.pop();
            }
        }
        let mut ranked: Vec<(u32, usize, usize)> = best
            .into_iter()
            .map(|Reverse((s, Reverse(len), Reverse(i)))| (s, len, i))
            .collect();
        ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let matches = ranked
            .into_iter()
            .filter_map(|(score, _, i)| {
                let e = st.entries.get(i)?;
                let mut indices = Vec::new();
                pattern.indices(Utf32Str::new(&e.0, &mut buf), &mut matcher, &mut indices);
                indices.sort_unstable();
                indices.dedup();
                Some(FileMatch {
                    path: e.0.clone(),
                    score,
                    indices,
                })
            })
            .collect();
        FileMatches {
            matches,
            indexed,
            complete,
        }
    }

    /// Whether the last walk stopped at [`MAX_PATHS`].
    pub fn truncated(&self) -> bool {
        read(&self.shared.state).truncated
    }
}

fn read(lock: &RwLock<State>) -> RwLockReadGuard<'_, State> {
    lock.read().unwrap_or_else(|p| p.into_inner())
}

fn write(lock: &RwLock<State>) -> RwLockWriteGuard<'_, State> {
    lock.write().unwrap_or_else(|p| p.into_inner())
}

/// The paths one walker thread found and has not handed over yet; handed over when full and
/// when the thread is done (on drop).
struct Batch<'a> {
    entries: Vec<Entry>,
    first: bool,
    shared: &'a Shared,
    found: &'a Mutex<Vec<Entry>>,
}

impl Batch<'_> {
    fn publish(&mut self) {
        if self.entries.is_empty() {
            return;
        }
        if self.first {
            write(&self.shared.state).entries.append(&mut self.entries);
        } else {
            self.found
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .append(&mut self.entries);
        }
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        self.publish();
    }
}

/// A walker over `root` with the rules the file index and every search tool share: `.gitignore`
/// (also outside a git repository, and those of parent directories), no hidden entries, links not
/// followed.
pub(crate) fn walk_rules(root: &Path) -> ignore::WalkBuilder {
    let mut b = ignore::WalkBuilder::new(root);
    b.hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .parents(true)
        .follow_links(false);
    b
}

/// Walk the tree (parallel, `.gitignore` respected, no hidden entries); the first walk publishes
/// batches as they come, a refresh swaps the finished list in.
fn walk(shared: &Shared) {
    let first = !read(&shared.state).complete;
    if first {
        write(&shared.state).entries.clear();
    }
    let found: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
    let count = std::sync::atomic::AtomicUsize::new(0);
    let truncated = AtomicBool::new(false);
    let root = shared.root.clone();
    let mut builder = walk_rules(&root);
    builder.threads(2);
    builder.build_parallel().run(|| {
        let mut batch = Batch {
            entries: Vec::with_capacity(BATCH),
            first,
            shared,
            found: &found,
        };
        let root = root.clone();
        let (count, truncated) = (&count, &truncated);
        Box::new(move |item| {
            use ignore::WalkState;
            let Ok(entry) = item else {
                return WalkState::Continue;
            };
            if entry.depth() == 0 {
                return WalkState::Continue;
            }
            if count.fetch_add(1, Ordering::Relaxed) >= MAX_PATHS {
                truncated.store(true, Ordering::Relaxed);
                return WalkState::Quit;
            }
            let Ok(rel) = entry.path().strip_prefix(&root) else {
                return WalkState::Continue;
            };
            let mut path = rel.to_string_lossy().replace('\\', "/");
            if entry.file_type().is_some_and(|t| t.is_dir()) {
                path.push('/');
            }
            batch.entries.push(Entry(path));
            if batch.entries.len() >= BATCH {
                batch.publish();
            }
            WalkState::Continue
        })
    });
    let mut st = write(&shared.state);
    if !first {
        st.entries = found.into_inner().unwrap_or_else(|p| p.into_inner());
    }
    st.entries.sort_unstable();
    st.entries.dedup();
    st.complete = true;
    st.truncated = truncated.load(Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn tree(files: &[&str]) -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        for f in files {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        (tmp, root)
    }

    fn wait(index: &FileIndex) {
        let start = Instant::now();
        while index.is_walking() || !index.query("", 1).complete {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the walk never ended"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn paths(m: &FileMatches) -> Vec<&str> {
        m.matches.iter().map(|m| m.path.as_str()).collect()
    }

    #[test]
    fn the_empty_query_picks_the_same_first_paths_as_a_full_sort() {
        let mut files = Vec::new();
        for d in ["Beta", "alpha", "gamma/deep", "Alpha2"] {
            for f in ["b.rs", "A.rs", "a.rs", "Zed.md"] {
                files.push(format!("{d}/{f}"));
            }
        }
        files.extend(["top.rs", "Top2.rs", "readme.md", "gamma/x.rs"].map(String::from));
        let names: Vec<&str> = files.iter().map(String::as_str).collect();
        let (_t, root) = tree(&names);
        let index = FileIndex::start(&root);
        wait(&index);
        let all = read(&index.shared.state).entries.clone();
        let mut sorted: Vec<&Entry> = all.iter().collect();
        sorted.sort_by_key(|e| {
            let name = e.0.trim_end_matches('/');
            (
                name.matches('/').count(),
                !e.0.ends_with('/'),
                name.to_lowercase(),
            )
        });
        let want: Vec<&str> = sorted.iter().map(|e| e.0.as_str()).collect();
        for limit in [0, 1, 2, 4, 5, 7, 9, 13, 20, want.len(), want.len() + 5] {
            let got = index.query("", limit);
            let n = limit.min(want.len());
            assert_eq!(paths(&got), want[..n], "limit {limit}");
        }
    }

    #[test]
    fn fuzzy_matches_rank_paths_and_respect_gitignore() {
        let (_t, root) = tree(&[
            "src/main.rs",
            "src/engine/session/mod.rs",
            "src/tui/app.rs",
            "README.md",
            "target/debug/main.rs",
            ".hidden/secret.rs",
            "docs/MAINTAINERS.md",
        ]);
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        let index = FileIndex::start(&root);
        wait(&index);
        let m = index.query("main", 10);
        assert!(m.complete);
        assert_eq!(paths(&m).first(), Some(&"src/main.rs"), "{m:?}");
        assert!(
            !paths(&m).iter().any(|p| p.starts_with("target/")),
            "ignored"
        );
        assert!(
            !paths(&m).iter().any(|p| p.starts_with(".hidden")),
            "hidden"
        );
        let m = index.query("sesmod", 3);
        assert_eq!(paths(&m), ["src/engine/session/mod.rs"]);
        assert_eq!(m.matches[0].indices.len(), 6);
        // Smart case: a capital letter must match a capital.
        assert_eq!(paths(&index.query("MAINT", 5)), ["docs/MAINTAINERS.md"]);
        // Directories are listed with a slash; the empty query lists the shallowest first.
        let top = index.query("", 3);
        assert_eq!(paths(&top), ["docs/", "src/", "README.md"]);
        assert!(paths(&index.query("tui/", 5)).contains(&"src/tui/"));
        assert!(index.query("zzzz", 5).matches.is_empty());
    }

    #[test]
    fn refresh_keeps_answering_and_note_adds_at_once() {
        let (_t, root) = tree(&["a.rs"]);
        let index = FileIndex::start(&root);
        wait(&index);
        index.note("new/made.rs");
        assert_eq!(paths(&index.query("made", 5)), ["new/made.rs"]);
        std::fs::write(root.join("b.rs"), "x").unwrap();
        index.refresh();
        // Meanwhile the last complete list answers.
        assert!(index.query("a.rs", 5).complete);
        wait(&index);
        let all = index.query("rs", 10);
        assert_eq!(
            paths(&all).len(),
            2,
            "the walk's list replaced the noted path: {all:?}"
        );
        assert!(paths(&all).contains(&"b.rs"));
        assert!(!index.truncated());
    }
}
