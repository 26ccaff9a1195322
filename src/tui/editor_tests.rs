//! Reducer tests of the side editor and the review window: time passed in.

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use crate::engine::protocol::{Approval, Event, HandoffId, HandoffPhase, Op};

use super::activity::Running;
use super::editor_review::{Prompt, Review};
use super::msg::{Effect, Msg};
use super::render::cell::Cell;
use super::state::Focus;
use super::test_support::{
    DOC, ctrl, ev, frozen, key, last_cell, ops, state, state_with, type_text,
};
use super::update::update;

#[test]
fn frozen_opens_the_editor_with_focus_and_a_watch() {
    let t0 = Instant::now();
    let mut s = state();
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Writing {
            handoff: HandoffId(1),
            manual: false,
            focus: None,
            background: false,
        })),
        t0,
    );
    let fx = update(&mut s, frozen("/w/.flower/notes/handoff-demo.md"), t0);
    assert!(fx.contains(&Effect::WatchFile(
        "/w/.flower/notes/handoff-demo.md".into()
    )));
    assert!(ops(&fx).is_empty(), "the review window holds the successor");
    assert_eq!(s.focus, Focus::Editor);
    assert_eq!(*s.activity.running(), Running::Idle);
    let ed = s.editor.get().expect("editor open");
    assert_eq!(ed.text(), DOC);
    assert_eq!(ed.countdown(t0), Some(15));
    assert_eq!(
        s.editor.latest_handoff(),
        Some(std::path::Path::new("/w/.flower/notes/handoff-demo.md"))
    );
}

#[test]
fn review_off_or_no_workbench_continues_at_once() {
    let t0 = Instant::now();
    let mut s = state_with(None);
    let fx = update(&mut s, frozen("/n/h.md"), t0);
    assert_eq!(
        ops(&fx),
        [Op::ReviewDone {
            handoff: HandoffId(1)
        }]
    );
    assert!(!s.editor.is_open());
    let mut s = state();
    let fx = update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Frozen {
            handoff: HandoffId(1),
            awaits_review: true,
            path: None,
            degraded: true,
            degraded_reason: Some("no text captured".into()),
            markdown: DOC.into(),
            background: false,
        })),
        t0,
    );
    assert_eq!(
        ops(&fx),
        [Op::ReviewDone {
            handoff: HandoffId(1)
        }]
    );
    assert!(!s.editor.is_open());
}

#[test]
fn nothing_is_sent_for_a_review_the_engine_does_not_wait_for() {
    let t0 = Instant::now();
    for review in [Some(15), None] {
        let mut s = state_with(review);
        let fx = update(
            &mut s,
            ev(Event::Handoff(HandoffPhase::Frozen {
                handoff: HandoffId(4),
                awaits_review: false,
                path: Some("/n/h.md".into()),
                degraded: false,
                degraded_reason: None,
                markdown: DOC.into(),
                background: false,
            })),
            t0,
        );
        assert!(ops(&fx).is_empty(), "{fx:?}");
        assert!(!s.editor.is_open());
        assert_eq!(
            s.editor.latest_handoff(),
            Some(std::path::Path::new("/n/h.md")),
            "/edit-handoff opens it"
        );
    }
}

#[test]
fn countdown_with_time_passed_in_reaches_review_done() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    let fx = update(&mut s, Msg::Tick, t0 + Duration::from_millis(14_900));
    assert!(ops(&fx).is_empty());
    assert!(
        fx.contains(&Effect::ScheduleFrame(Some(Duration::from_millis(100)))),
        "{fx:?}"
    );
    let fx = update(&mut s, Msg::Tick, t0 + Duration::from_secs(15));
    assert_eq!(
        ops(&fx),
        [Op::ReviewDone {
            handoff: HandoffId(1)
        }]
    );
    assert_eq!(s.focus, Focus::Input, "the focus goes back to the input");
    assert!(
        s.editor.get().is_some_and(|e| !e.in_review()),
        "the editor stays open"
    );
    assert!(
        ops(&update(&mut s, Msg::Tick, t0 + Duration::from_secs(16))).is_empty(),
        "once"
    );
}

