//! Reducer tests of slash commands, the popup, and the gauge/cost bookkeeping.

use std::time::Instant;

use crossterm::event::KeyCode;

use crate::engine::context::Thresholds;
use crate::engine::protocol::{CostRow, GenerationStart};
use crate::engine::protocol::{
    Event, ExitReason, HandoffId, HandoffPhase, HandoffRefusal, Op, Origin, TurnId, TurnKind,
};
use crate::engine::types::Usage;

use super::render::cell::Cell;
use super::test_support::{ctrl, ev, key, last_cell, ops, state, type_text, with_exchange};
use super::update::update;

#[test]
fn handoff_command_guard_and_focus() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "/handoff", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    // The guard is the engine's: the UI asks, the engine refuses and says why.
    assert_eq!(
        ops(&fx),
        [Op::Handoff {
            turn: TurnId(1),
            focus: None
        }]
    );
    let cells = s.chat.cells().len();
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Refused {
            reason: HandoffRefusal::NoMessages,
            message: HandoffRefusal::NoMessages.to_string(),
        })),
        t0,
    );
    update(
        &mut s,
        ev(Event::TurnEnd {
            turn: TurnId(1),
            kind: TurnKind::Handoff,
            origin: Origin::User,
            reason: ExitReason::Unchanged,
        }),
        t0,
    );
    assert_eq!(s.chat.cells().len(), cells + 1, "one line, the engine's");
    assert_eq!(
        last_cell(&s),
        Cell::Notice {
            message: "Nothing to hand off (no messages yet)".into()
        }
    );

    with_exchange(&mut s, t0);
    type_text(&mut s, "/handoff the parser bug", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(
        ops(&fx),
        [Op::Handoff {
            turn: TurnId(3),
            focus: Some("the parser bug".into())
        }]
    );

    // Done after a manual handoff: divider + notice.
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Writing {
            handoff: HandoffId(1),
            manual: true,
            focus: None,
            background: false,
        })),
        t0,
    );
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Done {
            handoff: HandoffId(1),
            context: 152_000,
            window: 200_000,
            degraded: false,
            degraded_reason: None,
            path: Some("/n/h.md".into()),
            sections: vec![],
            generation: 2,
            source: crate::engine::protocol::DocumentSource::Written,
            tail: 0,
            held: Default::default(),
        })),
        t0,
    );
    let n = s.chat.cells().len();
    assert!(matches!(
        s.chat.cells().get(n - 2),
        Some(Cell::Divider {
            generation: 2,
            context: 152_000,
            ..
        })
    ));
    assert_eq!(
        last_cell(&s),
        Cell::Notice {
            message: "New session started with handoff context".into()
        }
    );
    assert_eq!(
        s.chat.cells().len(),
        n,
        "the success is said once (the engine says nothing)"
    );
}

#[test]
fn window_command_validates() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "/window abc", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert!(ops(&fx).is_empty());
    assert!(
        matches!(last_cell(&s), Cell::Error { message } if message.contains("`abc` is not a number"))
    );
    type_text(&mut s, "/window 40K", t0);
    let cells = s.chat.cells().len();
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(ops(&fx), [Op::SetWindow { window: 40_000 }]);
    assert_eq!(
        s.chat.cells().len(),
        cells,
        "the engine's notice confirms the window; the UI adds none of its own"
    );
    // The thresholds are the engine's: its next usage event carries them.
    assert_eq!(s.status.gauge().window, 200_000);
    update(
        &mut s,
        ev(Event::Usage {
            turn: None,
            context: 0,
            thresholds: Thresholds::new(40_000, 50_000),
            estimated: true,
            usage: Usage::default(),
            cost_usd: 0.0,
            session_cost_usd: 0.0,
            masked_tokens: 0,
        }),
        t0,
    );
    assert_eq!(
        (
            s.status.gauge().window,
            s.status.gauge().at,
            s.status.gauge().warn_at
        ),
        (40_000, 10_000, 1_000)
    );
}

