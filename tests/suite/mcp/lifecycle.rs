//! Servers end with flower-tui however it ends: shutdown, drop (with or without a runtime), SIGKILL
//! of the owner; and `.mcp.json` is used only once approved.

use crate::support::headless::flags;
use crate::support::mcp_setup::{pids_with_env, wait_gone};
use std::time::Duration;

use flower_tui::engine::mcp::ServerState;

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_and_their_children_are_gone_after_drop() {
    let mark = marker();
    let direct = fault_server("direct", "normal", &mark, false);
    let nested = fault_server("nested", "normal", &mark, true);
    let slow = fault_server("slow", "slow:60000", &mark, false);
    let (m, _rx) = start(vec![direct, nested, slow]);
    settled(&m, "direct").await;
    settled(&m, "nested").await;
    assert!(matches!(
        m.status("nested").unwrap().state,
        ServerState::Ready { .. }
    ));
    // direct, the shell of nested and its server, and the one still starting (its process may
    // come a moment after the others settled).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while pids_with_env(&marker_str(&mark)).len() < 4 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(pids_with_env(&marker_str(&mark)).len(), 4);
    drop(m);
    assert_eq!(
        wait_gone(&marker_str(&mark), Duration::from_secs(3)),
        Vec::<u32>::new()
    );
}

#[test]
fn servers_are_gone_after_their_owner_is_killed() {
    use std::io::BufRead;
    let mark = marker();
    let exe = std::env::current_exe().unwrap();
    let toml_text = [
        fault_server_table("direct", "exec \"$0\" \"$@\" 3>&1 1>/dev/null", &mark),
        fault_server_table(
            "nested",
            "\"$0\" \"$@\" 3>&1 1>/dev/null; echo after",
            &mark,
        ),
        // A wrapper whose other child ignores a closed stdin (and is no child of ours): only the
        // lifeline watcher, which kills the server's whole group, ends it.
        fault_server_table(
            "stubborn",
            "sleep 300 </dev/null & \"$0\" \"$@\" 3>&1 1>/dev/null",
            &mark,
        ),
    ]
    .join("\n");
    let mut owner = std::process::Command::new(&exe)
        .args(flags(
            "--exact suite::mcp::mcp_owner_entry --ignored --nocapture --test-threads=1 -q",
        ))
        .env(OWNER_ENV, toml_text)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(owner.stdout.take().unwrap()).lines();
    let ready = loop {
        let line = lines.next().expect("the owner printed READY").unwrap();
        if let Some(rest) = line.strip_prefix("READY ") {
            break rest.to_string();
        }
    };
    assert_eq!(ready, "ready, 15 tools / ready, 15 tools / ready, 15 tools");
    assert_eq!(pids_with_env(&marker_str(&mark)).len(), 6);
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(owner.id() as i32, libc::SIGKILL) };
    let _ = owner.wait();
    assert_eq!(
        wait_gone(&marker_str(&mark), Duration::from_secs(3)),
        Vec::<u32>::new()
    );
}

#[test]
fn dropped_after_its_runtime_is_gone_and_started_without_one() {
    let mark = marker();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let m = runtime.block_on(async {
        let (m, _rx) = start(vec![fault_server("faults", "normal", &mark, true)]);
        settled(&m, "faults").await;
        m
    });
    assert_eq!(pids_with_env(&marker_str(&mark)).len(), 2);
    drop(runtime);
    // No runtime any more: dropping still kills the whole group, and does not panic.
    drop(m);
    assert_eq!(
        wait_gone(&marker_str(&mark), Duration::from_secs(3)),
        Vec::<u32>::new()
    );

    let (m, _rx) = start(vec![command_server("early", "true", &[])]);
    assert_eq!(
        m.status("early").unwrap().state,
        ServerState::Failed {
            reason: "flower-tui started its MCP servers outside an async runtime".into()
        }
    );
}

#[tokio::test]
async fn mcp_json_servers_from_an_approved_file_only() {
    use flower_tui::engine::mcp::{ApprovalStore, Decision, config::read_mcp_json};
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let store = ApprovalStore::new(data.path());
    std::fs::write(
        ws.path().join(".mcp.json"),
        r#"{"mcpServers": {"tool": {"type": "stdio", "command": "true"}}}"#,
    )
    .unwrap();
    let file = read_mcp_json(ws.path()).unwrap().unwrap();
    let none = |_: &str| None;
    assert_eq!(file.servers(&none).unwrap().len(), 1);
    assert_eq!(
        store.decision(ws.path(), &file.bytes),
        None,
        "never approved: not to be used"
    );
    store
        .record(ws.path(), &file.bytes, Decision::Approved)
        .unwrap();
    assert_eq!(
        store.decision(ws.path(), &file.bytes),
        Some(Decision::Approved)
    );
    // The repository changes the file: it needs approval again.
    std::fs::write(
        ws.path().join(".mcp.json"),
        r#"{"mcpServers": {"tool": {"type": "stdio", "command": "curl", "args": ["evil"]}}}"#,
    )
    .unwrap();
    let changed = read_mcp_json(ws.path()).unwrap().unwrap();
    assert_eq!(store.decision(ws.path(), &changed.bytes), None);
}

#[tokio::test]
async fn held_servers_are_starting_but_spawn_nothing_until_released() {
    let mark = marker();
    let (tx, _rx) = mpsc::unbounded_channel();
    let m = McpManager::start_held(ManagerParams {
        servers: vec![fault_server("held", "normal", &mark, false)],
        workspace: std::env::temp_dir(),
        env: parent_env(),
        status_tx: Some(tx),
        project: None,
    });
    // Held: already `starting` (a first request waits for it), no process yet.
    assert_eq!(m.status("held").unwrap().state, ServerState::Starting);
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert!(
        pids_with_env(&marker_str(&mark)).is_empty(),
        "spawned before release"
    );
    m.release();
    let held = settled(&m, "held").await;
    assert!(matches!(held.state, ServerState::Ready { .. }), "{held:?}");
    assert_eq!(pids_with_env(&marker_str(&mark)).len(), 1);
    m.shutdown().await;
}

#[tokio::test]
async fn a_held_server_that_is_never_released_starts_after_the_gate_wait() {
    let mark = marker();
    let (tx, _rx) = mpsc::unbounded_channel();
    let m = McpManager::start_held(ManagerParams {
        servers: vec![fault_server("forgotten", "normal", &mark, false)],
        workspace: std::env::temp_dir(),
        env: parent_env(),
        status_tx: Some(tx),
        project: None,
    });
    let late = settled(&m, "forgotten").await;
    assert!(matches!(late.state, ServerState::Ready { .. }), "{late:?}");
    m.shutdown().await;
}

#[tokio::test]
async fn a_held_server_stopped_before_its_release_never_spawns() {
    let mark = marker();
    let (tx, _rx) = mpsc::unbounded_channel();
    let m = McpManager::start_held(ManagerParams {
        servers: vec![fault_server("quit-early", "normal", &mark, false)],
        workspace: std::env::temp_dir(),
        env: parent_env(),
        status_tx: Some(tx),
        project: None,
    });
    m.shutdown().await;
    assert_eq!(m.status("quit-early").unwrap().state, ServerState::Stopped);
    // Past the gate's longest wait: still nothing.
    tokio::time::sleep(flower_tui::engine::mcp::GATE_WAIT + Duration::from_millis(200)).await;
    assert!(
        pids_with_env(&marker_str(&mark)).is_empty(),
        "spawned after the stop"
    );
}
