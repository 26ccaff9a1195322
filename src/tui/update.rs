//! The reducer: `update(&mut AppState, Msg, now) -> Vec<Effect>`. Pure: no I/O, no clock (every
//! handler takes the `now` it was given); the app executes the effects and feeds their results
//! back as messages. Engine events are in `events.rs`, Enter and slash commands in `commands.rs`,
//! the side editor in `editor_update.rs`; all of them import the state and `msg`, never this file.

use std::time::Instant;

use crossterm::event::{KeyEvent, MouseEvent, MouseEventKind};
use ratatui_textarea::{DataCursor, Scrolling};

use crate::engine::protocol::{Approval, Op};

use super::commands::{request_quit, submit};
use super::editor::{Prompt, SideEditor};
use super::editor_update::{
    editor_escape, editor_key, external_editor, on_saved, on_unsaved_kept, review_ended, save,
};
use super::events::on_event;
use super::input;
use super::keymap::{self, Action};
use super::msg::{ChatScroll, Effect, Msg, Pane};
use super::render::cell::Cell;
use super::state::{
    APPROVAL_GUARD, AppState, EngineLink, Focus, Popup, QUIT_WINDOW, Running, new_input,
};
use super::unsaved;

/// The largest paste the side editor takes (its textarea re-measures every line on each edit).
pub const EDITOR_PASTE_MAX: usize = 1024 * 1024;
/// Lines a mouse-wheel notch scrolls.
const WHEEL_LINES: u16 = 3;

/// Apply one message.
pub fn update(state: &mut AppState, msg: Msg, now: Instant) -> Vec<Effect> {
    let fx = reduce(state, msg, now);
    state.sync_styles();
    fx
}

fn reduce(state: &mut AppState, msg: Msg, now: Instant) -> Vec<Effect> {
    let mut fx = Vec::new();
    match msg {
        Msg::Key(key) => on_key(state, key, now, &mut fx),
        Msg::Paste(text) => on_paste(state, text, now),
        Msg::Mouse { event, pane } => {
            if !on_mouse(state, event, pane, &mut fx) {
                return fx; // motion and clicks that change nothing: no redraw
            }
        }
        Msg::Resize => {}
        Msg::Engine(ev) => on_event(state, ev, now, &mut fx),
        Msg::EngineClosed => {
            state.link = EngineLink::Closed;
            state.running = Running::Idle;
            state.sync_gauge_mode();
            state.error("The engine stopped; /quit to leave");
        }
        Msg::Tick => {
            on_tick(state, now, &mut fx);
            if let Some(d) = state.next_frame_in(now) {
                fx.push(Effect::ScheduleFrame(Some(d)));
            }
            return fx; // the frame this tick belongs to is being drawn already
        }
        Msg::FileChanged { path, content } => {
            if let Some(ed) = state.editor.as_mut().filter(|e| e.path == path) {
                ed.disk_changed(content);
            }
        }
        Msg::EditorLoaded { path, content } => match content {
            Ok(text) => {
                state.editor = Some(SideEditor::open(path.clone(), &text, None, now));
                state.focus = Focus::Editor;
                fx.push(Effect::WatchFile(path));
            }
            Err(e) => state.error(format!("Cannot open {}: {e}", path.display())),
        },
        Msg::Saved { path, text, result } => on_saved(state, path, text, result, &mut fx),
        Msg::ExternalEditorDone { path, result } => match result {
            Ok(text) => {
                if let Some(ed) = state.editor.as_mut().filter(|e| e.path == path) {
                    ed.disk_changed(Ok(text));
                }
            }
            Err(e) => state.error(format!("$EDITOR failed: {e}")),
        },
        Msg::UnsavedKept { from, result } => on_unsaved_kept(state, from, result),
        Msg::WatchFailed { path, reason } => {
            if let Some(ed) = state.editor.as_mut().filter(|e| e.path == path) {
                ed.note = Some(format!(
                    "not watching the file for outside changes: {reason}"
                ));
            }
        }
        Msg::SendFailed { op, reason } => on_send_failed(state, op, reason, now),
        Msg::Hangup => {
            unsaved::on_hangup(state, &mut fx);
            return fx;
        }
        Msg::UnsavedLoaded { path, content } => {
            unsaved::on_unsaved_loaded(state, path, content, now)
        }
        Msg::UnsavedDiscarded { path, result } => unsaved::on_discarded(state, path, result),
    }
    fx.push(Effect::ScheduleFrame(None));
    fx
}

