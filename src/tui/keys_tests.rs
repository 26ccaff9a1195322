//! Reducer tests of the daily keys: Home/End in the chat, picking and expanding any tool cell,
//! Ctrl-R through the history, `/copy`, the end-of-turn bell, the history file, and the side
//! editor opening beside someone who is typing.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use serde_json::json;

use crate::engine::protocol::{Event, Origin, TurnId, TurnKind};

use super::msg::{ChatScroll, Effect, Msg, Pane};
use super::render::cell::Cell;
use super::render::tool_cell::ToolStatus;
use super::state::{AppState, Focus};
use super::test_support::{ctrl, end_turn, ev, frozen, key, ops, state, type_text};
use super::update::update;

fn alt(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::ALT))
}

fn tool(s: &mut AppState, id: &str, now: Instant) {
    update(
        s,
        ev(Event::ToolCall {
            turn: None,
            id: id.into(),
            name: "bash".into(),
            input: json!({"command": "ls"}),
            summary: format!("bash: ls {id}"),
            changes_files: true,
        }),
        now,
    );
    update(
        s,
        ev(Event::ToolResult {
            turn: None,
            id: id.into(),
            name: "bash".into(),
            output: "1\n2\n3\n4\n5\n6\n7\n8".into(),
            is_error: false,
            spilled: None,
            diff: None,
            exit: None,
            sandbox: None,
        }),
        now,
    );
}

fn expanded(s: &AppState, idx: usize) -> bool {
    matches!(
        s.chat.cells().get(idx),
        Some(Cell::Tool { expanded: true, .. })
    )
}

#[test]
fn home_and_end_jump_in_the_chat_while_the_input_is_empty() {
    let t0 = Instant::now();
    let mut s = state();
    let fx = update(&mut s, key(KeyCode::Home), t0);
    assert!(fx.contains(&Effect::ScrollChat(ChatScroll::Top)));
    let fx = update(&mut s, key(KeyCode::End), t0);
    assert!(fx.contains(&Effect::ScrollChat(ChatScroll::Bottom)));
    // With text in the input they move its cursor.
    type_text(&mut s, "abc", t0);
    let fx = update(&mut s, key(KeyCode::Home), t0);
    assert!(!fx.contains(&Effect::ScrollChat(ChatScroll::Top)));
    type_text(&mut s, ">", t0);
    assert_eq!(s.input.text(), ">abc");
    // Ctrl-Home / Ctrl-End always scroll.
    let ctrl_home = Msg::Key(KeyEvent::new(KeyCode::Home, KeyModifiers::CONTROL));
    assert!(update(&mut s, ctrl_home, t0).contains(&Effect::ScrollChat(ChatScroll::Top)));
}

#[test]
fn any_tool_cell_can_be_selected_and_expanded() {
    let t0 = Instant::now();
    let mut s = state();
    tool(&mut s, "a", t0);
    tool(&mut s, "b", t0);
    tool(&mut s, "c", t0);
    let (a, b, c) = (0, 1, 2);
    // Ctrl-T with nothing selected: the newest.
    update(&mut s, ctrl('t'), t0);
    assert!(expanded(&s, c));
    // Alt-Up twice: the middle one, brought into view.
    let fx = update(&mut s, alt(KeyCode::Up), t0);
    assert!(fx.contains(&Effect::ScrollChat(ChatScroll::Reveal(c))));
    let fx = update(&mut s, alt(KeyCode::Up), t0);
    assert!(fx.contains(&Effect::ScrollChat(ChatScroll::Reveal(b))));
    assert_eq!(s.chat.selected_tool(), Some(b));
    update(&mut s, ctrl('t'), t0);
    assert!(expanded(&s, b));
    // Up past the oldest stays on it; down past the newest clears the selection.
    update(&mut s, alt(KeyCode::Up), t0);
    update(&mut s, alt(KeyCode::Up), t0);
    assert_eq!(s.chat.selected_tool(), Some(a));
    for _ in 0..3 {
        update(&mut s, alt(KeyCode::Down), t0);
    }
    assert_eq!(s.chat.selected_tool(), None);
    // A click on a tool cell selects and toggles it; a click elsewhere changes nothing.
    let click = |cell| Msg::Mouse {
        event: MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: 2,
            row: 2,
            modifiers: KeyModifiers::NONE,
        },
        pane: Some(Pane::Chat),
        cell,
    };
    update(&mut s, click(Some(a)), t0);
    assert_eq!(s.chat.selected_tool(), Some(a));
    assert!(expanded(&s, a));
    update(&mut s, click(Some(a)), t0);
    assert!(!expanded(&s, a));
    assert!(update(&mut s, click(None), t0).is_empty());
    // Sending a message clears the selection.
    type_text(&mut s, "next", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(s.chat.selected_tool(), None);
}

