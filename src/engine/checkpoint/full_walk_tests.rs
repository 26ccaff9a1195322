//! A full walk streamed in batches: the checkpoint cap drawn as a sorted list would draw it, the
//! stat cache written only when it changes, and the same ids however the batches fall.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::index::CacheReader;
use super::tree::Stamp;
use super::*;

struct Ws {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    store: Checkpoints,
}

fn ws_with(limits: Limits) -> Ws {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap();
    let ws = root.join("ws");
    fs::create_dir(&ws).unwrap();
    let options = Options {
        limits,
        ..Options::default()
    };
    let store = Checkpoints::open(&root.join("data"), &ws, options).unwrap();
    Ws {
        _tmp: tmp,
        ws,
        store,
    }
}

fn write(ws: &Path, rel: &str, bytes: usize) {
    let p = ws.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, vec![b'x'; bytes]).unwrap();
}

/// A full walk whose clock is a minute ahead (nothing is too recent to cache).
fn take(w: &Ws) -> Snapshot {
    let i = &w.store.inner;
    let now = snapshot::now();
    let now = Stamp {
        secs: now.secs + 60,
        nanos: now.nanos,
    };
    snapshot::take(&i.objects, &cache(w), &i.rules, &i.limits, now).unwrap()
}

fn cache(w: &Ws) -> PathBuf {
    w.store.inner.dir.join("stat-cache")
}

/// The paths the stat cache names, in its order.
fn cached(w: &Ws) -> Vec<String> {
    let mut r = CacheReader::open(&cache(w));
    let mut out = Vec::new();
    while let Some(rec) = r.next_record() {
        out.push(String::from_utf8_lossy(&rec.path).into_owned());
    }
    out
}

#[test]
fn the_checkpoint_cap_takes_the_smallest_files_and_of_equal_ones_the_first_by_path() {
    let w = ws_with(Limits {
        max_file_bytes: 100,
        max_checkpoint_bytes: 27,
        ..Limits::default()
    });
    for (rel, size) in [
        ("c.txt", 10),
        ("a/b.txt", 10),
        ("a.txt", 10),
        ("d.txt", 5),
        ("e.txt", 30),
        ("huge.bin", 101),
    ] {
        write(&w.ws, rel, size);
    }
    let snap = take(&w);
    let skipped: Vec<(String, SkipReason)> = snap
        .skipped
        .iter()
        .map(|s| (s.path.lossy(), s.reason))
        .collect();
    // By size then path: d (5), a.txt, a/b.txt, c.txt (10 each), e (30): 5 + 10 + 10 fit.
    assert_eq!(
        skipped,
        [
            ("c.txt".to_string(), SkipReason::OverCheckpointCap),
            ("e.txt".to_string(), SkipReason::OverCheckpointCap),
            ("huge.bin".to_string(), SkipReason::OverFileCap),
        ]
    );
    assert_eq!((snap.files, snap.bytes), (3, 25));
    // Under the cap the same tree is taken in one walk, and gives the same id for what it holds.
    fs::remove_file(w.ws.join("c.txt")).unwrap();
    fs::remove_file(w.ws.join("e.txt")).unwrap();
    fs::remove_file(w.ws.join("huge.bin")).unwrap();
    let under = take(&w);
    assert!(under.skipped.is_empty());
    assert_eq!((under.files, under.bytes), (3, 25));
    let listed = |id: &SnapshotId| tree::load(&w.store.inner.objects, &id.0).unwrap();
    let names = |t: &tree::Tree| t.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    let without: Vec<Vec<u8>> = names(&listed(&snap.id))
        .into_iter()
        .filter(|n| !matches!(n.as_slice(), b"c.txt" | b"e.txt" | b"huge.bin"))
        .collect();
    assert_eq!(without, names(&listed(&under.id)));
}

#[test]
fn the_stat_cache_is_written_only_when_it_changes_and_names_what_the_walk_kept() {
    let w = ws_with(Limits::default());
    // More files than one batch holds, in several folders.
    let mut all = Vec::new();
    for d in 0..4 {
        for f in 0..40 {
            let rel = format!("d{d}/f{f:02}.txt");
            write(&w.ws, &rel, 3 + f);
            all.push(rel);
        }
    }
    all.sort();
    let first = take(&w);
    assert_eq!(first.read, all.len());
    assert_eq!(cached(&w), all);
    let ino = fs::metadata(cache(&w)).unwrap().ino();
    // Nothing changed: nothing read, the cache not written again.
    let again = take(&w);
    assert_eq!((again.id, again.read), (first.id, 0));
    assert_eq!(fs::metadata(cache(&w)).unwrap().ino(), ino);
    // A file gone in the middle: the cache is written again without it, nothing read.
    fs::remove_file(w.ws.join("d1/f07.txt")).unwrap();
    let gone = take(&w);
    assert_eq!(gone.read, 0);
    all.retain(|p| p != "d1/f07.txt");
    assert_eq!(cached(&w), all);
    // A file gone at the end, another changed at the start.
    fs::remove_file(w.ws.join("d3/f39.txt")).unwrap();
    write(&w.ws, "d0/f00.txt", 1);
    let both = take(&w);
    assert_eq!(both.read, 1);
    all.retain(|p| p != "d3/f39.txt");
    assert_eq!(cached(&w), all);
    // A damaged cache: everything read again, the same checkpoint.
    fs::write(cache(&w), b"garbage").unwrap();
    let damaged = take(&w);
    assert_eq!((damaged.id, damaged.read), (both.id, all.len()));
    assert_eq!(cached(&w), all);
}
