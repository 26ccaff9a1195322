//! Turns told apart from everyone else (checkpoints around each call), the walk back over several
//! turns, the clean-up of the store, and the cap on one walk — on real files in temp dirs.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;

struct Ws {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    store: Checkpoints,
}

fn ws_with(options: Options) -> Ws {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap();
    let ws = root.join("ws");
    fs::create_dir(&ws).unwrap();
    let store = Checkpoints::open(&root.join("data"), &ws, options).unwrap();
    Ws {
        _tmp: tmp,
        ws,
        store,
    }
}

fn ws() -> Ws {
    ws_with(Options::default())
}

fn write(ws: &Path, rel: &str, text: &str) {
    let p = ws.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn read(ws: &Path, rel: &str) -> String {
    fs::read_to_string(ws.join(rel)).unwrap_or_else(|_| "<gone>".into())
}

/// A call: the checkpoint before, `change` run, the checkpoint after.
fn call(w: &Ws, change: impl FnOnce(&Path)) -> CallSpan {
    let before = w.store.snapshot("call before").unwrap().id;
    change(&w.ws);
    let after = w.store.snapshot("call after").unwrap().id;
    CallSpan {
        before,
        after: Some(after),
    }
}

fn close(w: &Ws, calls: Vec<CallSpan>) -> Closed {
    let end = w.store.snapshot("end").unwrap().id;
    let pending = PendingTurn {
        generation: 1,
        turn: 1,
        calls,
    };
    w.store.close_turn(&pending, end, 7).unwrap().unwrap()
}

fn paths(turn: &TurnCheckpoint) -> Vec<String> {
    turn.files.iter().map(|f| f.path.lossy()).collect()
}

#[test]
fn only_what_the_turns_own_calls_changed_is_undone() {
    let w = ws();
    write(&w.ws, "a.txt", "a\n");
    write(&w.ws, "mine.txt", "mine\n");
    write(&w.ws, "both.txt", "both\n");
    let one = call(&w, |ws| {
        write(ws, "a.txt", "A\n");
        write(ws, "both.txt", "both\nturn\n");
        write(ws, "new/made.txt", "made\n");
    });
    // Between the calls someone else edits two files and makes a folder.
    write(&w.ws, "mine.txt", "mine, edited\n");
    write(&w.ws, "both.txt", "both\nturn\nuser\n");
    write(&w.ws, "new/theirs.txt", "theirs\n");
    let two = call(&w, |ws| write(ws, "a.txt", "A again\n"));
    // After the last call, too.
    write(&w.ws, "late.txt", "late\n");
    let Closed { turn, others } = close(&w, vec![one, two]);
    assert_eq!(paths(&turn), ["a.txt", "both.txt", "new/made.txt"]);
    assert_eq!(turn.mixed, [RelPath::parse("both.txt").unwrap()]);
    let others: Vec<String> = others.iter().map(RelPath::lossy).collect();
    assert_eq!(others, ["late.txt", "mine.txt", "new/theirs.txt"]);

    // The mixed file stops a plain undo; skipping it restores the rest, the others untouched.
    let Restore::Stopped { conflicts } = w.store.undo(&turn, OnConflict::Stop).unwrap() else {
        panic!("not stopped")
    };
    assert_eq!(conflicts.len(), 1);
    assert_eq!(conflicts[0].kind, ConflictKind::ChangedDuringTurn);
    let Restore::Done(done) = w.store.undo(&turn, OnConflict::KeepUsers).unwrap() else {
        panic!("stopped")
    };
    assert_eq!(done.kept.len(), 1);
    assert_eq!(read(&w.ws, "a.txt"), "a\n");
    assert_eq!(read(&w.ws, "new/made.txt"), "<gone>");
    assert_eq!(
        read(&w.ws, "new/theirs.txt"),
        "theirs\n",
        "their folder stays"
    );
    assert_eq!(read(&w.ws, "both.txt"), "both\nturn\nuser\n");
    assert_eq!(read(&w.ws, "mine.txt"), "mine, edited\n");
    assert_eq!(read(&w.ws, "late.txt"), "late\n");
    // Redo brings the turn's own files back only.
    let Restore::Done(_) = w.store.redo(&turn, OnConflict::Stop).unwrap() else {
        panic!("stopped")
    };
    assert_eq!(read(&w.ws, "a.txt"), "A again\n");
    assert_eq!(read(&w.ws, "mine.txt"), "mine, edited\n");
}

#[test]
fn a_call_cut_short_ends_where_the_turn_is_closed() {
    let w = ws();
    write(&w.ws, "log.txt", "start\n");
    let before = w.store.snapshot("before").unwrap().id;
    write(&w.ws, "log.txt", "start\nmore\n");
    fs::create_dir(w.ws.join("empty")).unwrap();
    let Closed { turn, others } = close(
        &w,
        vec![CallSpan {
            before,
            after: None,
        }],
    );
    assert_eq!(paths(&turn), ["log.txt"]);
    assert_eq!(turn.dirs.as_deref().map(<[RelPath]>::len), Some(1));
    assert!(others.is_empty());
    let Restore::Done(_) = w.store.undo(&turn, OnConflict::Stop).unwrap() else {
        panic!("stopped")
    };
    assert_eq!(read(&w.ws, "log.txt"), "start\n");
    assert!(
        !w.ws.join("empty").exists(),
        "the empty folder it made goes too"
    );
}

#[test]
fn walking_back_over_turns_finds_changes_between_them_before_undoing_any() {
    let w = ws();
    write(&w.ws, "a.txt", "a\n");
    let t1 = close(&w, vec![call(&w, |ws| write(ws, "a.txt", "A1\n"))]).turn;
    write(&w.ws, "a.txt", "between\n");
    let t2 = close(&w, vec![call(&w, |ws| write(ws, "b.txt", "B\n"))]).turn;
    let found = w.store.undo_conflicts(&[t2.clone(), t1.clone()]).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].path.lossy(), "a.txt");
    // Only the newer turn: nothing changed since it.
    assert!(w.store.undo_conflicts(&[t2]).unwrap().is_empty());
    // A change after the newest turn to a file it wrote.
    write(&w.ws, "a.txt", "A1\n");
    let t3 = close(&w, vec![call(&w, |ws| write(ws, "a.txt", "A3\n"))]).turn;
    write(&w.ws, "a.txt", "user\n");
    let found = w.store.undo_conflicts(&[t3]).unwrap();
    assert_eq!(found[0].kind, ConflictKind::Changed);
}

