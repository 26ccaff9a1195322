//! The store on odd workspaces: the stat cache, names that are not UTF-8, sockets and fifos,
//! symbolic links in a parent's place, files turned into folders, empty folders, a store inside
//! the workspace, damaged and missing objects.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::tree::Stamp;
use super::*;

struct Ws {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
    store: Checkpoints,
}

fn ws() -> Ws {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap();
    let ws = root.join("ws");
    fs::create_dir(&ws).unwrap();
    let store = Checkpoints::open(&root.join("data"), &ws, Options::default()).unwrap();
    Ws {
        _tmp: tmp,
        root,
        ws,
        store,
    }
}

fn done(r: Restore) -> Restored {
    match r {
        Restore::Done(d) => d,
        Restore::Stopped { conflicts } => panic!("stopped: {conflicts:?}"),
    }
}

fn write(ws: &Path, rel: &str, text: &str) {
    let p = ws.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// A snapshot whose clock is `ahead` seconds in the future (so nothing is too recent to cache).
fn take_at(w: &Ws, ahead: i64) -> Snapshot {
    let i = &w.store.inner;
    let now = snapshot::now();
    let now = Stamp {
        secs: now.secs + ahead,
        nanos: now.nanos,
    };
    snapshot::take(
        &i.objects,
        &i.dir.join("stat-cache"),
        &i.rules,
        &i.limits,
        now,
    )
    .unwrap()
}

#[test]
fn the_stat_cache_reads_only_what_changed() {
    let w = ws();
    for n in 0..30 {
        write(&w.ws, &format!("d{}/f{n}.txt", n % 3), &format!("{n}\n"));
    }
    let first = take_at(&w, 60);
    assert_eq!((first.read, first.files), (30, 30));
    let again = take_at(&w, 60);
    assert_eq!((again.read, again.id), (0, first.id), "nothing read again");
    write(&w.ws, "d1/f1.txt", "changed\n");
    let one = take_at(&w, 60);
    assert_eq!(one.read, 1);
    assert_ne!(one.id, first.id);
    assert_eq!(one.new_bytes, 8);
    // On the real clock: what the cache vouched for is not read; a file changed just now is read
    // again next time too (a write in the same clock tick would leave its stat as it was).
    write(&w.ws, "d0/f0.txt", "fresh\n");
    let now = w.store.snapshot("now").unwrap();
    let next = w.store.snapshot("next").unwrap();
    assert_eq!((now.read, next.read), (1, 1));
    assert_eq!(now.id, next.id);
    let one = take_at(&w, 60);
    // A damaged cache costs a full read and changes nothing else.
    take_at(&w, 60);
    fs::write(w.store.store_dir().join("stat-cache"), b"garbage").unwrap();
    let after_damage = take_at(&w, 60);
    assert_eq!((after_damage.read, after_damage.id), (30, one.id));
}

#[test]
fn names_that_are_not_utf8_are_stored_and_restored() {
    let w = ws();
    let odd = w.ws.join(std::ffi::OsStr::from_bytes(b"caf\xe9 \nname"));
    fs::write(&odd, b"latin-1 name").unwrap();
    write(&w.ws, "plain.txt", "p");
    let before = w.store.snapshot("before").unwrap();
    fs::remove_file(&odd).unwrap();
    let after = w.store.snapshot("after").unwrap();
    let changes = w.store.changes(&before.id, &after.id).unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].path.as_bytes(), b"caf\xe9 \nname");
    done(
        w.store
            .restore(&after.id, &before.id, OnConflict::Stop)
            .unwrap(),
    );
    assert_eq!(fs::read(&odd).unwrap(), b"latin-1 name");
}

