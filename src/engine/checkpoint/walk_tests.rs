//! The walk against the `ignore` crate's parallel walker it replaced (kept here as the
//! reference, with the options the walk used): the same entries, directories and unreadable
//! paths on workspaces that exercise the scoping of `.gitignore` files, and the walk's own order.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::path::RelPath;
use super::walk::{self, Event, Kind, Plan, Rules, Scan, Whole};

/// The entries the `ignore` crate's walker finds with the options the walk used to give it.
fn reference(rules: &Rules) -> Scan {
    let ws = &rules.workspace;
    let in_repo = walk::inside_repository(ws);
    let excluded = rules.excluded.clone();
    let mut builder = ignore::WalkBuilder::new(ws);
    builder
        .hidden(false)
        .ignore(false)
        .git_ignore(true)
        .git_exclude(false)
        .git_global(false)
        .require_git(in_repo)
        .parents(in_repo)
        .follow_links(false)
        .threads(2);
    builder.filter_entry(move |e| {
        e.file_name() != ".git" && !excluded.iter().any(|x| e.path() == x.as_path())
    });
    let found = Mutex::new(Scan::default());
    builder.build_parallel().run(|| {
        let found = &found;
        Box::new(move |entry| {
            let mut scan = found.lock().unwrap();
            let entry = match entry {
                Ok(entry) => entry,
                Err(err) => {
                    let path = match &err {
                        ignore::Error::WithPath { path, .. } => Some(path.clone()),
                        ignore::Error::WithDepth { err, .. } => match &**err {
                            ignore::Error::WithPath { path, .. } => Some(path.clone()),
                            _ => None,
                        },
                        _ => None,
                    };
                    if let Some(rel) = path.and_then(|p| RelPath::under(ws, &p)) {
                        scan.unreadable
                            .push((rel, std::io::Error::other("unreadable")));
                    }
                    return ignore::WalkState::Continue;
                }
            };
            let path = RelPath::under(ws, entry.path()).unwrap();
            let meta = fs::symlink_metadata(entry.path()).unwrap();
            let ft = meta.file_type();
            if ft.is_dir() {
                scan.dirs.push(path);
                return ignore::WalkState::Continue;
            }
            let kind = if ft.is_file() {
                Kind::File
            } else if ft.is_symlink() {
                Kind::Symlink
            } else {
                Kind::Special
            };
            scan.entries.push(walk::Found {
                path,
                kind,
                stat: super::index::Stat::of(&meta),
                git: None,
            });
            ignore::WalkState::Continue
        })
    });
    found.into_inner().unwrap()
}

fn whole() -> Arc<dyn Plan> {
    Arc::new(Whole(|_: &RelPath| {}))
}

/// What a scan found, comparable: sorted directories, entries with their kinds, unreadable paths.
type Seen = (Vec<String>, Vec<(String, Kind)>, Vec<String>);

fn seen(scan: &Scan) -> Seen {
    let mut dirs: Vec<String> = scan.dirs.iter().map(RelPath::lossy).collect();
    let mut entries: Vec<(String, Kind)> = scan
        .entries
        .iter()
        .map(|f| (f.path.lossy(), f.kind))
        .collect();
    let mut bad: Vec<String> = scan.unreadable.iter().map(|(p, _)| p.lossy()).collect();
    dirs.sort();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    bad.sort();
    (dirs, entries, bad)
}

/// The walk finds what the reference finds, and hands it out in path order.
fn same_as_reference(ws: &Path, excluded: &[&str]) -> Seen {
    let rules = Rules {
        workspace: ws.to_path_buf(),
        excluded: excluded.iter().map(|x| ws.join(x)).collect(),
    };
    let old = reference(&rules);
    for walkers in [1, 2, 4] {
        let new = walk::scan_planned(&rules, 1_000_000, walkers, whole());
        assert_eq!(
            seen(&new),
            seen(&old),
            "in {}, {walkers} walkers",
            ws.display()
        );
        in_path_order(&rules, walkers);
    }
    seen(&old)
}