#[test]
fn a_keystroke_pauses_the_countdown() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    update(&mut s, key(KeyCode::Char('x')), t0 + Duration::from_secs(5));
    let ed = s.editor.get().unwrap();
    assert!(ed.is_paused());
    assert!(ed.is_dirty());
    let fx = update(&mut s, Msg::Tick, t0 + Duration::from_secs(60));
    assert!(ops(&fx).is_empty(), "paused never times out");
    assert_eq!(
        s.editor
            .get()
            .unwrap()
            .countdown(t0 + Duration::from_secs(60)),
        Some(10)
    );
}

#[test]
fn ctrl_s_saves_then_sends_review_done() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    update(&mut s, key(KeyCode::Char('!')), t0);
    let fx = update(&mut s, ctrl('s'), t0);
    let text = DOC.replace("Fixing the parser.", "Fixing the parser.!");
    assert_eq!(
        fx[0],
        Effect::SaveEditor {
            path: "/n/h.md".into(),
            text: text.clone()
        }
    );
    assert!(ops(&fx).is_empty(), "ReviewDone waits for the save to land");
    assert_eq!(s.editor.get().unwrap().review(), Review::Saving);
    let fx = update(
        &mut s,
        Msg::Saved {
            path: "/n/h.md".into(),
            text,
            result: Ok(()),
        },
        t0,
    );
    assert_eq!(
        ops(&fx),
        [Op::ReviewDone {
            handoff: HandoffId(1)
        }]
    );
    let ed = s.editor.get().unwrap();
    assert!(!ed.is_dirty());
    assert!(!ed.in_review());
    assert_eq!(
        s.focus,
        Focus::Input,
        "the review is over: back to the input"
    );
}

#[test]
fn a_failed_save_keeps_the_review_open() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    update(&mut s, ctrl('s'), t0);
    let fx = update(
        &mut s,
        Msg::Saved {
            path: "/n/h.md".into(),
            text: DOC.into(),
            result: Err(std::io::Error::other("read-only").into()),
        },
        t0,
    );
    assert!(ops(&fx).is_empty());
    assert!(s.editor.get().unwrap().in_review());
    assert!(matches!(last_cell(&s), Cell::Error { message } if message.contains("read-only")));
    // Esc continues with the file as it is on disk.
    assert_eq!(
        ops(&update(&mut s, key(KeyCode::Esc), t0)),
        [Op::ReviewDone {
            handoff: HandoffId(1)
        }]
    );
}

#[test]
fn outside_changes_reload_or_ask() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    let changed = |c: &str| Msg::FileChanged {
        path: "/n/h.md".into(),
        content: Ok(c.into()),
    };
    update(&mut s, changed("outside\n"), t0);
    assert_eq!(s.editor.get().unwrap().text(), "outside\n");
    update(&mut s, key(KeyCode::Char('m')), t0);
    update(&mut s, changed("again\n"), t0);
    assert!(matches!(
        *s.editor.get().unwrap().prompt(),
        Prompt::Conflict { .. }
    ));
    // While the prompt shows, typing does not edit; r reloads.
    update(&mut s, key(KeyCode::Char('x')), t0);
    // The cursor stayed on its line (the first), at most at its end.
    assert_eq!(s.editor.get().unwrap().text(), "outsidem\n");
    update(&mut s, key(KeyCode::Char('r')), t0);
    let ed = s.editor.get().unwrap();
    assert_eq!(ed.text(), "again\n");
    assert_eq!(*ed.prompt(), Prompt::None);
}

#[test]
fn pastes_into_the_editor_pause_and_have_a_size_limit() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    update(
        &mut s,
        Msg::Paste("- pasted\r\n".into()),
        t0 + Duration::from_secs(2),
    );
    let ed = s.editor.get().unwrap();
    assert!(ed.is_paused());
    assert!(
        ed.text().contains("Fixing the parser.- pasted\n"),
        "at the cursor, in the first section: {:?}",
        ed.text()
    );
    let big = "x".repeat(super::editor::EDITOR_PASTE_MAX + 1);
    update(&mut s, Msg::Paste(big), t0);
    let ed = s.editor.get().unwrap();
    assert!(ed.text().len() < 1000, "refused");
    assert!(ed.note().is_some_and(|n| n.contains("too large")));
}

