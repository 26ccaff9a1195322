//! Wide and combined characters on the whole screen: emoji sequences, flags, combining accents
//! and CJK in the chat, a queued message, the input, the side editor, a running command's output
//! and an approval prompt. Every frame's cells are measured alike by ratatui and a terminal, and
//! frames drawn over frames leave nothing behind.

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use serde_json::json;

use crate::engine::protocol::Event;

use super::render::safe_cells::tests::{
    FAMILY, FLAG, assert_safe, rows_of, screen_rows, terminal_after,
};
use super::render::theme::Theme;
use super::screens_tests::session;
use super::state::AppState;
use super::test_support::{ev, frozen, key, state, type_text};
use super::update::update;
use super::view::{ViewCache, draw, view};

const ACCENT: &str = "e\u{301}";

/// A change to the state between two frames.
type Step = dyn Fn(&mut AppState, Instant);
const HEART: &str = "\u{2764}\u{fe0f}";

fn tricky() -> String {
    format!("{FAMILY} famille {FLAG} caf{ACCENT} {HEART} 日本語のテキスト {FAMILY}{FLAG}")
}

/// A session whose every pane holds wide and combined characters.
fn crowded(t0: Instant) -> AppState {
    let mut s = state();
    session(&mut s, t0);
    let text = tricky();
    update(
        &mut s,
        ev(Event::TextDelta {
            turn: None,
            text: format!("Reply: {text}\n\n- {text}\n- {FAMILY}{FAMILY}{FAMILY}"),
        }),
        t0,
    );
    update(
        &mut s,
        ev(Event::ToolCall {
            turn: None,
            id: "t1".into(),
            name: "bash".into(),
            input: json!({"command": format!("echo {text}")}),
            summary: format!("bash: echo {text}"),
            changes_files: true,
        }),
        t0,
    );
    update(
        &mut s,
        ev(Event::ToolOutputDelta {
            id: "t1".into(),
            text: format!("{text}\n{HEART}{HEART}{HEART}\n"),
        }),
        t0,
    );
    update(&mut s, frozen("/n/h.md"), t0);
    type_text(&mut s, &format!(" {text}"), t0);
    update(&mut s, super::test_support::ctrl('o'), t0);
    type_text(&mut s, &format!("{FAMILY} et {FLAG} {HEART}"), t0);
    s
}

fn render(s: &AppState, w: u16, h: u16, now: Instant) -> Buffer {
    let theme = Theme::builtin("dark").expect("built-in theme");
    let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
    draw(buf.area, &mut buf, s, &mut ViewCache::new(), &theme, now);
    buf
}

#[test]
fn every_pane_sends_cells_every_terminal_measures_alike() {
    let t0 = Instant::now();
    let s = crowded(t0);
    for (w, h) in [(120, 40), (80, 24), (47, 30), (31, 12)] {
        let buf = render(&s, w, h, t0 + Duration::from_secs(1));
        assert_safe(&buf);
    }
    let screen = format!("{:?}", render(&s, 120, 40, t0 + Duration::from_secs(1)));
    // The family as its first person, the flag as its letters, the accent as it is.
    assert!(screen.contains("\u{1f468} famille FR"), "{screen}");
    assert!(screen.contains(&format!("caf{ACCENT}")), "{screen}");
}

#[test]
fn frames_over_frames_leave_no_leftover_cells() {
    let t0 = Instant::now();
    let theme = Theme::builtin("dark").expect("built-in theme");
    let mut s = crowded(t0);
    let (w, h) = (100, 30);
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    let mut cache = ViewCache::new();
    let mut at = t0;
    // Each step changes what the panes hold, then a frame is drawn over the last one.
    let steps: Vec<Box<Step>> = vec![
        Box::new(|s, t| {
            update(s, key(KeyCode::Backspace), t);
        }),
        Box::new(|s, t| type_text(s, "ascii after", t)),
        Box::new(|s, t| {
            update(s, super::test_support::ctrl('o'), t);
            type_text(s, &format!("{FAMILY}{FAMILY} {FLAG}"), t);
        }),
        Box::new(|s, t| {
            update(
                s,
                ev(Event::TextDelta {
                    turn: None,
                    text: format!("\n\nmore {FAMILY} text {HEART}\n"),
                }),
                t,
            );
        }),
    ];
    term.draw(|f| view(f, &s, &mut cache, &theme, at))
        .expect("draw");
    let mut frames = vec![term.backend().buffer().clone()];
    for step in &steps {
        at += Duration::from_millis(100);
        step(&mut s, at);
        term.draw(|f| view(f, &s, &mut cache, &theme, at))
            .expect("draw");
        // What the backend holds after the diffs equals the frame drawn from scratch.
        let mut fresh = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
        fresh
            .draw(|f| view(f, &s, &mut ViewCache::new(), &theme, at))
            .expect("draw");
        assert_eq!(term.backend().buffer(), fresh.backend().buffer());
        frames.push(fresh.backend().buffer().clone());
    }
    // A terminal that joins nothing, sent the frames one after the other as ratatui's diffs
    // through the crossterm backend, shows each frame and nothing of the ones before.
    for n in 1..=frames.len() {
        let shown = terminal_after(&frames[..n], false);
        assert_eq!(
            screen_rows(&shown, w),
            rows_of(&frames[n - 1]),
            "after frame {n}"
        );
    }
}