#[test]
fn window_without_a_number_says_where_the_window_comes_from() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "/window", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert!(ops(&fx).is_empty());
    assert!(
        matches!(last_cell(&s), Cell::Notice { message }
            if message == "Context window 200K (model table: Claude on the Anthropic API) · /window N sets it"),
        "{:?}",
        last_cell(&s)
    );
    type_text(&mut s, "/window 150K", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    // The engine's usage event after `SetWindow` carries the new thresholds.
    update(
        &mut s,
        ev(Event::Usage {
            turn: None,
            context: 0,
            thresholds: Thresholds::new(150_000, 50_000),
            estimated: true,
            usage: Usage::default(),
            cost_usd: 0.0,
            session_cost_usd: 0.0,
            masked_tokens: 0,
        }),
        t0,
    );
    type_text(&mut s, "/window ", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    assert!(
        matches!(last_cell(&s), Cell::Notice { message } if message.starts_with("Context window 150K (/window)"))
    );
    update(
        &mut s,
        ev(Event::WindowLearned {
            model: "claude-haiku-4-5".into(),
            thresholds: crate::engine::context::Thresholds::new(180_000, 50_000),
        }),
        t0,
    );
    type_text(&mut s, "/window", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    assert!(matches!(last_cell(&s), Cell::Notice { message }
            if message.starts_with("Context window 180K (learned from an overflow message)")));
}

#[test]
fn popup_selects_and_runs_commands() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "/h", t0);
    let names: Vec<_> = s.popup_items().into_iter().map(|c| c.name).collect();
    assert_eq!(names, ["handoff", "hooks", "help"]);
    update(&mut s, key(KeyCode::Down), t0);
    update(&mut s, key(KeyCode::Down), t0);
    update(&mut s, key(KeyCode::Enter), t0);
    assert!(matches!(last_cell(&s), Cell::Notice { message } if message.starts_with("commands:")));
    type_text(&mut s, "/wi", t0);
    update(&mut s, key(KeyCode::Tab), t0);
    assert_eq!(s.input.text(), "/window ");
    assert!(s.popup_items().is_empty());
    update(&mut s, ctrl('c'), t0);
    type_text(&mut s, "/zz", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    assert!(
        matches!(last_cell(&s), Cell::Error { message } if message.starts_with("Unknown command /zz"))
    );
    assert_eq!(s.input.text(), "", "said once and cleared");
    // The next command is not typed onto it.
    type_text(&mut s, "/help", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    assert!(matches!(last_cell(&s), Cell::Notice { message } if message.starts_with("commands:")));
    // The history keeps it: Up brings back /help, then /zz.
    update(&mut s, key(KeyCode::Up), t0);
    update(&mut s, key(KeyCode::Up), t0);
    assert_eq!(s.input.text(), "/zz", "Up brings it back");
    let errors = s
        .chat
        .cells()
        .iter()
        .filter(|c| matches!(c, Cell::Error { message } if message.contains("/zz")))
        .count();
    assert_eq!(errors, 1, "said once");
}

#[test]
fn usage_moves_the_gauge_and_cost_is_kept_per_generation() {
    let t0 = Instant::now();
    let mut s = state();
    let started = |id: &str, generation| {
        ev(Event::SessionStarted {
            session_id: id.into(),
            parent_session: None,
            generation,
            model: "m".into(),
            provider: "anthropic".into(),
            thresholds: Thresholds::new(200_000, 50_000),
            demo: false,
        })
    };
    // The cost is the session's so far, as the engine reports it with every usage.
    let usage = |context, session_cost_usd, estimated| {
        ev(Event::Usage {
            turn: None,
            context,
            thresholds: Thresholds::new(200_000, 50_000),
            estimated,
            usage: Usage::default(),
            cost_usd: 0.0,
            session_cost_usd,
            masked_tokens: 0,
        })
    };
    update(&mut s, started("aaaaaaaa-1", 1), t0);
    update(&mut s, usage(120_000, 0.5, false), t0);
    update(&mut s, usage(131_000, 0.5, true), t0);
    assert_eq!(
        (s.status.gauge().context, s.status.gauge().estimated),
        (131_000, true)
    );
    update(&mut s, usage(140_000, 0.75, false), t0);
    update(
        &mut s,
        ev(Event::TurnEnd {
            turn: TurnId(1),
            kind: TurnKind::Message,
            origin: Origin::User,
            reason: ExitReason::Completed,
        }),
        t0,
    );
    update(&mut s, started("bbbbbbbb-2", 2), t0);
    assert_eq!(s.status.gauge().context, 0);
    assert_eq!(s.session.session_id(), Some("bbbbbbbb-2"));
    // /cost asks the engine, which answers from the ledger.
    type_text(&mut s, "/cost", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(ops(&fx), [Op::Cost]);
    let row = |generation, start, label: &str, cost_usd, num_turns, current| CostRow {
        generation,
        start,
        label: label.into(),
        session_id: format!("{label}-session"),
        cost_usd,
        num_turns,
        context: 120_000,
        current,
        subagents_usd: 0.0,
    };
    update(
        &mut s,
        ev(Event::Cost {
            web_searches: 0,
            step: "fix-build".into(),
            subagents: Vec::new(),
            rows: vec![
                row(1, GenerationStart::First, "gen 1", 0.75, 1, false),
                row(
                    2,
                    GenerationStart::Handoff,
                    "gen 2 · handoff",
                    0.2,
                    2,
                    false,
                ),
                row(3, GenerationStart::New, "gen 3 · /new", 0.106, 1, true),
            ],
            total_usd: 1.056,
            num_turns: 4,
        }),
        t0,
    );
    assert_eq!(
        last_cell(&s),
        Cell::Notice {
            message: [
                "Cost of step fix-build:",
                "  gen 1            $0.7500 · 1 turn · ctx 120.0K",
                "  gen 2 · handoff  $0.2000 · 2 turns · ctx 120.0K",
                "  gen 3 · /new     $0.1060 · 1 turn · ctx 120.0K (now)",
                "  total            $1.0560 · 4 turns",
            ]
            .join("\n")
        }
    );
}

#[test]
fn near_notice_once_per_generation() {
    let t0 = Instant::now();
    let mut s = state();
    let near = || {
        ev(Event::Handoff(HandoffPhase::Near {
            context: 130_000,
            at: 150_000,
            window: 200_000,
        }))
    };
    update(&mut s, near(), t0);
    update(&mut s, near(), t0);
    let notices = s
        .chat
        .cells()
        .iter()
        .filter(|c| matches!(c, Cell::Notice { .. }))
        .count();
    assert_eq!(notices, 1);
    assert_eq!(
        last_cell(&s),
        Cell::Notice {
            message: "Context at 130.0K/200K: a handoff will be written at 150.0K".into()
        }
    );
}

#[test]
fn a_near_notice_past_the_line_says_the_handoff_is_due() {
    let t0 = Instant::now();
    let mut s = state();
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Near {
            context: 25_000,
            at: 20_000,
            window: 30_000,
        })),
        t0,
    );
    assert_eq!(
        last_cell(&s),
        Cell::Notice {
            message: "Context at 25.0K/30K: past the handoff line at 20.0K, a handoff is due"
                .into()
        }
    );
}