#[test]
fn a_save_during_an_approval_sends_the_focus_back_to_the_input() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    update(&mut s, ctrl('s'), t0);
    update(
        &mut s,
        ev(Event::ApprovalRequest {
            id: "t1".into(),
            name: "bash".into(),
            summary: "bash: ls".into(),
            outside_workspace: false,
            command: None,
            diff: None,
            always: None,
            unsandboxed: None,
        }),
        t0,
    );
    update(
        &mut s,
        Msg::Saved {
            path: "/n/h.md".into(),
            text: DOC.into(),
            result: Ok(()),
        },
        t0,
    );
    assert_eq!(
        s.focus,
        Focus::Input,
        "the review is over: the keys go to the input"
    );
    assert!(s.approval_takes_keys(t0 + Duration::from_secs(1)));
    let fx = update(&mut s, key(KeyCode::Char('n')), t0 + Duration::from_secs(1));
    assert_eq!(
        ops(&fx),
        [Op::Approval {
            id: "t1".into(),
            decision: Approval::Deny
        }]
    );
}

#[test]
fn ctrl_e_saves_unsaved_edits_before_opening_the_external_editor() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    // A clean buffer opens at once.
    let fx = update(&mut s, ctrl('e'), t0);
    assert!(fx.contains(&Effect::OpenExternalEditor("/n/h.md".into())));
    type_text(&mut s, "edit ", t0);
    let fx = update(&mut s, ctrl('e'), t0);
    let text = DOC.replace("Fixing the parser.", "Fixing the parser.edit ");
    assert_eq!(
        fx[0],
        Effect::SaveEditor {
            path: "/n/h.md".into(),
            text: text.clone()
        }
    );
    assert!(
        !fx.contains(&Effect::OpenExternalEditor("/n/h.md".into())),
        "not before the file holds the buffer"
    );
    let fx = update(
        &mut s,
        Msg::Saved {
            path: "/n/h.md".into(),
            text: text.clone(),
            result: Ok(()),
        },
        t0,
    );
    assert!(fx.contains(&Effect::OpenExternalEditor("/n/h.md".into())));
    assert!(ops(&fx).is_empty(), "this save does not end the review");
    let ed = s.editor.get().unwrap();
    assert!(!ed.is_dirty());
    assert!(ed.is_paused());
    // What $EDITOR leaves reloads the clean buffer: no conflict.
    update(
        &mut s,
        Msg::ExternalEditorDone {
            path: "/n/h.md".into(),
            result: Ok(format!("{text}more\n")),
        },
        t0,
    );
    let ed = s.editor.get().unwrap();
    assert_eq!(*ed.prompt(), Prompt::None);
    assert_eq!(ed.text(), format!("{text}more\n"));

    // A failed save does not open the editor on a stale file.
    type_text(&mut s, "x", t0);
    update(&mut s, ctrl('e'), t0);
    let fx = update(
        &mut s,
        Msg::Saved {
            path: "/n/h.md".into(),
            text: "whatever".into(),
            result: Err(std::io::Error::other("read-only").into()),
        },
        t0,
    );
    assert!(
        fx.iter()
            .all(|e| !matches!(e, Effect::OpenExternalEditor(_)))
    );
    assert!(s.editor.get().unwrap().is_dirty());

    // With a change on disk unanswered, Ctrl-E neither overwrites it nor opens the editor.
    update(
        &mut s,
        Msg::FileChanged {
            path: "/n/h.md".into(),
            content: Ok("theirs\n".into()),
        },
        t0,
    );
    let fx = update(&mut s, ctrl('e'), t0);
    assert!(
        fx.iter()
            .all(|e| !matches!(e, Effect::OpenExternalEditor(_) | Effect::SaveEditor { .. })),
        "{fx:?}"
    );
}

