//! Reducer tests of the session's events and the commands that ask the engine: `/permissions`,
//! the session picker and a resumed run, `/model` and `/effort`, `@path` completion,
//! attachments, the session prompt's instructions and `/init`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use crate::engine::context::{Thresholds, WindowSource};
use crate::engine::protocol::{
    AllowRule, Allowance, ApprovalPolicy, Effort, Event, InstructionFile, Op, SessionSummary,
    TurnId,
};

use super::msg::{Effect, Msg};
use super::render::cell::Cell;
use super::state::{AppState, Focus};
use super::test_support::{ev, key, last_cell, ops, state, type_text};
use super::update::update;

fn run(id: &str, updated: &str, first: &str) -> SessionSummary {
    SessionSummary {
        run_id: id.into(),
        run_dir: PathBuf::from(format!("/d/runs/{id}")),
        created: updated.into(),
        updated: updated.into(),
        updated_unix_ms: 0,
        step: "s".into(),
        first_message: first.into(),
        generations: 1,
        num_turns: 2,
        cost_usd: 0.01,
        model: "m".into(),
        session_id: format!("{id}-s"),
    }
}

fn run_cmd(s: &mut AppState, text: &str, now: Instant) -> Vec<Effect> {
    type_text(s, text, now);
    update(s, key(KeyCode::Enter), now)
}

#[test]
fn a_resumed_run_opens_its_latest_handoff_with_edit_handoff_and_ctrl_e() {
    let t0 = Instant::now();
    let mut s = state();
    assert!(ops(&run_cmd(&mut s, "/edit-handoff", t0)).is_empty());
    assert!(
        matches!(last_cell(&s), Cell::Notice { message } if message == "No handoff document yet")
    );
    let resumed = |latest: Option<&str>| {
        ev(Event::Resumed {
            run_id: "run-now".into(),
            session_id: "s2".into(),
            generation: 2,
            messages: 3,
            latest_handoff: latest.map(PathBuf::from),
        })
    };
    update(&mut s, resumed(Some("/w/.flower/notes/handoff-fix.md")), t0);
    let fx = run_cmd(&mut s, "/edit-handoff", t0);
    assert!(
        fx.contains(&Effect::LoadEditor(
            "/w/.flower/notes/handoff-fix.md".into()
        )),
        "{fx:?}"
    );
    let fx = update(&mut s, super::test_support::ctrl('e'), t0);
    assert!(
        fx.contains(&Effect::OpenExternalEditor(
            "/w/.flower/notes/handoff-fix.md".into()
        )),
        "{fx:?}"
    );
    // Another run without a document: none to open.
    update(&mut s, resumed(None), t0);
    assert!(
        run_cmd(&mut s, "/edit-handoff", t0)
            .iter()
            .all(|e| !matches!(e, Effect::LoadEditor(_)))
    );
}

#[test]
fn permissions_are_listed_and_revoked_by_number() {
    let t0 = Instant::now();
    let mut s = state();
    assert_eq!(ops(&run_cmd(&mut s, "/permissions", t0)), [Op::Permissions]);
    let cargo = AllowRule::BashPrefix {
        prefix: "cargo test".into(),
    };
    update(
        &mut s,
        ev(Event::Permissions {
            policy: ApprovalPolicy::Ask,
            allowances: vec![
                Allowance::from(cargo.clone()),
                Allowance::from(AllowRule::Tool {
                    tool: "edit_file".into(),
                }),
            ],
            sandbox: "workspace-write, network off (Landlock ABI 7 and a seccomp filter)".into(),
            rules: vec![
                crate::engine::protocol::ListedRule {
                    kind: "deny",
                    rule: "Read(./.env)".into(),
                    source: Some(PathBuf::from("/home/u/.claude/settings.json")),
                },
                crate::engine::protocol::ListedRule {
                    kind: "allow",
                    rule: "Bash(git status:*)".into(),
                    source: Some(PathBuf::from("/w/.claude/settings.json")),
                },
            ],
        }),
        t0,
    );
    let Cell::Notice { message } = last_cell(&s) else {
        panic!("a notice");
    };
    assert!(
        message.contains("Sandbox of commands: workspace-write, network off (Landlock ABI 7"),
        "{message}"
    );
    assert!(message.contains("  1. bash: `cargo test …`"), "{message}");
    assert!(
        message.contains("  2. edit_file inside the workspace"),
        "{message}"
    );
    assert!(
        message.contains("  deny  Read(./.env)  (/home/u/.claude/settings.json)")
            && message.contains("  allow Bash(git status:*)  (/w/.claude/settings.json)"),
        "{message}"
    );
    assert_eq!(
        ops(&run_cmd(&mut s, "/permissions revoke 1", t0)),
        [Op::Revoke { rule: Some(cargo) }]
    );
    assert_eq!(
        ops(&run_cmd(&mut s, "/permissions revoke all", t0)),
        [Op::Revoke { rule: None }]
    );
    assert!(ops(&run_cmd(&mut s, "/permissions revoke 9", t0)).is_empty());
    assert!(
        matches!(last_cell(&s), Cell::Error { message } if message.contains("no grant number 9"))
    );
}

