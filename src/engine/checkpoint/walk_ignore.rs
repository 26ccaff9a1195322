//! Which `.gitignore` files a walk applies to an entry, and in what order (see `walk` for the
//! rules as a user sees them). The scoping is the one the `ignore` crate's walker applied before
//! the walk was our own, kept exactly so a checkpoint's id does not depend on which walker took
//! it:
//!
//! - Each directory's `.gitignore` (read when the listing names one and it exists, following a
//!   link) is a matcher rooted at that directory. An entry is ignored when the nearest matcher that
//!   says anything about it (from its own directory up) says "ignore"; a negation (`!pattern`)
//!   there keeps it.
//! - When the workspace lies inside a repository (`require_git`), a directory holding `.git` (or
//!   `.jj`) is a repository's root: the search up stops after its matcher. The directories above
//!   the workspace, up to the first such root, add their matchers after the workspace's own. An
//!   entry where no directory on its way (above the workspace included) is a repository's root is
//!   never ignored.
//! - Outside a repository, every `.gitignore` from the workspace down applies and none above it;
//!   a nested repository is no boundary then.
//! - A `.gitignore` that cannot be read or parsed applies what could be parsed, silently.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// What one directory adds to the rules.
#[derive(Debug)]
pub(super) struct DirRules {
    gitignore: Option<Gitignore>,
    /// It is a repository's root (as far as the scoping goes).
    has_git: bool,
    /// Some directory from the top of the chain down to this one is a repository's root.
    any_git: bool,
    /// The length of its path relative to the workspace and a `/` (0 for the workspace).
    prefix: usize,
}

/// A directory above the workspace: its matcher and the workspace's path relative to it.
#[derive(Debug)]
struct Above {
    gitignore: Option<Gitignore>,
    has_git: bool,
    /// The workspace's path relative to it, `/`-terminated.
    prefix: Vec<u8>,
}

/// The rules of one walk: those above the workspace, and the scoping; the rules of the
/// directories from the workspace down to a directory are that directory's chain of [`DirRules`].
#[derive(Debug)]
pub(super) struct Scope {
    require_git: bool,
    above: Vec<Above>,
    above_any_git: bool,
}

/// What a listing says of a directory's special names.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Names {
    pub gitignore: bool,
    pub git: bool,
    pub jj: bool,
}

impl Names {
    pub(super) fn note(&mut self, name: &[u8]) {
        match name {
            b".gitignore" => self.gitignore = true,
            b".git" => self.git = true,
            b".jj" => self.jj = true,
            _ => {}
        }
    }
}

impl Scope {
    /// The rules for a walk of `ws`; `require_git`: the workspace lies inside a repository.
    pub(super) fn new(ws: &Path, require_git: bool) -> Scope {
        let mut scope = Scope {
            require_git,
            above: Vec::new(),
            above_any_git: false,
        };
        let ws_is_root = fs::metadata(ws.join(".git")).is_ok() || ws.join(".jj").exists();
        if !require_git || ws_is_root {
            // Above a repository's root nothing is asked (the search up stops at it).
            return scope;
        }
        let Ok(canonical) = ws.canonicalize() else {
            return scope;
        };
        for dir in canonical.ancestors().skip(1) {
            let Ok(rel) = canonical.strip_prefix(dir) else {
                break;
            };
            let mut prefix = rel.as_os_str().as_bytes().to_vec();
            prefix.push(b'/');
            let has_git = dir.join(".git").exists() || dir.join(".jj").exists();
            let path = dir.join(".gitignore");
            let gitignore = path.exists().then(|| read(dir, &path)).flatten();
            scope.above.push(Above {
                gitignore,
                has_git,
                prefix,
            });
            if has_git {
                scope.above_any_git = true;
                break;
            }
        }
        scope
    }

    /// The rules of the directory `dir` (its path `rel`, its listing's special `names`) below
    /// the directory whose rules are `parent` (None for the workspace).
    pub(super) fn rules_of(
        &self,
        dir: &Path,
        rel: &[u8],
        names: Names,
        parent: Option<&DirRules>,
    ) -> DirRules {
        let has_git = self.require_git
            && ((names.git && fs::metadata(dir.join(".git")).is_ok())
                || (names.jj && dir.join(".jj").exists()));
        let path = dir.join(".gitignore");
        let gitignore = (names.gitignore && path.exists())
            .then(|| read(dir, &path))
            .flatten();
        let parent_any = parent.map_or(self.above_any_git, |f| f.any_git);
        DirRules {
            gitignore,
            has_git,
            any_git: parent_any || has_git,
            prefix: if rel.is_empty() { 0 } else { rel.len() + 1 },
        }
    }

    /// Whether the entry `rel` (relative to the workspace) of the directory whose rules are
    /// `own`, below the directories whose rules are `chain` (from the workspace down), is ignored.
    pub(super) fn ignored(
        &self,
        chain: &[Arc<DirRules>],
        own: &DirRules,
        rel: &[u8],
        is_dir: bool,
    ) -> bool {
        if self.require_git && !own.any_git {
            return false;
        }
        for rules in std::iter::once(own).chain(chain.iter().rev().map(|r| r.as_ref())) {
            if let Some(gi) = &rules.gitignore {
                let sub = rel.get(rules.prefix..).unwrap_or_default();
                let m = gi.matched(Path::new(OsStr::from_bytes(sub)), is_dir);
                if !m.is_none() {
                    return m.is_ignore();
                }
            }
            if rules.has_git {
                return false;
            }
        }
        let mut full = Vec::new();
        for above in &self.above {
            if let Some(gi) = &above.gitignore {
                full.clear();
                full.extend_from_slice(&above.prefix);
                full.extend_from_slice(rel);
                let m = gi.matched(Path::new(OsStr::from_bytes(&full)), is_dir);
                if !m.is_none() {
                    return m.is_ignore();
                }
            }
            if above.has_git {
                return false;
            }
        }
        false
    }
}

/// The matcher of the `.gitignore` at `path` in `dir` (None when it holds no rule).
fn read(dir: &Path, path: &Path) -> Option<Gitignore> {
    let mut builder = GitignoreBuilder::new(dir);
    // A line that does not parse is left out; the others apply.
    let _ = builder.add(path);
    builder.build().ok().filter(|gi| !gi.is_empty())
}
