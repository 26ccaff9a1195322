//! The step's memory in the TUI: `/pin`, `/pins`, `/focus` through the reducer, the engine's
//! answers, and the screens that show them (the plan above the input, the `/pins` listing, the
//! editor title with the focus (or why a document is degraded), the divider saying what a
//! generation held).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::engine::context::Thresholds;
use crate::engine::protocol::{
    Event, HandoffId, HandoffPhase, Held, MemoryRefusal, Op, PinChange, PinRef, TodoItem,
    TodoStatus,
};

use super::msg::Msg;
use super::render::cell::Cell;
use super::render::theme::Theme;
use super::state::AppState;
use super::test_support::{ev, frozen, key, last_cell, ops, state, type_text};
use super::update::update;
use super::view::{ViewCache, view};

fn draw(s: &AppState, w: u16, h: u16, now: Instant) -> Terminal<TestBackend> {
    let theme = Theme::builtin("dark").expect("built-in theme");
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    t.draw(|f| view(f, s, &mut ViewCache::new(), &theme, now))
        .expect("draw");
    t
}

/// Type `text` and press Enter; the ops it sent.
fn submit(s: &mut AppState, text: &str, now: Instant) -> Vec<Op> {
    type_text(s, text, now);
    ops(&update(s, key(KeyCode::Enter), now))
}

fn started(s: &mut AppState, now: Instant) {
    update(
        s,
        ev(Event::SessionStarted {
            session_id: "s1".into(),
            parent_session: None,
            generation: 1,
            model: "claude-haiku-4-5".into(),
            provider: "anthropic".into(),
            thresholds: Thresholds::new(200_000, 50_000),
            demo: false,
        }),
        now,
    );
}

fn pins_event(pins: &[&str], change: PinChange, changed: &[&str], step: bool) -> Msg {
    ev(Event::Pins {
        pins: pins.iter().map(|p| p.to_string()).collect(),
        change,
        changed: changed.iter().map(|p| p.to_string()).collect(),
        step: step.then(|| "fix-the-parser".to_string()),
    })
}

fn item(text: &str, status: TodoStatus) -> TodoItem {
    TodoItem {
        text: text.into(),
        status,
    }
}

fn notice(s: &AppState) -> String {
    match last_cell(s) {
        Cell::Notice { message } => message,
        other => panic!("not a notice: {other:?}"),
    }
}

#[test]
fn pin_before_any_session_goes_to_the_engine_and_says_it_waits_for_the_step() {
    let t0 = Instant::now();
    let mut s = state();
    assert_eq!(
        submit(&mut s, "/pin never push to main", t0),
        [Op::Pin {
            text: "never push to main".into()
        }]
    );
    update(
        &mut s,
        pins_event(
            &["never push to main"],
            PinChange::Added,
            &["never push to main"],
            false,
        ),
        t0,
    );
    assert_eq!(
        notice(&s),
        "Pinned #1 for the step your first message starts: never push to main"
    );
    assert_eq!(s.memory.pins(), ["never push to main"]);
    // Once there is a step.
    update(
        &mut s,
        pins_event(&["a", "b"], PinChange::Added, &["b"], true),
        t0,
    );
    assert_eq!(notice(&s), "Pinned #2 for the rest of the step: b");
}

#[test]
fn a_pasted_pin_is_sent_whole_and_the_refusal_shows_as_an_error() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "/pin ", t0);
    let big = "x".repeat(1 << 20);
    update(&mut s, Msg::Paste(big.clone()), t0);
    let sent = ops(&update(&mut s, key(KeyCode::Enter), t0));
    assert_eq!(sent, [Op::Pin { text: big }], "the chip is expanded");
    update(
        &mut s,
        ev(Event::MemoryRefused {
            reason: MemoryRefusal::PinTooLong,
            message: "Not pinned: a pin holds at most 1,000 characters and this one has 1,048,576."
                .into(),
        }),
        t0,
    );
    assert!(matches!(last_cell(&s), Cell::Error { message } if message.contains("1,048,576")));
    assert!(s.memory.pins().is_empty());
}

