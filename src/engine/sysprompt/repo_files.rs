//! What the environment block reads of a repository's own files instead of running git, for the
//! common case; anything else is "cannot tell", and the caller asks git.
//!
//! - The branch: a `.git` folder whose `HEAD` names one.
//! - That no filter driver is configured: on Linux, a git in a `bin` folder (its own file is
//!   `etc/gitconfig` beside that folder, or `/etc/gitconfig` for `/usr`; both are looked at, for
//!   the folder it is found in and the one it really lives in), no configuration from the
//!   environment, a `.git` folder, and config files that have no `filter` section and include no
//!   other file.

use std::path::{Path, PathBuf};

/// The variables that change which configuration git reads (or add to it).
fn changes_config(name: &str) -> bool {
    name.starts_with("GIT_CONFIG") || matches!(name, "GIT_DIR" | "GIT_COMMON_DIR")
}

/// The branch the `HEAD` of the repository at `root` names, when it is a `.git` folder's.
pub(super) fn head_branch(root: &Path) -> Option<String> {
    let head = std::fs::read_to_string(root.join(".git/HEAD")).ok()?;
    let name = head.trim_end().strip_prefix("ref: refs/heads/")?;
    (!name.is_empty()).then(|| name.to_string())
}

/// [`surely_no_filters`] in this process's environment.
pub(super) fn no_filters(root: &Path) -> bool {
    let lossy = |s: std::ffi::OsString| s.to_string_lossy().into_owned();
    surely_no_filters(
        root,
        &mut std::env::vars_os().map(|(k, v)| (lossy(k), lossy(v))),
    )
}

/// True when no configuration git reads for the repository at `root` names a filter driver;
/// false when it may, or when that cannot be told without git. `env` is the process's
/// environment (a parameter for the tests).
pub(super) fn surely_no_filters(
    root: &Path,
    env: &mut dyn Iterator<Item = (String, String)>,
) -> bool {
    let mut vars = std::collections::HashMap::new();
    for (name, value) in env {
        if changes_config(&name) {
            return false;
        }
        vars.insert(name, value);
    }
    let Some(system) = vars
        .get("PATH")
        .and_then(|p| first_git(p))
        .and_then(|git| system_files(&git))
    else {
        return false;
    };
    let Some(home) = vars
        .get("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
    else {
        return false;
    };
    let git_dir = root.join(".git");
    if !git_dir.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        return false;
    }
    let xdg = vars
        .get("XDG_CONFIG_HOME")
        .filter(|x| !x.is_empty())
        .map_or_else(|| home.join(".config"), PathBuf::from);
    let user = [xdg.join("git/config"), home.join(".gitconfig")];
    let repo = [git_dir.join("config"), git_dir.join("config.worktree")];
    system
        .iter()
        .chain(&user)
        .chain(&repo)
        .all(|file| match std::fs::read(file) {
            Ok(bytes) => !may_name_filters(&bytes),
            Err(e) => e.kind() == std::io::ErrorKind::NotFound,
        })
}

/// Where the git at `git` keeps its system-wide file: `etc/gitconfig` beside its `bin` folder
/// (`/etc/gitconfig` for `/usr` and `/`), for the folder it is found in and the one it really
/// lives in. None off Linux, or for a git that is not in a `bin` folder.
fn system_files(git: &Path) -> Option<Vec<PathBuf>> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let mut out = vec![PathBuf::from("/etc/gitconfig")];
    for bin in [git.to_path_buf(), std::fs::canonicalize(git).ok()?] {
        let dir = bin
            .parent()
            .filter(|d| d.file_name() == Some("bin".as_ref()))?;
        let prefix = dir.parent()?;
        if !matches!(prefix.to_str(), Some("/usr" | "/")) {
            out.push(prefix.join("etc/gitconfig"));
        }
    }
    Some(out)
}

