//! Reducer tests of Esc and the ways out in the side editor: with unsaved edits Esc asks (save /
//! discard / keep editing) and never drops them; Esc aborts what runs first; a quit keeps the
//! edits in a file; Ctrl-C with the editor focused interrupts or says that a second press quits.

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use crate::engine::protocol::{Event, HandoffId, Op, Origin, TurnId, TurnKind};

use super::editor_review::{Prompt, Review};
use super::msg::{Effect, Msg};
use super::state::Focus;
use super::test_support::{DOC, ctrl, ev, frozen, key, ops, state, type_text};
use super::update::update;

#[test]
fn esc_in_the_editor_ends_the_review_then_closes() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    update(&mut s, key(KeyCode::Char('z')), t0);
    // Unsaved edits: Esc asks first; `d` discards them and the review ends.
    assert!(ops(&update(&mut s, key(KeyCode::Esc), t0)).is_empty());
    assert_eq!(*s.editor.get().unwrap().prompt(), Prompt::Unsaved);
    assert_eq!(
        ops(&update(&mut s, key(KeyCode::Char('d')), t0)),
        [Op::ReviewDone {
            handoff: HandoffId(1)
        }]
    );
    let ed = s.editor.get().unwrap();
    assert_eq!(
        ed.text(),
        DOC,
        "the next session reads the file as it is on disk"
    );
    assert_eq!(
        s.focus,
        Focus::Input,
        "the conversation goes on in the input"
    );
    // After the review: edits, Esc asks, `d` discards and closes.
    update(&mut s, ctrl('o'), t0);
    assert_eq!(s.focus, Focus::Editor);
    update(&mut s, key(KeyCode::Char('q')), t0);
    let fx = update(&mut s, key(KeyCode::Esc), t0);
    assert!(fx.iter().all(|e| *e != Effect::UnwatchFile));
    assert_eq!(*s.editor.get().unwrap().prompt(), Prompt::Unsaved);
    let fx = update(&mut s, key(KeyCode::Char('d')), t0);
    assert!(fx.contains(&Effect::UnwatchFile));
    assert!(!s.editor.is_open());
    assert_eq!(s.focus, Focus::Input);
    // /edit-handoff reopens the latest document, without a countdown.
    type_text(&mut s, "/edit-handoff", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert!(fx.contains(&Effect::LoadEditor("/n/h.md".into())));
    update(
        &mut s,
        Msg::EditorLoaded {
            path: "/n/h.md".into(),
            content: Ok(DOC.into()),
        },
        t0,
    );
    let ed = s.editor.get().unwrap();
    assert_eq!(ed.review(), Review::Over);
    assert_eq!(s.focus, Focus::Editor);
}

#[test]
fn esc_with_unsaved_edits_never_drops_them_unasked() {
    let t0 = Instant::now();
    let t1 = t0 + Duration::from_secs(3);
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    type_text(&mut s, " (checked)", t1);
    let typed = DOC.replace("Fixing the parser.", "Fixing the parser. (checked)");
    assert!(ops(&update(&mut s, key(KeyCode::Esc), t1)).is_empty());
    let ed = s.editor.get().unwrap();
    assert_eq!(*ed.prompt(), Prompt::Unsaved);
    assert!(ed.is_paused(), "the countdown waits for the answer");
    // While it asks, other keys do not edit; Esc goes back to editing, the edits still there.
    update(&mut s, key(KeyCode::Char('x')), t1);
    update(&mut s, key(KeyCode::Esc), t1);
    let ed = s.editor.get().unwrap();
    assert_eq!(
        (ed.prompt().clone(), ed.text()),
        (Prompt::None, typed.clone())
    );
    // However long the review waits, the question holds it: the countdown never ends it.
    update(&mut s, key(KeyCode::Esc), t1);
    assert!(
        ops(&update(
            &mut s,
            super::msg::Msg::Tick,
            t1 + Duration::from_secs(60)
        ))
        .is_empty()
    );
    // `s` saves the edits; the review ends once they are on disk.
    let fx = update(&mut s, key(KeyCode::Char('s')), t1);
    assert!(
        fx.contains(&Effect::SaveEditor {
            path: "/n/h.md".into(),
            text: typed.clone(),
        }),
        "{fx:?}"
    );
    let fx = update(
        &mut s,
        Msg::Saved {
            path: "/n/h.md".into(),
            text: typed.clone(),
            result: Ok(()),
        },
        t1,
    );
    assert_eq!(
        ops(&fx),
        [Op::ReviewDone {
            handoff: HandoffId(1)
        }]
    );
    assert!(
        s.editor.is_open(),
        "in the review, a save leaves the editor open"
    );
    // After the review, `s` saves and then closes the editor.
    update(&mut s, ctrl('o'), t1);
    type_text(&mut s, "!", t1);
    update(&mut s, key(KeyCode::Esc), t1);
    let fx = update(&mut s, key(KeyCode::Char('s')), t1);
    let Some(Effect::SaveEditor { text, .. }) =
        fx.iter().find(|e| matches!(e, Effect::SaveEditor { .. }))
    else {
        panic!("no save: {fx:?}");
    };
    let text = text.clone();
    assert!(s.editor.is_open(), "open until the save lands");
    let fx = update(
        &mut s,
        Msg::Saved {
            path: "/n/h.md".into(),
            text,
            result: Ok(()),
        },
        t1,
    );
    assert!(fx.contains(&Effect::UnwatchFile));
    assert!(!s.editor.is_open());
}

