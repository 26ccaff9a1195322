//! Where a sandboxed command may write: the [`WritableSet`] of a policy for one workspace,
//! built again for every command (so it sees the workspace as it is then).
//!
//! - *Workspace-write*: the workspace, the configured paths, the temp dirs and the device files.
//!   When the workspace is a git repository (it holds `.git`), its `.git` stays read-only: a
//!   command that could write there could plant a hook, a `core.fsmonitor` or a clean/smudge filter
//!   that git runs later outside the sandbox (flower-tui's own git, the user's next `git commit`).
//!   Two routes ([`GitRoute`]):
//!   - *A read-only mount* ([`GitRoute::ReadOnlyMount`]), where user namespaces work (Linux,
//!     `mounts.rs`): the command runs in a mount namespace of its own in which `.git` is a
//!     read-only bind of itself, and the workspace is granted whole. A `.git` file (a worktree's
//!     or a submodule's pointer to its git folder) is bound the same way, so it cannot be pointed
//!     elsewhere; the git folder it names is outside the workspace as a rule, and so not writable.
//!   - *Entry by entry* ([`GitRoute::EntryByEntry`]), elsewhere (and for a `.git` that is a
//!     symlink, which a command could replace): Landlock only adds grants, and a grant on a folder
//!     covers everything below it, so everything inside each top-level entry but `.git` is granted
//!     (folders whole, files for writing), and nothing on the workspace folder itself. So a
//!     command cannot create, rename or delete entries at the top level either (that would let it
//!     move `.git` away and put a folder of its own in its place); a top-level file made by
//!     `write_file` or by a command run outside the sandbox is writable from the next command on.
//!     Symlinked entries are not granted (the kernel checks where they lead, which is granted or
//!     not on its own).
//!
//!   A configured writable path that holds the workspace grants it whole, `.git` included by the
//!   entry-by-entry route (the user asked for that). Not protected by either route: a `.git` a
//!   command creates further down (a nested repository), or at the top of a workspace that has
//!   none (one inside a repository whose `.git` is in a parent folder, which is outside and so
//!   not writable, or none at all): git run there later would use it.
//! - *Read-only*: the temp dirs and the device files only.
//! - In both, a temp dir that holds the workspace is never granted: a command could otherwise
//!   move the workspace aside, put an empty folder in its place and, from the next command on,
//!   write the real `.git` unguarded (the workspace's identity is checked too: `anchor.rs`). On
//!   the entry-by-entry route the same goes for a temp dir that holds a worktree's git folders.
//!   `TMPDIR` then points commands at a temp dir still granted ([`WritableSet::tmpdir`]).
//! - [`WritableSet::read_only`] are the paths inside the writable places that the mount route
//!   keeps read-only: the workspace's `.git` and, for a `.git` file (a worktree, a submodule), the
//!   git folders it names when they lie in a writable place (a repository in a temp dir).

use std::path::{Path, PathBuf};

use super::{SandboxMode, SandboxPolicy};

/// Temp dirs writable in every sandboxed mode, besides `$TMPDIR`.
const TEMP_DIRS: [&str; 3] = ["/tmp", "/var/tmp", "/dev/shm"];

/// The temp dirs every sandboxed command may write: `$TMPDIR` (or the system's default) and
/// [`TEMP_DIRS`].
fn temp_dirs() -> Vec<PathBuf> {
    let mut temps = vec![std::env::temp_dir()];
    temps.extend(TEMP_DIRS.iter().map(PathBuf::from));
    temps
}

/// Whether `path` lies in a temp dir every sandboxed command may write (compared after resolving
/// links, so `/tmp` through a symlink counts too).
pub fn in_a_temp_dir(path: &Path) -> bool {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    temp_dirs()
        .iter()
        .filter_map(|t| t.canonicalize().ok())
        .any(|t| path.starts_with(t))
}

/// Device files a shell and its programs write or open. Not `/dev/pts`: the user's terminal is
/// there; a command gets a private one where the mount route runs (`mounts.rs`).
const DEVICES: [&str; 7] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
];

/// Why a path is writable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootKind {
    /// The workspace, or one of its top-level entries when its `.git` is protected.
    Workspace,
    Temp,
    Configured,
    Device,
}

/// One writable path: a directory (everything below it) or a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    pub kind: RootKind,
    /// Canonical where it exists.
    pub path: PathBuf,
}

impl Root {
    fn new(kind: RootKind, path: &Path) -> Self {
        Root {
            kind,
            path: std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
        }
    }
}

