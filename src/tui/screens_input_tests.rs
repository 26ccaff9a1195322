//! Whole-screen snapshots around the input: queued messages below a live reply, "new output
//! below" while scrolled up, the history search, the side editor opened beside someone typing,
//! the session picker and the `@path` popup.

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use crate::engine::protocol::Event;

use super::msg::{ChatScroll, Msg};
use super::screens_tests::{draw, draw_with, session};
use super::state::AppState;
use super::test_support::{ctrl, ev, frozen, key, params, state, type_text};
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
            turn: None,
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
fn new_output_below_while_scrolled_up() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    type_text(&mut s, "the whole list", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    let long: String = (1..=20).map(|i| format!("- item {i}\n")).collect();
    update(
        &mut s,
        ev(Event::TextDelta {
            turn: None,
            text: long,
        }),
        t0,
    );
    let mut cache = ViewCache::new();
    draw_with(&s, &mut cache, 80, 12, t0);
    cache.scroll_chat(ChatScroll::Up(4));
    draw_with(&s, &mut cache, 80, 12, t0);
    type_text(&mut s, "more", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    update(
        &mut s,
        ev(Event::TextDelta {
            turn: None,
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
fn the_session_picker() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    let run = |id: &str, updated: &str, first: &str, generations, num_turns, cost_usd| {
        crate::engine::protocol::SessionSummary {
            run_id: id.into(),
            run_dir: format!("/d/runs/{id}").into(),
            created: updated.into(),
            updated: updated.into(),
            updated_unix_ms: 0,
            step: "s".into(),
            first_message: first.into(),
            generations,
            num_turns,
            cost_usd,
            model: "claude-haiku-4-5".into(),
            session_id: format!("{id}-s"),
        }
    };
    update(
        &mut s,
        ev(Event::Sessions {
            current_run: "run-now".into(),
            sessions: vec![
                run(
                    "run-now",
                    "2026-12-02T09:14:00Z",
                    "Why does the macOS build fail?",
                    1,
                    1,
                    0.12,
                ),
                run(
                    "run-b",
                    "2026-12-01T17:40:00Z",
                    "Refactor the parser to use the new token stream",
                    3,
                    24,
                    1.056,
                ),
                run(
                    "run-a",
                    "2026-11-28T08:02:00Z",
                    "Add a --json flag to the CLI",
                    1,
                    6,
                    0.0412,
                ),
            ],
        }),
        t0,
    );
    insta::assert_snapshot!(draw(&s, 100, 16, t0).backend());
}

#[test]
fn the_at_popup_lists_matching_files() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    type_text(&mut s, "explain @srmain", t0);
    let seq = s.mention.seq();
    update(
        &mut s,
        Msg::FileMatches {
            seq,
            items: vec![
                "src/main.rs".into(),
                "src/tui/mod.rs".into(),
                "scripts/run_main.sh".into(),
            ],
            complete: true,
            indexed: 1_204,
        },
        t0,
    );
    insta::assert_snapshot!(draw(&s, 80, 16, t0).backend());
}
