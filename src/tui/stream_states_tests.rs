//! The provider on screen: a broken try's text is taken back and replaced by its replay after the
//! retry line; a long silence shows in the spinner; `/window` says where the window came from.

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::engine::protocol::{Event, ExitReason, Origin, StreamState, TurnId, TurnKind};

use super::render::cell::Cell;
use super::render::theme::Theme;
use super::state::AppState;
use super::test_support::{ev, key, state, type_text};
use super::update::update;
use super::view::{ViewCache, view};

fn draw(s: &AppState, w: u16, h: u16, now: Instant) -> Terminal<TestBackend> {
    let theme = Theme::builtin("dark").expect("built-in theme");
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    t.draw(|f| view(f, s, &mut ViewCache::new(), &theme, now))
        .expect("draw");
    t
}

fn ask(s: &mut AppState, t0: Instant) {
    type_text(s, "Explain the failure", t0);
    update(s, key(KeyCode::Enter), t0);
}

fn delta(s: &mut AppState, text: &str, t: Instant) {
    update(
        s,
        ev(Event::TextDelta {
            turn: None,
            text: text.into(),
        }),
        t,
    );
}

fn text_cells(s: &AppState) -> Vec<String> {
    s.chat
        .cells()
        .iter()
        .filter_map(|c| match c {
            Cell::Assistant { markdown, .. } => Some(markdown.clone()),
            Cell::Thinking { text, .. } => Some(format!("(thinking) {text}")),
            Cell::Retry { reason, .. } => Some(format!("(retry) {reason}")),
            _ => None,
        })
        .collect()
}

#[test]
fn a_discarded_try_is_taken_back_and_the_replay_follows_the_retry_line() {
    let t0 = Instant::now();
    let mut s = state();
    ask(&mut s, t0);
    update(
        &mut s,
        ev(Event::ThinkingDelta {
            text: "Looking at".into(),
        }),
        t0,
    );
    delta(&mut s, "The build fa", t0);
    update(
        &mut s,
        ev(Event::Stream(StreamState::Discarded { chars: 12 })),
        t0,
    );
    update(
        &mut s,
        ev(Event::Retry {
            attempt: 2,
            max: 5,
            reason: "stream broken: ended before message_stop".into(),
            delay_ms: 1_200,
        }),
        t0,
    );
    delta(&mut s, "The build fails because ", t0);
    delta(&mut s, "of a macro.", t0);
    update(
        &mut s,
        ev(Event::AssistantDone {
            turn: None,
            text: "The build fails because of a macro.".into(),
            interrupted: false,
        }),
        t0,
    );
    assert_eq!(
        text_cells(&s),
        [
            "(retry) stream broken: ended before message_stop",
            "The build fails because of a macro.",
        ]
    );
    insta::assert_snapshot!(draw(&s, 72, 12, t0).backend());
}

#[test]
fn a_completed_answer_is_never_taken_back() {
    let t0 = Instant::now();
    let mut s = state();
    ask(&mut s, t0);
    delta(&mut s, "First answer.", t0);
    update(
        &mut s,
        ev(Event::AssistantDone {
            turn: None,
            text: "First answer.".into(),
            interrupted: false,
        }),
        t0,
    );
    // The next request of the turn breaks before any text: nothing of the first answer goes.
    update(
        &mut s,
        ev(Event::Stream(StreamState::Discarded { chars: 0 })),
        t0,
    );
    assert_eq!(text_cells(&s), ["First answer."]);
}

#[test]
fn a_long_silence_shows_in_the_spinner_until_bytes_come_again() {
    let t0 = Instant::now();
    let mut s = state();
    ask(&mut s, t0);
    let t15 = t0 + Duration::from_secs(15);
    update(
        &mut s,
        ev(Event::Stream(StreamState::Silent { silent_ms: 15_000 })),
        t15,
    );
    let spinner = s.spinner().map(|(label, since, _)| (label, since));
    assert_eq!(spinner, Some(("waiting for the provider…".to_owned(), t0)));
    insta::assert_snapshot!(draw(&s, 72, 8, t0 + Duration::from_secs(42)).backend());
    update(&mut s, ev(Event::Stream(StreamState::Resumed)), t15);
    assert_eq!(
        s.spinner().map(|(label, _, _)| label).as_deref(),
        Some("working…")
    );
}

#[test]
fn a_silence_left_over_from_an_aborted_turn_is_not_shown_in_the_next() {
    let t0 = Instant::now();
    let mut s = state();
    ask(&mut s, t0);
    update(
        &mut s,
        ev(Event::Stream(StreamState::Silent { silent_ms: 20_000 })),
        t0 + Duration::from_secs(20),
    );
    update(
        &mut s,
        ev(Event::TurnEnd {
            turn: TurnId(1),
            kind: TurnKind::Message,
            origin: Origin::User,
            reason: ExitReason::Interrupted,
        }),
        t0 + Duration::from_secs(21),
    );
    let t1 = t0 + Duration::from_secs(30);
    ask(&mut s, t1);
    assert_eq!(
        s.spinner().map(|(label, _, _)| label).as_deref(),
        Some("working…")
    );
}

#[test]
fn window_says_where_the_window_comes_from() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "/window", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    insta::assert_snapshot!(draw(&s, 72, 7, t0).backend());
}