/// How a workspace's `.git` is kept read-only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GitRoute {
    /// A read-only bind mount in the command's own namespaces; the workspace is granted whole.
    ReadOnlyMount,
    /// Each top-level entry but `.git` granted; the top level itself is closed.
    EntryByEntry,
}

impl GitRoute {
    /// The route on this machine for a `.git` that is `git`: the mount where namespaces work
    /// (`namespaces`) and `.git` is a folder or a file, entry by entry otherwise.
    pub fn choose(namespaces: bool, git: &std::fs::Metadata) -> GitRoute {
        if namespaces && !git.file_type().is_symlink() {
            GitRoute::ReadOnlyMount
        } else {
            GitRoute::EntryByEntry
        }
    }
}

/// A workspace whose repository metadata commands may not write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitGuard {
    /// The workspace (canonical).
    pub workspace: PathBuf,
    /// Its `.git`.
    pub repository: PathBuf,
    pub route: GitRoute,
}

impl GitGuard {
    /// Whether `path` (resolved) is one the guard keeps from commands: the workspace's `.git`
    /// and, entry by entry, a top-level entry of the workspace that was not granted (the
    /// workspace itself too).
    pub fn protects(&self, path: &Path, set: &WritableSet) -> bool {
        let Ok(rest) = path.strip_prefix(&self.workspace) else {
            return false;
        };
        match self.route {
            GitRoute::ReadOnlyMount => rest.starts_with(".git"),
            GitRoute::EntryByEntry => {
                !set.granted(path) && (rest.components().count() <= 1 || rest.starts_with(".git"))
            }
        }
    }
}

/// Every path a sandboxed command may write.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WritableSet {
    pub roots: Vec<Root>,
    /// Set when the workspace is granted entry by entry to keep its `.git` read-only.
    pub guard: Option<GitGuard>,
    /// The temp dir commands are pointed at (`TMPDIR`) when the usual one was left out because it
    /// holds the workspace.
    pub tmpdir: Option<PathBuf>,
    /// Paths inside the writable places kept read-only on the mount route: the workspace's `.git`
    /// and the git folders a `.git` file names.
    pub read_only: Vec<PathBuf>,
}

impl WritableSet {
    /// Where a command under `policy` may write, for `workspace`, with `.git` protected by a
    /// read-only mount where this machine allows it.
    pub fn of(policy: &SandboxPolicy, workspace: &Path) -> WritableSet {
        WritableSet::with_namespaces(policy, workspace, super::namespaces_available())
    }

    /// [`WritableSet::of`] on a machine where user namespaces work (`namespaces`) or not.
    pub fn with_namespaces(
        policy: &SandboxPolicy,
        workspace: &Path,
        namespaces: bool,
    ) -> WritableSet {
        let mut set = WritableSet::default();
        if policy.mode == SandboxMode::Off {
            return set;
        }
        let ws = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        if policy.mode == SandboxMode::WorkspaceWrite {
            let guard = repository_of(&ws).map(|(repository, meta)| GitGuard {
                workspace: ws.clone(),
                repository,
                route: GitRoute::choose(namespaces, &meta),
            });
            match guard.as_ref().map(|g| g.route) {
                Some(GitRoute::EntryByEntry) => set.roots.extend(entries_but_git(&ws)),
                Some(GitRoute::ReadOnlyMount) | None => {
                    set.roots.push(Root::new(RootKind::Workspace, &ws));
                }
            }
            set.guard = guard;
            set.roots.extend(
                policy
                    .writable
                    .iter()
                    .map(|p| Root::new(RootKind::Configured, p)),
            );
        }
        // A worktree's (or submodule's) git folders: kept read-only by a mount where that works,
        // else no temp dir that holds them is granted.
        let git_dirs = git_folders_named_by(&ws.join(".git"));
        let default_temp = std::env::temp_dir().canonicalize().ok();
        let mut default_left_out = false;
        for t in temp_dirs() {
            let root = Root::new(RootKind::Temp, &t);
            if !t.exists() || set.roots.iter().any(|r| r.path == root.path) {
                continue;
            }
            let holds_git = !namespaces && git_dirs.iter().any(|g| g.starts_with(&root.path));
            if ws.starts_with(&root.path) || holds_git {
                default_left_out |= default_temp.as_ref() == Some(&root.path);
                continue;
            }
            set.roots.push(root);
        }
        if let Some(g) = set
            .guard
            .as_ref()
            .filter(|g| g.route == GitRoute::ReadOnlyMount)
        {
            set.read_only.push(g.repository.clone());
        }
        if namespaces {
            let granted: Vec<PathBuf> = git_dirs.into_iter().filter(|d| set.granted(d)).collect();
            set.read_only.extend(granted);
        }
        if default_left_out {
            set.tmpdir = set
                .roots
                .iter()
                .find(|r| r.kind == RootKind::Temp)
                .map(|r| r.path.clone());
        }
        set.roots.extend(
            DEVICES
                .iter()
                .map(|d| Root::new(RootKind::Device, Path::new(d)))
                .filter(|r| r.path.exists()),
        );
        set
    }

