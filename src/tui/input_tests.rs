//! Reducer tests of what the user types: history, big pastes, and the approval prompt's keys.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

use crate::engine::protocol::{AllowOffer, AllowRule, Approval, Event, Op, TurnId};

use super::msg::Msg;
use super::render::cell::Cell;
use super::state::Focus;
use super::test_support::{ctrl, end_turn, ev, key, last_cell, ops, state, type_text};
use super::update::update;

#[test]
fn history_up_down() {
    let t0 = Instant::now();
    let mut s = state();
    for m in ["one", "two"] {
        type_text(&mut s, m, t0);
        update(&mut s, key(KeyCode::Enter), t0);
    }
    type_text(&mut s, "dra", t0);
    update(&mut s, key(KeyCode::Up), t0);
    assert_eq!(s.input.text(), "two");
    update(&mut s, key(KeyCode::Up), t0);
    assert_eq!(s.input.text(), "one");
    update(&mut s, key(KeyCode::Down), t0);
    assert_eq!(s.input.text(), "two");
    update(&mut s, key(KeyCode::Down), t0);
    assert_eq!(s.input.text(), "dra", "the draft comes back");
    // On a multi-line input, Up on the second line moves the cursor, not the history.
    update(
        &mut s,
        Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT)),
        t0,
    );
    type_text(&mut s, "ft", t0);
    update(&mut s, key(KeyCode::Up), t0);
    assert_eq!(s.input.text(), "dra\nft");
}

#[test]
fn approval_prompt_takes_the_keys() {
    let t0 = Instant::now();
    let mut s = state();
    update(
        &mut s,
        ev(Event::ToolCall {
            turn: None,
            id: "t1".into(),
            name: "bash".into(),
            input: json!({"command": "make"}),
            summary: "bash: make".into(),
            changes_files: true,
        }),
        t0,
    );
    update(
        &mut s,
        ev(Event::ApprovalRequest {
            id: "t1".into(),
            name: "bash".into(),
            summary: "bash: make".into(),
            outside_workspace: false,
            command: Some("make".into()),
            diff: None,
            always: Some(AllowOffer {
                rules: vec![AllowRule::BashPrefix {
                    prefix: "make".into(),
                }],
                label: "always allow `make …` this session".into(),
            }),
            unsandboxed: None,
        }),
        t0,
    );
    assert_eq!(s.focus, Focus::Input, "the focus stays in the input");
    assert!(!s.approval_takes_keys(t0), "not within 400 ms");
    assert!(s.approval_takes_keys(t0 + Duration::from_millis(400)));
    let (label, _, hint) = s.spinner().expect("spinner");
    assert_eq!(
        (label.as_str(), hint.as_str()),
        ("bash waits for your answer…", "")
    );
    let t1 = t0 + Duration::from_millis(500);
    let fx = update(&mut s, key(KeyCode::Char('a')), t1);
    assert_eq!(
        ops(&fx),
        [Op::Approval {
            id: "t1".into(),
            decision: Approval::Always
        }]
    );
    assert_eq!(s.focus, Focus::Input);
    assert!(
        matches!(last_cell(&s), Cell::Approval { answer: Some(a), .. } if a == "always allow `make …` this session")
    );
    update(
        &mut s,
        ev(Event::ApprovalRequest {
            id: "t2".into(),
            name: "write_file".into(),
            summary: "write_file: a.rs".into(),
            outside_workspace: false,
            command: None,
            diff: None,
            always: None,
            unsandboxed: None,
        }),
        t1,
    );
    assert_eq!(
        ops(&update(
            &mut s,
            key(KeyCode::Esc),
            t1 + Duration::from_millis(400)
        )),
        [Op::Approval {
            id: "t2".into(),
            decision: Approval::Deny
        }]
    );
}

