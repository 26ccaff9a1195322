//! MCP servers in the TUI: the question about the workspace's `.mcp.json` (not answered by keys
//! typed ahead), the servers a request waits for on the spinner, and the `/mcp` listing.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use crate::engine::mcp::{Origin as McpOrigin, ServerState, ServerStatus};
use crate::engine::protocol::{Event, ExitReason, Op, Origin, TurnId, TurnKind};

use super::render::cell::Cell;
use super::state::{AppState, Focus};
use super::subagent_tests::{draw, started};
use super::test_support::{ctrl, ev, key, last_cell, ops, state, type_text};
use super::update::update;

fn mcp_json_event(s: &mut AppState, now: Instant) {
    let server = |name: &str, transport: &str| ServerStatus {
        name: name.into(),
        origin: McpOrigin::McpJson,
        transport: transport.into(),
        state: ServerState::AwaitingApproval,
        tools: vec![],
        last_error: None,
        warnings: vec![],
    };
    update(
        s,
        ev(Event::McpJsonApproval {
            path: PathBuf::from("/w/.mcp.json"),
            sha256: "abc123".into(),
            servers: vec![
                server(
                    "everything",
                    "npx -y @modelcontextprotocol/server-everything",
                ),
                server("docs", "http://127.0.0.1:8000/mcp"),
            ],
        }),
        now,
    );
}

#[test]
fn the_mcp_json_question_is_not_answered_by_typing_ahead() {
    let t0 = Instant::now();
    let mut s = state();
    started(&mut s, t0);
    mcp_json_event(&mut s, t0);
    // It shows above the input; the focus stays there.
    assert_eq!(s.focus, Focus::Input);
    insta::assert_snapshot!("mcp_json_question", draw(&s, 80, 14, t0).backend());

    // A message typed at launch runs on past the guard: none of its y or n answers it, every
    // key lands in the input.
    let mut at = t0;
    for c in "say yes and then no".chars() {
        at += Duration::from_millis(150);
        let fx = update(&mut s, key(KeyCode::Char(c)), at);
        assert!(ops(&fx).is_empty(), "{c:?} answered it");
    }
    assert_eq!(s.input.lines().join("\n"), "say yes and then no");
    // Even after a pause a key goes to the text in the input, not to the question.
    at += Duration::from_millis(600);
    let fx = update(&mut s, key(KeyCode::Char('y')), at);
    assert!(ops(&fx).is_empty(), "a key after text answered it");
    // Cleared (Ctrl-C), then a pause: now `y` answers.
    update(&mut s, ctrl('c'), at);
    assert!(s.input.is_empty());
    let fx = update(
        &mut s,
        key(KeyCode::Char('y')),
        at + Duration::from_millis(500),
    );
    assert_eq!(
        ops(&fx),
        [Op::McpJsonDecision {
            sha256: "abc123".into(),
            approve: true
        }]
    );
    assert_eq!(s.focus, Focus::Input);
    assert!(s.chat.cells().iter().any(
        |c| matches!(c, Cell::McpJson { answer: Some(a), .. } if a == "approved for this workspace")
    ));
}

#[test]
fn the_mcp_json_question_declines_with_n_and_esc_leaves_it_for_the_next_launch() {
    let t0 = Instant::now();
    let late = t0 + Duration::from_secs(2);
    let mut s = state();
    started(&mut s, t0);
    mcp_json_event(&mut s, t0);
    // The same question again (a restart) is not asked twice.
    mcp_json_event(&mut s, t0);
    assert_eq!(s.questions.len(), 1);
    let fx = update(&mut s, key(KeyCode::Char('n')), late);
    assert_eq!(
        ops(&fx),
        [Op::McpJsonDecision {
            sha256: "abc123".into(),
            approve: false
        }]
    );

    let mut s = state();
    started(&mut s, t0);
    mcp_json_event(&mut s, t0);
    let fx = update(&mut s, key(KeyCode::Esc), late);
    assert!(ops(&fx).is_empty(), "Esc decides nothing");
    assert_eq!(s.focus, Focus::Input);
    assert!(matches!(
        last_cell(&s),
        Cell::McpJson { answer: Some(a), .. } if a.contains("next launch")
    ));
}

