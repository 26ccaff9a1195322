//! The TUI beside a handoff written in the background: its own spinner line, keys
//! that cancel it without touching the main turn, news held while a reply streams, the review
//! opening without the focus. Reducer tests and whole-screen snapshots.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::engine::protocol::{
    DocumentSource, Event, ExitReason, HandoffId, HandoffPhase, Op, Origin, TurnId, TurnKind,
};

use super::activity::Running;
use super::handoff_state::BackgroundStage;
use super::render::cell::Cell;
use super::render::theme::Theme;
use super::state::{AppState, Focus};
use super::test_support::{ctrl, ev, key, ops, state, type_text, with_exchange};
use super::update::update;
use super::view::{ViewCache, view};

const H: HandoffId = HandoffId(3);

fn draw(s: &AppState, w: u16, h: u16, now: Instant) -> Terminal<TestBackend> {
    let theme = Theme::builtin("dark").expect("built-in theme");
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    t.draw(|f| view(f, s, &mut ViewCache::new(), &theme, now))
        .expect("draw");
    t
}

fn writing() -> Msg {
    ev(Event::Handoff(HandoffPhase::Writing {
        handoff: H,
        manual: false,
        focus: None,
        background: true,
    }))
}

use super::msg::Msg;

fn frozen_bg(awaits_review: bool) -> Msg {
    ev(Event::Handoff(HandoffPhase::Frozen {
        handoff: H,
        path: Some(PathBuf::from("/w/.flower/notes/handoff-demo.md")),
        degraded: false,
        degraded_reason: None,
        markdown: super::test_support::DOC.into(),
        awaits_review,
        background: true,
    }))
}

/// A turn running with a reply streaming: `fix it` sent, `Working on` streamed.
fn streaming(s: &mut AppState, t0: Instant) {
    with_exchange(s, t0);
    type_text(s, "now the parser", t0);
    update(s, key(KeyCode::Enter), t0);
    update(
        s,
        ev(Event::TurnStarted {
            turn: TurnId(2),
            kind: TurnKind::Message,
            origin: Origin::User,
        }),
        t0,
    );
    update(
        s,
        ev(Event::TextDelta {
            turn: None,
            text: "Working on the parser: ".into(),
        }),
        t0,
    );
}

#[test]
fn the_writing_has_its_own_spinner_and_its_news_waits_for_the_reply() {
    let t0 = Instant::now();
    let mut s = state();
    streaming(&mut s, t0);
    let cells = s.chat.cells().len();
    update(&mut s, writing(), t0);
    assert!(
        matches!(s.activity.running(), Running::Streaming { .. }),
        "the main turn runs on"
    );
    assert_eq!(
        s.chat.cells().len(),
        cells,
        "no cell cuts the streaming reply"
    );
    assert!(s.chat.cells().last().is_some_and(Cell::is_streaming));
    let (label, _, hint) = s.handoff.spinner().expect("a background spinner");
    assert_eq!(label, "writing the handoff in the background…");
    assert_eq!(hint, "esc to cancel it");
    assert!(s.spinner().is_some(), "and the main one");
    insta::assert_snapshot!(
        "background_writing_beside_the_stream",
        draw(&s, 80, 14, t0 + Duration::from_secs(4)).backend()
    );
    // More of the reply, then its end: the notice comes after it.
    update(
        &mut s,
        ev(Event::TextDelta {
            turn: None,
            text: "step two.".into(),
        }),
        t0,
    );
    update(
        &mut s,
        ev(Event::AssistantDone {
            turn: None,
            text: "Working on the parser: step two.".into(),
            interrupted: false,
        }),
        t0,
    );
    let Some(Cell::Notice { message }) = s.chat.cells().last().cloned() else {
        panic!("{:?}", s.chat.cells().last())
    };
    assert!(message.contains("written in the background"), "{message}");
    let Some(Cell::Assistant { markdown, .. }) =
        s.chat.cells().get(s.chat.cells().len() - 2).cloned()
    else {
        panic!()
    };
    assert_eq!(markdown, "Working on the parser: step two.");
}

#[test]
fn esc_cancels_the_writing_first_and_then_interrupts_the_turn() {
    let t0 = Instant::now();
    let mut s = state();
    streaming(&mut s, t0);
    update(&mut s, writing(), t0);
    // The first Esc cancels only the handoff written beside the turn; the turn goes on.
    assert_eq!(
        ops(&update(&mut s, key(KeyCode::Esc), t0)),
        [Op::CancelHandoff { handoff: H }]
    );
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Cancelled { handoff: H })),
        t0,
    );
    assert!(s.handoff.background().is_none() && s.handoff.spinner().is_none());
    assert!(
        matches!(s.activity.running(), Running::Streaming { .. }),
        "the turn goes on"
    );
    // The next Esc interrupts the turn.
    assert_eq!(
        ops(&update(&mut s, key(KeyCode::Esc), t0)),
        [Op::Abort { turn: TurnId(2) }]
    );
    update(
        &mut s,
        ev(Event::TurnEnd {
            turn: TurnId(2),
            kind: TurnKind::Message,
            origin: Origin::User,
            reason: ExitReason::Interrupted,
        }),
        t0,
    );
    assert_eq!(*s.activity.running(), Running::Idle);
    assert!(
        ops(&update(&mut s, key(KeyCode::Esc), t0)).is_empty(),
        "nothing left to stop"
    );
}

