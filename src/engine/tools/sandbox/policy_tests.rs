//! The policy: its spellings, the writable set of each mode, the launcher's notice.

use std::path::{Path, PathBuf};

use super::*;

#[test]
fn modes_and_network_parse_from_their_flag_spellings() {
    for mode in [
        SandboxMode::WorkspaceWrite,
        SandboxMode::ReadOnly,
        SandboxMode::Off,
    ] {
        assert_eq!(mode.as_str().parse::<SandboxMode>(), Ok(mode));
        assert_eq!(mode.to_string(), mode.as_str());
    }
    assert_eq!("on".parse::<NetworkAccess>(), Ok(NetworkAccess::Allowed));
    assert_eq!("off".parse::<NetworkAccess>(), Ok(NetworkAccess::Blocked));
    let e = "workspace".parse::<SandboxMode>().unwrap_err().to_string();
    assert_eq!(
        e,
        "invalid sandbox mode `workspace`: expected one of workspace-write, read-only, off"
    );
    let e = "yes".parse::<NetworkAccess>().unwrap_err().to_string();
    assert_eq!(
        e,
        "invalid sandbox network setting `yes`: expected one of on, off"
    );
}

#[test]
fn the_default_is_workspace_write_without_network() {
    let p = SandboxPolicy::default();
    assert_eq!(p.mode, SandboxMode::WorkspaceWrite);
    assert_eq!(p.network, NetworkAccess::Blocked);
    assert!(p.is_on());
    assert!(!SandboxPolicy::off().is_on());
}

fn kinds(set: &WritableSet, kind: RootKind) -> Vec<PathBuf> {
    set.roots
        .iter()
        .filter(|r| r.kind == kind)
        .map(|r| r.path.clone())
        .collect()
}

#[test]
fn each_mode_writes_where_it_says() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let extra = dir.path().join("cache");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&extra).unwrap();
    let ws = ws.canonicalize().unwrap();
    let extra_c = extra.canonicalize().unwrap();

    let rw = SandboxPolicy::default()
        .with_writable([extra.clone()])
        .writable_set(&ws);
    assert_eq!(kinds(&rw, RootKind::Workspace), std::slice::from_ref(&ws));
    assert_eq!(
        kinds(&rw, RootKind::Configured),
        std::slice::from_ref(&extra_c)
    );
    let temp = std::env::temp_dir().canonicalize().unwrap();
    // A temp dir that holds the workspace is never granted (the workspace could be moved aside).
    assert_eq!(kinds(&rw, RootKind::Temp).contains(&temp), !temp_holds(&ws));
    assert_eq!(rw.tmpdir.is_some(), temp_holds(&ws));
    assert!(kinds(&rw, RootKind::Device).contains(&PathBuf::from("/dev/null")));
    assert!(rw.allows(&ws.join("src/main.rs")));
    assert!(rw.allows(&extra_c.join("x")));
    assert!(rw.allows(Path::new("/dev/null")));
    assert!(!rw.allows(Path::new("/etc/passwd")));
    // A sibling that shares the workspace's name as a prefix is outside.
    assert!(!rw.allows(&PathBuf::from(format!("{}-other/x", ws.display()))) || temp_holds(&ws));

    let ro = SandboxPolicy::new(SandboxMode::ReadOnly)
        .with_writable([extra])
        .writable_set(&ws);
    assert!(kinds(&ro, RootKind::Workspace).is_empty());
    assert!(kinds(&ro, RootKind::Configured).is_empty());
    // The workspace lies in the temp dir here: read-only leaves that temp dir out.
    assert!(temp_holds(&ws));
    assert!(!kinds(&ro, RootKind::Temp).contains(&temp));
    assert!(!ro.allows(&ws.join("f")));
    assert_eq!(ro.tmpdir.as_ref(), kinds(&ro, RootKind::Temp).first());

    assert!(SandboxPolicy::off().writable_set(&ws).roots.is_empty());
}

/// Whether `ws` lies in a temp dir (then its siblings are writable as temp too).
fn temp_holds(ws: &Path) -> bool {
    ws.starts_with(std::env::temp_dir().canonicalize().unwrap())
}

#[test]
fn the_set_is_described_in_words() {
    let set = WritableSet {
        roots: vec![
            Root {
                kind: RootKind::Workspace,
                path: "/w".into(),
            },
            Root {
                kind: RootKind::Temp,
                path: "/tmp".into(),
            },
            Root {
                kind: RootKind::Temp,
                path: "/var/tmp".into(),
            },
            Root {
                kind: RootKind::Configured,
                path: "/opt/cache".into(),
            },
            Root {
                kind: RootKind::Device,
                path: "/dev/null".into(),
            },
        ],
        ..WritableSet::default()
    };
    assert_eq!(
        set.describe(),
        "the workspace (/w), the temp dirs (/tmp, /var/tmp), /opt/cache and /dev/null and the \
         terminal"
    );
    assert_eq!(WritableSet::default().describe(), "nowhere");
}

