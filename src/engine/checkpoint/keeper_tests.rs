//! The keeper's feed across sessions, against a full walk: a session that starts while a keeper
//! answers builds its first checkpoint from the keeper's base without walking, catches what
//! changed while no session ran, and gives the walk's very checkpoint; a session on its own
//! feed moves to the keeper's; what the keeper cannot vouch for sends sessions walking and the
//! keeper away.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::feed::{Link, Persisted, socket_path};
use super::*;

struct Ws {
    _tmp: tempfile::TempDir,
    data: PathBuf,
    ws: PathBuf,
    /// Without a feed: every checkpoint walks.
    walked: Checkpoints,
}

fn ws() -> Ws {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap();
    let ws = root.join("ws");
    fs::create_dir(&ws).unwrap();
    write(&ws, "a.txt", "a\n");
    write(&ws, "d/b.txt", "b\n");
    write(&ws, "d/e/c.txt", "c\n");
    let walked = Checkpoints::open(&root.join("walked"), &ws, Options::default()).unwrap();
    Ws {
        _tmp: tmp,
        data: root.join("data"),
        ws,
        walked,
    }
}

fn write(ws: &Path, rel: &str, text: &str) {
    let p = ws.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn last_route(store: &Checkpoints) -> String {
    let log = fs::read_to_string(store.store_dir().join("checkpoints.log")).unwrap();
    let line: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    line["route"].as_str().unwrap().to_string()
}

impl Ws {
    fn session(&self) -> Checkpoints {
        let on = Options {
            watch: true,
            keeper: true,
            ..Options::default()
        };
        Checkpoints::open(&self.data, &self.ws, on).unwrap()
    }

    /// A keeper on a thread, answering once this returns.
    fn keeper(&self, idle: Duration) -> JoinHandle<Result<(), String>> {
        let store = self.session();
        let dir = store.store_dir().to_path_buf();
        let keeper = thread::spawn(move || store.keep_feed(idle));
        let started = Instant::now();
        while Link::connect(&dir).is_err() {
            assert!(started.elapsed() < Duration::from_secs(20), "no keeper");
            thread::sleep(Duration::from_millis(10));
        }
        keeper
    }

    /// `store`'s checkpoint, checked against a walk's; its route.
    fn check(&self, store: &Checkpoints, what: &str) -> String {
        let fed = store.snapshot(what).unwrap();
        let route = last_route(store);
        let walked = self.walked.snapshot(what).unwrap();
        assert_eq!(
            fed.id, walked.id,
            "{what}: not the walk's checkpoint ({route})"
        );
        assert_eq!(
            (fed.files, fed.bytes, fed.entries),
            (walked.files, walked.bytes, walked.entries),
            "{what}"
        );
        route
    }

    fn feed_log(&self, store: &Checkpoints) -> String {
        fs::read_to_string(store.store_dir().join("feed.log")).unwrap_or_default()
    }
}

fn gone_within(keeper: JoinHandle<Result<(), String>>, within: Duration) {
    let started = Instant::now();
    while !keeper.is_finished() {
        assert!(started.elapsed() < within, "the keeper did not leave");
        thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(keeper.join().unwrap(), Ok(()));
}

#[test]
fn sessions_build_on_the_keepers_feed_and_catch_what_changed_between_them() {
    let w = ws();
    let keeper = w.keeper(Duration::from_secs(600));
    // No session runs: files change, a folder tree appears, one goes, a mode and a link change.
    write(&w.ws, "a.txt", "a, edited while no session ran\n");
    write(&w.ws, "new/deep/x.txt", "x\n");
    fs::remove_file(w.ws.join("d/e/c.txt")).unwrap();
    fs::set_permissions(w.ws.join("d/b.txt"), fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::symlink("a.txt", w.ws.join("link")).unwrap();

    let one = w.session();
    assert_eq!(w.check(&one, "first"), "keeper");
    // Inside the folder that appeared while no session ran, and a folder made now.
    write(&w.ws, "new/deep/x.txt", "x, again\n");
    write(&w.ws, "new/deep/more/y.txt", "y\n");
    fs::rename(w.ws.join("d"), w.ws.join("d2")).unwrap();
    assert_eq!(w.check(&one, "second"), "keeper");

    // A second session at once: it starts from the first one's base on disk.
    let two = w.session();
    assert_eq!(w.check(&two, "two's first"), "keeper");
    write(&w.ws, "d2/e/z.txt", "z\n");
    assert_eq!(w.check(&one, "third"), "keeper");
    assert_eq!(
        w.check(&two, "two's second"),
        "keeper",
        "each asks from its own number"
    );
    assert!(w.feed_log(&one).contains("watches"), "{}", w.feed_log(&one));

    fs::remove_file(socket_path(one.store_dir()).unwrap()).unwrap();
    gone_within(keeper, Duration::from_secs(5));
    assert!(w.feed_log(&one).contains("its socket was removed"));
    write(&w.ws, "a.txt", "a, once more\n");
    let route = w.check(&one, "keeper gone");
    assert!(
        route.starts_with("walk: the feed keeper did not answer"),
        "{route}"
    );
}

#[test]
fn a_session_on_its_own_feed_moves_to_the_keepers() {
    let w = ws();
    let one = w.session();
    assert_eq!(w.check(&one, "first"), "walk: the change feed starts");
    let keeper = w.keeper(Duration::from_secs(600));
    write(&w.ws, "a.txt", "a, two\n");
    assert_eq!(w.check(&one, "second"), "changes");
    let saved = Persisted::load(one.store_dir()).unwrap();
    write(&w.ws, "d/b.txt", "b, two\n");
    write(&w.ws, "n/c.txt", "new\n");
    assert_eq!(w.check(&one, "third"), "keeper");
    let later = Persisted::load(one.store_dir()).unwrap();
    assert_eq!(later.instance, saved.instance);
    assert!(later.seq > saved.seq, "{} after {}", later.seq, saved.seq);

    // A base on disk from another keeper is not built on.
    let other = Persisted {
        instance: "00".repeat(16),
        ..later
    };
    other.save(one.store_dir());
    let two = w.session();
    assert_eq!(w.check(&two, "two's first"), "walk: the change feed starts");
    fs::remove_file(socket_path(one.store_dir()).unwrap()).unwrap();
    gone_within(keeper, Duration::from_secs(5));
}

#[test]
fn a_gitignore_change_sends_sessions_walking_and_the_keeper_away() {
    let w = ws();
    let keeper = w.keeper(Duration::from_secs(600));
    let one = w.session();
    assert_eq!(w.check(&one, "first"), "keeper");
    write(&w.ws, ".gitignore", "d/\n");
    // Said by the keeper, or by its absence if it read its queue first and left.
    let route = w.check(&one, "ignored");
    assert!(
        route.starts_with("walk: the feed keeper cannot say")
            || route.starts_with("walk: the feed keeper did not answer"),
        "{route}"
    );
    gone_within(keeper, Duration::from_secs(5));
    assert!(
        w.feed_log(&one)
            .contains(".gitignore changed what may be covered"),
        "{}",
        w.feed_log(&one)
    );
    assert!(!socket_path(one.store_dir()).unwrap().exists());
}

#[test]
fn a_keeper_stays_while_a_session_is_connected_and_leaves_when_idle() {
    let w = ws();
    let idle = Duration::from_millis(1500);
    let keeper = w.keeper(idle);
    let one = w.session();
    assert_eq!(w.check(&one, "first"), "keeper");
    thread::sleep(idle * 2);
    assert!(!keeper.is_finished(), "left with a session connected");
    drop(one);
    gone_within(keeper, Duration::from_secs(6));
    assert!(w.feed_log(&w.session()).contains("no session for"));
}

#[test]
fn a_second_keeper_of_one_store_leaves_at_once() {
    let w = ws();
    let keeper = w.keeper(Duration::from_secs(600));
    let second = w.session();
    let started = Instant::now();
    assert_eq!(second.keep_feed(Duration::from_secs(600)), Ok(()));
    assert!(started.elapsed() < Duration::from_secs(2));
    // A store deleted while its keeper started: the lock file went first, the socket came after.
    fs::remove_file(second.store_dir().join("feed.lock")).unwrap();
    gone_within(keeper, Duration::from_secs(5));
    assert!(w.feed_log(&second).contains("its lock file was removed"));
}

#[test]
fn nonsense_on_the_socket_is_dropped_and_a_removed_workspace_sends_the_keeper_away() {
    use std::io::{Read, Write};
    let w = ws();
    let keeper = w.keeper(Duration::from_secs(600));
    let one = w.session();
    let sock = socket_path(one.store_dir()).unwrap();
    let mut rogue = std::os::unix::net::UnixStream::connect(&sock).unwrap();
    rogue.write_all(b"XXXXXXXXX").unwrap();
    rogue
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut buf = Vec::new();
    assert_eq!(
        rogue.read_to_end(&mut buf).unwrap(),
        0,
        "closed, nothing said"
    );
    assert_eq!(w.check(&one, "still answering"), "keeper");

    fs::remove_dir_all(&w.ws).unwrap();
    gone_within(keeper, Duration::from_secs(5));
    assert!(
        w.feed_log(&one).contains("the workspace itself"),
        "{}",
        w.feed_log(&one)
    );
}
