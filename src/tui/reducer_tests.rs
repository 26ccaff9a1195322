//! Reducer tests: messages in, state and effects out, time passed in.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyModifiers, MouseEvent, MouseEventKind};
use serde_json::json;

use crate::engine::protocol::{
    Event, ExitReason, HandoffId, HandoffPhase, Op, Origin, TurnId, TurnKind,
};

use super::activity::Running;
use super::handoff_state::HandoffKind;
use super::msg::{Effect, Msg, Pane};
use super::quit_arm::QUIT_WINDOW;
use super::render::cell::{AssistantState, Cell};
use super::render::gauge::GaugeMode;
use super::render::theme::Theme;
use super::render::tool_cell::ToolStatus;
use super::update::update;

use super::test_support::*;

#[test]
fn idle_streaming_idle() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "hello", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(
        ops(&fx),
        [Op::UserTurn {
            turn: TurnId(1),
            text: "hello".into()
        }]
    );
    assert_eq!(*s.activity.running(), Running::Streaming { since: t0 });
    assert!(s.input.is_empty());
    // The engine's echo of our own message does not duplicate the cell.
    update(
        &mut s,
        ev(Event::UserMessage {
            turn: Some(TurnId(1)),
            origin: Origin::User,
            text: "hello".into(),
        }),
        t0,
    );
    update(
        &mut s,
        ev(Event::TextDelta {
            turn: None,
            text: "Hi ".into(),
        }),
        t0,
    );
    update(
        &mut s,
        ev(Event::TextDelta {
            turn: None,
            text: "there".into(),
        }),
        t0,
    );
    assert_eq!(last_cell(&s), Cell::streaming("Hi there".into()));
    update(
        &mut s,
        ev(Event::AssistantDone {
            turn: None,
            text: "Hi there".into(),
            interrupted: false,
        }),
        t0,
    );
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
    assert_eq!(*s.activity.running(), Running::Idle);
    let cells: Vec<_> = s.chat.cells().iter().cloned().collect();
    assert_eq!(
        cells,
        [
            Cell::User {
                text: "hello".into()
            },
            Cell::Assistant {
                markdown: "Hi there".into(),
                state: AssistantState::Done,
            },
        ]
    );
}

#[test]
fn esc_aborts_the_turn_the_engine_runs() {
    let t0 = Instant::now();
    let mut s = state();
    let end = |turn| {
        ev(Event::TurnEnd {
            turn: TurnId(turn),
            kind: TurnKind::Message,
            origin: Origin::User,
            reason: ExitReason::Completed,
        })
    };
    let start = |turn| {
        ev(Event::TurnStarted {
            turn: TurnId(turn),
            kind: TurnKind::Message,
            origin: Origin::User,
        })
    };
    for text in ["one", "two"] {
        type_text(&mut s, text, t0);
        update(&mut s, key(KeyCode::Enter), t0);
    }
    update(&mut s, start(1), t0);
    assert_eq!(s.input.queued().len(), 1, "two waits in the UI");
    assert!(
        ops(&update(&mut s, key(KeyCode::Esc), t0)).is_empty(),
        "on an empty input Esc drops the queued message first"
    );
    assert!(s.input.queued().is_empty());
    assert_eq!(
        ops(&update(&mut s, key(KeyCode::Esc), t0)),
        [Op::Abort { turn: TurnId(1) }],
        "then it aborts the running turn"
    );
    type_text(&mut s, "three", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    let fx = update(&mut s, end(1), t0);
    assert_eq!(
        ops(&fx),
        [Op::UserTurn {
            turn: TurnId(2),
            text: "three".into()
        }],
        "the queued message goes when the turn ends"
    );
    // The queued message starts: it runs, and Esc names it.
    let t1 = t0 + Duration::from_secs(1);
    update(&mut s, start(2), t1);
    assert_eq!(
        *s.activity.running(),
        Running::Streaming { since: t0 },
        "running since it was sent"
    );
    assert_eq!(
        ops(&update(&mut s, key(KeyCode::Esc), t1)),
        [Op::Abort { turn: TurnId(2) }]
    );
    update(&mut s, end(2), t1);
    assert!(
        ops(&update(&mut s, key(KeyCode::Esc), t1)).is_empty(),
        "nothing runs: no abort to go stale"
    );
}

#[test]
fn esc_aborts_only_what_runs() {
    let t0 = Instant::now();
    let mut s = state();
    assert!(
        ops(&update(&mut s, key(KeyCode::Esc), t0)).is_empty(),
        "idle: nothing to abort"
    );
    type_text(&mut s, "go", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(
        ops(&update(&mut s, key(KeyCode::Esc), t0)),
        [Op::Abort { turn: TurnId(1) }]
    );
    update(
        &mut s,
        ev(Event::TextDelta {
            turn: None,
            text: "partial".into(),
        }),
        t0,
    );
    update(
        &mut s,
        ev(Event::AssistantDone {
            turn: None,
            text: "partial".into(),
            interrupted: true,
        }),
        t0,
    );
    update(
        &mut s,
        ev(Event::TurnEnd {
            turn: TurnId(1),
            kind: TurnKind::Message,
            origin: Origin::User,
            reason: ExitReason::Interrupted,
        }),
        t0,
    );
    assert_eq!(*s.activity.running(), Running::Idle);
    assert_eq!(
        last_cell(&s),
        Cell::Assistant {
            markdown: "partial".into(),
            state: AssistantState::Interrupted,
        },
        "the partial text is kept, marked interrupted, with no extra notice"
    );
}

#[test]
fn esc_while_writing_a_handoff_cancels_it() {
    let t0 = Instant::now();
    let mut s = state();
    // The engine says which turn it works on: Esc names that one.
    update(
        &mut s,
        ev(Event::TurnStarted {
            turn: TurnId(7),
            kind: TurnKind::Handoff,
            origin: Origin::User,
        }),
        t0,
    );
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
    assert_eq!(*s.activity.running(), Running::WritingHandoff { since: t0 });
    assert_eq!(s.handoff.kind(), Some(HandoffKind::Manual));
    assert_eq!(s.status.gauge().mode, GaugeMode::Writing);
    let (label, _, hint) = s.spinner().expect("spinner shows");
    assert_eq!(
        (label.as_str(), hint.as_str()),
        ("writing handoff…", "esc to cancel")
    );
    // The writing turn's text goes to the document, not the chat.
    let before = s.chat.cells().len();
    update(
        &mut s,
        ev(Event::TextDelta {
            turn: None,
            text: "## Doing".into(),
        }),
        t0,
    );
    assert_eq!(s.chat.cells().len(), before);
    assert_eq!(
        ops(&update(&mut s, key(KeyCode::Esc), t0)),
        [Op::Abort { turn: TurnId(7) }]
    );
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Cancelled {
            handoff: HandoffId(1),
        })),
        t0,
    );
    assert_eq!(*s.activity.running(), Running::Idle);
    assert_eq!(s.status.gauge().mode, GaugeMode::Normal);
    assert_eq!(
        last_cell(&s),
        Cell::Notice {
            message: "Handoff cancelled".into()
        }
    );
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Failed {
            handoff: HandoffId(1),
            message: "no text".into(),
        })),
        t0,
    );
    assert_eq!(
        last_cell(&s),
        Cell::Error {
            message: "Handoff failed: no text".into()
        }
    );
}

