//! A git workspace's first checkpoint takes what git stores unchanged from git's own store, and
//! restores from it byte for byte: committed files changed, removed and chmod-ed, a file changed
//! in the work tree but not staged, one staged and changed again, untracked and ignored files.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn write(ws: &Path, rel: &str, text: &str) {
    let p = ws.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// Every file under `ws` (but `.git`) with its bytes and mode.
fn files(ws: &Path) -> Vec<(PathBuf, Vec<u8>, u32)> {
    let mut out = Vec::new();
    let mut todo = vec![ws.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for e in fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            let meta = fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                todo.push(p);
            } else {
                let mode = meta.permissions().mode() & 0o7777;
                out.push((
                    p.strip_prefix(ws).unwrap().to_path_buf(),
                    fs::read(&p).unwrap(),
                    mode,
                ));
            }
        }
    }
    out.sort();
    out
}

fn done(r: Restore) -> Restored {
    match r {
        Restore::Done(d) => d,
        Restore::Stopped { conflicts } => panic!("stopped: {conflicts:?}"),
    }
}

#[test]
fn the_first_checkpoint_of_a_repository_comes_from_gits_store() {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap();
    let ws = root.join("ws");
    fs::create_dir(&ws).unwrap();
    git(&ws, &["init", "-q"]);
    for n in 0..200 {
        write(
            &ws,
            &format!("src/m{}/f{n}.rs", n % 7),
            &format!("fn f{n}() {{}}\n"),
        );
    }
    write(&ws, ".gitignore", "target/\n");
    write(&ws, "unstaged.txt", "committed\n");
    write(&ws, "restaged.txt", "committed\n");
    write(&ws, "run.sh", "#!/bin/sh\n");
    // The index is written after the files' last change: none of its entries is racily clean.
    std::thread::sleep(std::time::Duration::from_millis(50));
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-q", "-m", "one"]);
    write(
        &ws,
        "unstaged.txt",
        "changed in the work tree, not staged\n",
    );
    write(&ws, "restaged.txt", "staged\n");
    git(&ws, &["add", "restaged.txt"]);
    write(&ws, "restaged.txt", "staged, then changed again\n");
    write(&ws, "untracked.txt", "untracked\n");
    write(&ws, "target/ignored.bin", "ignored\n");
    let original = files(&ws);

    let options = Options {
        watch: true,
        ..Options::default()
    };
    let store = Checkpoints::open(&root.join("data"), &ws, options).unwrap();
    let first = store.snapshot("first").unwrap();
    // Read: the three files git does not hold as they are (and .gitignore is git's).
    assert_eq!(first.read, 3, "{first:?}");
    assert_eq!(first.files, 205);
    let stored = fs::read_dir(store.store_dir().join("objects"))
        .unwrap()
        .count();
    assert!(
        stored < 60,
        "{stored} object folders: the files were copied"
    );

    // A turn: a committed file changed and one removed, a mode, the unstaged file changed again.
    write(&ws, "src/m1/f1.rs", "changed\n");
    fs::remove_file(ws.join("src/m2/f2.rs")).unwrap();
    fs::set_permissions(ws.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    write(&ws, "unstaged.txt", "changed again\n");
    fs::remove_dir_all(ws.join("src/m3")).unwrap();
    let after = store.snapshot("after").unwrap();
    let changes = store.changes(&first.id, &after.id).unwrap();
    let mode = changes
        .iter()
        .find(|c| c.path.to_string() == "run.sh")
        .unwrap();
    assert_eq!(mode.kind, ChangeKind::ModeChanged, "{changes:?}");
    let f1 = changes
        .iter()
        .find(|c| c.path.to_string() == "src/m1/f1.rs")
        .unwrap();
    assert_eq!(
        f1.lines,
        Some(LineCounts {
            added: 1,
            removed: 1
        }),
        "the line count reads git's blob"
    );

    let undone = done(
        store
            .restore(&after.id, &first.id, OnConflict::Stop)
            .unwrap(),
    );
    assert!(undone.failed.is_empty(), "{:?}", undone.failed);
    assert_eq!(files(&ws), original, "restored byte for byte");
    let again = store.snapshot("again").unwrap();
    assert_eq!(again.id, first.id, "the same checkpoint as before the turn");

    // A later session (no feed yet, a stat cache) vouches for git's files without reading them.
    drop(store);
    let store = Checkpoints::open(&root.join("data"), &ws, Options::default()).unwrap();
    let later = store.snapshot("later").unwrap();
    assert_eq!(later.id, first.id);
}

#[test]
fn a_blob_git_no_longer_has_is_missing_not_wrong() {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap();
    let ws = root.join("ws");
    fs::create_dir(&ws).unwrap();
    git(&ws, &["init", "-q"]);
    for n in 0..80 {
        write(&ws, &format!("f{n}"), &format!("{n}\n"));
    }
    std::thread::sleep(std::time::Duration::from_millis(50));
    git(&ws, &["add", "."]);
    let store = Checkpoints::open(&root.join("data"), &ws, Options::default()).unwrap();
    let first = store.snapshot("first").unwrap();
    assert_eq!(first.read, 0);
    fs::remove_file(ws.join("f1")).unwrap();
    let after = store.snapshot("after").unwrap();
    // Git's store loses the blob (never committed): the restore refuses, nothing is written.
    fs::remove_dir_all(ws.join(".git/objects")).unwrap();
    fs::create_dir(ws.join(".git/objects")).unwrap();
    let err = store
        .restore(&after.id, &first.id, OnConflict::Stop)
        .unwrap_err();
    assert!(matches!(err, CheckpointError::Missing { .. }), "{err}");
    assert!(!ws.join("f1").exists());
}

#[test]
fn an_index_larger_than_its_reading_window_gives_every_entry_in_each_version() {
    let tmp = tempfile::tempdir().unwrap();
    let top = fs::canonicalize(tmp.path()).unwrap();
    git(&top, &["init", "-q"]);
    let ws = top.join("sub");
    // 4,000 entries: the index is longer than a window (64 KiB) in every version.
    let mut names = Vec::new();
    for n in 0..4000 {
        let rel = format!("dir{}/a-rather-long-name-for-file-number-{n:05}.txt", n % 7);
        write(&ws, &rel, &format!("{n}\n"));
        names.push(rel);
    }
    write(&top, "outside.txt", "o");
    names.sort();
    git(&top, &["add", "."]);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    for version in ["2", "4", "3"] {
        git(&top, &["update-index", "--index-version", version]);
        git(&top, &["update-index", "--really-refresh"]);
        let index = fs::metadata(top.join(".git/index")).unwrap().len();
        assert!(index > 64 * 1024, "{index} bytes");
        let repo = git::Repo::find(&ws).unwrap();
        let mut seen = Vec::new();
        assert!(repo.each_entry(|rel, _| seen.push(String::from_utf8(rel.to_vec()).unwrap())));
        assert_eq!(seen, names, "version {version}");
    }
}