#[test]
fn sockets_and_fifos_are_named_and_never_opened() {
    let w = ws();
    write(&w.ws, "a.txt", "a");
    let _sock = std::os::unix::net::UnixListener::bind(w.ws.join("agent.sock")).unwrap();
    let fifo = w.ws.join("pipe");
    let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let before = w.store.snapshot("before").unwrap();
    let skipped: Vec<(String, SkipReason)> = before
        .skipped
        .iter()
        .map(|s| (s.path.lossy(), s.reason))
        .collect();
    assert_eq!(
        skipped,
        [
            ("agent.sock".to_string(), SkipReason::Special),
            ("pipe".to_string(), SkipReason::Special),
        ]
    );
    // A restore across them leaves them be.
    write(&w.ws, "a.txt", "b");
    let after = w.store.snapshot("after").unwrap();
    done(
        w.store
            .restore(&after.id, &before.id, OnConflict::Stop)
            .unwrap(),
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(fs::read_to_string(w.ws.join("a.txt")).unwrap(), "a");
}

#[test]
fn nothing_is_written_through_a_link_in_a_parents_place() {
    let w = ws();
    let outside = w.root.join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("x.txt"), "outside's own").unwrap();
    write(&w.ws, "d/x.txt", "inside");
    let before = w.store.snapshot("before").unwrap();
    // The turn replaces the folder with a link to a folder outside.
    fs::remove_dir_all(w.ws.join("d")).unwrap();
    std::os::unix::fs::symlink(&outside, w.ws.join("d")).unwrap();
    let after = w.store.snapshot("after").unwrap();
    let undone = done(
        w.store
            .restore(&after.id, &before.id, OnConflict::Stop)
            .unwrap(),
    );
    assert!(undone.failed.is_empty(), "{:?}", undone.failed);
    assert!(fs::symlink_metadata(w.ws.join("d")).unwrap().is_dir());
    assert_eq!(fs::read_to_string(w.ws.join("d/x.txt")).unwrap(), "inside");
    assert_eq!(
        fs::read_to_string(outside.join("x.txt")).unwrap(),
        "outside's own"
    );
    // The user (not a turn) puts a link there after the folder is gone.
    fs::remove_dir_all(w.ws.join("d")).unwrap();
    let gone = w.store.snapshot("gone").unwrap();
    std::os::unix::fs::symlink(&outside, w.ws.join("d")).unwrap();
    // Keeping the user's link, the file cannot be written through it.
    let kept = done(
        w.store
            .restore(&gone.id, &before.id, OnConflict::KeepUsers)
            .unwrap(),
    );
    assert_eq!(kept.kept.len(), 1, "{kept:?}");
    assert_eq!(kept.failed.len(), 1, "{kept:?}");
    assert_eq!(
        fs::read_to_string(outside.join("x.txt")).unwrap(),
        "outside's own"
    );
    // Overwriting, the link is kept in a backup and replaced by the folder.
    let over = done(
        w.store
            .restore(&gone.id, &before.id, OnConflict::Overwrite)
            .unwrap(),
    );
    assert!(over.failed.is_empty(), "{over:?}");
    assert!(over.backup.is_some());
    assert!(fs::symlink_metadata(w.ws.join("d")).unwrap().is_dir());
    assert_eq!(fs::read_to_string(w.ws.join("d/x.txt")).unwrap(), "inside");
    assert_eq!(
        fs::read_to_string(outside.join("x.txt")).unwrap(),
        "outside's own"
    );
}

#[test]
fn files_turned_into_folders_and_empty_folders_come_back() {
    let w = ws();
    write(&w.ws, "a", "a file");
    fs::create_dir(w.ws.join("empty-before")).unwrap();
    let before = w.store.snapshot("before").unwrap();
    fs::remove_file(w.ws.join("a")).unwrap();
    write(&w.ws, "a/b", "now a folder");
    fs::remove_dir(w.ws.join("empty-before")).unwrap();
    fs::create_dir(w.ws.join("empty-after")).unwrap();
    let after = w.store.snapshot("after").unwrap();
    done(
        w.store
            .restore(&after.id, &before.id, OnConflict::Stop)
            .unwrap(),
    );
    assert_eq!(fs::read_to_string(w.ws.join("a")).unwrap(), "a file");
    assert!(w.ws.join("empty-before").is_dir());
    assert!(!w.ws.join("empty-after").exists());
    done(
        w.store
            .restore(&before.id, &after.id, OnConflict::Stop)
            .unwrap(),
    );
    assert_eq!(
        fs::read_to_string(w.ws.join("a/b")).unwrap(),
        "now a folder"
    );
    assert!(!w.ws.join("empty-before").exists());
}

#[test]
fn a_folder_with_ignored_files_stays_when_its_files_are_undone() {
    let w = ws();
    write(&w.ws, ".gitignore", "*.o\n");
    let before = w.store.snapshot("before").unwrap();
    write(&w.ws, "build/main.c", "int main;");
    write(&w.ws, "build/main.o", "object");
    let after = w.store.snapshot("after").unwrap();
    let r = done(
        w.store
            .restore(&after.id, &before.id, OnConflict::Stop)
            .unwrap(),
    );
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    assert!(!w.ws.join("build/main.c").exists());
    assert_eq!(
        fs::read_to_string(w.ws.join("build/main.o")).unwrap(),
        "object"
    );
}

