//! Two flower-tui processes in one workspace (one user, one data directory): each runs servers
//! of its own, each call is told about its own file only, a `kill -9` of one leaves the other's
//! servers running, and once both are gone no server is left.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::json;

use super::{left_in, processes_in, server_path};
use crate::support::fake::{FakeServer, Gate, U, anthropic as a};
use crate::support::harness::KEY;
use crate::support::headless::bin;

/// A headless run in `ws` (whose parent is its home) whose model writes `file` with an
/// undefined name `name`, then waits at `gate` before its last answer.
fn run(ws: &Path, server: &FakeServer, gate: &Gate, file: &str, name: &str) -> Command {
    let write = json!({"path": file, "content": format!("print({name})\n")});
    server.push(a::tool_use(
        "w1",
        "write_file",
        &write.to_string(),
        U::new(1_000, 10),
    ));
    server.push(a::text("done", U::new(1_100, 10)).gated(gate));
    let home = ws.parent().unwrap();
    let mut c = bin(home);
    c.env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .args(["-p", &format!("write {file}"), "--yes", "--workspace"])
        .arg(ws)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

/// The processes in `dir` whose parent is `parent`.
fn children_in(dir: &Path, parent: u32) -> Vec<u32> {
    processes_in(dir)
        .into_iter()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("PPid:"))
                    .is_some_and(|p| p.trim() == parent.to_string())
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_in_one_workspace_keep_their_servers_and_their_findings_apart() {
    let Some(path) = server_path("two_processes_in_one_workspace") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let ws = home.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let ws = ws.canonicalize().unwrap();
    let (one, two) = (FakeServer::start().await, FakeServer::start().await);
    let (never, gate) = (Gate::new(), Gate::new());
    let mut first = run(&ws, &one, &never, "a.py", "alpha")
        .env("PATH", &path)
        .spawn()
        .unwrap();
    let mut second = run(&ws, &two, &gate, "b.py", "beta")
        .env("PATH", &path)
        .spawn()
        .unwrap();

    // Both edits' results have gone back to their models.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while (one.requests().len() < 2 || two.requests().len() < 2)
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let told = |s: &FakeServer| serde_json::to_string(&s.requests()[1]).unwrap();
    let (told_one, told_two) = (told(&one), told(&two));
    assert!(told_one.contains("undefined name 'alpha'"), "{told_one}");
    assert!(!told_one.contains("beta"), "{told_one}");
    assert!(told_two.contains("undefined name 'beta'"), "{told_two}");
    assert!(!told_two.contains("alpha"), "{told_two}");

    // Each has a server of its own; killing the first leaves the second's running.
    let theirs = |c: &Child| children_in(&ws, c.id());
    let (servers_one, servers_two) = (theirs(&first), theirs(&second));
    assert_eq!((servers_one.len(), servers_two.len()), (1, 1));
    first.kill().unwrap();
    let _ = first.wait();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while servers_one.iter().any(|p| processes_in(&ws).contains(p))
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(processes_in(&ws), servers_two);

    // The second ends normally and takes its server with it.
    gate.open();
    let status = tokio::task::spawn_blocking(move || second.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status:?}");
    assert_eq!(
        left_in(&ws, Duration::from_secs(5)).await,
        Vec::<u32>::new()
    );
}
