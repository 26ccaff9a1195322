//! `kill -9` of flower-tui while language servers run: they die with it, and so do the processes
//! they started (the kernel's parent-death signal, and the lifeline watcher for each server's
//! process group).

use std::time::Duration;

use serde_json::json;

use super::faults::{faulty, write};
use super::{left_in, processes_in, server_path};
use crate::support::fake::{FakeServer, Gate, U, anthropic as a};
use crate::support::harness::KEY;
use crate::support::headless::bin;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_flower_tui_leaves_no_language_server_behind() {
    let Some(path) = server_path("a_killed_flower_tui_leaves_no_language_server_behind") else {
        return;
    };
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let ws = home.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let ws = ws.canonicalize().unwrap();
    // pylsp, and typescript-language-server, which runs tsserver as children of its own.
    let py = json!({"path": "a.py", "content": "print(missing)\n"});
    let ts = json!({"path": "app.ts", "content": "export const n: number = 1;\n"});
    server.push(a::tool_use(
        "w1",
        "write_file",
        &py.to_string(),
        U::new(1_000, 10),
    ));
    server.push(a::tool_use(
        "w2",
        "write_file",
        &ts.to_string(),
        U::new(1_100, 10),
    ));
    let never = Gate::new();
    server.push(a::text("never sent", U::new(1_200, 10)).gated(&never));
    let mut c = bin(home.path());
    c.env("PATH", path)
        .env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .args(["-p", "write a.py and app.ts", "--yes", "--workspace"])
        .arg(&ws)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = c.spawn().unwrap();
    // Both servers run (in the workspace), tsserver too, and the edits' results have gone back
    // to the model.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while (!runs_tsserver(&ws) || server.requests().len() < 3)
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        runs_tsserver(&ws),
        "tsserver did not start: {:?}",
        processes_in(&ws)
    );
    let second = serde_json::to_string(&server.requests()[1]).unwrap();
    assert!(second.contains("undefined name 'missing'"), "{second}");
    let running = processes_in(&ws).len();
    assert!(
        running >= 3,
        "pylsp, the TypeScript server and tsserver: {running}"
    );
    child.kill().unwrap();
    let _ = child.wait();
    assert_eq!(
        left_in(&ws, Duration::from_secs(5)).await,
        Vec::<u32>::new()
    );
}

/// Whether a tsserver runs in `dir` (a child of typescript-language-server).
fn runs_tsserver(dir: &std::path::Path) -> bool {
    processes_in(dir).iter().any(|pid| {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains("tsserver"))
    })
}

/// The kernel's parent-death signal follows the *thread* that started a process. The runtime's
/// threads come and go (a worker that runs `block_in_place`, as the engine does for the
/// handoff's checkpoint, gives its place to a new thread and ends when idle), so a server must
/// outlive the thread that happened to start it.
#[test]
fn a_server_outlives_the_runtime_thread_that_started_it() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_keep_alive(Duration::from_millis(100))
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap();
    rt.block_on(async {
        let (lsp, _notices) = faulty(&ws, "ok", None, Duration::from_secs(30));
        let (first, _) = write(&lsp, &ws, "a.flt", "BROKEN\n").await;
        assert_eq!(first.unwrap().new.len(), 1);
        let servers = processes_in(&ws);
        assert_eq!(servers.len(), 1, "{servers:?}");
        // The only worker (which started the server) hands its place over and, idle, ends.
        tokio::spawn(async {
            tokio::task::block_in_place(|| std::thread::sleep(Duration::from_millis(50)));
        })
        .await
        .unwrap();
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        assert_eq!(processes_in(&ws), servers, "the server was killed");
        let (fixed, _) = write(&lsp, &ws, "a.flt", "fine\n").await;
        let fixed = fixed.unwrap();
        assert_eq!((fixed.gone.len(), fixed.notes.len()), (1, 0), "{fixed:?}");
        lsp.shutdown().await;
        assert_eq!(
            left_in(&ws, Duration::from_secs(5)).await,
            Vec::<u32>::new()
        );
    });
}