#[test]
fn the_notice_names_a_missing_landlock_once_and_only_when_asked_for() {
    let on = SandboxPolicy::default();
    let missing = Support::NoLandlock {
        reason: "not built into this kernel".into(),
    };
    let notice = missing.notice(&on).unwrap();
    assert!(
        notice.contains("no Landlock (not built into this kernel)"),
        "{notice}"
    );
    assert!(notice.contains("approvals stay as they are"), "{notice}");
    assert!(!notice.contains('\n'));
    assert_eq!(missing.notice(&SandboxPolicy::off()), None);
    assert_eq!(Support::Landlock { abi: 7 }.notice(&on), None);
    assert!(Support::Unsupported.notice(&on).is_some());
}

/// The kernel's answer agrees with the list of security modules it reports elsewhere.
#[cfg(target_os = "linux")]
#[test]
fn landlock_support_matches_the_kernels_module_list() {
    let support = Support::current();
    match std::fs::read_to_string("/sys/kernel/security/lsm") {
        Ok(lsm) => {
            let listed = lsm.split(',').any(|m| m.trim() == "landlock");
            assert_eq!(
                matches!(support, Support::Landlock { abi } if abi >= 1),
                listed,
                "{support:?} against {lsm}"
            );
        }
        // No securityfs here: the answer must still be one of the two Linux ones.
        Err(_) => assert!(
            matches!(
                support,
                Support::Landlock { .. } | Support::NoLandlock { .. }
            ),
            "{support:?}"
        ),
    }
}

#[test]
fn an_older_landlock_names_what_it_cannot_do() {
    assert!(Enforcement::Landlock { abi: 7 }.gaps().is_empty());
    assert!(Enforcement::Landlock { abi: 6 }.gaps().is_empty());
    assert_eq!(
        Enforcement::Landlock { abi: 4 }.gaps(),
        [
            "ioctls on devices are not confined",
            "signals to processes outside the sandbox are not refused"
        ]
    );
    assert_eq!(Enforcement::Landlock { abi: 1 }.gaps().len(), 5);
    let filter_only = Enforcement::FilterOnly { reason: "x".into() };
    assert_eq!(filter_only.gaps(), ["writes are not confined"]);
    assert!(!filter_only.confines_writes());
}

#[test]
fn the_sandbox_in_force_in_one_line_and_only_a_confining_one_spares_the_approval() {
    let landlock = Support::Landlock { abi: 7 };
    let missing = Support::NoLandlock {
        reason: "not enabled".into(),
    };
    let on = SandboxPolicy::default();
    assert_eq!(
        describe(&on, &landlock),
        "workspace-write, network off (Landlock ABI 7 and a seccomp filter)"
    );
    let wide = SandboxPolicy::default()
        .with_network(NetworkAccess::Allowed)
        .with_writable([PathBuf::from("/opt/build")]);
    assert_eq!(
        describe(&wide, &landlock),
        "workspace-write, network on, also writable: /opt/build (Landlock ABI 7 and a seccomp \
         filter)"
    );
    assert_eq!(
        describe(&on, &missing),
        "workspace-write, network off (the seccomp filter only: this kernel has no Landlock, \
         writes are not confined)"
    );
    assert_eq!(
        describe(&SandboxPolicy::off(), &landlock),
        "off (commands run with all of the user's rights)"
    );
    assert!(confines(&on, &landlock));
    assert!(confines(
        &SandboxPolicy::new(SandboxMode::ReadOnly),
        &Support::Seatbelt
    ));
    assert!(
        !confines(&on, &missing),
        "no Landlock: commands are asked for"
    );
    assert!(!confines(&on, &Support::Unsupported));
    assert!(!confines(&SandboxPolicy::off(), &landlock));
}

/// A folder of `dir` holding a repository (`.git` with a config) and a few entries.
fn repository(dir: &Path) -> PathBuf {
    let ws = dir.join("repo");
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join(".git/config"), "").unwrap();
    std::fs::write(ws.join("Cargo.toml"), "").unwrap();
    std::os::unix::fs::symlink("/etc", ws.join("etc-link")).unwrap();
    ws.canonicalize().unwrap()
}

