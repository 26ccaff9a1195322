//! Whole-screen snapshots of the daily-driver states: queued messages below a live reply, a
//! tool cell selected and expanded, "new output below" while scrolled up, the history search,
//! the side editor opened beside someone typing, the approval prompt waiting for the input.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

use crate::engine::protocol::Event;

use super::msg::{ChatScroll, Msg};
use super::reducer_tests::{ctrl, ev, frozen, key, params, state, type_text};
use super::screens_tests::{draw, draw_with, session};
use super::state::AppState;
use super::update::update;
use super::view::ViewCache;

#[test]
fn queued_messages_wait_below_the_live_reply() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    type_text(&mut s, "and the Linux build?", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    update(
        &mut s,
        ev(Event::TextDelta {
            text: "Linux is fine: glibc defines it when _GNU_SOURCE is set, and the".into(),
        }),
        t0,
    );
    for m in ["then open a PR", "with a short\ndescription"] {
        type_text(&mut s, m, t0);
        update(&mut s, key(KeyCode::Enter), t0);
    }
    insta::assert_snapshot!(draw(&s, 80, 20, t0 + Duration::from_millis(300)).backend());
}

#[test]
fn a_tool_cell_selected_and_expanded() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    update(
        &mut s,
        ev(Event::ToolCall {
            id: "t2".into(),
            name: "bash".into(),
            input: json!({"command": "cargo test"}),
            summary: "bash: cargo test".into(),
        }),
        t0,
    );
    let out: String = (1..=9).map(|i| format!("test case_{i} ... ok\n")).collect();
    update(
        &mut s,
        ev(Event::ToolResult {
            id: "t2".into(),
            name: "bash".into(),
            output: format!("{out}test result: ok. 9 passed"),
            is_error: false,
            spilled: None,
            diff: None,
            exit: None,
        }),
        t0,
    );
    let collapsed = draw(&s, 80, 24, t0);
    // Alt-Up selects the newest tool call; Ctrl-T expands it.
    let alt_up = Msg::Key(KeyEvent::new(KeyCode::Up, KeyModifiers::ALT));
    update(&mut s, alt_up, t0);
    update(&mut s, ctrl('t'), t0);
    insta::assert_snapshot!("tool_cells_collapsed", collapsed.backend());
    let t = draw(&s, 80, 30, t0);
    insta::assert_snapshot!("tool_cell_selected_and_expanded", t.backend());
    // The selected cell is drawn in the selection style, every row of it.
    let theme = super::render::theme::Theme::builtin("dark").expect("theme");
    let buf = t.backend().buffer();
    let row_of = |text: &str| {
        (0..buf.area.height).find(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, *y)].symbol().to_string())
                .collect::<String>()
                .contains(text)
        })
    };
    let header = row_of("▾ bash: cargo test").expect("the expanded header");
    let body = row_of("test case_5").expect("an expanded line");
    for y in [header, body] {
        assert_eq!(
            buf[(40, y)].bg,
            theme.selection.bg.expect("a background"),
            "row {y}"
        );
    }
    let other = row_of("▸ bash: make").expect("the other tool");
    assert_ne!(
        buf[(40, other)].bg,
        theme.selection.bg.expect("a background")
    );
}

#[test]
fn new_output_below_while_scrolled_up() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    type_text(&mut s, "the whole list", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    let long: String = (1..=20).map(|i| format!("- item {i}\n")).collect();
    update(&mut s, ev(Event::TextDelta { text: long }), t0);
    let mut cache = ViewCache::new();
    draw_with(&s, &mut cache, 80, 12, t0);
    cache.scroll_chat(ChatScroll::Up(4));
    draw_with(&s, &mut cache, 80, 12, t0);
    type_text(&mut s, "more", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    update(
        &mut s,
        ev(Event::TextDelta {
            text: "A new answer arrives below.".into(),
        }),
        t0,
    );
    insta::assert_snapshot!(draw_with(&s, &mut cache, 80, 12, t0).backend());
    // End goes back to the bottom: the marker is gone.
    cache.scroll_chat(ChatScroll::Bottom);
    let screen = format!("{:?}", draw_with(&s, &mut cache, 80, 12, t0).backend());
    assert!(!screen.contains("new output below"), "{screen}");
    assert!(screen.contains("A new answer arrives below."), "{screen}");
}

#[test]
fn history_search_shows_the_match() {
    let t0 = Instant::now();
    let mut s = AppState::new(super::state::StateParams {
        history: vec!["cargo test --lib tui".into(), "explain the parser".into()],
        ..params(Some(15))
    });
    update(&mut s, ctrl('r'), t0);
    type_text(&mut s, "cargo", t0);
    insta::assert_snapshot!(draw(&s, 60, 8, t0).backend());
}

#[test]
fn the_handoff_opens_beside_someone_typing() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    type_text(&mut s, "also check the", t0);
    update(&mut s, frozen("/w/.flower/notes/handoff-demo.md"), t0);
    insta::assert_snapshot!(draw(&s, 120, 20, t0).backend());
}

#[test]
fn the_approval_prompt_waits_for_typed_text() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    type_text(&mut s, "can you also", t0);
    update(
        &mut s,
        ev(Event::ApprovalRequest {
            id: "t9".into(),
            name: "bash".into(),
            summary: "bash: git push --force".into(),
            outside_workspace: false,
            command: None,
            diff: None,
            always: None,
        }),
        t0,
    );
    insta::assert_snapshot!(draw(&s, 80, 16, t0 + Duration::from_secs(1)).backend());
}