/// Set every file under `dir` two days back.
fn age(dir: &Path) {
    let ok = Command::new("find")
        .arg(dir)
        .args([
            "-type",
            "f",
            "-exec",
            "touch",
            "-d",
            "2 days ago",
            "{}",
            "+",
        ])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

fn objects(w: &Ws) -> usize {
    let out = Command::new("find")
        .arg(w.store.store_dir().join("objects"))
        .args(["-type", "f"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).lines().count()
}

#[test]
fn a_store_younger_than_a_day_is_not_cleaned_unless_asked() {
    let w = ws();
    write(&w.ws, "a.txt", "a\n");
    w.store.snapshot("one").unwrap();
    // Nothing in it can be old enough to delete: no clean-up, and none recorded.
    assert_eq!(w.store.prune(&[], false).unwrap(), None);
    assert!(!w.store.store_dir().join("pruned").exists());
    age(w.store.store_dir());
    assert!(w.store.prune(&[], false).unwrap().is_some());
    assert!(w.store.store_dir().join("pruned").exists());
}

#[test]
fn the_clean_up_deletes_what_no_kept_checkpoint_needs() {
    let w = ws();
    write(&w.ws, "keep.txt", "kept\n");
    write(&w.ws, "old.txt", "old content\n");
    let old = w.store.snapshot("old").unwrap();
    fs::remove_file(w.ws.join("old.txt")).unwrap();
    let kept = w.store.snapshot("kept").unwrap();
    let all = objects(&w);
    // Everything taken within the last day is kept, named or not.
    let p = w.store.prune(&[], true).unwrap().unwrap();
    assert_eq!((p.deleted, objects(&w)), (0, all));
    // Two days later, with the log's times moved back too: only what `kept` needs stays.
    age(w.store.store_dir());
    let log = w.store.store_dir().join("checkpoints.log");
    let text = fs::read_to_string(&log)
        .unwrap()
        .replace("\"at\":\"20", "\"at\":\"19");
    fs::write(&log, text).unwrap();
    let p = w.store.prune(&[kept.id], true).unwrap().unwrap();
    assert!(p.deleted >= 2, "{p:?}");
    assert!(p.bytes >= 12);
    let Err(CheckpointError::Missing { .. }) = w.store.changes(&old.id, &kept.id) else {
        panic!("the old checkpoint is gone")
    };
    // What is kept still restores, and the stat cache named no deleted content.
    write(&w.ws, "keep.txt", "changed\n");
    let now = w.store.snapshot("now").unwrap();
    let Restore::Done(_) = w
        .store
        .restore(&now.id, &kept.id, OnConflict::Stop)
        .unwrap()
    else {
        panic!("stopped")
    };
    assert_eq!(read(&w.ws, "keep.txt"), "kept\n");
    write(&w.ws, "old.txt", "old content\n");
    let again = w.store.snapshot("again").unwrap();
    assert_eq!(again.id, old.id, "the same content is stored again");
    assert!(w.store.changes(&old.id, &kept.id).is_ok());
    // Not again within a day unless forced.
    assert_eq!(w.store.prune(&[], false).unwrap(), None);
}

#[test]
fn a_walk_over_the_entry_cap_takes_no_checkpoint() {
    let w = ws_with(Options {
        limits: Limits {
            max_entries: 50,
            ..Limits::default()
        },
        ..Options::default()
    });
    for n in 0..40 {
        write(&w.ws, &format!("f{n}.txt"), "x");
    }
    assert!(w.store.snapshot("small").is_ok());
    for n in 40..80 {
        write(&w.ws, &format!("d/f{n}.txt"), "x");
    }
    let Err(CheckpointError::TooManyFiles { limit: 50 }) = w.store.snapshot("big") else {
        panic!("a checkpoint of a workspace over the cap")
    };
}

#[test]
fn a_large_first_checkpoint_is_one_pack_that_restores_and_is_cleaned_whole() {
    let w = ws();
    for n in 0..600 {
        write(
            &w.ws,
            &format!("d{}/f{n}.txt", n / 100),
            &format!("file {n}\n"),
        );
    }
    let first = w.store.snapshot("first").unwrap();
    assert_eq!((first.read, first.files), (600, 600));
    // One pack and its index instead of a file for each of the 607 objects.
    let packs = w.store.store_dir().join("objects/pack");
    assert_eq!(fs::read_dir(&packs).unwrap().count(), 2);
    assert_eq!(objects(&w), 2);
    // Changed since: one file, a folder gone. Put back from the pack, by this store and by one
    // opened afresh (another session).
    write(&w.ws, "d0/f5.txt", "changed\n");
    fs::remove_dir_all(w.ws.join("d1")).unwrap();
    let second = w.store.snapshot("second").unwrap();
    let again = Checkpoints::open(
        w.store.store_dir().parent().unwrap().parent().unwrap(),
        &w.ws,
        Options::default(),
    )
    .unwrap();
    assert_eq!(again.changes(&first.id, &second.id).unwrap().len(), 101);
    let Restore::Done(done) = again
        .restore(&second.id, &first.id, OnConflict::Stop)
        .unwrap()
    else {
        panic!("stopped")
    };
    assert_eq!(done.changed.len(), 101);
    assert_eq!(read(&w.ws, "d0/f5.txt"), "file 5\n");
    assert_eq!(read(&w.ws, "d1/f150.txt"), "file 150\n");
    assert_eq!(w.store.snapshot("back").unwrap().id, first.id);
    // A pack some kept checkpoint needs stays whole; one none needs goes whole.
    age(w.store.store_dir());
    let log = w.store.store_dir().join("checkpoints.log");
    let text = fs::read_to_string(&log)
        .unwrap()
        .replace("\"at\":\"20", "\"at\":\"19");
    fs::write(&log, text).unwrap();
    let p = w.store.prune(&[second.id], true).unwrap().unwrap();
    assert_eq!(p.kept, 607 + 3, "{p:?}");
    assert!(w.store.changes(&first.id, &second.id).is_ok());
    let p = w.store.prune(&[], true).unwrap().unwrap();
    assert_eq!(p.deleted, 607 + 3, "{p:?}");
    assert_eq!(fs::read_dir(&packs).unwrap().count(), 0);
    let Err(CheckpointError::Missing { .. }) = w.store.changes(&first.id, &second.id) else {
        panic!("the pack is gone")
    };
}

#[test]
fn a_damaged_pack_is_reported_not_restored() {
    let w = ws();
    for n in 0..600 {
        write(&w.ws, &format!("f{n}.txt"), &format!("file {n}\n"));
    }
    let first = w.store.snapshot("first").unwrap();
    fs::remove_file(w.ws.join("f7.txt")).unwrap();
    let second = w.store.snapshot("second").unwrap();
    let pack = fs::read_dir(w.store.store_dir().join("objects/pack"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "pack"))
        .unwrap();
    let mut bytes = fs::read(&pack).unwrap();
    for b in bytes.iter_mut() {
        if *b == b'7' {
            *b = b'8';
        }
    }
    fs::write(&pack, bytes).unwrap();
    let err = w
        .store
        .restore(&second.id, &first.id, OnConflict::Stop)
        .unwrap_err();
    assert!(matches!(err, CheckpointError::Damaged { .. }), "{err}");
    assert_eq!(read(&w.ws, "f7.txt"), "<gone>");
}