#[test]
fn the_picker_lists_sessions_and_enter_resumes_the_chosen_one() {
    let t0 = Instant::now();
    let mut s = state();
    assert_eq!(ops(&run_cmd(&mut s, "/resume", t0)), [Op::ListSessions]);
    update(
        &mut s,
        ev(Event::Sessions {
            current_run: "run-now".into(),
            sessions: vec![
                run("run-now", "2026-12-02T10:00:00Z", "this one"),
                run("run-b", "2026-12-01T10:00:00Z", "yesterday"),
                run("run-a", "2026-11-30T10:00:00Z", "older"),
            ],
        }),
        t0,
    );
    assert_eq!(
        match &s.picker {
            Some(super::state::Picker::Sessions(p)) => Some(p.selected()),
            _ => None,
        },
        Some(1),
        "the open one is skipped"
    );
    // Keys go to the picker, not the input.
    update(&mut s, key(KeyCode::Down), t0);
    type_text(&mut s, "x", t0);
    assert!(s.input.is_empty());
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(
        ops(&fx),
        [Op::Resume {
            run_id: "run-a".into()
        }]
    );
    assert!(s.picker.is_none());
    // The engine continues it: what the chat showed goes, the replay follows.
    s.chat.notice("from the run left behind");
    update(
        &mut s,
        ev(Event::Resumed {
            run_id: "run-a".into(),
            session_id: "run-a-s".into(),
            generation: 1,
            messages: 4,
            latest_handoff: None,
        }),
        t0,
    );
    assert_eq!(s.session.run_id(), Some("run-a"));
    assert_eq!(s.chat.cells().len(), 1, "only the resumed notice");
    assert!(matches!(last_cell(&s), Cell::Notice { message } if message.contains("run-a")));
    // Esc closes a picker; an empty list says so.
    update(
        &mut s,
        ev(Event::Sessions {
            current_run: "run-a".into(),
            sessions: vec![run("run-a", "t", "only")],
        }),
        t0,
    );
    assert!(s.picker.is_none());
    assert!(
        matches!(last_cell(&s), Cell::Notice { message } if message.contains("No earlier session"))
    );
}

#[test]
fn model_and_effort_go_to_the_engine_and_the_status_shows_them() {
    let t0 = Instant::now();
    let mut s = state();
    assert_eq!(
        ops(&run_cmd(&mut s, "/model claude-opus-4-5", t0)),
        [Op::SetModel {
            model: "claude-opus-4-5".into()
        }]
    );
    assert_eq!(
        ops(&run_cmd(&mut s, "/effort high", t0)),
        [Op::SetEffort {
            effort: Some(Effort::High)
        }]
    );
    assert_eq!(
        ops(&run_cmd(&mut s, "/effort off", t0)),
        [Op::SetEffort { effort: None }]
    );
    assert!(ops(&run_cmd(&mut s, "/effort extreme", t0)).is_empty());
    assert!(
        matches!(last_cell(&s), Cell::Error { message } if message.contains("low, medium, high"))
    );
    update(
        &mut s,
        ev(Event::Model {
            model: "claude-opus-4-5".into(),
            effort: Some(Effort::High),
            thresholds: Thresholds::new(200_000, 50_000),
            window_source: WindowSource::Flag,
        }),
        t0,
    );
    assert_eq!(s.status.labels().model, "claude-opus-4-5");
    assert_eq!(s.status.labels().effort, Some(Effort::High));
    assert!(matches!(last_cell(&s), Cell::Notice { message } if message.contains("effort high")));
}

