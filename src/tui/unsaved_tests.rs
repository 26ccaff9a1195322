//! Reducer tests of unsaved edits across the end of a process: the way out keeps
//! them, a reopened review offers them back, another process's document is not taken.

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::engine::protocol::{Event, HandoffId, HandoffPhase, Op};

use super::editor_review::{Prompt, Review};
use super::msg::{Effect, Msg};
use super::render::theme::Theme;
use super::test_support::{DOC, ctrl, ev, frozen, key, ops, state, type_text};
use super::update::update;
use super::view::{ViewCache, view};

const FILE: &str = "/w/.flower/notes/handoff-demo.md";
const KEPT: &str = "/w/.flower/notes/handoff-demo.md.unsaved-20261129T134100Z.md";

#[test]
fn a_hangup_keeps_a_dirty_buffer_and_names_the_review_then_quits() {
    let t0 = Instant::now();
    let mut s = state();
    // Nothing open: just quit.
    assert_eq!(update(&mut s, Msg::Hangup, t0), [Effect::Quit]);
    update(&mut s, frozen(FILE), t0);
    // A clean buffer has nothing to keep.
    assert_eq!(update(&mut s, Msg::Hangup, t0), [Effect::Quit]);
    type_text(&mut s, "typed in review ", t0);
    let text = s.editor.get().map(|e| e.text()).unwrap_or_default();
    assert!(
        text.contains("Fixing the parser.typed in review "),
        "{text}"
    );
    let fx = update(&mut s, Msg::Hangup, t0);
    assert_eq!(
        fx,
        [
            Effect::KeepUnsavedOnExit {
                path: FILE.into(),
                text,
                handoff: Some(HandoffId(1)),
            },
            Effect::Quit
        ]
    );
    assert!(ops(&fx).is_empty(), "never a ReviewDone on the way out");
}

#[test]
fn edits_of_a_document_not_under_review_are_kept_without_a_handoff() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen(FILE), t0);
    update(&mut s, key(KeyCode::Esc), t0); // the review ends
    update(&mut s, ctrl('o'), t0);
    type_text(&mut s, "later", t0);
    let fx = update(&mut s, Msg::Hangup, t0);
    assert!(matches!(
        fx.first(),
        Some(Effect::KeepUnsavedOnExit { handoff: None, .. })
    ));
}

/// The engine reopens handoff 7 with edits kept in [`KEPT`]; they have been read.
fn reopened(t0: Instant) -> super::state::AppState {
    let mut s = state();
    let fx = update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Reopened {
            handoff: HandoffId(7),
            path: Some(FILE.into()),
            frozen_at: "2026-11-29T13:40:05Z".into(),
            unsaved: Some(KEPT.into()),
        })),
        t0,
    );
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::LoadUnsaved(_))),
        "not before the document"
    );
    let fx = update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Frozen {
            handoff: HandoffId(7),
            path: Some(FILE.into()),
            degraded: false,
            degraded_reason: None,
            markdown: DOC.into(),
            awaits_review: true,
            background: false,
        })),
        t0,
    );
    assert!(fx.contains(&Effect::LoadUnsaved(KEPT.into())), "{fx:?}");
    update(
        &mut s,
        Msg::UnsavedLoaded {
            path: KEPT.into(),
            content: Ok(format!("{DOC}my kept line\n")),
        },
        t0,
    );
    s
}

#[test]
fn a_reopened_review_offers_the_kept_edits_and_restores_them() {
    let t0 = Instant::now();
    let mut s = reopened(t0);
    let ed = s.editor.get().expect("the editor is open");
    assert!(matches!(ed.prompt(), Prompt::Restore { .. }));
    assert!(ed.is_paused(), "the countdown waits for the answer");
    // Typing does not go into the buffer while the offer stands.
    type_text(&mut s, "x", t0);
    let ed = s.editor.get().expect("editor");
    assert_eq!(ed.text(), DOC);
    let later = t0 + Duration::from_secs(60);
    assert!(
        ops(&update(&mut s, Msg::Tick, later)).is_empty(),
        "no ReviewDone while asking"
    );
    update(&mut s, key(KeyCode::Char('r')), t0);
    let ed = s.editor.get().expect("editor");
    assert_eq!(*ed.prompt(), Prompt::None);
    assert_eq!(ed.text(), format!("{DOC}my kept line\n"));
    assert!(ed.is_dirty(), "restored, not saved");
    assert!(ed.note().is_some_and(|n| n.contains("restored")));
    // Ctrl-S saves them and ends the review of that handoff.
    let fx = update(&mut s, ctrl('s'), t0);
    assert!(
        matches!(fx.first(), Some(Effect::SaveEditor { text, .. }) if text.ends_with("my kept line\n"))
    );
}

