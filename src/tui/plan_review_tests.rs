//! Reducer tests of the modes and the plan review: Shift-Tab cycles the mode and tells the
//! engine; the engine's answer is what the status line shows; a presented plan opens in the side
//! editor with the focus; Esc saves its edits, then asks; `i` and `f` send the turn that
//! implements it, `p` closes the editor and keeps planning, Esc goes back to editing.

use std::path::PathBuf;
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::engine::policy::Mode;
use crate::engine::protocol::{Event, Op, PlanChoice, TurnId};

use super::editor_review::Prompt;
use super::msg::{Effect, Msg};
use super::state::Focus;
use super::test_support::{ev, key, ops, state};
use super::update::update;

const PLAN: &str = "# Plan\n\n1. Rename the parser.\n";

fn back_tab(mods: KeyModifiers) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::BackTab, mods))
}

fn plan_event(path: &str) -> Msg {
    ev(Event::Plan {
        turn: Some(TurnId(1)),
        path: PathBuf::from(path),
        markdown: PLAN.into(),
    })
}

#[test]
fn shift_tab_cycles_the_modes_and_the_engine_has_the_last_word() {
    let t0 = Instant::now();
    let mut s = state();
    let mut sent = Vec::new();
    // Terminals send Shift-Tab as BackTab, some with Shift and some without.
    for mods in [KeyModifiers::SHIFT, KeyModifiers::NONE, KeyModifiers::SHIFT] {
        sent.extend(ops(&update(&mut s, back_tab(mods), t0)));
    }
    assert_eq!(
        sent,
        [
            Op::SetMode {
                mode: Mode::AcceptEdits
            },
            Op::SetMode { mode: Mode::Plan },
            Op::SetMode { mode: Mode::Normal },
        ]
    );
    assert_eq!(s.plan.mode(), Mode::Normal);
    update(&mut s, ev(Event::Mode { mode: Mode::Plan }), t0);
    assert_eq!(s.plan.mode(), Mode::Plan);
    // From the side editor too: the key is global.
    update(&mut s, plan_event("/n/plan-x.md"), t0);
    assert_eq!(s.focus, Focus::Editor);
    let fx = update(&mut s, back_tab(KeyModifiers::SHIFT), t0);
    assert_eq!(ops(&fx), [Op::SetMode { mode: Mode::Normal }]);
    assert_eq!(
        s.editor.get().unwrap().text(),
        PLAN,
        "not typed into the plan"
    );
}

#[test]
fn a_presented_plan_opens_for_editing_and_esc_asks_what_to_do_with_it() {
    let t0 = Instant::now();
    let mut s = state();
    let fx = update(&mut s, plan_event("/n/plan-x.md"), t0);
    assert!(fx.contains(&Effect::WatchFile("/n/plan-x.md".into())));
    assert_eq!(s.focus, Focus::Editor);
    // Edits, then Esc: saved first, and the question follows the save.
    update(&mut s, key(KeyCode::Char('Z')), t0);
    let text = s.editor.get().unwrap().text();
    assert!(text.contains('Z'), "{text}");
    let fx = update(&mut s, key(KeyCode::Esc), t0);
    assert!(
        fx.contains(&Effect::SaveEditor {
            path: "/n/plan-x.md".into(),
            text: text.clone(),
        }),
        "{fx:?}"
    );
    assert!(ops(&fx).is_empty());
    update(
        &mut s,
        Msg::Saved {
            path: "/n/plan-x.md".into(),
            text,
            result: Ok(()),
        },
        t0,
    );
    assert_eq!(*s.editor.get().unwrap().prompt(), Prompt::Plan);
    // A letter other than the answers types nothing while the question stands.
    update(&mut s, key(KeyCode::Char('x')), t0);
    assert!(!s.editor.get().unwrap().text().contains('x'));
    // Esc: back to editing; Esc again (nothing unsaved): the question again.
    update(&mut s, key(KeyCode::Esc), t0);
    assert_eq!(*s.editor.get().unwrap().prompt(), Prompt::None);
    assert!(ops(&update(&mut s, key(KeyCode::Esc), t0)).is_empty());
    assert_eq!(*s.editor.get().unwrap().prompt(), Prompt::Plan);
    // `f`: a turn implements it in a fresh session; the editor closes.
    let fx = update(&mut s, key(KeyCode::Char('f')), t0);
    assert_eq!(
        ops(&fx),
        [Op::ImplementPlan {
            turn: TurnId(1),
            choice: PlanChoice::FreshSession
        }]
    );
    assert!(fx.contains(&Effect::UnwatchFile));
    assert!(!s.editor.is_open() && !s.plan.in_review());
    assert_eq!(s.focus, Focus::Input);
}

#[test]
fn implement_here_and_keep_planning() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, plan_event("/n/plan-x.md"), t0);
    update(&mut s, key(KeyCode::Esc), t0);
    let fx = update(&mut s, key(KeyCode::Char('p')), t0);
    assert!(ops(&fx).is_empty(), "keeping on planning runs nothing");
    assert!(!s.editor.is_open());
    assert_eq!(s.focus, Focus::Input);
    // Esc in an editor that holds another file than the plan is the usual Esc (no question).
    update(&mut s, plan_event("/n/plan-x-2.md"), t0);
    s.plan.review_over();
    update(&mut s, key(KeyCode::Esc), t0);
    assert!(!s.editor.is_open(), "closed as any file would be");
    // A third plan: implemented here.
    update(&mut s, plan_event("/n/plan-x-3.md"), t0);
    update(&mut s, key(KeyCode::Esc), t0);
    let fx = update(&mut s, key(KeyCode::Char('i')), t0);
    assert_eq!(
        ops(&fx),
        [Op::ImplementPlan {
            turn: TurnId(1),
            choice: PlanChoice::Here
        }]
    );
}