#[test]
fn ctrl_r_searches_the_history_backwards() {
    let t0 = Instant::now();
    let mut s = AppState::new(super::state::StateParams {
        history: vec![
            "cargo test --lib".into(),
            "explain the parser".into(),
            "cargo clippy".into(),
        ],
        ..super::test_support::params(Some(15))
    });
    type_text(&mut s, "draft", t0);
    update(&mut s, ctrl('r'), t0);
    assert_eq!(s.input.search().and_then(|q| q.hit()), Some(2));
    type_text(&mut s, "cargo", t0);
    assert_eq!(s.input.search().and_then(|q| q.hit()), Some(2));
    update(&mut s, ctrl('r'), t0);
    assert_eq!(s.input.search().and_then(|q| q.hit()), Some(0), "older");
    update(&mut s, ctrl('r'), t0);
    assert_eq!(s.input.search().and_then(|q| q.hit()), Some(0), "stays");
    // Esc leaves the input as it was.
    update(&mut s, key(KeyCode::Esc), t0);
    assert!(s.input.search().is_none());
    assert_eq!(s.input.text(), "draft");
    // Enter puts the match into the input, without sending it.
    update(&mut s, ctrl('r'), t0);
    type_text(&mut s, "PARS", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert!(ops(&fx).is_empty());
    assert_eq!(s.input.text(), "explain the parser");
    // No match: Enter changes nothing.
    update(&mut s, ctrl('r'), t0);
    type_text(&mut s, "zzz", t0);
    assert_eq!(s.input.search().and_then(|q| q.hit()), None);
    update(&mut s, key(KeyCode::Backspace), t0);
    update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(s.input.text(), "explain the parser");
}

#[test]
fn sent_messages_go_to_the_history_file_and_copy_takes_the_last_reply() {
    let t0 = Instant::now();
    let mut s = AppState::new(super::state::StateParams {
        settings: super::state::Settings {
            review: None,
            editor_cmd: None,
            notify: true,
            history_file: Some(PathBuf::from("/d/history/x.jsonl")),
            extensions: Default::default(),
            config_report: String::new(),
            mouse_capture: false,
        },
        ..super::test_support::params(None)
    });
    type_text(&mut s, "remember me", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert!(fx.contains(&Effect::AppendHistory("remember me".into())));
    let big = "x".repeat(super::commands::HISTORY_ENTRY_MAX + 1);
    update(&mut s, Msg::Paste(big), t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::AppendHistory(_))),
        "a huge paste stays out of the file"
    );
    // /copy: nothing yet, then the newest reply.
    end_turn(&mut s, 1, t0);
    end_turn(&mut s, 2, t0);
    type_text(&mut s, "/copy", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert!(!fx.iter().any(|e| matches!(e, Effect::CopyToClipboard(_))));
    for text in ["old reply", "**new** reply"] {
        update(
            &mut s,
            ev(Event::AssistantDone {
                turn: None,
                text: text.into(),
                interrupted: false,
            }),
            t0,
        );
    }
    type_text(&mut s, "/copy", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert!(fx.contains(&Effect::CopyToClipboard("**new** reply".into())));
}

#[test]
fn a_turn_longer_than_ten_seconds_rings_when_it_ends() {
    let t0 = Instant::now();
    let mut s = state();
    let start = |s: &mut AppState, n, at| {
        update(
            s,
            ev(Event::TurnStarted {
                turn: TurnId(n),
                kind: TurnKind::Message,
                origin: Origin::User,
            }),
            at,
        )
    };
    type_text(&mut s, "quick", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    start(&mut s, 1, t0);
    let fx = end_turn(&mut s, 1, t0 + Duration::from_secs(9));
    assert!(!fx.iter().any(|e| matches!(e, Effect::Notify(_))));
    type_text(&mut s, "slow", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    start(&mut s, 2, t0);
    let fx = end_turn(&mut s, 2, t0 + Duration::from_secs(12));
    assert!(
        fx.contains(&Effect::Notify(
            "flower-tui: turn completed after 12s".into()
        )),
        "{fx:?}"
    );
    // Off in the config: silent.
    s.settings.notify = false;
    type_text(&mut s, "slow again", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    start(&mut s, 3, t0);
    let fx = end_turn(&mut s, 3, t0 + Duration::from_secs(30));
    assert!(!fx.iter().any(|e| matches!(e, Effect::Notify(_))));
}

#[test]
fn an_approval_waiting_rings_once_for_those_that_come_together() {
    let t0 = Instant::now();
    let mut s = state();
    let ask = |s: &mut AppState, id: &str| {
        update(
            s,
            ev(Event::ApprovalRequest {
                id: id.into(),
                name: "bash".into(),
                summary: "bash: make".into(),
                outside_workspace: false,
                command: Some("make".into()),
                diff: None,
                always: None,
                unsandboxed: None,
            }),
            t0,
        )
    };
    let notified = |fx: &[Effect]| fx.iter().filter(|e| matches!(e, Effect::Notify(_))).count();
    let fx = ask(&mut s, "c1");
    assert!(
        fx.contains(&Effect::Notify(
            "flower-tui: allow bash? (waiting for your answer)".into()
        )),
        "{fx:?}"
    );
    // A second call asked while the first still waits: the user was told already.
    assert_eq!(notified(&ask(&mut s, "c2")), 0);
    // Off in the config: silent.
    let mut s = state();
    s.settings.notify = false;
    assert_eq!(notified(&ask(&mut s, "c3")), 0);
}

#[test]
fn the_side_editor_opens_without_the_focus_while_the_user_types() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "and then", t0);
    update(&mut s, frozen("/n/h.md"), t0 + Duration::from_secs(5));
    assert_eq!(s.focus, Focus::Input, "the keys stay in the input");
    let ed = s.editor.get().expect("the editor opened");
    assert!(ed.note().is_some_and(|n| n.contains("Ctrl-O")));
    let t1 = t0 + Duration::from_secs(6);
    type_text(&mut s, " also this", t1);
    assert_eq!(s.input.text(), "and then also this");
    let ed = s.editor.get().expect("open");
    assert!(!ed.is_dirty(), "nothing typed elsewhere lands in the file");
    assert!(!ed.is_paused(), "the countdown runs");
    assert_eq!(ed.countdown(t1), Some(14));
    // Esc in the input does not touch the review.
    update(&mut s, key(KeyCode::Esc), t1);
    assert!(s.editor.get().is_some_and(|e| e.in_review()));
    // Ctrl-O enters the editor.
    update(&mut s, ctrl('o'), t1);
    assert_eq!(s.focus, Focus::Editor);
    // Someone not typing gets the editor focused, as before.
    let mut idle = state();
    update(&mut idle, frozen("/n/h.md"), t0);
    assert_eq!(idle.focus, Focus::Editor);
}

#[test]
fn a_running_tool_cell_counts_its_seconds() {
    let t0 = Instant::now();
    let mut s = state();
    update(
        &mut s,
        ev(Event::ToolCall {
            turn: None,
            id: "t1".into(),
            name: "bash".into(),
            input: json!({"command": "sleep 5"}),
            summary: "bash: sleep 5".into(),
            changes_files: true,
        }),
        t0,
    );
    update(&mut s, Msg::Tick, t0 + Duration::from_millis(3_400));
    assert!(matches!(
        s.chat.cells().get(0),
        Some(Cell::Tool {
            status: ToolStatus::Running { secs: 3, .. },
            ..
        })
    ));
}