#[test]
fn pins_lists_and_unpins_by_number() {
    let t0 = Instant::now();
    let mut s = state();
    assert!(submit(&mut s, "/pins", t0).is_empty());
    assert!(notice(&s).starts_with("No pins"));
    update(
        &mut s,
        pins_event(&["a", "b"], PinChange::Restored, &[], true),
        t0,
    );
    assert_eq!(
        notice(&s),
        "2 pins kept from the earlier session (/pins lists them)"
    );
    assert_eq!(
        submit(&mut s, "/pins rm 2", t0),
        [Op::Unpin {
            pin: PinRef::Number(2)
        }]
    );
    assert_eq!(
        submit(&mut s, "/pins clear", t0),
        [Op::Unpin { pin: PinRef::All }]
    );
    assert!(submit(&mut s, "/pins rm two", t0).is_empty());
    assert!(matches!(last_cell(&s), Cell::Error { message } if message.contains("`two`")));
    update(
        &mut s,
        pins_event(&["a"], PinChange::Removed, &["b"], true),
        t0,
    );
    assert_eq!(notice(&s), "Unpinned: b");
    update(
        &mut s,
        pins_event(&[], PinChange::Removed, &["a", "c"], true),
        t0,
    );
    assert_eq!(notice(&s), "Unpinned all 2 pins");
    update(
        &mut s,
        ev(Event::MemoryRefused {
            reason: MemoryRefusal::AlreadyPinned,
            message: "Already pinned (#1)".into(),
        }),
        t0,
    );
    assert_eq!(notice(&s), "Already pinned (#1)", "not an error");
}

#[test]
fn focus_sets_and_clears() {
    let t0 = Instant::now();
    let mut s = state();
    assert!(submit(&mut s, "/focus", t0).is_empty(), "nothing to clear");
    assert!(notice(&s).starts_with("No standing focus"));
    assert_eq!(
        submit(&mut s, "/focus the parser bug", t0),
        [Op::SetFocus {
            focus: Some("the parser bug".into())
        }]
    );
    update(
        &mut s,
        ev(Event::Focus {
            focus: Some("the parser bug".into()),
            step: Some("s".into()),
        }),
        t0,
    );
    assert!(notice(&s).starts_with("Standing focus: the parser bug · every later handoff"));
    assert_eq!(submit(&mut s, "/focus", t0), [Op::SetFocus { focus: None }]);
    update(
        &mut s,
        ev(Event::Focus {
            focus: None,
            step: Some("s".into()),
        }),
        t0,
    );
    assert_eq!(
        notice(&s),
        "Standing focus cleared (it was: the parser bug)"
    );
    assert_eq!(s.memory.focus(), None);
}

#[test]
fn help_and_the_popup_list_the_memory_commands() {
    let t0 = Instant::now();
    let mut s = state();
    submit(&mut s, "/help", t0);
    let help = notice(&s);
    for line in ["/pin TEXT", "/pins [rm N|clear]", "/focus [TEXT]"] {
        assert!(help.contains(line), "{line}: {help}");
    }
    let names: Vec<String> =
        super::slash::popup_matches("/p", &crate::engine::commands::Catalog::default())
            .into_iter()
            .map(|c| c.name)
            .collect();
    assert_eq!(names, ["permissions", "pin", "pins"]);
}

#[test]
fn the_plan_above_the_input_while_it_has_open_items() {
    let t0 = Instant::now();
    let mut s = state();
    started(&mut s, t0);
    submit(&mut s, "Fix the nested quotes bug", t0);
    update(
        &mut s,
        ev(Event::Todo {
            items: vec![
                item("read the parser", TodoStatus::Done),
                item("fix nested quotes in lex()", TodoStatus::InProgress),
                item("add a regression test", TodoStatus::Pending),
                item("run cargo test", TodoStatus::Pending),
            ],
        }),
        t0,
    );
    insta::assert_snapshot!("plan_above_the_input", draw(&s, 60, 16, t0).backend());
    // All done: the list goes away.
    update(
        &mut s,
        ev(Event::Todo {
            items: vec![item("read the parser", TodoStatus::Done)],
        }),
        t0,
    );
    let screen = draw(&s, 60, 16, t0).backend().to_string();
    assert!(!screen.contains("Plan ·"), "{screen}");
    // A short terminal has no room for it.
    update(
        &mut s,
        ev(Event::Todo {
            items: vec![item("open", TodoStatus::Pending)],
        }),
        t0,
    );
    let small = draw(&s, 60, 7, t0).backend().to_string();
    assert!(!small.contains("Plan ·"), "{small}");
}

