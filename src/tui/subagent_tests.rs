//! Subagents in the TUI: live cells in the place of their `task` calls (Ctrl-T shows their
//! transcripts), their end and report, Esc with subagents running, and stray phases.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use crate::engine::context::Thresholds;
use crate::engine::ledger::{GenerationStart, SubagentRecord};
use crate::engine::protocol::{CostRow, Event, Op, SubagentOutcome, SubagentPhase, TurnId};
use crate::engine::types::Usage;

use super::activity::Running;
use super::msg::Msg;
use super::render::cell::Cell;
use super::render::theme::Theme;
use super::render::tool_cell::ToolStatus;
use super::state::AppState;
use super::test_support::{ctrl, ev, key, last_cell, ops, state, type_text};
use super::update::update;
use super::view::{ViewCache, view};

pub(super) fn draw(s: &AppState, w: u16, h: u16, now: Instant) -> Terminal<TestBackend> {
    let theme = Theme::builtin("dark").expect("built-in theme");
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    t.draw(|f| view(f, s, &mut ViewCache::new(), &theme, now))
        .expect("draw");
    t
}

pub(super) fn started(s: &mut AppState, now: Instant) {
    update(
        s,
        ev(Event::SessionStarted {
            session_id: "s1".into(),
            parent_session: None,
            generation: 1,
            model: "claude-haiku-4-5".into(),
            provider: "anthropic".into(),
            thresholds: Thresholds::new(200_000, 50_000),
            demo: false,
        }),
        now,
    );
}

fn sub(p: SubagentPhase) -> Msg {
    ev(Event::Subagent(p))
}

fn task_call(s: &mut AppState, id: &str, description: &str, now: Instant) {
    update(
        s,
        ev(Event::ToolCall {
            turn: None,
            id: id.into(),
            name: "task".into(),
            input: json!({"description": description, "prompt": "…"}),
            summary: format!("task: {description}"),
            changes_files: false,
        }),
        now,
    );
}

fn start(s: &mut AppState, id: &str, description: &str, now: Instant) {
    update(
        s,
        sub(SubagentPhase::Start {
            id: id.into(),
            description: description.into(),
            session_id: format!("child-{id}"),
            parent_session: "s1".into(),
            model: "claude-haiku-4-5".into(),
            tools: vec!["read_file".into(), "grep".into()],
            window: 200_000,
            transcript: PathBuf::from(format!("/d/runs/r/sessions/child-{id}.jsonl")),
        }),
        now,
    );
}

fn tool(s: &mut AppState, id: &str, n: u32, summary: &str, output: Option<&str>, now: Instant) {
    update(
        s,
        sub(SubagentPhase::ToolCall {
            id: id.into(),
            call_id: format!("{id}-k{n}"),
            name: "grep".into(),
            summary: summary.into(),
            calls: n,
        }),
        now,
    );
    if let Some(out) = output {
        update(
            s,
            sub(SubagentPhase::ToolResult {
                id: id.into(),
                call_id: format!("{id}-k{n}"),
                name: "grep".into(),
                is_error: false,
                output: out.into(),
                chars: out.len(),
            }),
            now,
        );
    }
}

fn usage(s: &mut AppState, id: &str, context: u64, now: Instant) {
    update(
        s,
        sub(SubagentPhase::Usage {
            id: id.into(),
            context,
            usage: Usage::default(),
            cost_usd: 0.0021,
        }),
        now,
    );
}

/// A question, then two `task` calls whose children work.
fn two_running(s: &mut AppState, t0: Instant) {
    started(s, t0);
    type_text(s, "Where are the parser and the lexer tested?", t0);
    update(s, key(KeyCode::Enter), t0);
    task_call(s, "c1", "find the parser's tests", t0);
    task_call(s, "c2", "find the lexer's tests", t0);
    start(s, "c1", "find the parser's tests", t0);
    start(s, "c2", "find the lexer's tests", t0);
    tool(
        s,
        "c1",
        1,
        "grep: fn parse in tests",
        Some("tests/parse.rs:3:fn parse_empty()\ntests/parse.rs:9:fn parse_nested()"),
        t0,
    );
    update(
        s,
        sub(SubagentPhase::Text {
            id: "c1".into(),
            text: "Two tests so far; checking the fixtures.".into(),
        }),
        t0,
    );
    tool(s, "c1", 2, "read_file: tests/fixtures/nested.txt", None, t0);
    usage(s, "c1", 12_400, t0);
    tool(s, "c2", 1, "glob: tests/**/lex*.rs", None, t0);
    usage(s, "c2", 3_100, t0);
}

#[test]
fn running_subagents_are_live_cells_and_never_move_the_main_gauge() {
    let t0 = Instant::now();
    let mut s = state();
    two_running(&mut s, t0);
    assert_eq!(
        s.status.gauge().context,
        0,
        "a child's usage is not the main thread's"
    );
    assert_eq!(s.activity.agents().len(), 2);
    let now = t0 + Duration::from_millis(8_300);
    update(&mut s, Msg::Tick, now);
    insta::assert_snapshot!("two_subagents_running", draw(&s, 80, 16, now).backend());

    // Ctrl-T: both show what they did so far.
    update(&mut s, ctrl('t'), now);
    insta::assert_snapshot!("two_subagents_expanded", draw(&s, 80, 24, now).backend());
}

