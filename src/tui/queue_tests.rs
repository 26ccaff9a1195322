//! Reducer tests of messages typed while a turn runs: queued in the UI, drawn below the live
//! reply, edited and dropped, sent one by one as turns end, never drawn inside a streaming reply,
//! and an interrupted reply drawn once.

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use crate::engine::protocol::{
    Event, ExitReason, HandoffId, HandoffPhase, Op, Origin, TurnId, TurnKind,
};

use super::activity::Running;
use super::render::cell::{AssistantState, Cell};
use super::render::tool_cell::ToolStatus;
use super::state::AppState;
use super::test_support::{ctrl, end_turn, ev, key, last_cell, ops, state, type_text};
use super::update::update;

fn send(s: &mut AppState, text: &str, now: Instant) -> Vec<Op> {
    type_text(s, text, now);
    ops(&update(s, key(KeyCode::Enter), now))
}

fn delta(text: &str) -> super::msg::Msg {
    ev(Event::TextDelta {
        turn: None,
        text: text.into(),
    })
}

fn cells(s: &AppState) -> Vec<Cell> {
    s.chat.cells().iter().cloned().collect()
}

#[test]
fn a_message_typed_during_a_stream_waits_below_the_reply_and_goes_when_the_turn_ends() {
    let t0 = Instant::now();
    let mut s = state();
    assert_eq!(
        send(&mut s, "first", t0),
        [Op::UserTurn {
            turn: TurnId(1),
            text: "first".into()
        }]
    );
    update(&mut s, delta("a long paragrap"), t0);
    assert!(send(&mut s, "second message", t0).is_empty(), "queued");
    assert_eq!(s.input.queued().len(), 1);
    // The reply goes on in the same cell: the queued message is not in the chat.
    update(&mut s, delta("h."), t0);
    assert_eq!(
        cells(&s),
        [
            Cell::User {
                text: "first".into()
            },
            Cell::streaming("a long paragraph.".into()),
        ]
    );
    update(
        &mut s,
        ev(Event::AssistantDone {
            turn: None,
            text: "a long paragraph.".into(),
            interrupted: false,
        }),
        t0,
    );
    let fx = end_turn(&mut s, 1, t0);
    assert_eq!(
        ops(&fx),
        [Op::UserTurn {
            turn: TurnId(2),
            text: "second message".into()
        }]
    );
    assert!(s.input.queued().is_empty());
    // On screen in the order the model reads them.
    assert_eq!(
        cells(&s),
        [
            Cell::User {
                text: "first".into()
            },
            Cell::Assistant {
                markdown: "a long paragraph.".into(),
                state: AssistantState::Done
            },
            Cell::User {
                text: "second message".into()
            },
        ]
    );
    assert!(matches!(s.activity.running(), Running::Streaming { .. }));
    assert_eq!(s.turns.in_flight(), [TurnId(2)]);
}

#[test]
fn queued_messages_go_one_per_turn_in_order() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, "one", t0);
    assert!(send(&mut s, "two", t0).is_empty());
    assert!(send(&mut s, "three", t0).is_empty());
    let sent = |fx: &[super::msg::Effect]| -> Vec<String> {
        ops(fx)
            .into_iter()
            .filter_map(|op| match op {
                Op::UserTurn { text, .. } => Some(text),
                _ => None,
            })
            .collect()
    };
    assert_eq!(sent(&end_turn(&mut s, 1, t0)), ["two"]);
    assert_eq!(sent(&end_turn(&mut s, 2, t0)), ["three"]);
    assert!(sent(&end_turn(&mut s, 3, t0)).is_empty());
    assert!(!s.turns.busy());
    // A stale end (a turn already over) sends nothing twice.
    assert!(sent(&end_turn(&mut s, 2, t0)).is_empty());
}