#[test]
fn esc_during_the_review_shows_what_is_on_disk_even_after_a_conflict() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    type_text(&mut s, "mine ", t0);
    update(
        &mut s,
        Msg::FileChanged {
            path: "/n/h.md".into(),
            content: Ok("theirs\n".into()),
        },
        t0,
    );
    assert!(matches!(
        *s.editor.get().unwrap().prompt(),
        Prompt::Conflict { .. }
    ));
    // Esc asks about the edits over the change on disk; `d` takes the disk's text.
    assert!(ops(&update(&mut s, key(KeyCode::Esc), t0)).is_empty());
    assert_eq!(*s.editor.get().unwrap().prompt(), Prompt::Unsaved);
    assert_eq!(
        ops(&update(&mut s, key(KeyCode::Char('d')), t0)),
        [Op::ReviewDone {
            handoff: HandoffId(1)
        }]
    );
    let ed = s.editor.get().unwrap();
    assert_eq!(ed.text(), "theirs\n");
    assert_eq!(*ed.prompt(), Prompt::None);
    assert!(!ed.is_dirty());
}

#[test]
fn esc_in_the_editor_aborts_what_runs_before_closing() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    update(&mut s, key(KeyCode::Esc), t0);
    type_text(&mut s, "go on", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    assert!(s.activity.is_running());
    update(&mut s, ctrl('o'), t0);
    type_text(&mut s, "fix ", t0);
    let fx = update(&mut s, key(KeyCode::Esc), t0);
    assert_eq!(ops(&fx), [Op::Abort { turn: TurnId(1) }]);
    let ed = s.editor.get().expect("still open");
    assert_eq!(*ed.prompt(), Prompt::None, "no discard question yet");
    assert!(ed.is_dirty(), "the edits are kept");
    assert_eq!(s.focus, Focus::Editor);
    // Once nothing runs, Esc is the editor's again.
    update(
        &mut s,
        ev(Event::TurnEnd {
            turn: TurnId(1),
            kind: TurnKind::Message,
            origin: Origin::User,
            reason: crate::engine::protocol::ExitReason::Interrupted,
        }),
        t0,
    );
    assert!(ops(&update(&mut s, key(KeyCode::Esc), t0)).is_empty());
    assert_eq!(*s.editor.get().unwrap().prompt(), Prompt::Unsaved);
}

