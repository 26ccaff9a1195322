//! Checkpoints on real workspaces: a turn's changes made by real shell commands (edits, new and
//! deleted files, appends, `chmod +x`, symbolic links) undone and redone byte for byte, the user's
//! later edits reported as conflicts, ignored and oversized files, a workspace that is no
//! repository and one inside a repository whose `.git` must stay byte-identical.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use flower_tui::engine::checkpoint::{
    ChangeKind, Checkpoints, ConflictKind, Limits, OnConflict, Options, Restore, Restored,
    SkipReason, Snapshot, TurnCheckpoint, UndoStack,
};

use crate::support::check::assert_file;
use crate::support::files::git;

/// One entry as a test compares it: what it is, its permission bits, its bytes or target.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    Dir(u32),
    File(u32, Vec<u8>),
    Link(PathBuf),
}

/// Every entry under `root` except `.git` folders, by path.
fn state(root: &Path) -> BTreeMap<String, Entry> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let path = e.path();
            if e.file_name() == ".git" {
                continue;
            }
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let meta = fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            let entry = if meta.file_type().is_symlink() {
                Entry::Link(fs::read_link(&path).unwrap())
            } else if meta.is_dir() {
                stack.push(path.clone());
                Entry::Dir(mode)
            } else {
                Entry::File(mode, fs::read(&path).unwrap())
            };
            out.insert(rel, entry);
        }
    }
    out
}

/// Every file under `dir` with its bytes and modification time (for the `.git` check).
fn files_and_times(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let meta = fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p.clone());
            }
            let bytes = if meta.is_file() {
                fs::read(&p).unwrap()
            } else {
                Vec::new()
            };
            out.insert(p, (bytes, meta.modified().unwrap()));
        }
    }
    out
}