fn on_tick(state: &mut AppState, now: Instant, fx: &mut Vec<Effect>) {
    if state
        .ctrl_c_at
        .is_some_and(|t| now.saturating_duration_since(t) > QUIT_WINDOW)
    {
        state.ctrl_c_at = None;
    }
    let ended = state.editor.as_mut().is_some_and(|ed| ed.tick(now));
    if ended {
        if let Some(ed) = state.editor.as_mut() {
            ed.note = Some("review over: the next session reads this file".into());
        }
        if let Some(handoff) = state.review_handoff.take() {
            fx.push(Effect::SendOp(Op::ReviewDone { handoff }));
        }
        review_ended(state);
    }
}

fn on_key(state: &mut AppState, key: KeyEvent, now: Instant, fx: &mut Vec<Effect>) {
    if key.kind == crossterm::event::KeyEventKind::Release {
        return;
    }
    match keymap::lookup(&state.contexts(), &key) {
        Some(action) => on_action(state, action, key, now, fx),
        None => match state.focus {
            Focus::Input => input_key(state, key),
            Focus::Editor => editor_key(state, key, now),
            Focus::Approval => {}
        },
    }
}

/// A key the input's textarea handles itself.
fn input_key(state: &mut AppState, key: KeyEvent) {
    if state.input.input(key) {
        state.popup = Popup::Auto { selected: 0 };
        if state.input.is_empty() {
            state.pastes.clear();
        }
    }
}

fn set_input(state: &mut AppState, text: &str) {
    state.input = new_input();
    state.input.insert_str(text);
    state.popup = Popup::Auto { selected: 0 };
}

fn on_action(
    state: &mut AppState,
    action: Action,
    key: KeyEvent,
    now: Instant,
    fx: &mut Vec<Effect>,
) {
    match action {
        Action::Send => submit(state, now, fx),
        Action::Newline => state.input.insert_newline(),
        Action::HistoryPrev => recall(state, true, key),
        Action::HistoryNext => recall(state, false, key),
        Action::Abort => {
            if state.is_running() {
                fx.push(Effect::SendOp(Op::Abort {
                    turn: state.abort_turn(),
                }));
            } else if let Some(bg) = state.background.filter(|b| b.writing()) {
                // Nothing else runs: Esc cancels the handoff written in the background.
                fx.push(Effect::SendOp(Op::CancelHandoff {
                    handoff: bg.handoff,
                }));
            }
        }
        Action::CancelHandoff => match state.background.filter(|b| b.writing()) {
            Some(bg) => fx.push(Effect::SendOp(Op::CancelHandoff {
                handoff: bg.handoff,
            })),
            None => state.notice("No handoff is being written in the background"),
        },
        Action::ClearOrQuit => clear_or_quit(state, now, fx),
        Action::ScrollUp => fx.push(Effect::ScrollChat(ChatScroll::PageUp)),
        Action::ScrollDown => fx.push(Effect::ScrollChat(ChatScroll::PageDown)),
        Action::ToggleFocus => match (state.focus, state.editor.is_some()) {
            (Focus::Input, true) => state.focus = Focus::Editor,
            (Focus::Editor, _) => state.focus = Focus::Input,
            (Focus::Input, false) => {
                state.notice("No editor open (/edit-handoff opens the latest handoff)")
            }
            (Focus::Approval, _) => {}
        },
        Action::Save => save(state, fx),
        Action::ExternalEditor => external_editor(state, now, fx),
        Action::ToggleTool => state.chat.toggle_last_tool_expanded(),
        Action::PopupNext => popup_move(state, true),
        Action::PopupPrev => popup_move(state, false),
        Action::PopupComplete => popup_complete(state),
        Action::PopupClose => state.popup = Popup::Dismissed,
        Action::EditorEscape => editor_escape(state, fx),
        Action::ApproveOnce => answer(state, Approval::Once, now, fx),
        Action::ApproveAlways => answer(state, Approval::Always, now, fx),
        Action::Deny => answer(state, Approval::Deny, now, fx),
        Action::Reload | Action::KeepMine => {
            if let Some(ed) = state.editor.as_mut() {
                ed.resolve_conflict(action == Action::Reload);
            }
        }
        Action::RestoreUnsaved | Action::DiscardUnsaved => {
            unsaved::answer(state, action == Action::RestoreUnsaved, fx)
        }
    }
}

/// Up on the input's first line recalls an older message, Down on its last line a newer one;
/// elsewhere (or with no more history) the key moves the cursor.
fn recall(state: &mut AppState, older: bool, key: KeyEvent) {
    let DataCursor(row, _) = state.input.cursor();
    let last = state.input.lines().len().saturating_sub(1);
    let recalled = match older {
        true if row == 0 => {
            let current = state.input_text();
            state.history.older(&current, &mut state.pastes)
        }
        false if row == last => state.history.newer(&mut state.pastes),
        _ => None,
    };
    match recalled {
        Some(text) => set_input(state, &text),
        None => input_key(state, key),
    }
}