#[test]
fn model_alone_opens_a_picker_of_the_providers_models() {
    let t0 = Instant::now();
    let mut s = state();
    assert_eq!(ops(&run_cmd(&mut s, "/model", t0)), [Op::ListModels]);
    update(
        &mut s,
        ev(Event::Models {
            models: vec!["claude-opus-4-5".into(), "claude-haiku-4-5".into()],
            error: None,
        }),
        t0,
    );
    insta::assert_snapshot!(
        "model_picker",
        super::subagent_tests::draw(&s, 70, 12, t0).backend()
    );
    // Keys go to the picker; Enter on the one in use changes nothing.
    type_text(&mut s, "x", t0);
    assert!(s.input.is_empty());
    update(&mut s, key(KeyCode::Down), t0);
    update(&mut s, key(KeyCode::Up), t0);
    assert!(ops(&update(&mut s, key(KeyCode::Enter), t0)).is_empty());
    assert!(s.picker.is_none());
    // Down, Enter: the other model from the next request on.
    run_cmd(&mut s, "/model", t0);
    let offered = Event::Models {
        models: vec!["claude-opus-4-5".into()],
        error: None,
    };
    update(&mut s, ev(offered), t0);
    update(&mut s, key(KeyCode::Down), t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(
        ops(&fx),
        [Op::SetModel {
            model: "claude-opus-4-5".into()
        }]
    );
    // Esc closes it; a late answer finds no picker.
    run_cmd(&mut s, "/model", t0);
    update(&mut s, key(KeyCode::Esc), t0);
    assert!(s.picker.is_none());
    let late = Event::Models {
        models: vec!["x".into()],
        error: None,
    };
    assert!(ops(&update(&mut s, ev(late), t0)).is_empty());
    assert!(s.picker.is_none());
}

#[test]
fn home_and_end_jump_in_the_model_picker_and_a_long_error_is_shown_whole() {
    let t0 = Instant::now();
    let mut s = state();
    run_cmd(&mut s, "/model", t0);
    let models = (1..=30).map(|i| format!("model-{i:02}")).collect();
    update(
        &mut s,
        ev(Event::Models {
            models,
            error: None,
        }),
        t0,
    );
    update(&mut s, key(KeyCode::End), t0);
    let last = Op::SetModel {
        model: "model-30".into(),
    };
    assert_eq!(ops(&update(&mut s, key(KeyCode::Enter), t0)), [last]);
    run_cmd(&mut s, "/model", t0);
    update(&mut s, key(KeyCode::End), t0);
    update(&mut s, key(KeyCode::Home), t0);
    assert!(
        ops(&update(&mut s, key(KeyCode::Enter), t0)).is_empty(),
        "Home: the one in use, which changes nothing"
    );
    run_cmd(&mut s, "/model", t0);
    let why = "the server answered 503 Service Unavailable: the upstream model registry is \
               being migrated, try again after the maintenance window ends at 04:00 UTC (ref 7f3a)";
    let missing = Event::Models {
        models: Vec::new(),
        error: Some(why.into()),
    };
    update(&mut s, ev(missing), t0);
    let screen = super::subagent_tests::draw(&s, 60, 14, t0)
        .backend()
        .to_string();
    assert!(
        screen.contains("(ref 7f3a)"),
        "the end of the error is shown:\n{screen}"
    );
}

#[test]
fn at_completion_asks_for_files_and_puts_the_chosen_path_in() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "look at ", t0);
    let fx = update(&mut s, key(KeyCode::Char('@')), t0);
    assert!(
        fx.contains(&Effect::QueryFiles {
            seq: 1,
            query: String::new(),
            refresh: false
        }),
        "{fx:?}"
    );
    let fx = update(&mut s, key(KeyCode::Char('m')), t0);
    assert!(fx.contains(&Effect::QueryFiles {
        seq: 2,
        query: "m".into(),
        refresh: false
    }));
    let answer = |seq, items: &[&str], complete| Msg::FileMatches {
        seq,
        items: items.iter().map(|p| p.to_string()).collect(),
        complete,
        indexed: 10,
    };
    // An answer to an older query is dropped.
    update(&mut s, answer(1, &["README.md"], true), t0);
    assert!(s.mention.open().is_some_and(|m| m.items().is_empty()));
    // A partial index: shown, and asked again at the next frame.
    let fx = update(&mut s, answer(2, &["src/main.rs", "src/mod/"], false), t0);
    assert!(fx.contains(&Effect::ScheduleFrame(Some(super::mention::REQUERY))));
    let fx = update(&mut s, Msg::Tick, t0 + Duration::from_millis(200));
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::QueryFiles { seq: 3, .. }))
    );
    update(&mut s, answer(3, &["src/main.rs", "src/mod/"], true), t0);
    assert!(s.mention.visible(s.focus == Focus::Input).is_some());
    // Down, Tab: the directory goes in and stays open for its files.
    update(&mut s, key(KeyCode::Down), t0);
    let fx = update(&mut s, key(KeyCode::Tab), t0);
    assert_eq!(s.input.text(), "look at @src/mod/");
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::QueryFiles { query, .. } if query == "src/mod/"))
    );
    update(&mut s, answer(4, &["src/mod/a b.rs"], true), t0);
    update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(
        s.input.text(),
        "look at @\"src/mod/a b.rs\" ",
        "quoted, with a space"
    );
    assert!(s.mention.open().is_none());
    // Esc closes the popup; the text stays.
    type_text(&mut s, "@x", t0);
    update(&mut s, answer(6, &["x.rs"], true), t0);
    assert!(s.mention.visible(s.focus == Focus::Input).is_some());
    update(&mut s, key(KeyCode::Esc), t0);
    assert!(s.mention.visible(s.focus == Focus::Input).is_none());
    assert!(s.input.text().ends_with("@x"));
    // An e-mail address opens nothing.
    let mut t = state();
    type_text(&mut t, "me@example.com", t0);
    assert!(t.mention.open().is_none());
}

