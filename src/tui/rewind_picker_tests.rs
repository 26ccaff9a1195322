//! The `/rewind` picker: opened by the command and by Esc twice on an idle empty input, its rows
//! (time, generation, message, files), the choice of what to rewind, the op it sends, and the
//! message put back in the input box.

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use crate::engine::checkpoint::{OnConflict, UndoAction};
use crate::engine::ledger::{RewindMode, RewindPoint};
use crate::engine::protocol::{Event, Op};

use super::super::rewind_state::{DOUBLE_ESC, RewindPicker};
use super::super::state::AppState;
use super::super::subagent_tests::{draw, started};
use super::super::test_support::{key, ops, state, type_text};
use super::super::update::update;
use super::*;

fn points() -> Vec<RewindPoint> {
    vec![
        RewindPoint {
            turn: 3,
            generation: 2,
            at: 1_796_124_120, // 2026-12-01 11:22 UTC
            text: "now rename the parser module\nand fix the imports".into(),
            files: vec![
                "src/parse.rs".into(),
                "src/lib.rs".into(),
                "src/main.rs".into(),
            ],
            current: true,
            undone: false,
            sent_as: None,
        },
        RewindPoint {
            turn: 1,
            generation: 1,
            at: 1_796_120_000,
            text: "add a test for the empty input".into(),
            files: vec!["tests/empty.rs".into()],
            current: false,
            undone: true,
            sent_as: None,
        },
    ]
}