#[test]
fn mcp_lists_servers_from_their_status_events_and_restarts_one() {
    use crate::engine::mcp::{Origin as McpOrigin, ServerState, ServerStatus};
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "/mcp", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(
        last_cell(&s),
        Cell::Notice {
            message: "No MCP servers: add [mcp_servers.NAME] to config.toml, or a .mcp.json to the workspace".into()
        }
    );
    let status = |name: &str, state: ServerState, last_error: Option<&str>| {
        ev(Event::McpStatus(ServerStatus {
            name: name.into(),
            origin: McpOrigin::ConfigFile,
            transport: format!("npx {name}-server"),
            state,
            tools: vec![],
            last_error: last_error.map(str::to_string),
            warnings: vec![],
        }))
    };
    update(&mut s, status("github", ServerState::Starting, None), t0);
    update(
        &mut s,
        status(
            "docs",
            ServerState::Failed {
                reason: "exited with status 1".into(),
            },
            None,
        ),
        t0,
    );
    update(
        &mut s,
        status(
            "github",
            ServerState::Ready { tools: 12 },
            Some("timed out"),
        ),
        t0,
    );
    type_text(&mut s, "/mcp", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(
        last_cell(&s),
        Cell::Notice {
            message:
                "MCP servers:\n  github (config.toml) · ready, 12 tools · npx github-server\n    \
                      last error: timed out\n  docs (config.toml) · failed: exited with status 1 · \
                      npx docs-server\n/mcp restart NAME restarts one"
                    .into()
        }
    );
    type_text(&mut s, "/mcp restart docs", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(
        ops(&fx),
        [Op::McpRestart {
            name: "docs".into()
        }]
    );
    type_text(&mut s, "/mcp stop docs", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert!(ops(&fx).is_empty());
}

#[test]
fn a_bang_line_runs_in_the_shell_and_waits_behind_a_running_turn() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "!ls src", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(
        ops(&fx),
        [Op::Shell {
            turn: TurnId(1),
            command: "ls src".into()
        }]
    );
    assert_eq!(s.input.text(), "");
    // While that turn runs, the next one waits in the queue as a message does.
    type_text(&mut s, "!cat README.md", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert!(ops(&fx).is_empty(), "queued: {fx:?}");
    let fx = super::test_support::end_turn(&mut s, 1, t0);
    assert_eq!(
        ops(&fx),
        [Op::Shell {
            turn: TurnId(2),
            command: "cat README.md".into()
        }]
    );
    // A lone `!` is no command: it goes to the model as typed.
    super::test_support::end_turn(&mut s, 2, t0);
    type_text(&mut s, "!", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert!(matches!(ops(&fx).as_slice(), [Op::UserTurn { text, .. }] if text == "!"));
}