#[test]
fn the_mcp_json_question_offers_its_own_keys_only() {
    let t0 = Instant::now();
    let late = t0 + Duration::from_secs(2);
    let mut s = state();
    started(&mut s, t0);
    mcp_json_event(&mut s, t0);
    let screen = format!("{:?}", draw(&s, 170, 14, late).backend());
    // The prompt and the footer say the same keys: no "always", no Esc that would deny.
    assert!(
        screen.contains("y approve  ·  n decline  ·  esc ask at the next launch"),
        "{screen}"
    );
    let footer = screen
        .lines()
        .rev()
        .find(|l| l.contains("claude-haiku"))
        .unwrap_or("");
    assert!(
        footer.contains("y approve  n decline  esc ask at the next launch"),
        "{screen}"
    );
    assert!(
        !screen.contains("always") && !screen.contains("deny"),
        "{screen}"
    );
    // `a` is not offered: it answers nothing.
    let fx = update(&mut s, key(KeyCode::Char('a')), late);
    assert!(ops(&fx).is_empty(), "{fx:?}");
    assert_eq!(s.questions.len(), 1);
}

#[test]
fn the_spinner_names_the_mcp_servers_a_request_waits_for() {
    let t0 = Instant::now();
    let mut s = state();
    started(&mut s, t0);
    type_text(&mut s, "hello", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    let t1 = t0 + Duration::from_millis(100);
    let waiting = |names: &[&str]| {
        ev(Event::McpWaiting {
            servers: names.iter().map(|n| n.to_string()).collect(),
        })
    };
    update(&mut s, waiting(&["slow", "docs"]), t1);
    update(&mut s, waiting(&["slow"]), t1 + Duration::from_secs(1));
    let (label, since, _) = s.spinner().expect("spinner");
    assert_eq!(label, "waiting for MCP servers: slow…");
    assert_eq!(since, t1, "the wait is timed from its start");
    let now = t1 + Duration::from_millis(3_400);
    insta::assert_snapshot!("spinner_waits_for_mcp", draw(&s, 70, 6, now).backend());
    update(&mut s, waiting(&[]), now);
    assert_eq!(s.spinner().map(|s| s.0), Some("working…".into()));
    // A turn that ends while waiting leaves no stale wait behind.
    update(&mut s, waiting(&["slow"]), now);
    update(
        &mut s,
        ev(Event::TurnEnd {
            turn: TurnId(1),
            kind: TurnKind::Message,
            origin: Origin::User,
            reason: ExitReason::Interrupted,
        }),
        now,
    );
    assert!(!s.activity.waits_for_mcp());
}

#[test]
fn mcp_lists_every_server_with_its_state_tools_and_origin() {
    let t0 = Instant::now();
    let mut s = state();
    started(&mut s, t0);
    let status = |name: &str, origin, transport: &str, state, tools: &[&str]| {
        ev(Event::McpStatus(ServerStatus {
            name: name.into(),
            origin,
            transport: transport.into(),
            state,
            tools: tools.iter().map(|t| t.to_string()).collect(),
            last_error: None,
            warnings: vec![],
        }))
    };
    update(
        &mut s,
        status(
            "everything",
            McpOrigin::McpJson,
            "npx -y @modelcontextprotocol/server-everything",
            ServerState::Ready { tools: 3 },
            &["echo", "add", "longRunningOperation"],
        ),
        t0,
    );
    update(
        &mut s,
        status(
            "docs",
            McpOrigin::ConfigFile,
            "http://127.0.0.1:8000/mcp",
            ServerState::Starting,
            &[],
        ),
        t0,
    );
    update(
        &mut s,
        status(
            "tracker",
            McpOrigin::ConfigFile,
            "tracker-mcp --stdio",
            ServerState::Failed {
                reason: "exited with status 1 before the handshake".into(),
            },
            &[],
        ),
        t0,
    );
    type_text(&mut s, "/mcp", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    insta::assert_snapshot!("mcp_listing", draw(&s, 90, 14, t0).backend());
}