fn sh(dir: &Path, script: &str) {
    let out = Command::new("bash")
        .args(["-c", script])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn done(r: Restore) -> Restored {
    match r {
        Restore::Done(done) => {
            assert!(done.failed.is_empty(), "{:?}", done.failed);
            done
        }
        Restore::Stopped { conflicts } => panic!("stopped by {conflicts:?}"),
    }
}

struct Setup {
    _tmp: tempfile::TempDir,
    data: PathBuf,
    ws: PathBuf,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap();
    let (data, ws) = (root.join("data"), root.join("ws"));
    fs::create_dir_all(&ws).unwrap();
    Setup {
        _tmp: tmp,
        data,
        ws,
    }
}

fn open(s: &Setup) -> Checkpoints {
    Checkpoints::open(&s.data, &s.ws, Options::default()).unwrap()
}

/// The starting project: text, a script, a binary file, a symlink, a nested folder.
fn project(ws: &Path) {
    sh(
        ws,
        "mkdir -p src/deep && printf 'fn main() {}\\n' > src/main.rs \
         && printf 'one\\ntwo\\nthree\\n' > notes.txt && printf '#!/bin/sh\\necho hi\\n' > run.sh \
         && printf 'log line 1\\n' > app.log.txt && printf 'a\\0b\\377' > blob.bin \
         && printf 'gone soon\\n' > src/deep/old.rs && ln -s notes.txt current",
    );
}

/// A turn's worth of changes, all by shell commands.
const TURN: &str = "printf 'fn main() { println!(\"hi\"); }\\n' > src/main.rs \
    && mkdir -p src/new && printf 'pub fn f() {}\\n' > src/new/lib.rs \
    && rm src/deep/old.rs && echo 'log line 2' >> app.log.txt && chmod +x run.sh \
    && ln -sfn src/main.rs current && ln -s ../notes.txt src/link-up \
    && printf 'x\\0y' > blob.bin";

#[test]
fn a_turn_by_shell_commands_is_undone_and_redone_byte_for_byte() {
    let s = setup();
    project(&s.ws);
    let store = open(&s);
    let before_state = state(&s.ws);
    let before = store.snapshot("turn 1 before").unwrap();
    sh(&s.ws, TURN);
    let after_state = state(&s.ws);
    let after = store.snapshot("turn 1 after").unwrap();
    assert_ne!(before.id, after.id);

    let changes = store.changes(&before.id, &after.id).unwrap();
    let got: Vec<(String, ChangeKind)> = changes.iter().map(|c| (c.path.lossy(), c.kind)).collect();
    assert_eq!(
        got,
        [
            ("app.log.txt".to_string(), ChangeKind::Modified),
            ("blob.bin".to_string(), ChangeKind::Modified),
            ("current".to_string(), ChangeKind::Modified),
            ("run.sh".to_string(), ChangeKind::ModeChanged),
            ("src/deep/old.rs".to_string(), ChangeKind::Deleted),
            ("src/link-up".to_string(), ChangeKind::Created),
            ("src/main.rs".to_string(), ChangeKind::Modified),
            ("src/new/lib.rs".to_string(), ChangeKind::Created),
        ]
    );
    let lines = |p: &str| {
        let c = changes.iter().find(|c| c.path.lossy() == p).unwrap();
        c.lines.map(|l| (l.added, l.removed))
    };
    assert_eq!(lines("app.log.txt"), Some((1, 0)), "an append adds a line");
    assert_eq!(lines("src/main.rs"), Some((1, 1)));
    assert_eq!(lines("src/new/lib.rs"), Some((1, 0)));
    assert_eq!(lines("blob.bin"), None, "binary files have no line counts");

    let turn = TurnCheckpoint {
        generation: 1,
        turn: 1,
        at: 0,
        before: before.id,
        after: after.id,
        files: changes,
        dirs: None,
        mixed: Vec::new(),
    };
    let undone = done(store.undo(&turn, OnConflict::Stop).unwrap());
    assert_eq!(
        state(&s.ws),
        before_state,
        "undo restores every byte and mode"
    );
    assert_eq!(undone.changed.len(), 8, "{:?}", undone.changed);
    assert!(
        !s.ws.join("src/new").exists(),
        "a folder the turn made goes with its files"
    );
    // The undo's own changes read as the turn's, reversed.
    let kind = |p: &str| {
        undone
            .changed
            .iter()
            .find(|c| c.path.lossy() == p)
            .unwrap()
            .kind
    };
    assert_eq!(kind("src/deep/old.rs"), ChangeKind::Created);
    assert_eq!(kind("src/new/lib.rs"), ChangeKind::Deleted);

    done(store.redo(&turn, OnConflict::Stop).unwrap());
    assert_eq!(state(&s.ws), after_state, "redo reverses the undo");
    assert_eq!(
        fs::metadata(s.ws.join("run.sh"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o755
    );
}

#[test]
fn the_undo_stack_walks_back_turn_by_turn_and_redo_comes_back() {
    let s = setup();
    project(&s.ws);
    let store = open(&s);
    let mut stack = UndoStack::default();
    let mut states = vec![state(&s.ws)];
    let mut last = store.snapshot("start").unwrap();
    for (n, script) in [
        "echo first >> notes.txt",
        "true",
        "echo second >> notes.txt && touch empty",
    ]
    .iter()
    .enumerate()
    {
        sh(&s.ws, script);
        let after = store.snapshot("after").unwrap();
        let files = store.changes(&last.id, &after.id).unwrap();
        stack.record(TurnCheckpoint {
            generation: 1 + n as u32 / 2,
            turn: n as u64 + 1,
            at: 0,
            before: last.id,
            after: after.id,
            files,
            dirs: None,
            mixed: Vec::new(),
        });
        states.push(state(&s.ws));
        last = after;
    }
    // The turn that changed nothing is not in the stack: two undos reach the start.
    for expected in [&states[1], &states[0]] {
        let turn = stack.next_undo().unwrap().clone();
        done(store.undo(&turn, OnConflict::Stop).unwrap());
        stack.commit_undo(&turn).unwrap();
        assert_eq!(&state(&s.ws), expected);
    }
    assert!(stack.next_undo().is_none());
    let turn = stack.next_redo().unwrap().clone();
    assert_eq!(turn.turn, 1);
    done(store.redo(&turn, OnConflict::Stop).unwrap());
    stack.commit_redo(&turn).unwrap();
    assert_eq!(state(&s.ws), states[1]);
    // The stacks survive the ledger's JSON.
    let json = serde_json::to_string(&stack).unwrap();
    assert_eq!(serde_json::from_str::<UndoStack>(&json).unwrap(), stack);
}

#[test]
fn a_file_the_user_changed_since_the_turn_is_a_conflict() {
    let s = setup();
    project(&s.ws);
    let store = open(&s);
    let before = store.snapshot("before").unwrap();
    sh(&s.ws, TURN);
    let after = store.snapshot("after").unwrap();
    // The user edits a file the turn changed, re-creates the one it deleted, and edits one the
    // turn did not touch.
    fs::write(s.ws.join("src/main.rs"), "the user's version\n").unwrap();
    fs::write(s.ws.join("src/deep/old.rs"), "the user's own old.rs\n").unwrap();
    fs::write(s.ws.join("notes.txt"), "untouched by the turn\n").unwrap();
    let user_state = state(&s.ws);

    let Restore::Stopped { conflicts } = store
        .restore(&after.id, &before.id, OnConflict::Stop)
        .unwrap()
    else {
        panic!("a conflict must stop the restore");
    };
    let found: Vec<(String, ConflictKind)> =
        conflicts.iter().map(|c| (c.path.lossy(), c.kind)).collect();
    assert_eq!(
        found,
        [
            ("src/deep/old.rs".to_string(), ConflictKind::Created),
            ("src/main.rs".to_string(), ConflictKind::Changed),
        ]
    );
    assert_eq!(
        state(&s.ws),
        user_state,
        "a stopped restore changes nothing"
    );

    // Keep the user's files, restore the rest.
    let kept = done(
        store
            .restore(&after.id, &before.id, OnConflict::KeepUsers)
            .unwrap(),
    );
    assert_eq!(kept.kept.len(), 2);
    assert_file(s.ws.join("src/main.rs"), "the user's version\n");
    assert_eq!(
        fs::read_to_string(s.ws.join("notes.txt")).unwrap(),
        "untouched by the turn\n",
        "a file the turn did not change is never looked at"
    );
    assert!(!s.ws.join("src/new").exists());
    assert_eq!(
        fs::read(s.ws.join("blob.bin")).unwrap(),
        b"a\0b\xff",
        "the rest is restored"
    );

    // Overwrite takes a checkpoint first, so the user's versions can still be had back.
    fs::write(s.ws.join("src/main.rs"), "the user's second version\n").unwrap();
    let over = done(
        store
            .restore(&after.id, &before.id, OnConflict::Overwrite)
            .unwrap(),
    );
    assert!(
        over.overwritten
            .iter()
            .any(|c| c.path.lossy() == "src/main.rs")
    );
    let backup = over.backup.expect("a backup before overwriting");
    assert_file(s.ws.join("src/main.rs"), "fn main() {}\n");
    let back: Vec<String> = store
        .changes(&before.id, &backup)
        .unwrap()
        .iter()
        .map(|c| c.path.lossy())
        .collect();
    assert_eq!(back, ["notes.txt", "src/deep/old.rs", "src/main.rs"]);
    // notes.txt is already as the backup has it: no conflict, nothing to do.
    done(
        store
            .restore(&before.id, &backup, OnConflict::Stop)
            .unwrap(),
    );
    assert_file(s.ws.join("src/main.rs"), "the user's second version\n");
    assert_file(s.ws.join("src/deep/old.rs"), "the user's own old.rs\n");
}

#[test]
fn ignored_and_oversized_files_are_named_never_lost() {
    let s = setup();
    sh(
        &s.ws,
        "printf 'target/\\n*.log\\n!keep.log\\n' > .gitignore && mkdir -p target sub .flower \
         && echo built > target/out && echo x > a.log && echo k > keep.log \
         && printf 'secret.txt\\n' > sub/.gitignore && echo s > sub/secret.txt \
         && echo visible > sub/ok.txt && echo note > .flower/handoff.md \
         && head -c 3000 /dev/zero > big.bin && head -c 600 /dev/zero > mid.bin \
         && head -c 700 /dev/zero > mid2.bin",
    );
    let options = Options {
        limits: Limits {
            max_file_bytes: 2000,
            max_checkpoint_bytes: 1000,
            ..Limits::default()
        },
        ..Options::default()
    };
    let store = Checkpoints::open(&s.data, &s.ws, options).unwrap();
    let snap: Snapshot = store.snapshot("caps").unwrap();
    let skipped: Vec<(String, SkipReason)> = snap
        .skipped
        .iter()
        .map(|k| (k.path.lossy(), k.reason))
        .collect();
    assert_eq!(
        skipped,
        [
            ("big.bin".to_string(), SkipReason::OverFileCap),
            ("mid2.bin".to_string(), SkipReason::OverCheckpointCap),
        ],
        "the smallest files are taken first"
    );
    // Stored: .gitignore, keep.log, sub/.gitignore, sub/ok.txt, mid.bin.
    assert_eq!(snap.files, 5, "{snap:?}");

    // A turn deletes everything; undo brings back what was stored and names nothing else.
    let before = snap;
    sh(
        &s.ws,
        "rm -rf keep.log sub mid.bin mid2.bin big.bin a.log target",
    );
    let after = store.snapshot("after").unwrap();
    let undone = done(
        store
            .restore(&after.id, &before.id, OnConflict::Stop)
            .unwrap(),
    );
    assert_file(s.ws.join("keep.log"), "k\n");
    assert_file(s.ws.join("sub/ok.txt"), "visible\n");
    assert_eq!(fs::read(s.ws.join("mid.bin")).unwrap().len(), 600);
    assert!(
        !s.ws.join("sub/secret.txt").exists(),
        "ignored: never stored"
    );
    assert!(!s.ws.join("big.bin").exists());
    let untouched: Vec<String> = undone.untouched.iter().map(|(p, _)| p.lossy()).collect();
    assert_eq!(
        untouched,
        ["big.bin", "mid2.bin"],
        "named, not silently lost"
    );
    assert_eq!(
        fs::read_to_string(s.ws.join(".flower/handoff.md")).unwrap(),
        "note\n",
        "the workbench is never stored nor touched"
    );
}

#[test]
fn a_workspace_inside_a_repository_leaves_its_git_byte_identical() {
    let s = setup();
    // The repository is the workspace's parent: its `.gitignore` applies, its `.git` is never
    // read or written.
    let repo = s.ws.parent().unwrap().join("repo");
    let ws = repo.join("pkg");
    fs::create_dir_all(&ws).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    fs::write(repo.join(".gitignore"), "*.tmp\n").unwrap();
    project(&ws);
    fs::write(ws.join("scratch.tmp"), "ignored by the parent's rules\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "start"]);
    // A stale stat in the index: any `git status` that may write would refresh it.
    let f = fs::File::options()
        .write(true)
        .open(ws.join("notes.txt"))
        .unwrap();
    f.set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000))
        .unwrap();
    drop(f);
    let git_before = files_and_times(&repo.join(".git"));

    let store = Checkpoints::open(&s.data, &ws, Options::default()).unwrap();
    let before = store.snapshot("before").unwrap();
    sh(&ws, TURN);
    let after = store.snapshot("after").unwrap();
    assert!(
        store
            .changes(&before.id, &after.id)
            .unwrap()
            .iter()
            .all(|c| !c.path.lossy().ends_with(".tmp"))
    );
    done(
        store
            .restore(&after.id, &before.id, OnConflict::Stop)
            .unwrap(),
    );
    assert!(
        !store.store_dir().starts_with(&repo),
        "the store lives outside the workspace"
    );
    assert_eq!(
        files_and_times(&repo.join(".git")),
        git_before,
        "the user's .git (index, HEAD, refs, objects) is unchanged"
    );
    assert_file(ws.join("scratch.tmp"), "ignored by the parent's rules\n");
}

#[test]
fn a_workspace_that_is_no_repository_still_follows_its_gitignore() {
    let s = setup();
    assert!(!s.ws.ancestors().any(|d| d.join(".git").exists()));
    sh(
        &s.ws,
        "printf 'build/\\n' > .gitignore && mkdir -p build nested/.git && echo o > build/o \
         && echo n > nested/file && echo HEAD > nested/.git/HEAD",
    );
    let store = open(&s);
    let before = store.snapshot("before").unwrap();
    sh(&s.ws, "echo changed > nested/file && echo p > build/o");
    let after = store.snapshot("after").unwrap();
    let changes = store.changes(&before.id, &after.id).unwrap();
    let paths: Vec<String> = changes.iter().map(|c| c.path.lossy()).collect();
    assert_eq!(
        paths,
        ["nested/file"],
        "a nested repository's files are covered, its .git and ignored folders are not"
    );
}

#[test]
fn two_stores_on_one_workspace_take_turns() {
    let s = setup();
    project(&s.ws);
    for i in 0..40 {
        fs::write(s.ws.join(format!("f{i}.txt")), format!("{i}\n").repeat(100)).unwrap();
    }
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let (data, ws) = (s.data.clone(), s.ws.clone());
            std::thread::spawn(move || {
                // Each thread opens its own store handle, as a second process would.
                let store = Checkpoints::open(&data, &ws, Options::default()).unwrap();
                (0..5)
                    .map(|n| store.snapshot(&format!("thread {t} #{n}")).unwrap().id)
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let ids: Vec<_> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    assert!(ids.windows(2).all(|w| w[0] == w[1]), "one state, one id");
    // The store is whole: a restore from an empty workspace brings everything back.
    let full = state(&s.ws);
    let store = open(&s);
    sh(&s.ws, "find . -mindepth 1 -delete");
    let empty = store.snapshot("empty").unwrap();
    done(store.restore(&empty.id, &ids[0], OnConflict::Stop).unwrap());
    assert_eq!(state(&s.ws), full);
}

#[tokio::test]
async fn checkpoints_run_on_the_blocking_pool() {
    let s = setup();
    project(&s.ws);
    let store = open(&s);
    let snap = store
        .in_background(|c| c.snapshot("from a task"))
        .await
        .unwrap();
    assert_eq!(snap.files, 7);
}
