//! The `/rewind` picker: opened by the command and by Esc twice on an idle empty input, its rows
//! (time, generation, message, files), the choice of what to rewind, the op it sends, and the
//! message put back in the input box.

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use crate::engine::ledger::{RewindMode, RewindPoint};
use crate::engine::protocol::{Event, Op};

use super::super::rewind_state::RewindPicker;
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
        },
        RewindPoint {
            turn: 1,
            generation: 1,
            at: 1_796_120_000,
            text: "add a test for the empty input".into(),
            files: vec!["tests/empty.rs".into()],
            current: false,
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
            mode: RewindMode::Conversation
        }]
    );
    assert!(s.rewind.picker.is_none());
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
    assert_eq!(s.input_text(), "add a test for the empty input");
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
    assert_eq!(s.rewind.picker, Some(RewindPicker::Loading));
    update(&mut s, key(KeyCode::Esc), late + Duration::from_millis(400));
    assert!(s.rewind.picker.is_none());
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