#[test]
fn a_10_mb_paste_is_one_chip_expanded_on_send() {
    let t0 = Instant::now();
    let mut s = state();
    let line = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n";
    let big = line.repeat(10 * 1024 * 1024 / line.len());
    let started = Instant::now();
    update(&mut s, Msg::Paste(big.clone()), t0);
    assert_eq!(s.input.lines().len(), 1, "the textarea holds the chip only");
    assert_eq!(s.input.text(), "[pasted 10.0 MB, 163,840 lines]");
    type_text(&mut s, " explain", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "a paste must not freeze the UI"
    );
    match ops(&fx).as_slice() {
        [Op::UserTurn { text, .. }] => {
            assert_eq!(text.len(), big.len() + " explain".len());
            assert!(text.starts_with(line) && text.ends_with("\n explain"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        last_cell(&s),
        Cell::User {
            text: "[pasted 10.0 MB, 163,840 lines] explain".into()
        }
    );
    // A small paste goes in as text.
    update(&mut s, Msg::Paste("a\r\nb".into()), t0);
    assert_eq!(s.input.text(), "a\nb");
}

#[test]
fn a_recalled_paste_sends_the_pasted_text_not_its_chip() {
    let t0 = Instant::now();
    let mut s = state();
    let big = "line of a log\n".repeat(3_000);
    update(&mut s, Msg::Paste(big.clone()), t0);
    type_text(&mut s, " why?", t0);
    let first = ops(&update(&mut s, key(KeyCode::Enter), t0));
    end_turn(&mut s, 1, t0);
    update(&mut s, key(KeyCode::Up), t0);
    assert_eq!(
        s.input.text(),
        "[pasted 41.0 KB, 3,000 lines] why?",
        "the chip comes back, not 40 KB in the textarea"
    );
    let again = ops(&update(&mut s, key(KeyCode::Enter), t0));
    let sent = |ops: &[Op]| match ops {
        [Op::UserTurn { text, .. }] => Some(text.clone()),
        _ => None,
    };
    assert_eq!(sent(&again), sent(&first));
    assert_eq!(
        again,
        [Op::UserTurn {
            turn: TurnId(2),
            text: format!("{big} why?")
        }]
    );
}

#[test]
fn typed_ahead_text_stays_in_the_input_and_never_answers_the_prompt() {
    let t0 = Instant::now();
    let mut s = state();
    let request = |id: &str| {
        ev(Event::ApprovalRequest {
            id: id.into(),
            name: "bash".into(),
            summary: "bash: make".into(),
            outside_workspace: false,
            command: None,
            diff: None,
            always: None,
            unsandboxed: None,
        })
    };
    // The user is typing "can you also" when the prompt appears: the `a` of "also" (which
    // used to answer "always") lands in the input with the rest.
    type_text(&mut s, "can you ", t0);
    update(&mut s, request("t1"), t0);
    update(&mut s, request("t2"), t0);
    let later = t0 + Duration::from_secs(2);
    for c in "also".chars() {
        let fx = update(&mut s, key(KeyCode::Char(c)), later);
        assert!(ops(&fx).is_empty(), "{c} answers nothing");
    }
    assert_eq!(s.input.text(), "can you also");
    assert!(!s.approval_takes_keys(later + Duration::from_secs(5)));
    // Keys right after the prompt appeared, on an empty input, go to the input too.
    let t1 = later + Duration::from_secs(1);
    update(&mut s, ctrl('c'), t1);
    assert!(s.input.is_empty());
    for k in [KeyCode::Char('y'), KeyCode::Char('a')] {
        let fx = update(&mut s, key(k), t1 + Duration::from_millis(100));
        assert!(
            ops(&fx).is_empty(),
            "{k:?} within 400 ms of clearing answers nothing"
        );
    }
    assert_eq!(s.input.text(), "ya", "they stay in the input");
    update(&mut s, ctrl('c'), t1 + Duration::from_millis(200));
    let t2 = t1 + Duration::from_millis(600);
    let fx = update(&mut s, key(KeyCode::Enter), t2);
    assert!(ops(&fx).is_empty(), "Enter never answers");
    assert_eq!(s.questions.len(), 2);
    let fx = update(&mut s, key(KeyCode::Char('y')), t2);
    assert_eq!(
        ops(&fx),
        [Op::Approval {
            id: "t1".into(),
            decision: Approval::Once
        }]
    );
    // The queued prompt takes its place: a double `y` does not answer it, nor does it type.
    let fx = update(
        &mut s,
        key(KeyCode::Char('y')),
        t2 + Duration::from_millis(50),
    );
    assert!(ops(&fx).is_empty());
    assert_eq!(s.input.text(), "y", "a key inside the guard is text");
    update(
        &mut s,
        key(KeyCode::Backspace),
        t2 + Duration::from_millis(60),
    );
    let fx = update(
        &mut s,
        key(KeyCode::Char('n')),
        t2 + Duration::from_millis(500),
    );
    assert_eq!(
        ops(&fx),
        [Op::Approval {
            id: "t2".into(),
            decision: Approval::Deny
        }]
    );
    assert!(s.questions.is_empty());
    assert!(s.input.is_empty());
}

#[test]
fn ctrl_u_deletes_to_the_start_of_the_line_and_ctrl_z_undoes() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "first line", t0);
    update(
        &mut s,
        Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT)),
        t0,
    );
    type_text(&mut s, "keep this", t0);
    for _ in 0.."this".len() {
        update(&mut s, key(KeyCode::Left), t0);
    }
    update(&mut s, ctrl('u'), t0);
    assert_eq!(
        s.input.text(),
        "first line\nthis",
        "only the line's head goes"
    );
    // Again at the start of the line: nothing more on it to delete, the line above stays.
    update(&mut s, ctrl('u'), t0);
    assert_eq!(s.input.text(), "first line\nthis");
    update(&mut s, ctrl('z'), t0);
    assert_eq!(s.input.text(), "first line\nkeep this", "Ctrl-Z undoes it");
}
