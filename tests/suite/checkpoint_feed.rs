//! Checkpoints whose cost follows the change, on the real binary through the loopback fake: in a
//! git repository the first checkpoint names git's blobs instead of copying the files, the
//! checkpoints after a call come from the change feed, a flood of changes past the kernel's queue
//! falls back to a walk, and a change made while no session ran is caught by the next start,
//! from the workspace's feed keeper while it answers and by a walk when it does not. `/undo` puts every byte and mode back each time (a file changed in the work tree and not
//! staged included). The store's log says which route took each checkpoint.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::undo_cli::{Home, restore_event};
use crate::support::check::assert_success;
use crate::support::fake::FakeServer;

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

/// The workspace's checkpoint store (the only one in the home's data folder).
fn store(home: &Home) -> PathBuf {
    let dir = home.dir.path().join("data/flower/checkpoints");
    fs::read_dir(&dir).unwrap().flatten().next().unwrap().path()
}

/// The route of each checkpoint the store's log lists, in order.
fn routes(home: &Home) -> Vec<String> {
    fs::read_to_string(store(home).join("checkpoints.log"))
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["route"].as_str().unwrap_or_default().to_string()
        })
        .collect()
}

/// How many contents and listings the store keeps.
fn objects(home: &Home) -> usize {
    let mut n = 0;
    for fan in fs::read_dir(store(home).join("objects")).unwrap().flatten() {
        if fan.path().is_dir() {
            n += fs::read_dir(fan.path()).unwrap().count();
        }
    }
    n
}

/// Every file of `ws` but git's own and the workbench, with its bits and bytes.
fn state(ws: &Path) -> BTreeMap<String, (u32, Vec<u8>)> {
    let mut all = super::undo_cli::state(ws);
    all.retain(|path, _| !path.starts_with(".git/"));
    all
}

/// The kernel's queue of one inotify instance.
fn queued_events() -> usize {
    fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(16384)
}