    /// Whether writing the resolved `path` is allowed.
    pub fn allows(&self, path: &Path) -> bool {
        self.granted(path) && !self.read_only.iter().any(|r| path.starts_with(r))
    }

    /// Whether a root covers `path` (a read-only mount may still refuse it).
    fn granted(&self, path: &Path) -> bool {
        self.roots.iter().any(|r| path.starts_with(&r.path))
    }

    /// The `.git` to mount read-only for a command, if that is the route.
    pub fn read_only_mount(&self) -> Option<&Path> {
        self.guard
            .as_ref()
            .filter(|g| g.route == GitRoute::ReadOnlyMount)
            .map(|g| g.repository.as_path())
    }

    /// Whether `path` (resolved) is refused because the workspace's `.git` is protected.
    pub fn guards(&self, path: &Path) -> bool {
        self.guard.as_ref().is_some_and(|g| g.protects(path, self))
    }

    /// The paths, in order, for the rules (devices last).
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.roots.iter().map(|r| r.path.as_path())
    }

    /// In words, for a note to the model: `the workspace (/w), the temp dirs (/tmp, /var/tmp),
    /// /opt/cache and /dev/null`.
    pub fn describe(&self) -> String {
        let list = |kind: RootKind| -> Vec<String> {
            self.roots
                .iter()
                .filter(|r| r.kind == kind)
                .map(|r| r.path.display().to_string())
                .collect()
        };
        let mut parts = Vec::new();
        match &self.guard {
            Some(g) if g.route == GitRoute::ReadOnlyMount => parts.push(format!(
                "the workspace ({}) but not its `.git`",
                g.workspace.display()
            )),
            Some(g) => parts.push(format!(
                "the workspace ({}) but not its `.git` nor its top level itself (files there can \
                 be changed; entries cannot be created, renamed or deleted there)",
                g.workspace.display()
            )),
            None => {
                if let Some(ws) = list(RootKind::Workspace).first() {
                    parts.push(format!("the workspace ({ws})"));
                }
            }
        }
        let temps = list(RootKind::Temp);
        if !temps.is_empty() {
            parts.push(format!("the temp dirs ({})", temps.join(", ")));
        }
        parts.extend(list(RootKind::Configured));
        if !list(RootKind::Device).is_empty() {
            parts.push("/dev/null and the terminal".to_string());
        }
        match parts.split_last() {
            None => "nowhere".to_string(),
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        }
    }
}

/// The workspace's own `.git` (a folder, or the file a worktree or submodule has) and what it is,
/// if it has one.
fn repository_of(ws: &Path) -> Option<(PathBuf, std::fs::Metadata)> {
    let git = ws.join(".git");
    std::fs::symlink_metadata(&git).ok().map(|m| (git, m))
}

/// The git folders a `.git` file names (`gitdir: …`, and the common folder its `commondir`
/// names), canonical; nothing for a `.git` folder or an unreadable file.
fn git_folders_named_by(git: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(git) else {
        return Vec::new();
    };
    let Some(named) = text.lines().find_map(|l| l.strip_prefix("gitdir:")) else {
        return Vec::new();
    };
    let base = git.parent().unwrap_or(git);
    let Ok(gitdir) = base.join(named.trim()).canonicalize() else {
        return Vec::new();
    };
    let common = std::fs::read_to_string(gitdir.join("commondir"))
        .ok()
        .and_then(|c| gitdir.join(c.trim()).canonicalize().ok());
    let mut dirs = vec![gitdir];
    dirs.extend(common);
    dirs
}

/// The workspace's top-level entries but `.git`, each granted whole; symlinks are left out (the
/// kernel checks where they lead). An entry that vanishes meanwhile is skipped.
fn entries_but_git(ws: &Path) -> Vec<Root> {
    let Ok(read) = std::fs::read_dir(ws) else {
        return Vec::new();
    };
    let mut roots: Vec<Root> = read
        .filter_map(Result::ok)
        .filter(|e| e.file_name() != ".git")
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_symlink()))
        .map(|e| Root {
            kind: RootKind::Workspace,
            path: e.path(),
        })
        .collect();
    roots.sort_by(|a, b| a.path.cmp(&b.path));
    roots
}