#[test]
fn discarding_the_kept_edits_removes_their_file() {
    let t0 = Instant::now();
    let mut s = reopened(t0);
    let fx = update(&mut s, key(KeyCode::Char('d')), t0);
    assert!(fx.contains(&Effect::DiscardUnsaved(KEPT.into())), "{fx:?}");
    let ed = s.editor.get().expect("editor");
    assert_eq!(ed.text(), DOC);
    assert_eq!(*ed.prompt(), Prompt::None);
    update(
        &mut s,
        Msg::UnsavedDiscarded {
            path: KEPT.into(),
            result: Ok(()),
        },
        t0,
    );
    assert!(
        s.editor
            .get()
            .and_then(|e| e.note())
            .is_some_and(|n| n.contains("removed"))
    );
    // Esc then ends the review as usual: the file on disk goes to the successor.
    let fx = update(&mut s, key(KeyCode::Esc), t0);
    assert_eq!(
        ops(&fx),
        [Op::ReviewDone {
            handoff: HandoffId(7)
        }]
    );
}

#[test]
fn esc_on_the_offer_ends_the_review_and_keeps_the_kept_file() {
    let t0 = Instant::now();
    let mut s = reopened(t0);
    let fx = update(&mut s, key(KeyCode::Esc), t0);
    assert_eq!(
        ops(&fx),
        [Op::ReviewDone {
            handoff: HandoffId(7)
        }]
    );
    assert!(!fx.iter().any(|e| matches!(e, Effect::DiscardUnsaved(_))));
    let ed = s.editor.get().expect("editor");
    assert_eq!(ed.review(), Review::Over);
    assert_eq!(*ed.prompt(), Prompt::None);
}

#[test]
fn kept_edits_the_file_already_holds_are_not_offered() {
    let t0 = Instant::now();
    let mut s = state();
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Reopened {
            handoff: HandoffId(2),
            path: Some(FILE.into()),
            frozen_at: "t".into(),
            unsaved: Some(KEPT.into()),
        })),
        t0,
    );
    update(&mut s, frozen(FILE), t0); // handoff 1: not the reopened one
    let fx = update(&mut s, Msg::Tick, t0);
    assert!(!fx.iter().any(|e| matches!(e, Effect::LoadUnsaved(_))));
    let mut s = reopened(t0);
    update(&mut s, key(KeyCode::Char('r')), t0);
    let saved = s.editor.get().map(|e| e.text()).unwrap_or_default();
    // Reopened again with the same edits already in the file: no offer.
    let mut s2 = state();
    update(
        &mut s2,
        ev(Event::Handoff(HandoffPhase::Reopened {
            handoff: HandoffId(3),
            path: Some(FILE.into()),
            frozen_at: "t".into(),
            unsaved: Some(KEPT.into()),
        })),
        t0,
    );
    update(
        &mut s2,
        ev(Event::Handoff(HandoffPhase::Frozen {
            handoff: HandoffId(3),
            path: Some(FILE.into()),
            degraded: false,
            degraded_reason: None,
            markdown: saved.clone(),
            awaits_review: true,
            background: false,
        })),
        t0,
    );
    update(
        &mut s2,
        Msg::UnsavedLoaded {
            path: KEPT.into(),
            content: Ok(saved),
        },
        t0,
    );
    assert_eq!(
        s2.editor.get().map(|e| e.prompt().clone()),
        Some(Prompt::None)
    );
}

#[test]
fn another_processs_document_in_the_watched_file_is_ignored() {
    let t0 = Instant::now();
    let mut s = state();
    let ours = "# Handoff · step demo · generation 1 · 1.0K/2K · 2026-11-29 13:40\n## Doing\nours\n## Next\nn\n";
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Frozen {
            handoff: HandoffId(1),
            path: Some(FILE.into()),
            degraded: false,
            degraded_reason: None,
            markdown: ours.into(),
            awaits_review: true,
            background: false,
        })),
        t0,
    );
    let theirs = ours
        .replace("step demo ·", "step demo-2 ·")
        .replace("ours", "theirs");
    update(
        &mut s,
        Msg::FileChanged {
            path: FILE.into(),
            content: Ok(theirs),
        },
        t0,
    );
    let ed = s.editor.get().expect("editor");
    assert_eq!(ed.text(), ours, "not reloaded");
    assert!(
        ed.note()
            .is_some_and(|n| n.contains("another document (step demo-2, generation 1)"))
    );
    // The user's own edit elsewhere (header kept) still reloads.
    let edited = ours.replace("ours", "edited in another terminal");
    update(
        &mut s,
        Msg::FileChanged {
            path: FILE.into(),
            content: Ok(edited.clone()),
        },
        t0,
    );
    assert_eq!(s.editor.get().map(|e| e.text()), Some(edited));
}

#[test]
fn the_restore_offer_on_screen() {
    let t0 = Instant::now();
    let s = reopened(t0);
    let mut t = Terminal::new(TestBackend::new(100, 24)).expect("terminal");
    let theme = Theme::builtin("dark").expect("theme");
    let mut cache = ViewCache::new();
    t.draw(|f| view(f, &s, &mut cache, &theme, t0))
        .expect("draw");
    insta::assert_snapshot!(t.backend());
}
