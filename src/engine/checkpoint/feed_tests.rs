//! The change feed's checkpoints against a full walk's: after each kind of change (and a long
//! run of random ones), the checkpoint built from the feed must be the very checkpoint a walk
//! of the same workspace gives, and the store's log must say which route took it.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::*;

struct Ws {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
    /// With the change feed.
    fed: Checkpoints,
    /// Without: every checkpoint walks.
    walked: Checkpoints,
}

fn ws() -> Ws {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap();
    let ws = root.join("ws");
    fs::create_dir(&ws).unwrap();
    let on = Options {
        watch: true,
        ..Options::default()
    };
    let fed = Checkpoints::open(&root.join("fed"), &ws, on).unwrap();
    let walked = Checkpoints::open(&root.join("walked"), &ws, Options::default()).unwrap();
    Ws {
        _tmp: tmp,
        root,
        ws,
        fed,
        walked,
    }
}

fn write(ws: &Path, rel: &str, text: &str) {
    let p = ws.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// The route of the store's last checkpoint, as its log says.
fn last_route(store: &Checkpoints) -> String {
    let log = fs::read_to_string(store.store_dir().join("checkpoints.log")).unwrap();
    let line: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    line["route"].as_str().unwrap().to_string()
}

impl Ws {
    /// A checkpoint from the feed, checked against a walk; the feed's route.
    fn check(&self, what: &str) -> String {
        let fed = self.fed.snapshot(what).unwrap();
        let route = last_route(&self.fed);
        let walked = self.walked.snapshot(what).unwrap();
        assert_eq!(
            fed.id, walked.id,
            "{what}: the feed's checkpoint is not the walk's ({route})"
        );
        assert_eq!(
            (fed.files, fed.bytes, fed.skipped.clone()),
            (walked.files, walked.bytes, walked.skipped.clone()),
            "{what}"
        );
        route
    }

    fn fed(&self, what: &str) {
        let route = self.check(what);
        assert_eq!(route, "changes", "{what}");
    }
}

#[test]
fn each_kind_of_change_gives_the_walks_checkpoint() {
    let w = ws();
    let ws = &w.ws;
    write(ws, "a.txt", "a\n");
    write(ws, "src/deep/x.rs", "x\n");
    write(ws, "src/deep/y.rs", "y\n");
    write(ws, ".gitignore", "target/\n*.log\n");
    write(ws, "target/out.bin", "built\n");
    assert!(w.check("start").starts_with("walk"), "the first one walks");
    w.fed("nothing changed");
    fs::OpenOptions::new()
        .append(true)
        .open(ws.join("a.txt"))
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"more\n"))
        .unwrap();
    w.fed("an append");
    write(ws, "new/dir/in/dir/file.txt", "n\n");
    w.fed("a new nested folder");
    fs::remove_file(ws.join("src/deep/y.rs")).unwrap();
    w.fed("a delete");
    fs::rename(ws.join("src/deep/x.rs"), ws.join("src/z.rs")).unwrap();
    w.fed("a rename across folders");
    fs::rename(ws.join("new/dir"), ws.join("moved")).unwrap();
    write(ws, "moved/in/later.txt", "l\n");
    w.fed("a folder renamed, then written in");
    write(ws, "moved/in/dir/again.txt", "again\n");
    w.fed("a write in the moved folder's old watch");
    fs::set_permissions(ws.join("src/z.rs"), fs::Permissions::from_mode(0o755)).unwrap();
    w.fed("a mode");
    std::os::unix::fs::symlink("src/z.rs", ws.join("link")).unwrap();
    w.fed("a new link");
    fs::remove_file(ws.join("link")).unwrap();
    std::os::unix::fs::symlink("a.txt", ws.join("link")).unwrap();
    w.fed("a link pointed elsewhere");
    let odd = ws.join(std::ffi::OsStr::from_bytes(b"caf\xe9 \nname"));
    fs::write(&odd, b"latin-1").unwrap();
    w.fed("a name that is not UTF-8");
    write(ws, "target/more.bin", "ignored\n");
    write(ws, "src/debug.log", "ignored\n");
    w.fed("ignored files");
    fs::remove_file(ws.join("a.txt")).unwrap();
    fs::create_dir(ws.join("a.txt")).unwrap();
    write(ws, "a.txt/inside", "i\n");
    w.fed("a file turned into a folder");
    fs::remove_dir_all(ws.join("moved")).unwrap();
    w.fed("a folder removed");
    let outside = w.root.join("outside");
    write(&outside, "pkg/lib.rs", "lib\n");
    write(&outside, "pkg/sub/mod.rs", "m\n");
    fs::rename(outside.join("pkg"), ws.join("pkg")).unwrap();
    w.fed("a folder moved in from outside");
    fs::rename(ws.join("pkg"), outside.join("pkg")).unwrap();
    w.fed("a folder moved out");
    write(&outside, "pkg/sub/mod.rs", "changed outside\n");
    w.fed("a change in a folder moved out");
    fs::create_dir(ws.join("empty")).unwrap();
    w.fed("an empty folder");
    write(ws, ".flower/notes.md", "workbench\n");
    w.fed("the workbench is never covered");
    write(ws, ".gitignore", "*.log\n");
    assert!(w.check("a .gitignore changed").starts_with("walk"));
    w.fed("after the walk, the feed again");
}

