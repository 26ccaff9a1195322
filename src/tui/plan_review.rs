//! Plan mode in the TUI: Shift-Tab cycles the mode (normal → accept edits → plan) through the
//! engine, which answers with the mode in force; a presented plan opens in the side editor with
//! the focus, where the user edits it. Esc there saves the edits and asks what to do with the
//! plan: implement it here, implement it in a fresh session that starts from the file, or keep
//! planning (the editor closes, the file stays). The choice is a turn the engine runs on the file
//! as it is on disk.

use std::path::PathBuf;
use std::time::Instant;

use crate::engine::policy::Mode;
use crate::engine::protocol::{Op, PlanChoice};

use super::editor::SideEditor;
use super::editor_review::AfterSave;
use super::keymap::{Action, label_for};
use super::msg::Effect;
use super::state::{AppState, Focus};

/// The plan question's keys: `i implement here · f fresh session · p keep planning · Esc keep
/// editing`.
pub(crate) fn plan_keys() -> String {
    format!(
        "{} implement here · {} fresh session · {} keep planning · {} keep editing",
        label_for(Action::ImplementHere),
        label_for(Action::ImplementFresh),
        label_for(Action::KeepPlanning),
        label_for(Action::KeepEditing),
    )
}

/// The keys of the modes and of the plan review: Shift-Tab, the plan question's answers, and Esc
/// in the editor holding the plan. False when `action` is none of these here (the reducer goes
/// on with it).
pub(super) fn on_action(state: &mut AppState, action: Action, fx: &mut Vec<Effect>) -> bool {
    let asking = state.editor.get().is_some_and(|e| e.asks_plan());
    match action {
        Action::CycleMode => cycle_mode(state, fx),
        Action::ImplementHere | Action::ImplementFresh | Action::KeepPlanning => {
            choose(state, action, fx)
        }
        Action::KeepEditing if asking => choose(state, action, fx),
        Action::EditorEscape => return escape(state, fx),
        _ => return false,
    }
    true
}

/// Shift-Tab: the next mode, shown at once and sent to the engine.
fn cycle_mode(state: &mut AppState, fx: &mut Vec<Effect>) {
    let mode = state.plan.cycle_mode();
    fx.push(Effect::SendOp(Op::SetMode { mode }));
}

/// The engine's mode in force.
pub(super) fn on_mode(state: &mut AppState, mode: Mode) {
    state.plan.set_mode(mode);
}

/// A plan was presented: it opens in the side editor with the focus (edits of another file
/// there are kept in a file of their own first).
pub(super) fn on_plan(
    state: &mut AppState,
    path: PathBuf,
    markdown: &str,
    now: Instant,
) -> Vec<Effect> {
    let mut fx = Vec::new();
    let mut ed = SideEditor::open(path.clone(), markdown, None, now);
    ed.set_note(format!(
        "the plan: edit it, then {} to choose what to do with it",
        label_for(Action::EditorEscape)
    ));
    state.editor.open(ed, &mut fx);
    state.focus = Focus::Editor;
    state.plan.review(path.clone());
    state
        .chat
        .notice(format!("Plan saved to {}", path.display()));
    fx.push(Effect::WatchFile(path));
    fx
}

/// Esc in the side editor while it holds the plan under review: saves unsaved edits, then asks
/// the plan question. False when the editor holds something else (the usual Esc applies).
fn escape(state: &mut AppState, fx: &mut Vec<Effect>) -> bool {
    let Some(ed) = state
        .editor
        .get_mut()
        .filter(|e| state.plan.reviews(e.path()))
    else {
        return false;
    };
    if ed.is_dirty() {
        ed.then(AfterSave::PlanChoice);
        super::editor_update::save(state, fx);
    } else {
        ed.ask_plan();
    }
    true
}

/// The answer to the plan question.
fn choose(state: &mut AppState, action: Action, fx: &mut Vec<Effect>) {
    let Some(ed) = state.editor.get_mut().filter(|e| e.asks_plan()) else {
        return;
    };
    let choice = match action {
        Action::ImplementHere => PlanChoice::Here,
        Action::ImplementFresh => PlanChoice::FreshSession,
        Action::KeepPlanning => {
            let path = ed.path().display().to_string();
            close(state, fx);
            state.chat.notice(format!(
                "Still planning: the plan stays in {path}; {} changes the mode",
                label_for(Action::CycleMode)
            ));
            return;
        }
        _ => {
            ed.keep_editing(format!("{} asks again", label_for(Action::EditorEscape)));
            return;
        }
    };
    close(state, fx);
    let turn = state.turns.send();
    state.chat.turn_begins(turn);
    state.chat.notice(match choice {
        PlanChoice::Here => "Implementing the plan here",
        PlanChoice::FreshSession => {
            "Implementing the plan in a fresh session that starts from its file"
        }
    });
    fx.push(Effect::SendOp(Op::ImplementPlan { turn, choice }));
}

/// The plan review is over: the editor closes, the keys go back to the input.
fn close(state: &mut AppState, fx: &mut Vec<Effect>) {
    state.plan.review_over();
    state.editor.close();
    state.focus = Focus::Input;
    fx.push(Effect::UnwatchFile);
}