#[test]
fn ctrl_g_cancels_only_the_writing_and_esc_does_the_same_once_the_turn_ended() {
    let t0 = Instant::now();
    let mut s = state();
    streaming(&mut s, t0);
    update(&mut s, writing(), t0);
    assert_eq!(
        ops(&update(&mut s, ctrl('g'), t0)),
        [Op::CancelHandoff { handoff: H }],
        "Ctrl-G cancels the writing while the turn runs"
    );
    update(
        &mut s,
        ev(Event::TurnEnd {
            turn: TurnId(2),
            kind: TurnKind::Message,
            origin: Origin::User,
            reason: ExitReason::Completed,
        }),
        t0,
    );
    // The engine had not confirmed the cancel yet: the writing still shows, and Esc asks again.
    assert_eq!(*s.activity.running(), Running::Idle);
    assert_eq!(
        ops(&update(&mut s, key(KeyCode::Esc), t0)),
        [Op::CancelHandoff { handoff: H }]
    );
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Cancelled { handoff: H })),
        t0,
    );
    assert!(
        matches!(s.chat.cells().last(), Some(Cell::Notice { message }) if message.starts_with("Handoff cancelled"))
    );
}

#[test]
fn a_cancel_of_the_background_writing_leaves_the_running_turn_alone() {
    let t0 = Instant::now();
    let mut s = state();
    streaming(&mut s, t0);
    update(&mut s, writing(), t0);
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Cancelled { handoff: H })),
        t0,
    );
    assert!(matches!(s.activity.running(), Running::Streaming { .. }));
    assert!(
        s.chat.cells().last().is_some_and(Cell::is_streaming),
        "the notice waits"
    );
}

#[test]
fn the_review_opens_beside_the_input_without_the_focus() {
    let t0 = Instant::now();
    let mut s = state();
    streaming(&mut s, t0);
    update(&mut s, writing(), t0);
    type_text(&mut s, "and th", t0);
    let fx = update(&mut s, frozen_bg(true), t0);
    assert!(
        fx.iter()
            .all(|e| !matches!(e, super::msg::Effect::SendOp(Op::ReviewDone { .. })))
    );
    assert_eq!(
        s.focus,
        Focus::Input,
        "the user keeps typing where they were"
    );
    assert!(matches!(s.activity.running(), Running::Streaming { .. }));
    assert_eq!(s.editor.review_handoff(), Some(H));
    assert_eq!(
        s.handoff.background().map(|b| b.stage),
        Some(BackgroundStage::Review)
    );
    assert!(s.handoff.spinner().is_none(), "written: no spinner");
    type_text(&mut s, "en the docs", t0);
    assert_eq!(s.input.text(), "and then the docs");
    assert!(
        s.editor.get().is_some_and(|e| e.in_review()),
        "the countdown runs: keys in the input do not pause it"
    );
    insta::assert_snapshot!(
        "background_review_beside_the_input",
        draw(&s, 100, 16, t0 + Duration::from_secs(3)).backend()
    );
    // Ctrl-O moves into the editor as ever.
    update(&mut s, ctrl('o'), t0);
    assert_eq!(s.focus, Focus::Editor);
}

#[test]
fn the_hard_limit_wait_shows_in_the_main_spinner() {
    let t0 = Instant::now();
    let mut s = state();
    streaming(&mut s, t0);
    update(&mut s, writing(), t0);
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Waiting {
            handoff: H,
            context: 184_000,
            limit: 183_616,
        })),
        t0 + Duration::from_secs(2),
    );
    let (label, since, _) = s.spinner().expect("the main spinner");
    assert_eq!(label, "waiting for the handoff document…");
    assert_eq!(since, t0 + Duration::from_secs(2));
}

#[test]
fn the_turnover_clears_it_and_says_what_the_briefing_holds() {
    let t0 = Instant::now();
    let mut s = state();
    with_exchange(&mut s, t0);
    update(&mut s, writing(), t0);
    update(&mut s, frozen_bg(false), t0);
    assert!(!s.editor.is_open(), "review off: nothing opens");
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Done {
            handoff: H,
            context: 152_000,
            window: 200_000,
            degraded: false,
            degraded_reason: None,
            path: Some("/w/.flower/notes/handoff-demo.md".into()),
            sections: vec!["doing".into(), "next".into()],
            generation: 2,
            source: DocumentSource::Rescued,
            tail: 5,
            held: Default::default(),
        })),
        t0,
    );
    assert!(s.handoff.background().is_none());
    let Some(Cell::Notice { message }) = s.chat.cells().last().cloned() else {
        panic!()
    };
    assert_eq!(
        message,
        "The new session's briefing also records the 5 messages after the cut (the document was rescued: written from a reduced history)"
    );
}

#[test]
fn a_wait_for_a_document_already_in_review_says_it_waits_for_the_review() {
    // The document is frozen and its countdown runs; then the main thread reaches the hard limit.
    // It waits for the review to end, not for a document still being written.
    let t0 = Instant::now();
    let mut s = state();
    streaming(&mut s, t0);
    update(&mut s, writing(), t0);
    update(&mut s, frozen_bg(true), t0);
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Waiting {
            handoff: H,
            context: 184_000,
            limit: 183_616,
        })),
        t0 + Duration::from_secs(2),
    );
    let (label, since, _) = s.spinner().expect("the main spinner");
    assert_eq!(label, "waiting for the handoff review to end…");
    assert_eq!(since, t0 + Duration::from_secs(2));
    s.chat.flush_deferred();
    let said = s
        .chat
        .cells()
        .iter()
        .filter_map(|c| match c {
            Cell::Notice { message } => Some(message.clone()),
            _ => None,
        })
        .collect::<Vec<_>>();
    assert!(
        said.iter().any(|m| m
            == "Context at 184.0K: the work waits for the review of the handoff document to end (ctrl-s starts the next session now)"),
        "{said:#?}"
    );
    assert!(
        !said
            .iter()
            .any(|m| m.contains("waits for the handoff document")),
        "{said:#?}"
    );
}