/// Every path the walk hands out comes after the one before it (bytewise, a directory as its
/// path and a `/`), and inside the directories handed out before it.
fn in_path_order(rules: &Rules, walkers: usize) {
    let plan = Whole(|_: &RelPath| {});
    let mut events = Vec::new();
    walk::walk(rules, 1_000_000, walkers, &plan, &mut |e| {
        events.push(e);
        true
    });
    let mut last: Option<Vec<u8>> = None;
    let mut open: Vec<RelPath> = Vec::new();
    for event in events {
        let (path, dir) = match event {
            Event::Dir(p) => (p, true),
            Event::Entry(f) => (f.path, false),
            Event::Unreadable { path, dir, .. } => (path, dir),
        };
        if path.is_root() {
            continue;
        }
        let parent = path.parent().unwrap();
        while open.last().is_some_and(|d| !parent.is_within(d)) {
            open.pop();
        }
        assert!(
            parent.is_root() || open.last() == Some(&parent),
            "{path:?} outside the directories open: {open:?}"
        );
        let mut key = path.as_bytes().to_vec();
        if dir {
            key.push(b'/');
            open.push(path.clone());
        }
        if let Some(last) = &last {
            assert!(
                last < &key,
                "{path:?} after {:?}",
                String::from_utf8_lossy(last)
            );
        }
        last = Some(key);
    }
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn tmp() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

/// Files that exercise the order and the ignore rules, under `root`.
fn populate(root: &Path) {
    for rel in [
        "a",
        "a.txt",
        "a-b",
        "a0",
        "b/x",
        "b.c/y",
        "b0/z",
        "keep.log",
        "drop.log",
        "out/o.txt",
        "sub/out",
        "sub/t.log",
        "sub/deeper/u.log",
        "sub/deeper/v.txt",
        "docs/a.md",
        "docs/inner/b.md",
        "top-only.txt",
        "sub/top-only.txt",
        ".hidden/h",
        ".flower/state",
    ] {
        write(root, rel, rel);
    }
    write(
        root,
        ".gitignore",
        "*.log\n!keep.log\nout/\n/top-only.txt\ndocs/*.md\n[unclosed\n",
    );
    write(root, "sub/.gitignore", "!t.log\n");
    write(root, "sub/deeper/.gitignore", "v.txt\n");
    fs::write(
        root.join(OsStrExt::from_bytes(&b"raw\xff\n"[..]) as &std::ffi::OsStr),
        b"x",
    )
    .unwrap();
    fs::create_dir(root.join("empty")).unwrap();
    fs::create_dir(root.join("real")).unwrap();
    write(root, "real/inside.txt", "r");
    symlink(root.join("real"), root.join("link-to-dir")).unwrap();
    symlink("nowhere", root.join("dangling")).unwrap();
    // A socket: a special entry (its file stays after the listener is dropped).
    drop(std::os::unix::net::UnixListener::bind(root.join("fifo")).unwrap());
    // A worktree's `.git` file is never covered.
    write(root, "wt/.git", "gitdir: /nowhere\n");
    write(root, "wt/file.txt", "w");
}

fn git_init(dir: &Path) {
    let ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(ok.status.success());
}

#[test]
fn a_repository_at_the_workspace_with_nested_rules_and_a_nested_repository() {
    let (_t, root) = tmp();
    git_init(&root);
    populate(&root);
    // A nested repository: its own rules only (the outer `*.log` does not apply in it).
    fs::create_dir_all(root.join("inner")).unwrap();
    git_init(&root.join("inner"));
    write(&root, "inner/.gitignore", "*.tmp\n");
    write(
        &root,
        "inner/x.log",
        "kept: the outer rules stop at a nested repository",
    );
    write(&root, "inner/y.tmp", "ignored by its own rules");
    let (dirs, entries, _) = same_as_reference(&root, &[".flower"]);
    let names: Vec<&str> = entries.iter().map(|(p, _)| p.as_str()).collect();
    for covered in [
        "keep.log",
        "sub/t.log",
        "inner/x.log",
        "link-to-dir",
        "a",
        "wt/file.txt",
    ] {
        assert!(names.contains(&covered), "{covered} in {names:?}");
    }
    for left_out in [
        "drop.log",
        "sub/deeper/u.log",
        "sub/deeper/v.txt",
        "top-only.txt",
        "docs/a.md",
        "inner/y.tmp",
        "wt/.git",
        ".flower/state",
        "link-to-dir/inside.txt",
    ] {
        assert!(!names.contains(&left_out), "{left_out} in {names:?}");
    }
    assert!(names.contains(&"sub/top-only.txt") && names.contains(&"docs/inner/b.md"));
    assert!(dirs.contains(&"empty".to_string()) && !dirs.contains(&"out".to_string()));
    let kinds: Vec<Kind> = ["link-to-dir", "dangling", "fifo"]
        .iter()
        .map(|n| entries.iter().find(|(p, _)| p == n).unwrap().1)
        .collect();
    assert_eq!(kinds, [Kind::Symlink, Kind::Symlink, Kind::Special]);
}

#[test]
fn a_workspace_inside_a_repository_takes_its_parents_rules_up_to_the_root() {
    let (_t, root) = tmp();
    let top = root.join("top");
    fs::create_dir(&top).unwrap();
    git_init(&top);
    write(
        &top,
        ".gitignore",
        "mid/ws/by-parent/\n*.bak\n!mid/ws/keep.bak\n",
    );
    write(&top, "mid/.gitignore", "*.mid\n");
    // Above the repository's root: never applies.
    write(&root, ".gitignore", "*.txt\n");
    let ws = top.join("mid/ws");
    populate(&ws);
    write(&ws, "by-parent/p.txt", "p");
    write(&ws, "a.bak", "b");
    write(&ws, "keep.bak", "k");
    write(&ws, "x.mid", "m");
    let (_, entries, _) = same_as_reference(&ws, &[]);
    let names: Vec<&str> = entries.iter().map(|(p, _)| p.as_str()).collect();
    assert!(
        names.contains(&"keep.bak") && names.contains(&"a.txt"),
        "{names:?}"
    );
    for left_out in ["by-parent/p.txt", "a.bak", "x.mid"] {
        assert!(!names.contains(&left_out), "{left_out} in {names:?}");
    }
}

#[test]
fn outside_a_repository_its_own_rules_apply_and_nothing_above() {
    let (_t, root) = tmp();
    write(&root, ".gitignore", "*.txt\n");
    let ws = root.join("ws");
    populate(&ws);
    fs::create_dir_all(ws.join("inner")).unwrap();
    git_init(&ws.join("inner"));
    write(&ws, "inner/x.log", "x");
    write(&ws, "inner/y.txt", "y");
    let (_, entries, _) = same_as_reference(&ws, &[]);
    let names: Vec<&str> = entries.iter().map(|(p, _)| p.as_str()).collect();
    assert!(
        names.contains(&"a.txt") && names.contains(&"inner/y.txt"),
        "{names:?}"
    );
    assert!(!names.contains(&"drop.log") && !names.contains(&"inner/x.log"));
}

#[test]
fn an_unreadable_directory_is_named_and_not_walked() {
    let (_t, root) = tmp();
    git_init(&root);
    populate(&root);
    write(&root, "locked/secret.txt", "s");
    let locked = root.join("locked");
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    let listable = fs::read_dir(&locked).is_ok();
    let (dirs, entries, bad) = same_as_reference(&root, &[]);
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
    let found = entries.iter().any(|(p, _)| p == "locked/secret.txt");
    // Root reads any directory: then the walk must find what it holds.
    assert_eq!(found, listable);
    assert_eq!(bad.contains(&"locked".to_string()), !listable);
    assert!(dirs.contains(&"locked".to_string()));
}

#[test]
fn the_plan_is_asked_before_each_folder_is_listed_and_the_cap_cuts() {
    let (_t, root) = tmp();
    populate(&root);
    let rules = Rules {
        workspace: root.clone(),
        excluded: vec![],
    };
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    let plan: Arc<dyn Plan> = Arc::new(Whole(move |rel: &RelPath| {
        log.lock().unwrap().push(rel.lossy());
    }));
    let scan = walk::scan_planned(&rules, 1_000_000, 2, plan);
    let mut asked = asked.lock().unwrap().clone();
    let mut dirs: Vec<String> = scan
        .dirs
        .iter()
        .filter(|d| !d.is_root())
        .map(RelPath::lossy)
        .collect();
    asked.sort();
    dirs.sort();
    assert_eq!(asked, dirs);
    let all = scan.dirs.len() + scan.entries.len();
    for walkers in [1, 2] {
        assert!(!walk::scan_planned(&rules, all, walkers, whole()).cut);
        assert!(walk::scan_planned(&rules, all - 1, walkers, whole()).cut);
    }
}

#[test]
fn many_folders_come_in_path_order_however_many_threads_list_them() {
    let (_t, root) = tmp();
    git_init(&root);
    for a in 0..8 {
        for b in 0..8 {
            for c in 0..3 {
                write(&root, &format!("d{a}/e{b}/f{c}/x.txt"), "x");
            }
            write(&root, &format!("d{a}/e{b}.txt"), "");
        }
    }
    write(&root, ".gitignore", "e3/\n");
    let (dirs, entries, _) = same_as_reference(&root, &[]);
    // More folders than are listed ahead at once.
    assert_eq!(dirs.len(), 1 + 8 + 8 * 7 + 8 * 7 * 3);
    assert_eq!(entries.len(), 1 + 8 * 8 + 8 * 7 * 3);
}
