//! A workspace's `.mcp.json` the user never approved: its servers are held until the answer
//! (`Op::McpJsonDecision`), which is recorded per workspace and file hash; a request waiting for
//! servers says which (`Event::McpWaiting`).

use std::sync::Arc;

use flower_tui::engine::mcp::{
    ApprovalStore, Decision, McpJsonPolicy, ProjectApproval, ProjectServers, approval,
    project_servers,
};
use flower_tui::engine::protocol::{Event, Op};

use crate::support::check::{assert_contains, picked};
use crate::support::harness::{Harness, start as start_engine};

use super::*;

/// A manager holding one `.mcp.json` server (the fault server) for the user's decision, as the
/// TUI's launch makes it, with the file written to the workspace.
fn held(h: &Harness, mark: &(String, String)) -> (Arc<McpManager>, ProjectApproval, Vec<u8>) {
    let bytes = br#"{"mcpServers": {"project": {"command": "the fault server"}}}"#.to_vec();
    let path = h.workspace.join(".mcp.json");
    std::fs::write(&path, &bytes).unwrap();
    let project = ProjectApproval {
        path,
        sha256: approval::sha256_hex(&bytes),
    };
    let mut cfg = fault_server("project", "normal", mark, false);
    cfg.origin = Origin::McpJson;
    let (tx, _rx) = mpsc::unbounded_channel();
    let m = McpManager::start(ManagerParams {
        servers: vec![cfg, fault_server("own", "normal", mark, false)],
        workspace: std::env::temp_dir(),
        env: parent_env(),
        status_tx: Some(tx),
        project: Some(project.clone()),
    });
    (Arc::new(m), project, bytes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn held_servers_start_only_when_the_user_approves_and_the_answer_is_kept() {
    let h = Harness::new().await;
    let mark = marker();
    let (m, project, bytes) = held(&h, &mark);
    // The config file's own server starts; the project's waits, and is not waited for.
    settled(&m, "own").await;
    assert_eq!(
        m.status("project").unwrap().state,
        ServerState::AwaitingApproval
    );
    assert!(m.starting().is_empty());
    let (pending, servers) = m.pending_project().unwrap();
    assert_eq!(pending, project);
    assert_eq!(servers.len(), 1);
    assert!(servers[0].transport.starts_with("sh -c"), "{servers:?}");
    // `/mcp restart` cannot get round the approval.
    let refused = m.restart("project").unwrap_err().to_string();
    assert_contains(&refused, "not approved");
    assert_eq!(pids_of(&mark), 1, "only the config file's server runs");

    h.script()
        .text("first")
        .at(1100)
        .tool("mcp__project__echo", r#"{"text":"approved"}"#)
        .at(1200)
        .text("done");
    let mut p = h.params(200_000, 50_000);
    p.mcp = Some(m.clone());
    let mut r = start_engine(p);
    r.completed_turn("before").await;
    assert!(
        !h.server.requests()[0]["tools"]
            .to_string()
            .contains("mcp__project__")
    );
    // An answer about another version of the file does nothing.
    r.send(Op::McpJsonDecision {
        sha256: "0".repeat(64),
        approve: true,
    })
    .await;
    r.send(Op::McpJsonDecision {
        sha256: project.sha256.clone(),
        approve: true,
    })
    .await;
    r.until(|e| matches!(e, Event::Notice { message } if message.contains("approved for this workspace")))
        .await;
    assert!(matches!(
        settled(&m, "project").await.state,
        ServerState::Ready { .. }
    ));
    assert!(m.pending_project().is_none());
    r.completed_turn("after").await;
    let reqs = h.server.requests();
    assert_eq!(
        reqs[2]["messages"].as_array().unwrap().last().unwrap()["content"][0]["content"],
        "approved"
    );
    // Kept for this workspace and these bytes: the next launch uses the file without asking.
    let store = ApprovalStore::new(&h.data);
    assert_eq!(
        store.decision(&h.workspace, &bytes),
        Some(Decision::Approved)
    );
    let none = |_: &str| None;
    assert!(matches!(
        project_servers(&h.workspace, McpJsonPolicy::Ask, &store, &none),
        ProjectServers::Use(_)
    ));
    r.shutdown().await;
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_file_stays_off_until_it_changes() {
    let h = Harness::new().await;
    let mark = marker();
    let (m, project, bytes) = held(&h, &mark);
    let mut r = start_engine({
        let mut p = h.params(200_000, 50_000);
        p.mcp = Some(m.clone());
        p
    });
    r.send(Op::McpJsonDecision {
        sha256: project.sha256.clone(),
        approve: false,
    })
    .await;
    r.until(|e| matches!(e, Event::Notice { message } if message.contains("declined")))
        .await;
    assert_eq!(m.status("project").unwrap().state, ServerState::Declined);
    assert!(m.restart("project").is_err());
    let store = ApprovalStore::new(&h.data);
    assert_eq!(store.decision(&h.workspace, &bytes), Some(Decision::Denied));
    let none = |_: &str| None;
    assert!(matches!(
        project_servers(&h.workspace, McpJsonPolicy::Ask, &store, &none),
        ProjectServers::Ignored(n) if n.contains("you declined it")
    ));
    // A changed file is a new question.
    h.file(
        ".mcp.json",
        br#"{"mcpServers": {"project": {"command": "another"}}}"#,
    );
    assert!(matches!(
        project_servers(&h.workspace, McpJsonPolicy::Ask, &store, &none),
        ProjectServers::NeedsApproval { .. }
    ));
    r.shutdown().await;
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_says_which_servers_it_waits_for() {
    let h = Harness::new().await;
    let mark = marker();
    let (m, _rx) = start(vec![
        fault_server("quick", "normal", &mark, false),
        fault_server("slow", "slow:1500", &mark, false),
    ]);
    let m = Arc::new(m);
    h.script().text("hi");
    let mut p = h.params(200_000, 50_000);
    p.mcp = Some(m.clone());
    let mut r = start_engine(p);
    let ev = r.completed_turn("hello").await;
    let waits: Vec<Vec<String>> = picked!(ev, Event::McpWaiting { servers } => servers.clone());
    assert_eq!(waits.last(), Some(&Vec::new()), "{waits:?}");
    assert!(
        waits.iter().any(|w| w.iter().any(|s| s == "slow")),
        "{waits:?}"
    );
    // The list only shrinks as servers become ready.
    for pair in waits.windows(2) {
        assert!(pair[1].iter().all(|s| pair[0].contains(s)), "{waits:?}");
    }
    r.shutdown().await;
    m.shutdown().await;
}

fn pids_of(mark: &(String, String)) -> usize {
    crate::support::mcp_setup::pids_with_env(&marker_str(mark)).len()
}
