//! Pastes and the mouse (part of the pure reducer): a paste goes into the focused textarea (a
//! big one as a chip in the input; too big for the side editor, a note says so); the wheel
//! scrolls the pane under it, a click moves the focus or expands a tool cell in the chat.

use std::time::Instant;

use crossterm::event::{MouseEvent, MouseEventKind};

use super::key_actions::toggle_tool;
use super::msg::{ChatScroll, Effect, Pane};
use super::state::{AppState, Focus};

/// Lines a mouse-wheel notch scrolls.
const WHEEL_LINES: u16 = 3;

pub(super) fn on_paste(state: &mut AppState, text: String, now: Instant) {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    match state.focus {
        Focus::Input => state.input.paste(text, now),
        Focus::Editor => {
            if let Some(ed) = state.editor.get_mut() {
                ed.paste(text, now);
            }
        }
    }
}

pub(super) fn on_mouse(
    state: &mut AppState,
    m: MouseEvent,
    pane: Option<Pane>,
    cell: Option<usize>,
    now: Instant,
    fx: &mut Vec<Effect>,
) -> bool {
    match m.kind {
        MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
            let up = m.kind == MouseEventKind::ScrollUp;
            match state.editor.get_mut() {
                _ if pane == Some(Pane::Approval) => {
                    let d = i32::from(WHEEL_LINES);
                    fx.push(Effect::ScrollPrompt(if up { -d } else { d }));
                }
                Some(ed) if pane == Some(Pane::Editor) => {
                    let d = WHEEL_LINES as i16;
                    ed.scroll(if up { -d } else { d });
                }
                _ if up => fx.push(Effect::ScrollChat(ChatScroll::Up(WHEEL_LINES))),
                _ => fx.push(Effect::ScrollChat(ChatScroll::Down(WHEEL_LINES))),
            }
            true
        }
        MouseEventKind::Down(_) => {
            let target = match pane {
                Some(Pane::Editor) if state.editor.is_open() => Focus::Editor,
                Some(Pane::Input | Pane::Approval) => Focus::Input,
                Some(Pane::Chat) => return click_chat(state, cell, fx),
                _ => return false,
            };
            let changed = state.focus != target;
            if changed && target == Focus::Input {
                state.input.mark_edited(now); // the prompt does not answer a key meant for the editor
            }
            state.focus = target;
            changed
        }
        _ => false,
    }
}

/// A click in the chat: on a tool cell it selects it and expands or collapses it.
fn click_chat(state: &mut AppState, cell: Option<usize>, fx: &mut Vec<Effect>) -> bool {
    if !cell.is_some_and(|idx| state.chat.select_cell(idx)) {
        return false;
    }
    toggle_tool(state, fx);
    true
}