#[tokio::test]
async fn a_repository_turn_is_undone_from_gits_store_after_a_flood_past_the_feed() {
    let server = FakeServer::start().await;
    let home = Home::new();
    let ws = home.ws();
    // No keeper: it would read the flood as it comes; the session's own queue overflows.
    let config = home.dir.path().join("config/flower/config.toml");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(&config, "checkpoint_keeper = false\n").unwrap();
    git(&ws, &["init", "-q"]);
    for n in 0..300 {
        let p = ws.join(format!("src/m{}/f{n}.rs", n % 10));
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, format!("fn f{n}() {{}}\n")).unwrap();
    }
    fs::create_dir(ws.join("many")).unwrap();
    fs::write(ws.join("many/.keep"), "").unwrap();
    fs::write(ws.join("run.sh"), "echo hi\n").unwrap();
    fs::write(ws.join("unstaged.txt"), "committed\n").unwrap();
    fs::write(ws.join(".gitignore"), ".flower/\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-q", "-m", "one"]);
    fs::write(
        ws.join("unstaged.txt"),
        "changed in the work tree, not staged\n",
    )
    .unwrap();
    fs::write(ws.join("untracked.txt"), b"untracked \xff\n").unwrap();
    let before = state(&ws);

    // Call 1 appends, removes, renames and changes a mode (the feed's route); call 2 creates more
    // files in a watched folder than the kernel queues events for (a real overflow: a walk).
    let flood = queued_events();
    server.script().tool(
        "bash",
        serde_json::json!({"command": "printf 'more\\n' >> src/m1/f1.rs && rm src/m2/f2.rs \
            && mv src/m3/f3.rs src/m4/moved.rs && chmod +x run.sh \
            && printf 'again\\n' >> unstaged.txt"}),
    );
    server.script().tool(
        "bash",
        serde_json::json!({"command": format!(
            "cd many && i=0; while [ $i -lt {flood} ]; do : > f$i; i=$((i+1)); done; \
             printf 'last\\n' >> ../src/m5/f5.rs"
        )}),
    );
    server.script().text("done");
    let out = home.run(&server, &["-p", "change things"]).await;
    assert_success(&out);
    assert!(ws.join(format!("many/f{}", flood - 1)).exists());
    let routes_of_turn = routes(&home);
    assert_eq!(
        routes_of_turn.first().map(String::as_str),
        Some("walk: the change feed starts"),
        "{routes_of_turn:?}"
    );
    assert!(
        routes_of_turn.iter().any(|r| r == "changes"),
        "{routes_of_turn:?}"
    );
    assert!(
        routes_of_turn
            .iter()
            .any(|r| r == "walk: the change feed overflowed"),
        "{routes_of_turn:?}"
    );
    // The committed files were not copied: the store holds listings and the few files git
    // does not hold as they are (well under one object per committed file).
    let kept = objects(&home);
    assert!(kept < 200, "{kept} objects for 300 committed files");
    assert!(!store(&home).join("feed.log").exists(), "no keeper started");

    let out = home.run(&server, &["--continue", "-p", "/undo"]).await;
    assert_success(&out);
    assert_eq!(restore_event(&out)["outcome"], "restored");
    assert_eq!(state(&ws), before, "every byte and mode back");
    assert_eq!(
        fs::metadata(ws.join("run.sh"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o644
    );
}

/// Wait until the workspace's feed keeper answers.
fn keeper_answers(home: &Home) {
    let started = Instant::now();
    // A socket a killed keeper left behind refuses the connection.
    while std::os::unix::net::UnixStream::connect(store(home).join("feed.sock")).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no feed keeper"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The process id of the keeper that started last (its log names it).
fn keeper_pid(home: &Home) -> i32 {
    let log = fs::read_to_string(store(home).join("feed.log")).unwrap();
    let line = log.lines().rev().find(|l| l.contains(" watches ")).unwrap();
    line.split("keeper ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// `kill -9` the keeper (its socket stays behind) and wait until it is gone.
fn kill_keeper(home: &Home) {
    let pid = keeper_pid(home);
    // SAFETY: a plain kill(2) of a process this test's binary started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let started = Instant::now();
    while fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z ")) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "keeper {pid} lives"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Remove the keeper's socket and wait until its log says it left.
fn keeper_leaves(home: &Home) {
    let log = || fs::read_to_string(store(home).join("feed.log")).unwrap_or_default();
    let before = log().matches(" left: ").count();
    fs::remove_file(store(home).join("feed.sock")).unwrap();
    let started = Instant::now();
    while log().matches(" left: ").count() == before {
        assert!(started.elapsed() < Duration::from_secs(10), "{}", log());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The routes of the checkpoints this session's process took (the keeper's baselines left out).
fn session_routes(home: &Home) -> Vec<String> {
    let mut r = routes(home);
    r.retain(|r| r != "walk: a feed keeper starts");
    r
}

#[tokio::test]
async fn a_change_made_while_no_session_ran_is_caught_and_left_alone() {
    let server = FakeServer::start().await;
    let home = Home::new();
    let ws = home.ws();
    fs::write(ws.join("a.txt"), "a\n").unwrap();
    fs::write(ws.join("user.txt"), "user\n").unwrap();
    server
        .script()
        .tool("bash", r#"{"command":"printf 'one\n' >> a.txt"}"#);
    server.script().text("done");
    let out = home.run(&server, &["-p", "turn one"]).await;
    assert_success(&out);
    assert_eq!(
        session_routes(&home).first().map(String::as_str),
        Some("walk: the change feed starts")
    );
    // The first walk started the workspace's keeper; it watches while no session runs.
    keeper_answers(&home);

    // No session runs: the user edits a file, then a second turn changes another.
    fs::write(ws.join("user.txt"), "user, edited between sessions\n").unwrap();
    fs::write(ws.join("b.txt"), "b\n").unwrap();
    let between = state(&ws);
    server.script().tool(
        "bash",
        r#"{"command":"printf 'two\n' >> b.txt && printf 'two\n' >> a.txt"}"#,
    );
    server.script().text("done");
    let out = home
        .run(&server, &["--continue", "-p", "turn two", "-v"])
        .await;
    assert_success(&out);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("checkpoints: on, the feed keeper answers ("),
        "{said}"
    );
    // The second start walks nothing: its checkpoints come from the keeper's feed.
    let r = session_routes(&home);
    assert_eq!(
        r.iter().filter(|r| r.starts_with("walk")).count(),
        1,
        "{r:?}"
    );
    assert!(r.iter().filter(|r| *r == "keeper").count() >= 2, "{r:?}");

    let out = home.run(&server, &["--continue", "-p", "/undo"]).await;
    assert_success(&out);
    assert_eq!(state(&ws), between, "turn two undone; the user's edit kept");

    // With the keeper killed (its socket left behind), the next start walks, catches the edit
    // made meanwhile, and starts a new keeper.
    let first = keeper_pid(&home);
    kill_keeper(&home);
    fs::write(ws.join("user.txt"), "user, edited with no keeper\n").unwrap();
    let between = state(&ws);
    server
        .script()
        .tool("bash", r#"{"command":"printf 'three\n' >> a.txt"}"#);
    server.script().text("done");
    let out = home.run(&server, &["--continue", "-p", "turn three"]).await;
    assert_success(&out);
    let r = session_routes(&home);
    assert!(
        r.iter()
            .any(|r| r.starts_with("walk: the feed keeper did not answer")
                || r == "walk: the change feed starts"),
        "{r:?}"
    );
    let out = home.run(&server, &["--continue", "-p", "/undo"]).await;
    assert_success(&out);
    assert_eq!(
        state(&ws),
        between,
        "turn three undone; the user's edit kept"
    );
    let out = home.run(&server, &["--continue", "-p", "/undo"]).await;
    assert_success(&out);
    let now = state(&ws);
    assert_eq!(now["a.txt"].1, b"a\n");
    assert_eq!(now["user.txt"].1, b"user, edited with no keeper\n");
    keeper_answers(&home);
    assert_ne!(keeper_pid(&home), first);
    keeper_leaves(&home);
}
