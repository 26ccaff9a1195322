//! What each key does (part of the pure reducer): the key table (`keymap`) names the action for
//! the contexts live now, and each action goes to the part it is about — the input box and its
//! history, search and slash popup, the `@` popup, the pickers, the chat's tool cells, the side
//! editor, the plan review, the questions. A key no binding takes goes to the focused textarea.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent};

use crate::engine::protocol::{Approval, Op};

use super::commands::submit;
use super::editor_update::{
    answer_unsaved, editor_cursor, editor_escape, editor_key, external_editor, save,
};
use super::interrupt_keys::{abort, clear_or_quit};
use super::keymap::{self, Action};
use super::msg::{ChatScroll, Effect};
use super::plan_review;
use super::question_answers::answer;
use super::session_picker::Choice;
use super::state::{AppState, Focus, Picker};
use super::unsaved;

pub(super) fn on_key(state: &mut AppState, key: KeyEvent, now: Instant, fx: &mut Vec<Effect>) {
    if key.kind == crossterm::event::KeyEventKind::Release {
        return;
    }
    let before = (state.input.cursor(), state.input.edited_at(), state.focus);
    dispatch_key(state, key, now, fx);
    // The `@` popup follows what is typed and where the cursor is.
    if (state.input.cursor(), state.input.edited_at(), state.focus) != before {
        sync_mention(state, fx);
    }
}

/// The `@` popup follows the input: what is typed and where the cursor is.
pub(super) fn sync_mention(state: &mut AppState, fx: &mut Vec<Effect>) {
    let input = &state.input;
    state.mention.sync(
        state.focus == Focus::Input,
        input.lines(),
        input.cursor(),
        fx,
    );
}

/// Tab / Enter in the `@` popup: the highlighted path replaces the typed token (a directory
/// stays open, so its files come next).
fn complete_mention(state: &mut AppState, fx: &mut Vec<Effect>) {
    if let Some((row, col, text, dir)) = state.mention.take_chosen()
        && state.input.replace_token(row, col, text)
        && dir
    {
        sync_mention(state, fx);
    }
}

fn dispatch_key(state: &mut AppState, key: KeyEvent, now: Instant, fx: &mut Vec<Effect>) {
    match keymap::lookup(&state.contexts(now), &key) {
        Some(action) => on_action(state, action, key, now, fx),
        // A picker has every key until it closes.
        None if state.picker.is_some() || state.rewind.is_open() || state.jobs.is_open() => {}
        None if state.input.search().is_some() => state.input.search_key(key),
        None => match state.focus {
            Focus::Input => input_key(state, key, now),
            Focus::Editor => editor_key(state, key, now),
        },
    }
}

/// A key the input's textarea handles itself.
fn input_key(state: &mut AppState, key: KeyEvent, now: Instant) {
    state.input.key(key, now);
}

fn on_action(
    state: &mut AppState,
    action: Action,
    key: KeyEvent,
    now: Instant,
    fx: &mut Vec<Effect>,
) {
    if plan_review::on_action(state, action, fx) {
        return;
    }
    match action {
        Action::Send => submit(state, now, fx),
        Action::Newline => state.input.insert_newline(),
        Action::HistoryPrev => {
            if !(state.input.is_empty() && state.input.recall_newest(now)) {
                recall(state, true, key, now);
            }
        }
        Action::HistoryNext => recall(state, false, key, now),
        Action::Abort => abort(state, now, fx),
        Action::CancelHandoff => match state.handoff.writing_in_background() {
            Some(bg) => fx.push(Effect::SendOp(Op::CancelHandoff {
                handoff: bg.handoff,
            })),
            None => state
                .chat
                .notice("No handoff is being written in the background"),
        },
        Action::ClearOrQuit => clear_or_quit(state, now, fx),
        Action::ScrollUp => fx.push(Effect::ScrollChat(ChatScroll::PageUp)),
        Action::ScrollDown => fx.push(Effect::ScrollChat(ChatScroll::PageDown)),
        Action::ToggleFocus => match (state.focus, state.editor.is_open()) {
            (Focus::Input, true) => state.focus = Focus::Editor,
            (Focus::Editor, _) => state.focus = Focus::Input,
            (Focus::Input, false) => state
                .chat
                .notice("No editor open (/edit-handoff opens the latest handoff)"),
        },
        Action::Save => save(state, fx),
        Action::ExternalEditor => external_editor(state, now, fx),
        Action::ToggleTool => toggle_tool(state, fx),
        Action::ShowQuietHooks => super::hook_events::show_quiet(state),
        Action::ToggleMouse => {
            let on = !state.settings.mouse_capture;
            state.settings.mouse_capture = on;
            fx.push(Effect::MouseCapture(on));
            state.chat.notice(if on {
                "Mouse captured: clicks select tool calls, the wheel scrolls the pane under it (Shift-drag selects in most terminals) · Alt-M gives it back"
            } else {
                "Mouse left to the terminal: drag selects, the wheel scrolls the chat · Alt-M captures it"
            });
        }
        Action::SelectPrevTool => select_tool(state, true, fx),
        Action::SelectNextTool => select_tool(state, false, fx),
        Action::ChatTop | Action::ChatBottom => {
            let from_input =
                matches!(key.code, KeyCode::Home | KeyCode::End) && key.modifiers.is_empty();
            if from_input && !state.input.is_empty() {
                input_key(state, key, now); // the start or end of the line being typed
            } else if action == Action::ChatTop {
                fx.push(Effect::ScrollChat(ChatScroll::Top));
            } else {
                fx.push(Effect::ScrollChat(ChatScroll::Bottom));
            }
        }
        Action::ApprovalUp => fx.push(Effect::ScrollPrompt(-1)),
        Action::ApprovalDown => fx.push(Effect::ScrollPrompt(1)),
        Action::HistorySearch => state.input.start_search(),
        Action::PasteImage => fx.push(Effect::PasteImage),
        Action::SearchOlder => state.input.search_older(),
        Action::SearchAccept => state.input.accept_search(now),
        Action::SearchCancel => state.input.cancel_search(),
        Action::PickerNext
        | Action::PickerPrev
        | Action::PickerFirst
        | Action::PickerLast
        | Action::PickerChoose
        | Action::PickerClose => picker_key(state, action, fx),
        Action::JobsNext
        | Action::JobsPrev
        | Action::JobsOutput
        | Action::JobsStop
        | Action::JobsClose => super::job_events::key(state, action, fx),
        Action::MentionNext => state.mention.step(true),
        Action::MentionPrev => state.mention.step(false),
        Action::MentionComplete => complete_mention(state, fx),
        Action::MentionClose => state.mention.dismiss(),
        Action::PopupNext => popup_move(state, true),
        Action::PopupPrev => popup_move(state, false),
        Action::PopupComplete => popup_complete(state, now),
        Action::PopupClose => state.input.dismiss_popup(),
        Action::EditorEscape => editor_escape(state, now, fx),
        Action::SaveEdits | Action::DiscardEdits | Action::KeepEditing => {
            answer_unsaved(state, action, fx)
        }
        // `plan_review::on_action` took them.
        Action::CycleMode
        | Action::ImplementHere
        | Action::ImplementFresh
        | Action::KeepPlanning => {}
        Action::EditorTop | Action::EditorBottom => {
            editor_cursor(state, action == Action::EditorBottom, now)
        }
        Action::ApproveOnce => answer(state, Approval::Once, key, now, fx),
        Action::ApproveAlways => answer(state, Approval::Always, key, now, fx),
        Action::Deny => answer(state, Approval::Deny, key, now, fx),
        Action::Reload | Action::KeepMine => {
            if let Some(ed) = state.editor.get_mut() {
                ed.resolve_conflict(action == Action::Reload);
            }
        }
        Action::RestoreUnsaved | Action::DiscardUnsaved => {
            unsaved::answer(state, action == Action::RestoreUnsaved, fx)
        }
    }
}