#[test]
fn a_queued_message_sits_between_the_live_reply_and_the_plan() {
    let t0 = Instant::now();
    let mut s = state();
    started(&mut s, t0);
    submit(&mut s, "Fix the nested quotes bug", t0);
    update(
        &mut s,
        ev(Event::Todo {
            items: vec![
                item("read the parser", TodoStatus::Done),
                item("fix nested quotes in lex()", TodoStatus::InProgress),
                item("add a regression test", TodoStatus::Pending),
            ],
        }),
        t0,
    );
    update(
        &mut s,
        ev(Event::TextDelta {
            turn: None,
            text: "The lexer closes a string at the first quote, escaped or".into(),
        }),
        t0,
    );
    type_text(&mut s, "and keep the old error text", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    let screen = draw(&s, 60, 20, t0 + Duration::from_millis(300));
    insta::assert_snapshot!("queued_message_and_the_plan", screen.backend());
    let text = screen.backend().to_string();
    let (reply, queued, plan) = (
        text.find("escaped or").unwrap(),
        text.find("queued").unwrap(),
        text.find("Plan").unwrap(),
    );
    assert!(reply < queued && queued < plan, "{text}");
}

#[test]
fn the_pins_listing_on_screen() {
    let t0 = Instant::now();
    let mut s = state();
    started(&mut s, t0);
    update(
        &mut s,
        pins_event(
            &[
                "never push to main",
                "run `cargo test` before you say done",
                "the API of parse() stays",
            ],
            PinChange::Restored,
            &[],
            true,
        ),
        t0,
    );
    submit(&mut s, "/pins", t0);
    insta::assert_snapshot!("pins_listing", draw(&s, 70, 12, t0).backend());
}

#[test]
fn the_editor_title_shows_the_standing_focus() {
    let t0 = Instant::now();
    let mut s = state();
    started(&mut s, t0);
    update(
        &mut s,
        ev(Event::Focus {
            focus: Some("the nested quotes bug in lex()".into()),
            step: Some("s".into()),
        }),
        t0,
    );
    update(&mut s, frozen("/w/.flower/notes/handoff-demo.md"), t0);
    let now = t0 + Duration::from_secs(3);
    update(&mut s, Msg::Tick, now);
    insta::assert_snapshot!("editor_title_with_focus", draw(&s, 120, 14, now).backend());
    // Narrow: the path gives way, the state and the focus stay.
    let narrow = draw(&s, 80, 24, now).backend().to_string();
    assert!(narrow.contains("focus: the nested"), "{narrow}");
}

#[test]
fn a_degraded_review_says_why_in_the_editor_title_before_the_focus() {
    let t0 = Instant::now();
    let mut s = state();
    started(&mut s, t0);
    update(
        &mut s,
        ev(Event::Focus {
            focus: Some("the nested quotes bug in lex()".into()),
            step: Some("s".into()),
        }),
        t0,
    );
    let why = "the document restated its instructions (words from the prompt: doing 100%)";
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Frozen {
            handoff: HandoffId(1),
            awaits_review: true,
            path: Some(PathBuf::from("/w/.flower/notes/handoff-demo.md")),
            degraded: true,
            degraded_reason: Some(why.into()),
            markdown: "## Doing\n[DEGRADED: handoff not written] the document restated…\n".into(),
            background: false,
        })),
        t0,
    );
    assert_eq!(
        notice(&s),
        format!(
            "warning: the handoff is degraded (the writing turn failed: {why}); a mechanical document was saved"
        )
    );
    let now = t0 + Duration::from_secs(3);
    update(&mut s, Msg::Tick, now);
    insta::assert_snapshot!("editor_title_degraded", draw(&s, 120, 14, now).backend());
}

#[test]
fn the_divider_says_what_the_retired_generation_held() {
    let t0 = Instant::now();
    let mut s = state();
    started(&mut s, t0);
    submit(&mut s, "Fix the nested quotes bug", t0);
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Done {
            handoff: HandoffId(1),
            context: 152_000,
            window: 200_000,
            degraded: false,
            degraded_reason: None,
            path: Some(PathBuf::from("/w/.flower/notes/handoff-fix.md")),
            sections: vec!["doing".into(), "next".into()],
            generation: 2,
            source: crate::engine::protocol::DocumentSource::Written,
            tail: 0,
            held: Held {
                messages: 48,
                tool_calls: 31,
                tokens: 152_400,
                transcript: Some(PathBuf::from("/d/runs/r1/sessions/0f3a9c.jsonl")),
            },
        })),
        t0,
    );
    insta::assert_snapshot!("divider_with_what_was_held", draw(&s, 100, 8, t0).backend());
    let mid = draw(&s, 70, 8, t0).backend().to_string();
    assert!(
        mid.contains("generation 1 held 48 messages · 31 tool calls · 152.4K tokens"),
        "{mid}"
    );
    let narrow = draw(&s, 50, 8, t0).backend().to_string();
    assert!(
        narrow.contains("gen 1: 48 msgs · 31 tools · 152.4K tokens"),
        "{narrow}"
    );
    for w in [10, 20, 30] {
        draw(&s, w, 8, t0);
    }
}