#[test]
fn up_recalls_the_newest_queued_message_and_esc_or_ctrl_c_drop_it() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, "run the tests", t0);
    send(&mut s, "then fix tyop", t0);
    send(&mut s, "and commit", t0);
    // Up on an empty input: the newest queued message comes back for editing.
    update(&mut s, key(KeyCode::Up), t0);
    assert_eq!(s.input.text(), "and commit");
    assert_eq!(s.input.queued().len(), 1);
    // Edited and queued again, at the end.
    update(&mut s, key(KeyCode::Backspace), t0);
    type_text(&mut s, "t and push", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    let raws: Vec<&str> = s.input.queued().iter().map(|q| q.raw.as_str()).collect();
    assert_eq!(raws, ["then fix tyop", "and commit and push"]);
    // Esc on an empty input drops the newest, without aborting the turn.
    assert!(ops(&update(&mut s, key(KeyCode::Esc), t0)).is_empty());
    assert_eq!(s.input.queued().len(), 1);
    // Ctrl-C on an empty input drops the next, without arming the quit.
    assert!(ops(&update(&mut s, ctrl('c'), t0)).is_empty());
    assert!(s.input.queued().is_empty());
    assert!(!s.quit_armed(t0));
    // With nothing queued Up browses the history again.
    update(&mut s, key(KeyCode::Up), t0);
    assert_eq!(s.input.text(), "and commit and push");
}

#[test]
fn an_interrupted_turn_puts_the_queued_messages_back_into_the_input() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, "refactor", t0);
    send(&mut s, "also rename it", t0);
    send(&mut s, "and the docs", t0);
    type_text(&mut s, "half typed", t0);
    let fx = update(
        &mut s,
        ev(Event::TurnEnd {
            turn: TurnId(1),
            kind: TurnKind::Message,
            origin: Origin::User,
            reason: ExitReason::Interrupted,
        }),
        t0,
    );
    assert!(ops(&fx).is_empty(), "nothing is sent after an interrupt");
    assert!(s.input.queued().is_empty());
    assert_eq!(s.input.text(), "also rename it\nand the docs\nhalf typed");
    assert!(
        s.chat.cells().iter().any(
            |c| matches!(c, Cell::Notice { message } if message.contains("back in the input"))
        )
    );
}

#[test]
fn a_handoff_turn_ending_sends_the_queue_too() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "/handoff", t0);
    let fx = ops(&update(&mut s, key(KeyCode::Enter), t0));
    assert_eq!(
        fx,
        [Op::Handoff {
            turn: TurnId(1),
            focus: None
        }]
    );
    assert!(s.turns.busy(), "a /handoff turn runs");
    assert!(send(&mut s, "after the handoff", t0).is_empty());
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Cancelled {
            handoff: HandoffId(1),
        })),
        t0,
    );
    let fx = update(
        &mut s,
        ev(Event::TurnEnd {
            turn: TurnId(1),
            kind: TurnKind::Handoff,
            origin: Origin::User,
            reason: ExitReason::Unchanged,
        }),
        t0,
    );
    assert_eq!(
        ops(&fx),
        [Op::UserTurn {
            turn: TurnId(2),
            text: "after the handoff".into()
        }]
    );
}

#[test]
fn esc_during_a_stream_draws_the_partial_reply_once() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, "explain", t0);
    update(&mut s, delta("The first half of"), t0);
    // Typing during the stream used to close the streaming cell; the interrupted reply then
    // came back as a second cell.
    send(&mut s, "shorter please", t0);
    update(&mut s, ctrl('c'), t0); // drops the queued message
    let fx = update(&mut s, key(KeyCode::Esc), t0);
    assert_eq!(ops(&fx), [Op::Abort { turn: TurnId(1) }]);
    // A notice lands between the stream and its end.
    update(
        &mut s,
        ev(Event::Notice {
            message: "n".into(),
        }),
        t0,
    );
    update(
        &mut s,
        ev(Event::AssistantDone {
            turn: None,
            text: "The first half of".into(),
            interrupted: true,
        }),
        t0,
    );
    end_turn(&mut s, 1, t0);
    let replies: Vec<Cell> = cells(&s)
        .into_iter()
        .filter(|c| matches!(c, Cell::Assistant { .. }))
        .collect();
    assert_eq!(
        replies,
        [Cell::Assistant {
            markdown: "The first half of".into(),
            state: AssistantState::Interrupted
        }],
        "one cell, marked interrupted"
    );
}

