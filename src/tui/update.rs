//! The reducer: `update(&mut AppState, Msg, now) -> Vec<Effect>`. Pure: no I/O, no clock; the
//! app executes the effects and feeds their results back as messages.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{KeyEvent, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};
use ratatui_textarea::{DataCursor, Scrolling};

use crate::engine::protocol::{Approval, Event, Op};

use super::commands::submit;
use super::editor::{Prompt, SideEditor};
use super::editor_update::{
    editor_escape, editor_key, external_editor, on_saved, on_unsaved_kept, review_ended, save,
};
use super::events::{finish_streaming, on_event};
use super::input;
use super::keymap::{self, Action, Context};
use super::render::cell::Cell;
use super::render::spinner;
use super::slash;
use super::state::{AppState, EngineLink, Fingerprint, Focus, Popup, Running, new_input};

/// A second Ctrl-C within this long quits.
pub const QUIT_WINDOW: Duration = Duration::from_secs(1);
/// The largest paste the side editor takes (its textarea re-measures every line on each edit).
pub const EDITOR_PASTE_MAX: usize = 1024 * 1024;
/// An approval prompt ignores its keys this long after it appears: keys typed for something else
/// (a message being sent, a double `y`) must not answer it.
pub const APPROVAL_GUARD: Duration = Duration::from_millis(400);
/// Lines a mouse-wheel notch scrolls.
const WHEEL_LINES: u16 = 3;

/// Everything the reducer reacts to.
#[derive(Debug, Clone, PartialEq)]
pub enum Msg {
    /// A key press.
    Key(KeyEvent),
    /// A bracketed paste.
    Paste(String),
    /// A mouse event.
    Mouse(MouseEvent),
    /// The terminal was resized.
    Resize,
    /// An event from the engine.
    Engine(Event),
    /// The engine's event channel closed.
    EngineClosed,
    /// A frame is about to be drawn (time-driven state: countdown, Ctrl-C window).
    Tick,
    /// The watched file changed; `content` is what it holds now.
    FileChanged {
        /// The file.
        path: PathBuf,
        /// Its text, or why it could not be read.
        content: Result<String, String>,
    },
    /// `Effect::LoadEditor` finished.
    EditorLoaded {
        /// The file.
        path: PathBuf,
        /// Its text, or why it could not be read.
        content: Result<String, String>,
    },
    /// `Effect::SaveEditor` finished.
    Saved {
        /// The file.
        path: PathBuf,
        /// What was written.
        text: String,
        /// Whether the write landed.
        result: Result<(), String>,
    },
    /// `$EDITOR` exited; `result` is the file's content afterwards, or why it failed.
    ExternalEditorDone {
        /// The file.
        path: PathBuf,
        /// Its text afterwards, or why the editor failed.
        result: Result<String, String>,
    },
    /// `Effect::KeepUnsaved` finished.
    UnsavedKept {
        /// The file whose editor held the edits.
        from: PathBuf,
        /// Where the edits were written, or why they could not be.
        result: Result<PathBuf, String>,
    },
    /// `Effect::WatchFile` failed.
    WatchFailed {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// An `Effect::SendOp` could not be queued.
    SendFailed {
        /// The op that was not sent.
        op: Op,
        /// Why.
        reason: String,
    },
}

/// What the app must do for the reducer.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// `try_send` to the engine; failure comes back as `Msg::SendFailed`.
    SendOp(Op),
    /// Leave the app (sends `Op::Shutdown`).
    Quit,
    /// Suspend the TUI and run `$EDITOR` on the path.
    OpenExternalEditor(PathBuf),
    /// Atomic write; the result comes back as `Msg::Saved`.
    SaveEditor {
        /// The file.
        path: PathBuf,
        /// The text to write.
        text: String,
    },
    /// Write an editor's unsaved text to a new file beside `path` (never over another); comes
    /// back as `Msg::UnsavedKept`.
    KeepUnsaved {
        /// The file the editor was on.
        path: PathBuf,
        /// The unsaved text.
        text: String,
    },
    /// Read the file for the side editor; comes back as `Msg::EditorLoaded`.
    LoadEditor(PathBuf),
    /// Draw: now (`None`) or after a delay (an animation step).
    ScheduleFrame(Option<Duration>),
    /// Watch the file (replacing any previous watch); changes come back as `Msg::FileChanged`.
    WatchFile(PathBuf),
    /// Stop watching.
    UnwatchFile,
}