#[test]
fn a_mode_change_is_undone_in_place() {
    let w = ws();
    write(&w.ws, "run.sh", "#!/bin/sh\n");
    let before = w.store.snapshot("before").unwrap();
    let ino = fs::metadata(w.ws.join("run.sh")).unwrap().ino();
    fs::set_permissions(w.ws.join("run.sh"), fs::Permissions::from_mode(0o4751)).unwrap();
    let after = w.store.snapshot("after").unwrap();
    let changes = w.store.changes(&before.id, &after.id).unwrap();
    assert_eq!(changes[0].kind, ChangeKind::ModeChanged);
    done(
        w.store
            .restore(&after.id, &before.id, OnConflict::Stop)
            .unwrap(),
    );
    let meta = fs::metadata(w.ws.join("run.sh")).unwrap();
    assert_eq!(meta.permissions().mode() & 0o7777, 0o644);
    assert_eq!(meta.ino(), ino, "the same file, not a copy");
    done(
        w.store
            .restore(&before.id, &after.id, OnConflict::Stop)
            .unwrap(),
    );
    let mode = fs::metadata(w.ws.join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(
        mode & 0o7777,
        0o4751,
        "every permission bit, setuid included"
    );
    // The user then edits it; an overwriting undo brings back the bytes too, not only the bits.
    write(&w.ws, "run.sh", "the user's script\n");
    let r = done(
        w.store
            .restore(&after.id, &before.id, OnConflict::Overwrite)
            .unwrap(),
    );
    assert_eq!(r.overwritten.len(), 1);
    assert_eq!(
        fs::read_to_string(w.ws.join("run.sh")).unwrap(),
        "#!/bin/sh\n"
    );
    let mode = fs::metadata(w.ws.join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o644);
}

#[test]
fn a_store_inside_the_workspace_does_not_store_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = fs::canonicalize(tmp.path()).unwrap();
    write(&ws, "a.txt", "a");
    let store = Checkpoints::open(&ws.join("data"), &ws, Options::default()).unwrap();
    let first = store.snapshot("one").unwrap();
    let second = store.snapshot("two").unwrap();
    assert_eq!(first.id, second.id);
    assert_eq!(first.files, 1);
}

#[test]
fn missing_and_damaged_objects_are_errors_before_any_change() {
    let w = ws();
    write(&w.ws, "a.txt", "version one");
    let before = w.store.snapshot("before").unwrap();
    write(&w.ws, "a.txt", "version two");
    let after = w.store.snapshot("after").unwrap();
    let objects = &w.store.inner.objects;
    let one = ObjectId::of(b"version one");
    let path = objects.dir().join(&one.hex()[..2]).join(&one.hex()[2..]);
    fs::remove_file(&path).unwrap();
    let err = w
        .store
        .restore(&after.id, &before.id, OnConflict::Stop)
        .unwrap_err();
    assert!(matches!(err, CheckpointError::Missing { .. }), "{err}");
    assert_eq!(
        fs::read_to_string(w.ws.join("a.txt")).unwrap(),
        "version two"
    );
    // A damaged listing.
    let root = before.id.0;
    let listing = objects.dir().join(&root.hex()[..2]).join(&root.hex()[2..]);
    fs::write(&listing, "flower-tree 1\nnonsense").unwrap();
    let err = w.store.changes(&before.id, &after.id).unwrap_err();
    assert!(matches!(err, CheckpointError::Damaged { .. }), "{err}");
    // A workspace that does not exist.
    let err = Checkpoints::open(&w.root, &w.root.join("absent"), Options::default()).unwrap_err();
    assert!(matches!(err, CheckpointError::Workspace { .. }), "{err}");
}

#[test]
fn store_names_are_readable_and_distinct() {
    let a = store_name(Path::new("/home/u/calc"));
    let b = store_name(Path::new("/srv/calc"));
    assert!(a.starts_with("calc-") && b.starts_with("calc-"));
    assert_ne!(a, b);
    assert!(store_name(Path::new("/")).starts_with("root-"));
    assert!(store_name(Path::new("/x/../.. odd name")).starts_with("_odd_name-"));
}