#[test]
fn ctrl_c_clears_then_quits_within_one_second() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "draft", t0);
    let fx = update(&mut s, ctrl('c'), t0);
    assert!(!fx.contains(&Effect::Quit));
    assert!(s.input.is_empty());
    let fx = update(&mut s, ctrl('c'), t0 + Duration::from_millis(900));
    assert!(fx.contains(&Effect::Quit));

    let mut s = state();
    update(&mut s, ctrl('c'), t0);
    update(
        &mut s,
        Msg::Tick,
        t0 + Duration::from_secs(1) + Duration::from_millis(1),
    );
    assert_eq!(s.quit.ends_in(t0), None, "the window closed");
    let fx = update(&mut s, ctrl('c'), t0 + Duration::from_secs(2));
    assert!(!fx.contains(&Effect::Quit), "2 s apart does not quit");
    let again = t0 + Duration::from_secs(2);
    assert_eq!(s.quit.ends_in(again), Some(QUIT_WINDOW), "armed again");
}

#[test]
fn tool_cells_fill_in() {
    let t0 = Instant::now();
    let mut s = state();
    update(
        &mut s,
        ev(Event::TextDelta {
            turn: None,
            text: "Let me look.".into(),
        }),
        t0,
    );
    update(
        &mut s,
        ev(Event::ToolCall {
            turn: None,
            id: "t1".into(),
            name: "read_file".into(),
            input: json!({"path": "src/a.rs"}),
            summary: "read_file: src/a.rs".into(),
            changes_files: false,
        }),
        t0,
    );
    assert_eq!(
        *s.activity.running(),
        Running::Tool {
            name: "read_file".into(),
            since: t0
        }
    );
    assert!(
        matches!(
            s.chat.cells().get(0),
            Some(Cell::Assistant {
                state: AssistantState::Done,
                ..
            })
        ),
        "closed by the tool"
    );
    let t1 = t0 + Duration::from_secs(1);
    update(
        &mut s,
        ev(Event::ToolResult {
            turn: None,
            id: "t1".into(),
            name: "read_file".into(),
            output: "fn a() {}".into(),
            is_error: false,
            spilled: None,
            diff: None,
            exit: None,
            sandbox: None,
        }),
        t1,
    );
    assert_eq!(*s.activity.running(), Running::Streaming { since: t1 });
    assert!(
        matches!(last_cell(&s), Cell::Tool { status: ToolStatus::Succeeded(o), summary, .. } if o == "fn a() {}" && summary == "read_file: src/a.rs")
    );
    update(&mut s, ctrl('t'), t1);
    assert!(matches!(last_cell(&s), Cell::Tool { expanded: true, .. }));
}

