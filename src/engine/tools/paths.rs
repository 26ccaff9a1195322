//! Workspace containment: resolving the paths a model names, and deciding whether they leave the
//! workspace.
//!
//! A path is resolved against the workspace, `~/` is expanded, `.` and `..` are normalised
//! lexically, and then the longest prefix that exists is canonicalised, so a symlink that points
//! out of the workspace counts as outside. The tools do their I/O on the resolved path, never on
//! the raw one.

use std::ffi::OsString;
use std::fs;
use std::path::{Component, Path, PathBuf};

use super::{ToolCtx, ToolError};
use crate::engine::text::edit_distance;

/// How many dangling symlinks in a row are followed before giving up.
const MAX_LINK_HOPS: usize = 40;

/// The absolute, resolved form of `raw` (see the module docs). Never fails: what cannot be
/// resolved further is kept lexically.
pub fn resolve(workspace: &Path, raw: &str) -> PathBuf {
    let raw = raw.trim();
    let expanded = expand_tilde(raw);
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        canonical_or_self(workspace).join(expanded)
    };
    canonicalize_existing_prefix(&normalize(&joined))
}

/// `path` canonicalised, or `path` itself when that fails.
pub(crate) fn canonical_or_self(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Whether the resolved `path` is `root` or below it.
pub(crate) fn is_within(root: &Path, path: &Path) -> bool {
    path.starts_with(root)
}

/// Where results are spilled when there is no workbench: `<temp>/flower-spill`.
pub(crate) fn default_spill_dir() -> PathBuf {
    std::env::temp_dir().join("flower-spill")
}

/// Where images are stored when no run directory is given ([`super::ToolCtx::new`]).
pub(crate) fn default_image_dir() -> PathBuf {
    std::env::temp_dir().join("flower-images")
}

/// Whether `path` lies in the no-workbench spill folder (`read_file` may read it without approval,
/// since the spill notice tells the model to read its file from there).
pub(crate) fn in_default_spill_dir(path: &Path) -> bool {
    let dir = canonical_or_self(&default_spill_dir());
    path != dir && is_within(&dir, path)
}

/// Resolves `raw` for a tool call and enforces containment: outside the workspace is an error
/// unless the user approved it for this call (or it is a spill file that `read_file` may read).
pub(crate) fn check(ctx: &ToolCtx, raw: &str, may_read_spill: bool) -> Result<PathBuf, ToolError> {
    if raw.trim().is_empty() {
        return Err("The path is empty.".into());
    }
    if raw.contains('\0') {
        return Err("The path contains a NUL byte.".into());
    }
    let workspace = canonical_or_self(&ctx.workspace);
    let path = resolve(&workspace, raw);
    if ctx.allow_outside || is_within(&workspace, &path) {
        return Ok(path);
    }
    if may_read_spill {
        let own_spill = ctx
            .spill_dir
            .as_deref()
            .map(|d| is_within(&canonical_or_self(d), &path))
            .unwrap_or(false);
        let own_images = ctx
            .images
            .as_ref()
            .is_some_and(|store| is_within(&canonical_or_self(store.dir()), &path));
        if own_spill || own_images || in_default_spill_dir(&path) {
            return Ok(path);
        }
    }
    Err(format!(
        "The path `{raw}` resolves to {}, which is outside the workspace ({}). Access outside the \
         workspace needs the user's approval, which this call does not have. Use a path inside the \
         workspace.",
        path.display(),
        workspace.display()
    )
    .into())
}

/// [`check`] for a tool that writes: besides containment, a path in a repository's `.git` (or
/// the `.git` file of a worktree) is refused, wherever it lies. What is written there (a hook, a
/// `core.fsmonitor`, a filter) is run by git later, outside every sandbox.
pub(crate) fn check_write(ctx: &ToolCtx, raw: &str) -> Result<PathBuf, ToolError> {
    let path = check(ctx, raw, false)?;
    if path.components().any(|c| c.as_os_str() == ".git") {
        return Err(format!(
            "`{raw}` is in a repository's `.git`, which the file tools do not write: git runs \
             what its config and hooks name, outside the sandbox. Change the repository with \
             git commands instead (the user may have to run those)."
        )
        .into());
    }
    Ok(path)
}

/// How a resolved path is shown to the model: relative to the workspace when inside it (`.` for
/// the workspace itself), absolute otherwise.
pub fn display(workspace: &Path, path: &Path) -> String {
    let workspace = canonical_or_self(workspace);
    match path.strip_prefix(&workspace) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// A displayed directory in prose: `the workspace` for `.`.
pub(crate) fn in_prose(shown: &str) -> String {
    if shown == "." {
        "the workspace".into()
    } else {
        shown.to_owned()
    }
}

/// A "not found" message naming similar entries of the parent directory, if any.
pub(crate) fn not_found(workspace: &Path, path: &Path, what: &str) -> String {
    let shown = display(workspace, path);
    let Some(parent) = path.parent() else {
        return format!("{what} not found: {shown}");
    };
    if !parent.is_dir() {
        return format!(
            "{what} not found: {shown} (the directory {} does not exist either).",
            display(workspace, parent)
        );
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let similar = similar_names(parent, &name);
    if similar.is_empty() {
        return format!("{what} not found: {shown}");
    }
    let dir = display(workspace, parent);
    let list: Vec<String> = similar
        .iter()
        .map(|n| {
            if dir == "." {
                n.clone()
            } else {
                format!("{dir}/{n}")
            }
        })
        .collect();
    format!(
        "{what} not found: {shown}. Did you mean: {}?",
        list.join(", ")
    )
}

/// Up to five entries of `dir` whose names resemble `name` (case, a typo, another extension).
pub(crate) fn similar_names(dir: &Path, name: &str) -> Vec<String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let want = name.to_lowercase();
    let want_stem = stem(&want);
    let mut scored: Vec<(usize, String)> = entries
        .flatten()
        .take(10_000)
        .filter_map(|e| {
            let candidate = e.file_name().to_string_lossy().into_owned();
            let lower = candidate.to_lowercase();
            let score = if lower == want {
                0
            } else if stem(&lower) == want_stem && !want_stem.is_empty() {
                1
            } else {
                let d = edit_distance(&lower, &want);
                if d <= (want.chars().count() / 4).max(2) {
                    1 + d
                } else if want.len() >= 3 && (lower.contains(&want) || want.contains(&lower)) {
                    10
                } else {
                    return None;
                }
            };
            Some((score, candidate))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(5).map(|(_, n)| n).collect()
}

fn stem(name: &str) -> &str {
    match name.rfind('.') {
        Some(i) if i > 0 => &name[..i],
        _ => name,
    }
}

fn expand_tilde(raw: &str) -> PathBuf {
    let home = || dirs::home_dir();
    if raw == "~" {
        if let Some(h) = home() {
            return h;
        }
    } else if let Some(rest) = raw.strip_prefix("~/")
        && let Some(h) = home()
    {
        return h.join(rest);
    }
    PathBuf::from(raw)
}

/// Removes `.` and resolves `..` without touching the file system (never above the root).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Canonicalises the longest existing prefix of an absolute, normalised path and appends the rest.
fn canonicalize_existing_prefix(path: &Path) -> PathBuf {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINK_HOPS {
        let comps: Vec<OsString> = current
            .components()
            .map(|c| c.as_os_str().to_os_string())
            .collect();
        let mut split = comps.len();
        while split > 0 {
            let prefix: PathBuf = comps.iter().take(split).collect();
            if fs::symlink_metadata(&prefix).is_ok() {
                break;
            }
            split -= 1;
        }
        let prefix: PathBuf = comps.iter().take(split).collect();
        let rest: PathBuf = comps.iter().skip(split).collect();
        if split == 0 {
            return current;
        }
        if let Ok(canon) = fs::canonicalize(&prefix) {
            return if rest.as_os_str().is_empty() {
                canon
            } else {
                canon.join(rest)
            };
        }
        // The prefix exists but does not canonicalise: its last component is a dangling symlink
        // (or unreadable). Follow the link by hand so writing through it cannot escape.
        let Ok(target) = fs::read_link(&prefix) else {
            return current;
        };
        let parent = prefix.parent().map(canonical_or_self).unwrap_or_default();
        let next = if target.is_absolute() {
            target
        } else {
            parent.join(target)
        };
        current = normalize(&next).join(rest);
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap().join("ws");
        fs::create_dir(&root).unwrap();
        (dir, root)
    }

    #[test]
    fn relative_dotdot_and_absolute() {
        let (_t, root) = ws();
        assert_eq!(resolve(&root, "a/./b/../c.txt"), root.join("a/c.txt"));
        assert!(is_within(&root, &resolve(&root, "x/../y")));
        assert!(!is_within(&root, &resolve(&root, "../outside.txt")));
        assert!(!is_within(&root, &resolve(&root, "a/../../b")));
        assert!(!is_within(&root, &resolve(&root, "/etc/passwd")));
        assert_eq!(resolve(&root, "/../.."), PathBuf::from("/"));
        assert_eq!(display(&root, &root.join("src/a.rs")), "src/a.rs");
        assert_eq!(display(&root, &root), ".");
    }

    #[test]
    fn symlinks_out_of_the_workspace_are_outside() {
        let (t, root) = ws();
        let outside = fs::canonicalize(t.path()).unwrap().join("secret");
        fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        let p = resolve(&root, "link/new-file.txt");
        assert_eq!(p, outside.join("new-file.txt"));
        assert!(!is_within(&root, &p));
        // A dangling symlink pointing outside: writing through it would escape.
        std::os::unix::fs::symlink(outside.join("nope/x.txt"), root.join("dangling")).unwrap();
        let p = resolve(&root, "dangling");
        assert_eq!(p, outside.join("nope/x.txt"));
        // An inside symlink stays inside.
        fs::create_dir(root.join("real")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("alias")).unwrap();
        assert_eq!(resolve(&root, "alias/f"), root.join("real/f"));
    }

    #[test]
    fn check_enforces_containment() {
        let (_t, root) = ws();
        let mut ctx = ToolCtx::new(&root, "s");
        let err = check(&ctx, "../x", false).unwrap_err().0;
        assert!(err.contains("outside the workspace"), "{err}");
        assert!(check(&ctx, "", false).is_err());
        ctx.allow_outside = true;
        assert!(check(&ctx, "../x", false).is_ok());
    }

    #[test]
    fn suggestions() {
        let (_t, root) = ws();
        for n in ["main.rs", "Readme.md", "lib.rs", "zzz.txt"] {
            fs::write(root.join(n), "").unwrap();
        }
        assert_eq!(similar_names(&root, "mian.rs"), vec!["main.rs"]);
        assert_eq!(similar_names(&root, "README.md")[0], "Readme.md");
        assert!(similar_names(&root, "lib.py").contains(&"lib.rs".to_string()));
        let msg = not_found(&root, &root.join("mian.rs"), "File");
        assert!(msg.contains("Did you mean: main.rs?"), "{msg}");
        let msg = not_found(&root, &root.join("nodir/a.rs"), "File");
        assert!(msg.contains("does not exist either"), "{msg}");
    }
}