#[test]
fn rewind_opens_lists_messages_and_sends_the_choice() {
    let t0 = Instant::now();
    let mut s = state();
    started(&mut s, t0);
    type_text(&mut s, "/rewind", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(ops(&fx), [Op::RewindPoints]);
    update(
        &mut s,
        super::super::test_support::ev(Event::RewindPoints { points: points() }),
        t0,
    );
    insta::assert_snapshot!("rewind_messages", draw(&s, 90, 12, t0).backend());
    update(&mut s, key(KeyCode::Down), t0);
    update(&mut s, key(KeyCode::Enter), t0);
    insta::assert_snapshot!("rewind_modes", draw(&s, 90, 12, t0).backend());
    update(&mut s, key(KeyCode::Down), t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(
        ops(&fx),
        [Op::Rewind {
            turn: 1,
            mode: RewindMode::Conversation,
            on_conflict: OnConflict::Stop,
        }]
    );
    assert!(!s.rewind.is_open());
    // The engine's answer puts the message back in the input box.
    update(
        &mut s,
        super::super::test_support::ev(Event::Rewound {
            turn: 1,
            mode: RewindMode::Conversation,
            files: vec![],
            kept: vec![],
            text: Some("add a test for the empty input".into()),
            generation: Some(3),
        }),
        t0,
    );
    assert_eq!(s.input.text(), "add a test for the empty input");
}

#[test]
fn esc_twice_on_an_idle_empty_input_opens_the_picker_and_esc_closes_it() {
    let t0 = Instant::now();
    let mut s = state();
    started(&mut s, t0);
    let fx = update(&mut s, key(KeyCode::Esc), t0);
    assert!(ops(&fx).is_empty());
    // Too late: this one counts as a first press again.
    let late = t0 + DOUBLE_ESC + Duration::from_millis(100);
    assert!(ops(&update(&mut s, key(KeyCode::Esc), late)).is_empty());
    let fx = update(&mut s, key(KeyCode::Esc), late + Duration::from_millis(300));
    assert_eq!(ops(&fx), [Op::RewindPoints]);
    assert_eq!(s.rewind.picker(), Some(&RewindPicker::Loading));
    update(&mut s, key(KeyCode::Esc), late + Duration::from_millis(400));
    assert!(!s.rewind.is_open());
    // With text in the input, Esc never opens it.
    type_text(&mut s, "draft", late);
    update(&mut s, key(KeyCode::Esc), late + Duration::from_millis(500));
    let fx = update(&mut s, key(KeyCode::Esc), late + Duration::from_millis(600));
    assert!(ops(&fx).is_empty());
}

#[test]
fn rows_fit_the_width_and_name_the_files() {
    let p = &points()[0];
    assert_eq!(
        row(p, 100),
        "12-01 11:22  gen 2  now rename the parser module  · src/parse.rs, src/lib.rs and 1 more"
    );
    for w in [10, 30, 60] {
        assert!(str_width(&row(p, w)) <= w);
    }
}

#[test]
fn a_message_whose_turn_was_undone_is_marked() {
    assert_eq!(
        row(&points()[1], 100),
        "12-01 10:13  gen 1  (undone) add a test for the empty input  · tests/empty.rs"
    );
    assert!(!row(&points()[0], 100).contains("(undone)"));
}

fn conflict(action: UndoAction) -> Event {
    use crate::engine::checkpoint::{RelPath, RestoreReport, TurnRef};
    Event::Restore(RestoreReport::Conflict {
        action,
        of: TurnRef {
            generation: 1,
            turn: 4,
            at: 1_796_124_120,
        },
        files: vec![RelPath::parse("src/a.rs").unwrap()],
    })
}

#[test]
fn files_changed_since_are_asked_about_in_a_prompt_that_ignores_keys_typed_ahead() {
    let t0 = Instant::now();
    let mut s = state();
    started(&mut s, t0);
    update(
        &mut s,
        super::super::test_support::ev(conflict(UndoAction::Undo)),
        t0,
    );
    // Typed ahead: within the guard time a key answers nothing (it goes to the input box, and
    // the guard starts again when the input is cleared).
    assert!(ops(&update(&mut s, key(KeyCode::Char('y')), t0)).is_empty());
    assert_eq!(s.questions.len(), 1);
    let cleared = t0 + Duration::from_millis(10);
    update(&mut s, key(KeyCode::Backspace), cleared);
    assert!(
        ops(&update(
            &mut s,
            key(KeyCode::Char('y')),
            cleared + Duration::from_millis(100)
        ))
        .is_empty()
    );
    update(
        &mut s,
        key(KeyCode::Backspace),
        cleared + Duration::from_millis(110),
    );
    let later = cleared + Duration::from_millis(600);
    insta::assert_snapshot!("undo_conflict_prompt", draw(&s, 90, 16, later).backend());
    // "always" is no answer here.
    assert!(ops(&update(&mut s, key(KeyCode::Char('a')), later)).is_empty());
    let fx = update(&mut s, key(KeyCode::Char('y')), later);
    assert_eq!(
        ops(&fx),
        [Op::Restore {
            action: UndoAction::Undo,
            on_conflict: OnConflict::Overwrite
        }]
    );
    assert!(s.questions.is_empty());

    // n skips them; Esc cancels and sends nothing.
    update(
        &mut s,
        super::super::test_support::ev(conflict(UndoAction::Redo)),
        later,
    );
    let t1 = later + Duration::from_millis(450);
    let fx = update(&mut s, key(KeyCode::Char('n')), t1);
    assert_eq!(
        ops(&fx),
        [Op::Restore {
            action: UndoAction::Redo,
            on_conflict: OnConflict::KeepUsers
        }]
    );
    update(
        &mut s,
        super::super::test_support::ev(conflict(UndoAction::Undo)),
        t1,
    );
    let t2 = t1 + Duration::from_millis(450);
    assert!(ops(&update(&mut s, key(KeyCode::Esc), t2)).is_empty());
    assert!(s.questions.is_empty());
    assert!(matches!(
        super::super::test_support::last_cell(&s),
        super::super::render::cell::Cell::Notice { message } if message.contains("cancelled")
    ));
}

#[test]
fn a_rewind_that_would_write_over_changed_files_asks_and_sends_the_answer() {
    let t0 = Instant::now();
    let mut s = state();
    started(&mut s, t0);
    update(
        &mut s,
        super::super::test_support::ev(Event::RewindConflict {
            turn: 2,
            mode: RewindMode::Both,
            files: (0..25).map(|n| format!("f{n}.md")).collect(),
        }),
        t0,
    );
    // A long list is named in part and counted.
    let super::super::render::cell::Cell::Notice { message } =
        super::super::test_support::last_cell(&s)
    else {
        panic!("no notice")
    };
    assert!(message.ends_with("f18.md, f19.md and 5 more"), "{message}");
    let later = t0 + Duration::from_millis(450);
    let fx = update(&mut s, key(KeyCode::Char('n')), later);
    assert_eq!(
        ops(&fx),
        [Op::Rewind {
            turn: 2,
            mode: RewindMode::Both,
            on_conflict: OnConflict::KeepUsers,
        }]
    );
}

/// The user sends `text` as turn `n` and the engine answers `reply`.
fn exchange(s: &mut AppState, n: u64, text: &str, reply: &str, t0: Instant) {
    use crate::engine::protocol::{Origin, TurnId, TurnKind};
    type_text(s, text, t0);
    update(s, key(KeyCode::Enter), t0);
    let turn = TurnId(n);
    for e in [
        Event::TurnStarted {
            turn,
            kind: TurnKind::Message,
            origin: Origin::User,
        },
        Event::UserMessage {
            turn: Some(turn),
            origin: Origin::User,
            text: text.into(),
        },
        Event::AssistantDone {
            turn: Some(turn),
            text: reply.into(),
            interrupted: false,
        },
    ] {
        update(s, super::super::test_support::ev(e), t0);
    }
    super::super::test_support::end_turn(s, n, t0);
}

/// The picker lists `point` alone; Enter twice rewinds code and conversation to before it.
fn rewind_to(s: &mut AppState, point: RewindPoint, t0: Instant) -> Vec<Op> {
    type_text(s, "/rewind", t0);
    update(s, key(KeyCode::Enter), t0);
    let points = vec![point];
    update(
        s,
        super::super::test_support::ev(Event::RewindPoints { points }),
        t0,
    );
    update(s, key(KeyCode::Enter), t0);
    ops(&update(s, key(KeyCode::Enter), t0))
}

#[test]
fn a_rewind_removes_the_turns_it_abandons_from_the_chat() {
    let t0 = Instant::now();
    let mut s = state();
    started(&mut s, t0);
    exchange(&mut s, 1, "write file one", "One written.", t0);
    exchange(&mut s, 2, "write file two", "Two written.", t0);
    exchange(&mut s, 3, "and a third", "Third done.", t0);
    let point = RewindPoint {
        turn: 2,
        generation: 1,
        at: 1_796_124_120,
        text: "write file two".into(),
        files: vec!["two.txt".into()],
        current: true,
        undone: false,
        sent_as: Some(2),
    };
    let sent = rewind_to(&mut s, point.clone(), t0);
    assert_eq!(
        sent,
        [Op::Rewind {
            turn: 2,
            mode: RewindMode::Both,
            on_conflict: OnConflict::Stop,
        }]
    );
    update(
        &mut s,
        super::super::test_support::ev(Event::Rewound {
            turn: 2,
            mode: RewindMode::Both,
            files: vec!["two.txt".into()],
            kept: vec![],
            text: Some("write file two".into()),
            generation: None,
        }),
        t0,
    );
    insta::assert_snapshot!("rewound_chat", draw(&s, 70, 14, t0).backend());
    let screen = format!("{:?}", draw(&s, 70, 14, t0).backend());
    assert!(screen.contains("One written."), "{screen}");
    assert!(!screen.contains("Two written."), "{screen}");
    assert!(!screen.contains("Third done."), "{screen}");
    assert!(screen.contains("Rewound to before turn 2"), "{screen}");
    assert_eq!(
        s.input.text(),
        "write file two",
        "the message is back to edit"
    );

    // Code only: the conversation goes on, the chat keeps its turns.
    let mut s = state();
    started(&mut s, t0);
    exchange(&mut s, 1, "write file one", "One written.", t0);
    exchange(&mut s, 2, "write file two", "Two written.", t0);
    let cells = s.chat.cells().len();
    rewind_to(&mut s, point, t0);
    update(
        &mut s,
        super::super::test_support::ev(Event::Rewound {
            turn: 2,
            mode: RewindMode::Code,
            files: vec!["two.txt".into()],
            kept: vec![],
            text: None,
            generation: None,
        }),
        t0,
    );
    assert_eq!(s.chat.cells().len(), cells + 1, "only the notice is added");
}

#[test]
fn a_message_sent_by_an_earlier_process_takes_every_turn_sent_here() {
    let t0 = Instant::now();
    let mut s = state();
    started(&mut s, t0);
    exchange(&mut s, 1, "continue", "Continued.", t0);
    let before = s.chat.cells().len() - 2;
    let point = RewindPoint {
        turn: 1,
        generation: 1,
        at: 1_796_120_000,
        text: "from yesterday".into(),
        files: vec![],
        current: true,
        undone: false,
        sent_as: None,
    };
    rewind_to(&mut s, point, t0);
    update(
        &mut s,
        super::super::test_support::ev(Event::Rewound {
            turn: 1,
            mode: RewindMode::Conversation,
            files: vec![],
            kept: vec![],
            text: Some("from yesterday".into()),
            generation: None,
        }),
        t0,
    );
    assert_eq!(
        s.chat.cells().len(),
        before + 1,
        "the turn went, the notice came"
    );
    assert!(
        !s.chat
            .cells()
            .iter()
            .any(|c| format!("{c:?}").contains("Continued."))
    );
}
