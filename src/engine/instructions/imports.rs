//! `@path` imports in instruction files, as Claude Code reads them in `CLAUDE.md`: a word that
//! starts with `@` (at a line's start or after a space) names a file, relative to the importing
//! file's folder, absolute, or under the home with `@~/`. Nothing inside a code span or a fenced
//! code block is an import, and a word that names no file is text (an `@mention`, an address).
//! Imported files may import in turn, at most [`MAX_DEPTH`] deep; each file is read once, so a
//! file that imports itself, or two that import each other, end there.
//!
//! What an import may reach: the user's own files (`<config_dir>/flower/AGENTS.md`,
//! `~/.claude/CLAUDE.md`) anything but secrets; a repository's files only the repository (from
//! the git root, else the workspace) and `~/.claude/`, so a cloned repository cannot pull the
//! user's other files into a request. Secrets are never imported, whoever asks: key folders
//! (`~/.ssh`, `~/.gnupg`, `~/.aws`, …), `/etc/shadow` and the like, `/proc`, `/sys`, `/dev`,
//! `.env` files, private keys and credential files. Whatever is imported is masked like every
//! other text flower-tui sends.

use std::path::{Component, Path, PathBuf};

/// How many imports deep a chain may go (Claude Code's limit).
pub(super) const MAX_DEPTH: usize = 5;

/// One `@` word of a file.
pub(super) enum Import {
    /// It names this file (resolved, not yet checked).
    File(PathBuf),
    /// It names nothing that is a file: text.
    Missing,
}

/// Who imports, and so what may be imported.
pub(super) struct Scope<'a> {
    pub(super) home: Option<&'a Path>,
    /// The repository (git root, else the workspace).
    pub(super) top: &'a Path,
    /// The importing chain started at one of the user's own files.
    pub(super) trusted: bool,
}

/// Folders under the home that hold keys and credentials.
const SECRET_HOME_DIRS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".password-store",
    ".config/gcloud",
    ".config/gh",
    ".local/share/keyrings",
];

/// System files and trees no instruction file may import.
const SECRET_SYSTEM: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/ssh",
    "/proc",
    "/sys",
    "/dev",
    "/root",
];

impl Scope<'_> {
    /// Why `target` may not be imported here, if it may not.
    pub(super) fn refusal(&self, target: &Path) -> Option<&'static str> {
        let real = identity(target);
        for path in [target, real.as_path()] {
            if is_secret(path, self.home) {
                return Some("it holds secrets (keys, credentials), which are never imported");
            }
        }
        if self.trusted {
            return None;
        }
        let top = identity(self.top);
        let claude_home = self.home.map(|h| identity(&h.join(".claude")));
        let inside =
            real.starts_with(&top) || claude_home.as_ref().is_some_and(|c| real.starts_with(c));
        (!inside).then_some(
            "a repository's instruction file imports only from the repository and ~/.claude/",
        )
    }
}

/// The file a path names once links are followed (itself when it cannot be resolved).
pub(super) fn identity(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

fn is_secret(path: &Path, home: Option<&Path>) -> bool {
    if SECRET_SYSTEM.iter().any(|s| path.starts_with(s)) {
        return true;
    }
    if let Some(home) = home {
        for h in [home.to_path_buf(), identity(home)] {
            if SECRET_HOME_DIRS.iter().any(|d| path.starts_with(h.join(d))) {
                return true;
            }
            for file in [
                ".netrc",
                ".pgpass",
                ".git-credentials",
                ".claude/.credentials.json",
            ] {
                if path == h.join(file) {
                    return true;
                }
            }
        }
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    name == ".env"
        || name.starts_with(".env.")
        || (name.starts_with("id_") && !name.ends_with(".pub"))
        || name.ends_with(".pem")
        || name.ends_with(".key")
        || name.ends_with(".p12")
        || name.ends_with(".pfx")
        || name.contains("credentials")
        || name.contains("secret")
}

/// The `@` words of `text` (the file at `path`) in order, outside code.
pub(super) fn find(text: &str, path: &Path, home: Option<&Path>) -> Vec<Import> {
    let dir = path.parent().unwrap_or(Path::new("/"));
    let mut out = Vec::new();
    let mut fence: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(open) = fence {
            if trimmed.starts_with(open) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") {
            fence = Some("```");
            continue;
        }
        if trimmed.starts_with("~~~") {
            fence = Some("~~~");
            continue;
        }
        for word in words_outside_code(line) {
            let Some(raw) = word.strip_prefix('@') else {
                continue;
            };
            if raw.is_empty() {
                continue;
            }
            out.push(resolve(raw, dir, home));
        }
    }
    out
}

/// The words of `line` that are not in a code span.
fn words_outside_code(line: &str) -> Vec<&str> {
    let mut words = Vec::new();
    for (i, piece) in line.split('`').enumerate() {
        if i % 2 == 0 {
            words.extend(piece.split_whitespace());
        }
    }
    words
}

/// The file `raw` names from `dir`; a word with trailing punctuation names the file without it.
fn resolve(raw: &str, dir: &Path, home: Option<&Path>) -> Import {
    let mut candidates = vec![raw];
    let bare = raw.trim_end_matches(['.', ',', ';', ':', ')', '!', '?']);
    if bare != raw && !bare.is_empty() {
        candidates.push(bare);
    }
    for c in candidates {
        let path = if let Some(rest) = c.strip_prefix("~/") {
            match home {
                Some(h) => h.join(rest),
                None => continue,
            }
        } else if c.starts_with('/') {
            PathBuf::from(c)
        } else {
            dir.join(c)
        };
        let path = fold(&path);
        if path.is_file() {
            return Import::File(path);
        }
    }
    Import::Missing
}

/// `.` and `..` folded without following links.
fn fold(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