#[test]
fn ctrl_c_interrupts_a_turn_and_only_an_idle_empty_input_quits() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, "long job", t0);
    let fx = update(&mut s, ctrl('c'), t0);
    assert_eq!(ops(&fx), [Op::Abort { turn: TurnId(1) }]);
    assert!(!s.quit_armed(t0), "interrupting does not arm the quit");
    let fx = update(&mut s, ctrl('c'), t0 + Duration::from_millis(100));
    assert!(
        !fx.contains(&super::msg::Effect::Quit),
        "a second Ctrl-C while the turn still runs interrupts again"
    );
    end_turn(&mut s, 1, t0);
    let t1 = t0 + Duration::from_secs(2);
    type_text(&mut s, "draft", t1);
    update(&mut s, ctrl('c'), t1);
    assert!(s.input.is_empty(), "clears the input");
    let fx = update(&mut s, ctrl('c'), t1 + Duration::from_millis(500));
    assert!(fx.contains(&super::msg::Effect::Quit));
}

/// The engine starts turn `n` (a message).
fn started(s: &mut AppState, n: u64, now: Instant) {
    update(
        s,
        ev(Event::TurnStarted {
            turn: TurnId(n),
            kind: TurnKind::Message,
            origin: Origin::User,
        }),
        now,
    );
}

#[test]
fn late_events_of_an_aborted_turn_are_not_drawn_into_the_next_reply() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, "first", t0);
    started(&mut s, 1, t0);
    let of_first = Some(TurnId(1));
    update(
        &mut s,
        ev(Event::TextDelta {
            turn: of_first,
            text: "Half".into(),
        }),
        t0,
    );
    update(
        &mut s,
        ev(Event::ToolCall {
            turn: of_first,
            id: "t1".into(),
            name: "bash".into(),
            input: serde_json::json!({"command": "sleep 9"}),
            summary: "bash: sleep 9".into(),
            changes_files: true,
        }),
        t0,
    );
    assert_eq!(
        ops(&update(&mut s, key(KeyCode::Esc), t0)),
        [Op::Abort { turn: TurnId(1) }]
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
    assert_eq!(
        send(&mut s, "second", t0),
        [Op::UserTurn {
            turn: TurnId(2),
            text: "second".into()
        }]
    );
    started(&mut s, 2, t0);
    let of_second = Some(TurnId(2));
    update(
        &mut s,
        ev(Event::TextDelta {
            turn: of_second,
            text: "Fresh ".into(),
        }),
        t0,
    );
    let before = cells(&s);
    let files_stale = s.mention.stale();
    // What turn 1 still had in flight arrives now.
    update(
        &mut s,
        ev(Event::TextDelta {
            turn: of_first,
            text: "stale".into(),
        }),
        t0,
    );
    update(
        &mut s,
        ev(Event::ToolResult {
            turn: of_first,
            id: "t1".into(),
            name: "bash".into(),
            output: "late output".into(),
            is_error: false,
            spilled: None,
            diff: None,
            exit: None,
            sandbox: None,
        }),
        t0,
    );
    assert_eq!(cells(&s), before, "nothing of turn 1 is drawn");
    assert_eq!(s.mention.stale(), files_stale);
    update(
        &mut s,
        ev(Event::TextDelta {
            turn: of_second,
            text: "reply".into(),
        }),
        t0,
    );
    assert_eq!(last_cell(&s), Cell::streaming("Fresh reply".into()));
}

#[test]
fn a_tool_cell_still_running_when_its_turn_ends_is_closed_as_interrupted() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, "first", t0);
    started(&mut s, 1, t0);
    update(
        &mut s,
        ev(Event::ToolCall {
            turn: Some(TurnId(1)),
            id: "t1".into(),
            name: "bash".into(),
            input: serde_json::json!({"command": "sleep 9"}),
            summary: "bash: sleep 9".into(),
            changes_files: false,
        }),
        t0,
    );
    update(&mut s, key(KeyCode::Esc), t0);
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
    let tool = s
        .chat
        .cells()
        .iter()
        .find(|c| matches!(c, Cell::Tool { id, .. } if id == "t1"))
        .cloned();
    assert!(
        matches!(
            tool,
            Some(Cell::Tool { status: ToolStatus::Failed(ref o), .. }) if o.starts_with("interrupted")
        ),
        "{tool:?}"
    );
    assert!(!s.chat.tool_runs(), "no timer counts for it");
}