#[test]
fn attachments_instructions_and_init_are_said_in_the_chat() {
    let t0 = Instant::now();
    let mut s = state();
    update(
        &mut s,
        ev(Event::Attachment {
            turn: TurnId(1),
            path: "src/main.rs".into(),
            attached: true,
            summary: "src/main.rs: 120 lines".into(),
        }),
        t0,
    );
    assert!(
        matches!(last_cell(&s), Cell::Notice { message } if message == "attached src/main.rs: 120 lines")
    );
    update(
        &mut s,
        ev(Event::SessionPrompt {
            session_id: "s1".into(),
            environment: "Date: today".into(),
            instructions: vec![
                InstructionFile {
                    path: "/ws/AGENTS.md".into(),
                    bytes: 2_048,
                    included: 2_048,
                    error: None,
                },
                InstructionFile {
                    path: "/ws/sub/CLAUDE.md".into(),
                    bytes: 40_960,
                    included: 10_240,
                    error: None,
                },
            ],
        }),
        t0,
    );
    let Cell::Notice { message } = last_cell(&s) else {
        panic!("a notice");
    };
    assert_eq!(
        message,
        "Project instructions: ws/AGENTS.md (2.0 KB) · sub/CLAUDE.md (10.0 KB of 40.0 KB: cut by the cap)"
    );
    let fx = run_cmd(&mut s, "/init", t0);
    assert_eq!(
        ops(&fx),
        [Op::Init {
            turn: TurnId(1),
            overwrite: false
        }]
    );
    update(
        &mut s,
        ev(Event::InitExists {
            turn: TurnId(1),
            path: "/ws/AGENTS.md".into(),
        }),
        t0,
    );
    assert!(
        matches!(last_cell(&s), Cell::Notice { message } if message.contains("/init overwrite"))
    );
    super::test_support::end_turn(&mut s, 1, t0);
    assert_eq!(
        ops(&run_cmd(&mut s, "/init overwrite", t0)),
        [Op::Init {
            turn: TurnId(2),
            overwrite: true
        }]
    );
}