#[test]
fn idle_means_no_frames() {
    let t0 = Instant::now();
    let mut s = state();
    assert_eq!(s.next_frame_in(t0), None);
    let moved = MouseEvent {
        kind: MouseEventKind::Moved,
        column: 3,
        row: 3,
        modifiers: KeyModifiers::NONE,
    };
    assert!(
        update(
            &mut s,
            Msg::Mouse {
                event: moved,
                pane: Some(Pane::Chat),
                cell: None,
            },
            t0
        )
        .is_empty(),
        "mouse motion draws nothing"
    );
    assert!(
        update(&mut s, Msg::Tick, t0).is_empty(),
        "an idle tick asks for no next frame"
    );
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Writing {
            handoff: HandoffId(1),
            manual: false,
            focus: None,
            background: false,
        })),
        t0,
    );
    let d = s.next_frame_in(t0 + Duration::from_millis(30)).unwrap();
    assert_eq!(d, Duration::from_millis(50), "the spinner's next frame");
}

#[test]
fn a_failed_send_gives_the_message_back() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "hello", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    let op = ops(&fx).remove(0);
    update(
        &mut s,
        Msg::SendFailed {
            op,
            reason: "the engine is busy; try again".into(),
        },
        t0,
    );
    assert_eq!(s.input.text(), "hello");
    assert_eq!(*s.activity.running(), Running::Idle);
    assert!(matches!(last_cell(&s), Cell::Error { message } if message.contains("busy")));
    update(&mut s, Msg::EngineClosed, t0);
    update(&mut s, key(KeyCode::Enter), t0);
    assert!(matches!(last_cell(&s), Cell::Error { message } if message.contains("not running")));
    assert_eq!(s.input.text(), "hello", "the message stays in the input");
}

#[test]
fn engine_written_messages_show_clipped() {
    let t0 = Instant::now();
    let mut s = state();
    let brief: Vec<String> = (1..=40).map(|i| format!("line {i}")).collect();
    update(
        &mut s,
        ev(Event::UserMessage {
            turn: Some(TurnId(1)),
            origin: Origin::Engine,
            text: brief.join("\n"),
        }),
        t0,
    );
    match last_cell(&s) {
        Cell::User { text } => {
            assert!(text.starts_with("line 1\nline 2\n"), "{text}");
            assert!(text.ends_with("line 8\n… (32 more lines)"), "{text}");
        }
        other => panic!("{other:?}"),
    }
    // A message replayed from an earlier run (`--continue`) has no turn: shown too.
    update(
        &mut s,
        ev(Event::UserMessage {
            turn: None,
            origin: Origin::User,
            text: "what I asked yesterday".into(),
        }),
        t0,
    );
    assert_eq!(
        last_cell(&s),
        Cell::User {
            text: "what I asked yesterday".into()
        }
    );
}

#[test]
fn the_echo_of_a_typed_message_is_not_drawn_again_even_when_the_engine_changed_it() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "my key is sk-ant-secret-0123456789", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    let cells = s.chat.cells().len();
    // The engine masked the key (or spilled a huge paste): the echo differs from what was typed.
    update(
        &mut s,
        ev(Event::UserMessage {
            turn: Some(TurnId(1)),
            origin: Origin::User,
            text: "my key is sk-a****".into(),
        }),
        t0,
    );
    assert_eq!(s.chat.cells().len(), cells, "no second cell");
    // Replayed history (no turn) is drawn.
    update(
        &mut s,
        ev(Event::UserMessage {
            turn: None,
            origin: Origin::User,
            text: "an earlier message".into(),
        }),
        t0,
    );
    assert_eq!(s.chat.cells().len(), cells + 1);
}

#[test]
fn a_key_typed_into_a_message_is_drawn_masked_once_sent_or_queued() {
    // The user's own provider key, registered at start as every key is (and masked wherever shown).
    let key_text = "sk-ant-tui-typed-0123456789abcdef";
    crate::engine::secrets::register(key_text);
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, &format!("my key is {key_text}"), t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    // The chat shows what the model gets: the key masked, never the key itself.
    assert_eq!(
        last_cell(&s),
        Cell::User {
            text: "my key is sk-a****".into()
        }
    );
    // The engine still gets the text as typed; it masks it itself (and the tests of the engine
    // check that).
    assert!(matches!(ops(&fx).first(), Some(Op::UserTurn { text, .. }) if text.contains(key_text)));
    // Typed while the turn runs: queued, drawn masked below the reply, then sent masked too.
    type_text(&mut s, &format!("again {key_text}"), t0);
    update(&mut s, key(KeyCode::Enter), t0);
    let theme = Theme::builtin("dark").expect("built-in theme");
    let mut t =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 30)).expect("terminal");
    t.draw(|f| super::view::view(f, &s, &mut super::view::ViewCache::new(), &theme, t0))
        .expect("draw");
    let screen = format!("{:?}", t.backend().buffer());
    assert!(screen.contains("again sk-a****"), "{screen}");
    assert!(!screen.contains(key_text), "{screen}");
    end_turn(&mut s, 1, t0);
    assert_eq!(
        last_cell(&s),
        Cell::User {
            text: "again sk-a****".into()
        }
    );
}