#[test]
fn a_long_run_of_random_changes_gives_the_walks_checkpoints() {
    let w = ws();
    let ws = &w.ws;
    write(ws, ".gitignore", "ignored/\n");
    w.check("start");
    let dirs = ["", "a", "a/b", "c", "ignored", "a/b/d"];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        usize::try_from(seed % n as u64).unwrap()
    };
    for round in 0..60 {
        for _ in 0..1 + next(4) {
            let dir = dirs[next(dirs.len())];
            let path = ws.join(dir).join(format!("f{}", next(5)));
            match next(6) {
                0 | 1 => {
                    let _ = fs::create_dir_all(path.parent().unwrap());
                    let _ = fs::write(&path, format!("{round}\n"));
                }
                2 => {
                    let _ = fs::remove_file(&path);
                }
                3 => {
                    let to = ws
                        .join(dirs[next(dirs.len())])
                        .join(format!("f{}", next(5)));
                    let _ = fs::rename(&path, &to);
                }
                4 => {
                    let _ = fs::set_permissions(&path, fs::Permissions::from_mode(0o600));
                }
                _ => {
                    let sub = ws.join(dir);
                    if next(3) == 0 && !dir.is_empty() {
                        let _ = fs::remove_dir_all(&sub);
                    } else {
                        let _ = fs::create_dir_all(sub.join("new"));
                    }
                }
            }
        }
        w.fed(&format!("round {round}"));
    }
}

#[test]
fn an_overflowing_feed_falls_back_to_a_walk() {
    let w = ws();
    let ws = &w.ws;
    write(ws, "keep.txt", "k\n");
    w.check("start");
    w.fed("the feed works");
    // More events than the kernel queues for one inotify instance (each new file is a create, a
    // modify and a close): the queue overflows for real.
    let queued: usize = fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(16384);
    for n in 0..queued / 2 + 100 {
        fs::write(ws.join(format!("many-{n}")), b"x").unwrap();
    }
    assert_eq!(
        w.check("past the queue"),
        "walk: the change feed overflowed"
    );
    fs::write(ws.join("keep.txt"), b"after\n").unwrap();
    w.fed("the walk started a new feed");
}

#[test]
fn without_the_feed_every_checkpoint_walks() {
    let w = ws();
    write(&w.ws, "a", "a");
    w.walked.snapshot("one").unwrap();
    w.walked.snapshot("two").unwrap();
    assert_eq!(last_route(&w.walked), "walk: the change feed is off");
}