/// Ctrl-C: clears the input; a second press within [`QUIT_WINDOW`] quits.
fn clear_or_quit(state: &mut AppState, now: Instant, fx: &mut Vec<Effect>) {
    if state.quit_armed(now) {
        request_quit(state, fx);
    } else {
        state.ctrl_c_at = Some(now);
        state.input = new_input();
        state.pastes.clear();
        state.popup = Popup::Auto { selected: 0 };
    }
}

fn popup_move(state: &mut AppState, down: bool) {
    let n = state.popup_items().len().max(1);
    let sel = state.popup_selected();
    let sel = if down {
        (sel + 1) % n
    } else {
        (sel + n - 1) % n
    };
    state.popup = Popup::Auto { selected: sel };
}

/// Tab: the selected command into the input (with a space when it takes an argument).
fn popup_complete(state: &mut AppState) {
    if let Some(spec) = state.popup_items().get(state.popup_selected()).copied() {
        let text = if spec.args.is_empty() {
            format!("/{}", spec.name)
        } else {
            format!("/{} ", spec.name)
        };
        set_input(state, &text);
    }
}

fn answer(state: &mut AppState, decision: Approval, now: Instant, fx: &mut Vec<Effect>) {
    if state
        .approval_shown_at
        .is_some_and(|t| now.saturating_duration_since(t) < APPROVAL_GUARD)
    {
        return; // typed before the prompt could be read
    }
    let Some(p) = state.approvals.pop_front() else {
        state.focus = state.focus_before_approval;
        return;
    };
    fx.push(Effect::SendOp(Op::Approval { id: p.id, decision }));
    let text = match decision {
        Approval::Once => "allowed once",
        Approval::Always => "always allowed this session",
        Approval::Deny => "denied",
    };
    if let Some(Cell::Approval { answer, .. }) = state.chat.get_mut(p.cell) {
        *answer = Some(text.to_string());
    }
    if state.approvals.is_empty() {
        state.approval_shown_at = None;
        state.focus = match state.focus_before_approval {
            Focus::Editor if state.editor.is_none() => Focus::Input,
            f => f,
        };
    } else {
        state.approval_shown_at = Some(now); // the next prompt takes the place of this one
    }
}

fn on_paste(state: &mut AppState, text: String, now: Instant) {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    match state.focus {
        Focus::Input => {
            if input::needs_chip(&text) {
                let label = state.pastes.add(text);
                state.input.insert_str(label);
            } else {
                state.input.insert_str(text);
            }
            state.popup = Popup::Auto { selected: 0 };
        }
        Focus::Editor => {
            if let Some(ed) = state.editor.as_mut()
                && !matches!(ed.prompt, Prompt::Conflict { .. } | Prompt::Restore { .. })
            {
                ed.pause(now);
                ed.prompt = Prompt::None;
                if text.len() > EDITOR_PASTE_MAX {
                    ed.note = Some(format!(
                        "paste too large for the editor ({}); {} opens $EDITOR",
                        input::human_bytes(text.len()),
                        keymap::label_for(Action::ExternalEditor)
                    ));
                } else {
                    ed.area.insert_str(text);
                }
            }
        }
        Focus::Approval => {}
    }
}

fn on_mouse(state: &mut AppState, m: MouseEvent, pane: Option<Pane>, fx: &mut Vec<Effect>) -> bool {
    match m.kind {
        MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
            let up = m.kind == MouseEventKind::ScrollUp;
            match state.editor.as_mut() {
                Some(ed) if pane == Some(Pane::Editor) => {
                    let d = WHEEL_LINES as i16;
                    ed.area.scroll(Scrolling::Delta {
                        rows: if up { -d } else { d },
                        cols: 0,
                    });
                }
                _ if up => fx.push(Effect::ScrollChat(ChatScroll::Up(WHEEL_LINES))),
                _ => fx.push(Effect::ScrollChat(ChatScroll::Down(WHEEL_LINES))),
            }
            true
        }
        MouseEventKind::Down(_) if state.focus != Focus::Approval => {
            let target = match pane {
                Some(Pane::Editor) if state.editor.is_some() => Focus::Editor,
                Some(Pane::Input) => Focus::Input,
                _ => return false,
            };
            let changed = state.focus != target;
            state.focus = target;
            changed
        }
        _ => false,
    }
}

fn on_send_failed(state: &mut AppState, op: Op, reason: String, now: Instant) {
    state.error(format!("Could not reach the engine ({reason})"));
    if let Op::UserTurn { text, .. } = op {
        if matches!(state.running, Running::Streaming { .. }) {
            state.running = Running::Idle;
        }
        if state.input.is_empty() {
            // Give the message back so it is not lost.
            on_paste(state, text, now);
        }
    }
}