#[test]
fn a_new_handoff_keeps_the_unsaved_edits_of_the_open_editor() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    update(&mut s, key(KeyCode::Esc), t0);
    update(&mut s, ctrl('o'), t0);
    type_text(&mut s, "my note ", t0);
    let second = |md: &str| {
        ev(Event::Handoff(HandoffPhase::Frozen {
            handoff: HandoffId(1),
            awaits_review: true,
            path: Some("/n/h.md".into()),
            degraded: false,
            degraded_reason: None,
            markdown: md.into(),
            background: false,
        }))
    };
    let fx = update(&mut s, second("# Handoff · generation 2\n"), t0);
    assert!(
        fx.contains(&Effect::KeepUnsaved {
            path: "/n/h.md".into(),
            text: DOC.replace("Fixing the parser.", "Fixing the parser.my note "),
        }),
        "{fx:?}"
    );
    let ed = s.editor.get().expect("the new document is open");
    assert_eq!(ed.text(), "# Handoff · generation 2\n");
    assert!(ed.in_review());
    update(
        &mut s,
        Msg::UnsavedKept {
            from: "/n/h.md".into(),
            result: Ok("/n/h.md.unsaved-20270115T080000Z.md".into()),
        },
        t0,
    );
    assert!(
        matches!(last_cell(&s), Cell::Notice { message }
            if message.contains("unsaved edits to h.md are kept in /n/h.md.unsaved-20270115T080000Z.md")),
        "{:?}",
        last_cell(&s)
    );
    update(
        &mut s,
        Msg::UnsavedKept {
            from: "/n/h.md".into(),
            result: Err(std::io::Error::other("disk full").into()),
        },
        t0,
    );
    assert!(matches!(last_cell(&s), Cell::Error { message } if message.contains("disk full")));

    // A clean editor is simply replaced.
    update(&mut s, key(KeyCode::Esc), t0);
    let fx = update(&mut s, second("# Handoff · generation 3\n"), t0);
    assert!(
        fx.iter().all(|e| !matches!(e, Effect::KeepUnsaved { .. })),
        "{fx:?}"
    );
}

/// The successor started from the document in `path`.
fn successor_from(path: &str) -> Msg {
    ev(Event::Handoff(HandoffPhase::Done {
        handoff: HandoffId(1),
        context: 152_000,
        window: 200_000,
        degraded: false,
        degraded_reason: None,
        path: Some(path.into()),
        sections: vec![],
        generation: 2,
        source: crate::engine::protocol::DocumentSource::Written,
        tail: 0,
        held: Default::default(),
    }))
}

#[test]
fn the_side_editor_closes_when_the_successor_starts_unless_it_holds_edits() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    assert!(s.editor.is_open());
    // The review runs out: the engine is told, and the successor starts from the file.
    let fx = update(&mut s, Msg::Tick, t0 + Duration::from_secs(60));
    assert!(ops(&fx).contains(&Op::ReviewDone {
        handoff: HandoffId(1)
    }));
    let fx = update(
        &mut s,
        successor_from("/n/h.md"),
        t0 + Duration::from_secs(61),
    );
    assert!(!s.editor.is_open(), "the review is over: the editor goes");
    assert_eq!(s.focus, Focus::Input);
    assert!(fx.contains(&Effect::UnwatchFile));
    assert!(matches!(
        s.chat
            .cells()
            .iter()
            .rev()
            .find(|c| matches!(c, Cell::Divider { .. })),
        Some(Cell::Divider { generation: 2, .. })
    ));

    // Unsaved words in it: it stays, its countdown moot.
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    update(&mut s, key(KeyCode::Char('z')), t0);
    assert!(s.editor.get().is_some_and(|e| e.is_dirty()));
    update(
        &mut s,
        successor_from("/n/h.md"),
        t0 + Duration::from_secs(1),
    );
    assert!(s.editor.get().is_some_and(|e| !e.in_review()));

    // An editor holding another file (a plan under review) is not the handoff's to close.
    let mut s = state();
    update(&mut s, frozen("/n/plan.md"), t0);
    update(
        &mut s,
        successor_from("/n/h.md"),
        t0 + Duration::from_secs(1),
    );
    assert!(s.editor.is_open());
}