#[test]
fn without_namespaces_a_repository_is_granted_entry_by_entry_without_its_git() {
    let dir = tempfile::tempdir().unwrap();
    let ws = repository(dir.path());
    let set = WritableSet::with_namespaces(&SandboxPolicy::default(), &ws, false);
    assert_eq!(
        kinds(&set, RootKind::Workspace),
        vec![ws.join("Cargo.toml"), ws.join("src")],
        "no .git, no symlink, not the folder itself"
    );
    let guard = set.guard.clone().unwrap();
    assert_eq!(guard.repository, ws.join(".git"));
    assert_eq!(guard.route, GitRoute::EntryByEntry);
    assert_eq!(set.read_only_mount(), None);
    assert!(set.allows(&ws.join("src/lib.rs")));
    assert!(set.allows(&ws.join("Cargo.toml")));
    for protected in [".git/config", ".git/hooks/pre-commit", "new.txt", ".git"] {
        assert!(!set.allows(&ws.join(protected)), "{protected}");
        assert!(set.guards(&ws.join(protected)), "{protected}");
    }
    assert!(!set.guards(Path::new("/etc/passwd")));
    assert!(!set.guards(&ws.join("src/x")));
    assert!(
        set.describe().contains("but not its `.git`"),
        "{}",
        set.describe()
    );
    // The temp dir holds this workspace: granting it would grant `.git`.
    assert!(temp_holds(&ws));
    assert!(!set.allows(&ws.join(".git/config")));
    assert!(set.tmpdir.is_some());
}

#[test]
fn with_namespaces_a_repository_is_granted_whole_and_its_git_mounted_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let ws = repository(dir.path());
    let set = WritableSet::with_namespaces(&SandboxPolicy::default(), &ws, true);
    assert_eq!(kinds(&set, RootKind::Workspace), vec![ws.clone()]);
    let guard = set.guard.clone().unwrap();
    assert_eq!(guard.route, GitRoute::ReadOnlyMount);
    assert_eq!(set.read_only_mount(), Some(ws.join(".git").as_path()));
    for open in ["new.txt", "target/debug/x", "Cargo.toml", "src/lib.rs"] {
        assert!(set.allows(&ws.join(open)), "{open}");
        assert!(!set.guards(&ws.join(open)), "{open}");
    }
    for protected in [".git/config", ".git/hooks/pre-commit", ".git"] {
        assert!(!set.allows(&ws.join(protected)), "{protected}");
        assert!(set.guards(&ws.join(protected)), "{protected}");
    }
    assert!(
        set.describe().contains("but not its `.git`"),
        "{}",
        set.describe()
    );
    assert!(!set.describe().contains("top level"), "{}", set.describe());
    // The temp dir that holds the workspace is not granted even so: a command could move the
    // workspace aside and put an empty folder in its place.
    assert!(temp_holds(&ws));
    let temp = std::env::temp_dir().canonicalize().unwrap();
    assert!(!kinds(&set, RootKind::Temp).contains(&temp));
    assert!(set.tmpdir.is_some());
    assert_eq!(set.read_only, vec![ws.join(".git")]);
}

#[test]
fn a_symlinked_git_falls_back_to_entry_by_entry_even_with_namespaces() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let real = dir.path().join("real-git");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&real).unwrap();
    std::os::unix::fs::symlink(&real, ws.join(".git")).unwrap();
    let ws = ws.canonicalize().unwrap();
    let set = WritableSet::with_namespaces(&SandboxPolicy::default(), &ws, true);
    assert_eq!(set.guard.map(|g| g.route), Some(GitRoute::EntryByEntry));
    // A `.git` file (a worktree's) is mounted like a folder.
    std::fs::remove_file(ws.join(".git")).unwrap();
    std::fs::write(ws.join(".git"), "gitdir: /elsewhere\n").unwrap();
    let set = WritableSet::with_namespaces(&SandboxPolicy::default(), &ws, true);
    assert_eq!(set.read_only_mount(), Some(ws.join(".git").as_path()));
}

#[test]
fn a_workspace_without_a_git_of_its_own_is_granted_whole() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repository(dir.path());
    // Inside a repository whose `.git` is in a parent folder: that `.git` is outside anyway.
    let ws = repo.join("src");
    let set = SandboxPolicy::default().writable_set(&ws);
    assert_eq!(set.guard, None);
    assert_eq!(kinds(&set, RootKind::Workspace), vec![ws.clone()]);
    assert!(!set.allows(&repo.join(".git/config")) || temp_holds(&repo));
    // No repository at all.
    let plain = dir.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let plain = plain.canonicalize().unwrap();
    let set = SandboxPolicy::default().writable_set(&plain);
    assert_eq!(set.guard, None);
    assert_eq!(kinds(&set, RootKind::Workspace), vec![plain.clone()]);
}