/// Apply one message.
pub fn update(state: &mut AppState, msg: Msg, now: Instant) -> Vec<Effect> {
    let mut fx = Vec::new();
    match msg {
        Msg::Key(key) => on_key(state, key, now, &mut fx),
        Msg::Paste(text) => on_paste(state, text, now),
        Msg::Mouse(m) => {
            if !on_mouse(state, m) {
                return fx; // motion and clicks that change nothing: no redraw
            }
        }
        Msg::Resize => {}
        Msg::Engine(ev) => on_event(state, ev, now, &mut fx),
        Msg::EngineClosed => {
            state.link = EngineLink::Closed;
            state.running = Running::Idle;
            state.sync_gauge_mode();
            error(state, "The engine stopped; /quit to leave");
        }
        Msg::Tick => {
            on_tick(state, now, &mut fx);
            if let Some(d) = next_frame_in(state, now) {
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
            Err(e) => error(state, format!("Cannot open {}: {e}", path.display())),
        },
        Msg::Saved { path, text, result } => on_saved(state, path, text, result, &mut fx),
        Msg::ExternalEditorDone { path, result } => match result {
            Ok(text) => {
                if let Some(ed) = state.editor.as_mut().filter(|e| e.path == path) {
                    ed.disk_changed(Ok(text));
                }
            }
            Err(e) => error(state, format!("$EDITOR failed: {e}")),
        },
        Msg::UnsavedKept { from, result } => on_unsaved_kept(state, from, result),
        Msg::WatchFailed { path, reason } => {
            if let Some(ed) = state.editor.as_mut().filter(|e| e.path == path) {
                ed.note = Some(format!(
                    "not watching the file for outside changes: {reason}"
                ));
            }
        }
        Msg::SendFailed { op, reason } => on_send_failed(state, op, reason),
    }
    fx.push(Effect::ScheduleFrame(None));
    fx
}

/// When the next frame is needed with nothing else happening: the spinner's next frame, the
/// countdown's next second, the end of the Ctrl-C window. `None` = idle, no redraw.
pub fn next_frame_in(state: &AppState, now: Instant) -> Option<Duration> {
    let spinner = state
        .spinner()
        .map(|(_, since, _)| spinner::next_frame_in(now.saturating_duration_since(since)));
    let countdown = state.editor.as_ref().and_then(|e| e.next_change(now));
    let quit = state
        .ctrl_c_at
        .map(|t| (t + QUIT_WINDOW).saturating_duration_since(now));
    [spinner, countdown, quit].into_iter().flatten().min()
}

pub(super) fn notice(state: &mut AppState, message: impl Into<String>) {
    finish_streaming(state);
    state.chat.push(Cell::Notice {
        message: message.into(),
    });
}

pub(super) fn error(state: &mut AppState, message: impl Into<String>) {
    finish_streaming(state);
    state.chat.push(Cell::Error {
        message: message.into(),
    });
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

/// The key contexts live right now, most specific first.
pub fn contexts(state: &AppState) -> Vec<Context> {
    match state.focus {
        Focus::Approval => vec![Context::Approval, Context::Global],
        Focus::Editor => {
            let conflict = state
                .editor
                .as_ref()
                .is_some_and(|e| matches!(e.prompt, Prompt::Conflict { .. }));
            if conflict {
                vec![Context::Conflict, Context::Editor, Context::Global]
            } else {
                vec![Context::Editor, Context::Global]
            }
        }
        Focus::Input if !popup_items(state).is_empty() => {
            vec![Context::Popup, Context::Input, Context::Global]
        }
        Focus::Input => vec![Context::Input, Context::Global],
    }
}

/// The slash commands the popup shows (empty when it is hidden).
pub fn popup_items(state: &AppState) -> Vec<&'static slash::CommandSpec> {
    if state.focus != Focus::Input || state.popup == Popup::Dismissed {
        return Vec::new();
    }
    match state.input.lines() {
        [line] => slash::popup_matches(line),
        _ => Vec::new(),
    }
}

/// The popup's selected row, clamped to the matches.
pub fn popup_selected(state: &AppState) -> usize {
    match state.popup {
        Popup::Auto { selected } => selected.min(popup_items(state).len().saturating_sub(1)),
        Popup::Dismissed => 0,
    }
}

fn on_key(state: &mut AppState, key: KeyEvent, now: Instant, fx: &mut Vec<Effect>) {
    if key.kind == crossterm::event::KeyEventKind::Release {
        return;
    }
    match keymap::lookup(&contexts(state), &key) {
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
        Action::HistoryPrev => {
            let DataCursor(row, _) = state.input.cursor();
            let recalled = if row == 0 {
                let current = state.input_text();
                state.history.older(&current, &mut state.pastes)
            } else {
                None
            };
            match recalled {
                Some(text) => set_input(state, &text),
                None => input_key(state, key),
            }
        }
        Action::HistoryNext => {
            let DataCursor(row, _) = state.input.cursor();
            let last = state.input.lines().len().saturating_sub(1);
            let recalled = if row == last {
                state.history.newer(&mut state.pastes)
            } else {
                None
            };
            match recalled {
                Some(text) => set_input(state, &text),
                None => input_key(state, key),
            }
        }
        Action::Abort => {
            if state.is_running() {
                fx.push(Effect::SendOp(Op::Abort {
                    turn: state.abort_turn(),
                }));
            }
        }
        Action::ClearOrQuit => {
            if state
                .ctrl_c_at
                .is_some_and(|t| now.saturating_duration_since(t) <= QUIT_WINDOW)
            {
                request_quit(state, fx);
            } else {
                state.ctrl_c_at = Some(now);
                state.input = new_input();
                state.pastes.clear();
                state.popup = Popup::Auto { selected: 0 };
            }
        }
        Action::ScrollUp => {
            let page = state.layout.chat.height.saturating_sub(2).max(1);
            state.chat.scroll_up(page);
        }
        Action::ScrollDown => {
            let page = state.layout.chat.height.saturating_sub(2).max(1);
            state.chat.scroll_down(page);
        }
        Action::ToggleFocus => match (state.focus, state.editor.is_some()) {
            (Focus::Input, true) => state.focus = Focus::Editor,
            (Focus::Editor, _) => state.focus = Focus::Input,
            (Focus::Input, false) => notice(
                state,
                "No editor open (/edit-handoff opens the latest handoff)",
            ),
            (Focus::Approval, _) => {}
        },
        Action::Save => save(state, fx),
        Action::ExternalEditor => external_editor(state, now, fx),
        Action::ToggleTool => state.chat.toggle_last_tool_expanded(),
        Action::PopupNext | Action::PopupPrev => {
            let n = popup_items(state).len().max(1);
            let sel = popup_selected(state);
            let sel = if action == Action::PopupNext {
                (sel + 1) % n
            } else {
                (sel + n - 1) % n
            };
            state.popup = Popup::Auto { selected: sel };
        }
        Action::PopupComplete => {
            if let Some(spec) = popup_items(state).get(popup_selected(state)).copied() {
                let text = if spec.args.is_empty() {
                    format!("/{}", spec.name)
                } else {
                    format!("/{} ", spec.name)
                };
                set_input(state, &text);
            }
        }
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
    }
}

/// Ctrl-C twice or `/quit`: quit, unless the side editor holds edits nobody was warned about;
/// then say so once, and quit on the next request.
pub(super) fn request_quit(state: &mut AppState, fx: &mut Vec<Effect>) {
    let unsaved = state
        .editor
        .as_ref()
        .filter(|ed| ed.is_dirty())
        .map(|ed| Fingerprint::of(&ed.text()));
    if let Some(fp) = unsaved
        && state.quit_warned != Some(fp)
    {
        state.quit_warned = Some(fp);
        state.ctrl_c_at = None; // a third Ctrl-C in a row is not the answer to this question
        notice(
            state,
            "unsaved handoff edits: Ctrl-S to save, or quit again to discard",
        );
        return;
    }
    fx.push(Effect::Quit);
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
                && !matches!(ed.prompt, Prompt::Conflict { .. })
            {
                ed.pause(now);
                ed.prompt = Prompt::None;
                if text.len() > EDITOR_PASTE_MAX {
                    ed.note = Some(format!(
                        "paste too large for the editor ({}); Ctrl-E opens $EDITOR",
                        input::human_bytes(text.len())
                    ));
                } else {
                    ed.area.insert_str(text);
                }
            }
        }
        Focus::Approval => {}
    }
}