#[test]
fn an_ended_subagent_shows_how_and_its_report() {
    let t0 = Instant::now();
    let mut s = state();
    two_running(&mut s, t0);
    let end = |id: &str, outcome, calls, ms| {
        sub(SubagentPhase::End {
            id: id.into(),
            session_id: format!("child-{id}"),
            outcome,
            usage: Usage::default(),
            context: 14_000,
            cost_usd: 0.0042,
            tool_calls: calls,
            iterations: 3,
            elapsed_ms: ms,
            report_chars: 40,
        })
    };
    let later = t0 + Duration::from_secs(21);
    update(
        &mut s,
        end("c1", SubagentOutcome::Completed, 2, 20_400),
        later,
    );
    update(
        &mut s,
        end("c2", SubagentOutcome::ContextFull, 7, 21_000),
        later,
    );
    assert!(s.activity.agents().is_empty());
    let result = |id: &str, text: &str| {
        ev(Event::ToolResult {
            turn: None,
            id: id.into(),
            name: "task".into(),
            output: text.into(),
            is_error: false,
            spilled: None,
            diff: None,
            exit: None,
            sandbox: None,
        })
    };
    update(
        &mut s,
        result(
            "c1",
            "The parser is tested in tests/parse.rs:\n- parse_empty\n- parse_nested\n- parse_unicode\n- parse_errors",
        ),
        later,
    );
    update(
        &mut s,
        result("c2", "The lexer is tested in tests/lex.rs (12 tests)."),
        later,
    );
    // A later tick changes nothing of an ended one.
    update(&mut s, Msg::Tick, later + Duration::from_secs(5));
    let cells: Vec<&Cell> = s.chat.cells().iter().collect();
    let Some(Cell::Subagent(a)) = cells.iter().rev().nth(1) else {
        panic!("not a subagent cell: {cells:?}");
    };
    assert_eq!(a.elapsed_ms, 20_400);
    assert!(matches!(&a.report, ToolStatus::Succeeded(r) if r.starts_with("The parser")));
    insta::assert_snapshot!("two_subagents_over", draw(&s, 80, 14, later).backend());
    // /cost asks the engine, which answers from the ledger: its subagents are listed there.
    type_text(&mut s, "/cost", later);
    let fx = update(&mut s, key(KeyCode::Enter), later);
    assert_eq!(ops(&fx), [Op::Cost]);
    let record = |description: &str, tool_calls| SubagentRecord {
        description: description.into(),
        outcome: "completed".into(),
        cost_usd: 0.0042,
        tool_calls,
        ..Default::default()
    };
    update(
        &mut s,
        ev(Event::Cost {
            web_searches: 0,
            step: "s".into(),
            rows: vec![CostRow {
                generation: 1,
                start: GenerationStart::First,
                label: "gen 1".into(),
                session_id: "a".into(),
                cost_usd: 0.0184,
                num_turns: 1,
                context: 9_000,
                current: true,
                subagents_usd: 0.0084,
            }],
            subagents: vec![
                record("find the parser's tests", 2),
                record("find the lexer's tests", 7),
            ],
            total_usd: 0.0184,
            num_turns: 1,
        }),
        later,
    );
    let Cell::Notice { message } = last_cell(&s) else {
        panic!("no /cost notice");
    };
    assert!(message.contains("of which subagents $0.0084"), "{message}");
    assert!(
        message.ends_with(
            "  subagents (2):\n    find the parser's tests: $0.0042 · 2 tool calls · completed\n    \
             find the lexer's tests: $0.0042 · 7 tool calls · completed"
        ),
        "{message}"
    );
}

#[test]
fn esc_aborts_the_turn_with_its_subagents_and_the_spinner_counts_them() {
    let t0 = Instant::now();
    let mut s = state();
    two_running(&mut s, t0);
    assert!(matches!(s.activity.running(), Running::Tool { .. }));
    let (label, _, hint) = s.spinner().expect("a spinner while they run");
    assert_eq!(label, "2 subagents work…");
    assert!(hint.contains("ctrl-t"), "{hint}");
    let fx = update(&mut s, key(KeyCode::Esc), t0);
    assert_eq!(ops(&fx), [Op::Abort { turn: TurnId(1) }]);
}

#[test]
fn a_start_without_its_call_cell_gets_a_cell_of_its_own_and_stray_phases_are_ignored() {
    let t0 = Instant::now();
    let mut s = state();
    started(&mut s, t0);
    let before = s.chat.cells().len();
    usage(&mut s, "nobody", 9_000, t0);
    assert_eq!(
        s.chat.cells().len(),
        before,
        "a phase of an unknown subagent adds nothing"
    );
    start(&mut s, "c9", "look around", t0);
    match last_cell(&s) {
        Cell::Subagent(a) => assert_eq!(a.summary, "task: look around"),
        other => panic!("not a subagent: {other:?}"),
    }
    // A long reply is kept cut (the whole is in its transcript on disk).
    update(
        &mut s,
        sub(SubagentPhase::Text {
            id: "c9".into(),
            text: "x".repeat(50_000),
        }),
        t0,
    );
    match last_cell(&s) {
        Cell::Subagent(a) => match a.steps.first() {
            Some(super::render::agent_cell::AgentStep::Text(t)) => {
                assert!(t.chars().count() <= super::render::agent_cell::STEP_TEXT_MAX + 1)
            }
            other => panic!("{other:?}"),
        },
        other => panic!("not a subagent: {other:?}"),
    }
}