/// The first `git` on `path` that could run (as the search that starts it finds it), as a path
/// (not resolved).
fn first_git(path: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path)
        .map(|dir| dir.join("git"))
        .find(|git| {
            std::fs::metadata(git).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Whether a config file's text may hold a `filter` section or an include: looked for with case
/// and whitespace ignored, so a value that merely looks like one counts too.
fn may_name_filters(bytes: &[u8]) -> bool {
    let squeezed: Vec<u8> = bytes
        .iter()
        .filter(|b| !b.is_ascii_whitespace())
        .map(u8::to_ascii_lowercase)
        .collect();
    let has = |needle: &[u8]| squeezed.windows(needle.len()).any(|w| w == needle);
    has(b"[filter") || has(b"[include")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(home: &Path, path: &str, extra: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut v = vec![
            ("HOME".to_string(), home.display().to_string()),
            ("PATH".to_string(), path.to_string()),
        ];
        v.extend(extra.iter().map(|(k, x)| (k.to_string(), x.to_string())));
        v
    }

    fn set_exec(file: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn sure(root: &Path, vars: Vec<(String, String)>) -> bool {
        surely_no_filters(root, &mut vars.into_iter())
    }

    #[test]
    fn the_branch_head_names() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(head_branch(dir.path()), None);
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let head = dir.path().join(".git/HEAD");
        std::fs::write(&head, "ref: refs/heads/feature/x\n").unwrap();
        assert_eq!(head_branch(dir.path()).as_deref(), Some("feature/x"));
        std::fs::write(&head, "4b825dc642cb6eb9a060e54bf8d69288fbee4904\n").unwrap();
        assert_eq!(head_branch(dir.path()), None, "detached: git is asked");
    }

    #[test]
    fn config_texts_that_may_name_a_filter() {
        assert!(may_name_filters(b"[filter \"lfs\"]\n\tclean = x\n"));
        assert!(may_name_filters(b"[ Filter.lfs ]\nclean=x"));
        assert!(may_name_filters(
            b"[core]\n[includeIf \"gitdir:~/w/\"]\npath=x"
        ));
        assert!(may_name_filters(b"[INCLUDE]\n  path = ~/.more"));
        assert!(!may_name_filters(
            b"[core]\n\tbare = false\n[remote \"origin\"]\n\turl = x\n"
        ));
        assert!(!may_name_filters(b""));
    }

    #[test]
    fn only_a_plain_repository_with_plain_files_is_told_without_git() {
        if first_git("/usr/bin:/bin").is_none() {
            return;
        }
        let home = tempfile::tempdir().unwrap();
        let root = home.path().join("repo");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        let config = root.join(".git/config");
        std::fs::write(&config, "[core]\n\tbare = false\n").unwrap();
        let system = std::fs::read("/etc/gitconfig").ok();
        if system.as_deref().is_some_and(may_name_filters) {
            // This machine's own git names filters: nothing here can be told without git.
            assert!(!sure(&root, env(home.path(), "/usr/bin:/bin", &[])));
            return;
        }
        assert!(sure(&root, env(home.path(), "/usr/bin:/bin", &[])));
        // Configuration from the environment, another git first on PATH, no HOME.
        let from_env = env(home.path(), "/usr/bin", &[("GIT_CONFIG_COUNT", "1")]);
        assert!(!sure(&root, from_env));
        // A git of its own: in a `bin` folder, its `etc/gitconfig` is read; elsewhere, unsure.
        let own = home.path().join("bin");
        std::fs::create_dir(&own).unwrap();
        std::fs::write(own.join("git"), "").unwrap();
        set_exec(&own.join("git"));
        let path = format!("{}:/usr/bin", own.display());
        assert!(sure(&root, env(home.path(), &path, &[])));
        std::fs::create_dir(home.path().join("etc")).unwrap();
        std::fs::write(home.path().join("etc/gitconfig"), "[filter \"lfs\"]\n").unwrap();
        assert!(!sure(&root, env(home.path(), &path, &[])));
        let odd = home.path().join("tools");
        std::fs::create_dir(&odd).unwrap();
        std::fs::write(odd.join("git"), "").unwrap();
        set_exec(&odd.join("git"));
        let idle = home.path().join("idle");
        std::fs::create_dir(&idle).unwrap();
        std::fs::write(idle.join("git"), "").unwrap();
        let passed_over = format!("{}:/usr/bin", idle.display());
        assert_eq!(
            first_git(&passed_over).as_deref(),
            Some(Path::new("/usr/bin/git")),
            "a git that cannot run is not the one started"
        );
        let path = format!("{}:/usr/bin", odd.display());
        assert!(!sure(&root, env(home.path(), &path, &[])));
        assert!(!sure(&root, env(Path::new(""), "/usr/bin", &[])));
        // A filter in the repository's config, the user's, the XDG file; an include.
        std::fs::write(&config, "[filter \"x\"]\n\tclean = cat\n").unwrap();
        assert!(!sure(&root, env(home.path(), "/usr/bin", &[])));
        std::fs::write(&config, "[core]\n").unwrap();
        std::fs::write(home.path().join(".gitconfig"), "[include]\npath = x\n").unwrap();
        assert!(!sure(&root, env(home.path(), "/usr/bin", &[])));
        std::fs::remove_file(home.path().join(".gitconfig")).unwrap();
        let xdg = home.path().join("xdg");
        std::fs::create_dir_all(xdg.join("git")).unwrap();
        std::fs::write(xdg.join("git/config"), "[filter.lfs]\n").unwrap();
        let with_xdg = env(
            home.path(),
            "/usr/bin",
            &[("XDG_CONFIG_HOME", &xdg.display().to_string())],
        );
        assert!(!sure(&root, with_xdg));
        // A worktree's `.git` file: git is asked.
        std::fs::remove_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git"), "gitdir: /elsewhere\n").unwrap();
        assert!(!sure(&root, env(home.path(), "/usr/bin", &[])));
    }
}