fn on_mouse(state: &mut AppState, m: MouseEvent) -> bool {
    let at = Position::new(m.column, m.row);
    let in_rect = |r: Option<Rect>| r.is_some_and(|r| r.contains(at));
    let over_editor = in_rect(state.layout.editor);
    match m.kind {
        MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
            let up = m.kind == MouseEventKind::ScrollUp;
            match state.editor.as_mut() {
                Some(ed) if over_editor => {
                    let d = WHEEL_LINES as i16;
                    ed.area.scroll(Scrolling::Delta {
                        rows: if up { -d } else { d },
                        cols: 0,
                    });
                }
                _ if up => state.chat.scroll_up(WHEEL_LINES),
                _ => state.chat.scroll_down(WHEEL_LINES),
            }
            true
        }
        MouseEventKind::Down(_) if state.focus != Focus::Approval => {
            let target = if over_editor && state.editor.is_some() {
                Focus::Editor
            } else if in_rect(Some(state.layout.input)) {
                Focus::Input
            } else {
                return false;
            };
            let changed = state.focus != target;
            state.focus = target;
            changed
        }
        _ => false,
    }
}

fn on_send_failed(state: &mut AppState, op: Op, reason: String) {
    error(state, format!("Could not reach the engine ({reason})"));
    if let Op::UserTurn { text, .. } = op {
        if state.pending_echo.back() == Some(&Fingerprint::of(&text)) {
            state.pending_echo.pop_back();
        }
        if matches!(state.running, Running::Streaming { .. }) {
            state.running = Running::Idle;
        }
        if state.input.is_empty() {
            // Give the message back so it is not lost.
            on_paste(state, text, Instant::now());
        }
    }
}