#[test]
fn quitting_keeps_unsaved_editor_edits_and_ctrl_c_in_the_editor_says_so() {
    let t0 = Instant::now();
    let quit = |fx: &[Effect]| fx.contains(&Effect::Quit);
    let kept = |fx: &[Effect], text: &str| {
        fx.contains(&Effect::KeepUnsavedOnExit {
            path: "/n/h.md".into(),
            text: text.into(),
            handoff: Some(HandoffId(1)),
        })
    };
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    update(&mut s, ctrl('o'), t0);
    type_text(&mut s, "draft message", t0);
    update(&mut s, ctrl('o'), t0);
    type_text(&mut s, " mine", t0);
    let typed = DOC.replace("Fixing the parser.", "Fixing the parser. mine");
    // Ctrl-C with the editor focused: the first press says what the second does, in the editor;
    // the input it does not show keeps its text.
    let fx = update(&mut s, ctrl('c'), t0);
    assert!(ops(&fx).is_empty() && !quit(&fx), "{fx:?}");
    assert_eq!(
        s.editor.get().unwrap().note(),
        Some("Ctrl-C again quits, keeping your unsaved edits in a file")
    );
    assert_eq!(s.input.text(), "draft message");
    assert!(s.quit_armed(t0));
    let fx = update(&mut s, ctrl('c'), t0 + Duration::from_millis(300));
    assert!(kept(&fx, &typed) && quit(&fx), "{fx:?}");

    // /quit keeps them too, at once.
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    type_text(&mut s, "a", t0);
    update(&mut s, ctrl('o'), t0);
    type_text(&mut s, "/quit", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    let typed = DOC.replace("Fixing the parser.", "Fixing the parser.a");
    assert!(kept(&fx, &typed) && quit(&fx), "{fx:?}");

    // A clean editor quits with nothing to keep.
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    update(&mut s, ctrl('o'), t0);
    type_text(&mut s, "/quit", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert!(quit(&fx), "{fx:?}");
    assert!(
        !fx.iter()
            .any(|e| matches!(e, Effect::KeepUnsavedOnExit { .. })),
        "{fx:?}"
    );

    // While a turn runs, Ctrl-C in the editor interrupts it (and never quits).
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    update(&mut s, key(KeyCode::Esc), t0);
    type_text(&mut s, "go on", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    update(&mut s, ctrl('o'), t0);
    for _ in 0..3 {
        let fx = update(&mut s, ctrl('c'), t0);
        assert_eq!(ops(&fx), [Op::Abort { turn: TurnId(1) }]);
        assert!(!quit(&fx));
    }
}

/// The watcher says the review's file is gone from disk.
fn deleted(s: &mut super::state::AppState, t: Instant) {
    update(
        s,
        Msg::FileChanged {
            path: "/n/h.md".into(),
            content: Err(std::io::Error::from(std::io::ErrorKind::NotFound).into()),
        },
        t,
    );
}

/// The buffer's save landed (the file is written again); returns the ops that follow.
fn written_back(s: &mut super::state::AppState, text: &str, t: Instant) -> Vec<Op> {
    ops(&update(
        s,
        Msg::Saved {
            path: "/n/h.md".into(),
            text: text.into(),
            result: Ok(()),
        },
        t,
    ))
}

#[test]
fn esc_after_the_file_was_deleted_writes_the_buffer_back_before_the_review_ends() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    deleted(&mut s, t0);
    type_text(&mut s, " (checked)", t0);
    let typed = DOC.replace("Fixing the parser.", "Fixing the parser. (checked)");
    // Nothing on disk to discard the edits for: Esc writes them back, and only then does the
    // review end.
    let fx = update(&mut s, key(KeyCode::Esc), t0);
    assert!(ops(&fx).is_empty(), "{fx:?}");
    assert!(
        fx.contains(&Effect::SaveEditor {
            path: "/n/h.md".into(),
            text: typed.clone(),
        }),
        "{fx:?}"
    );
    assert_eq!(s.editor.get().unwrap().review(), Review::Saving);
    assert_eq!(
        written_back(&mut s, &typed, t0),
        [Op::ReviewDone {
            handoff: HandoffId(1)
        }]
    );
    let ed = s.editor.get().unwrap();
    assert!(!ed.is_dirty());
    assert!(
        ed.note().unwrap_or_default().contains("written back"),
        "{:?}",
        ed.note()
    );
    let told = super::test_support::last_cell(&s);
    assert!(
        format!("{told:?}").contains("was deleted during the review"),
        "{told:?}"
    );
}

#[test]
fn a_countdown_that_runs_out_on_a_deleted_file_writes_it_back_first() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    deleted(&mut s, t0);
    let fx = update(&mut s, Msg::Tick, t0 + Duration::from_secs(15));
    assert!(ops(&fx).is_empty(), "{fx:?}");
    assert!(
        fx.contains(&Effect::SaveEditor {
            path: "/n/h.md".into(),
            text: DOC.into(),
        }),
        "{fx:?}"
    );
    assert_eq!(
        written_back(&mut s, DOC, t0 + Duration::from_secs(15)),
        [Op::ReviewDone {
            handoff: HandoffId(1)
        }]
    );
}