/// A key of the open picker: the `/rewind` one, else the `/resume` or the `/model` one.
fn picker_key(state: &mut AppState, action: Action, fx: &mut Vec<Effect>) {
    if state.rewind.is_open() {
        match action {
            Action::PickerChoose => fx.extend(state.rewind.choose().map(Effect::SendOp)),
            Action::PickerClose => state.rewind.close(),
            Action::PickerFirst | Action::PickerLast => {
                state.rewind.jump(action == Action::PickerLast)
            }
            _ => state.rewind.step(action == Action::PickerNext),
        }
        return;
    }
    let next = action == Action::PickerNext;
    match (action, state.picker.as_mut()) {
        (Action::PickerClose, _) => state.picker = None,
        (Action::PickerChoose, _) => match state.picker.take() {
            Some(Picker::Sessions(p)) => match p.choose() {
                Choice::Resume(op) => fx.push(Effect::SendOp(op)),
                Choice::OpenNow => state.chat.notice("That is the session open now"),
                Choice::Nothing => {}
            },
            // The engine's `Model` event says the change (the status line shows it).
            Some(Picker::Models(p)) => fx.extend(p.choose().map(Effect::SendOp)),
            None => {}
        },
        (Action::PickerFirst | Action::PickerLast, Some(Picker::Sessions(p))) => {
            p.jump(action == Action::PickerLast)
        }
        (Action::PickerFirst | Action::PickerLast, Some(Picker::Models(p))) => {
            p.jump(action == Action::PickerLast)
        }
        (_, Some(Picker::Sessions(p))) => p.step(next),
        (_, Some(Picker::Models(p))) => p.step(next),
        (_, None) => {}
    }
}

/// Up on the input's first line recalls an older message, Down on its last line a newer one;
/// elsewhere (or with no more history) the key moves the cursor.
fn recall(state: &mut AppState, older: bool, key: KeyEvent, now: Instant) {
    if !state.input.recall(older, now) {
        input_key(state, key, now);
    }
}

/// Ctrl-T: the selected tool cell (else the newest) expands or collapses.
pub(super) fn toggle_tool(state: &mut AppState, fx: &mut Vec<Effect>) {
    if let Some(idx) = state.chat.toggle_tool() {
        fx.push(Effect::ScrollChat(ChatScroll::Reveal(idx)));
    }
}

/// Alt-Up / Alt-Down: select the previous / next tool cell and bring it into view. Down past
/// the newest clears the selection.
fn select_tool(state: &mut AppState, prev: bool, fx: &mut Vec<Effect>) {
    match state.chat.select_tool(prev) {
        Some(idx) => fx.push(Effect::ScrollChat(ChatScroll::Reveal(idx))),
        None => fx.push(Effect::ScrollChat(ChatScroll::Bottom)),
    }
}

fn popup_move(state: &mut AppState, down: bool) {
    let (n, sel) = (state.popup_items().len(), state.popup_selected());
    state.input.popup_move(sel, n, down);
}

/// Tab: the selected command into the input (with a space when it takes an argument).
fn popup_complete(state: &mut AppState, now: Instant) {
    if let Some(spec) = state.popup_items().get(state.popup_selected()).cloned() {
        let text = if spec.args.is_empty() {
            format!("/{}", spec.name)
        } else {
            format!("/{} ", spec.name)
        };
        state.input.set_text(&text, now);
    }
}
