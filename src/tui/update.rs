//! The reducer: `update(&mut AppState, Msg, now) -> Vec<Effect>`. Pure: no I/O, no clock (every
//! handler takes the `now` it was given); the app executes the effects and feeds their results
//! back as messages. Engine events are in `events.rs`, Enter and slash commands in `commands.rs`,
//! the side editor in `editor_update.rs`; all of them import the state and `msg`, never this file.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, MouseEvent, MouseEventKind};
use ratatui_textarea::{DataCursor, Scrolling};

use crate::engine::protocol::{Approval, Op};

use super::commands::{request_quit, submit};
use super::editor::{Prompt, SideEditor};
use super::editor_update::{
    answer_unsaved, editor_ctrl_c, editor_cursor, editor_escape, editor_key, external_editor,
    on_saved, on_unsaved_kept, review_ended, save,
};
use super::events::on_event;
use super::input;
use super::keymap::{self, Action};
use super::mention;
use super::msg::{ChatScroll, Effect, Msg, Pane};
use super::plan_review;
use super::queue;
use super::render::cell::Cell;
use super::render::tool_cell::ToolStatus;
use super::rewind_picker;
use super::search;
use super::session_picker;
use super::state::{AppState, Asked, EngineLink, Focus, Popup, QUIT_WINDOW, Running, new_input};
use super::turn_events::approval_allowed;
use super::undo_commands;
use super::unsaved;

/// The largest paste the side editor takes (its textarea re-measures every line on each edit).
pub(crate) const EDITOR_PASTE_MAX: usize = 1024 * 1024;
/// Lines a mouse-wheel notch scrolls.
const WHEEL_LINES: u16 = 3;

/// Apply one message.
pub(crate) fn update(state: &mut AppState, msg: Msg, now: Instant) -> Vec<Effect> {
    let fx = reduce(state, msg, now);
    state.sync_styles();
    fx
}

fn reduce(state: &mut AppState, msg: Msg, now: Instant) -> Vec<Effect> {
    let mut fx = Vec::new();
    match msg {
        Msg::Key(key) => on_key(state, key, now, &mut fx),
        Msg::Paste(text) => {
            on_paste(state, text, now);
            mention::sync(state, &mut fx);
        }
        Msg::Mouse { event, pane, cell } => {
            if !on_mouse(state, event, pane, cell, now, &mut fx) {
                return fx; // motion and clicks that change nothing: no redraw
            }
        }
        Msg::Resize => {}
        Msg::Engine(ev) => on_event(state, ev, now, &mut fx),
        Msg::EngineClosed => {
            state.link = EngineLink::Closed;
            queue::engine_gone(state);
            state.running = Running::Idle;
            state.agents.clear();
            state.mcp_waiting = None;
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
            unsaved::keep_and_quit(state, &mut fx);
            return fx;
        }
        Msg::UnsavedLoaded { path, content } => {
            unsaved::on_unsaved_loaded(state, path, content, now)
        }
        Msg::UnsavedDiscarded { path, result } => unsaved::on_discarded(state, path, result),
        Msg::FileMatches {
            seq,
            items,
            complete,
            indexed,
        } => mention::on_matches(state, seq, items, complete, indexed, &mut fx),
        // The pasted image goes into the message as a mention of its file.
        Msg::ImagePasted(Ok(path)) => {
            state.input.insert_str(format!("@\"{}\" ", path.display()));
        }
        Msg::ImagePasted(Err(why)) => state.notice(format!("no image pasted: {why}")),
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
    super::subagent_events::on_tick(state, now);
    count_tool_seconds(state, now);
    mention::on_tick(state, fx);
    let ended = state.editor.as_mut().is_some_and(|ed| ed.tick(now));
    if ended {
        if super::editor_update::write_back_deleted(state, fx) {
            return;
        }
        if let Some(ed) = state.editor.as_mut() {
            ed.note = Some("review over: the next session reads this file".into());
        }
        if let Some(handoff) = state.review_handoff.take() {
            fx.push(Effect::SendOp(Op::ReviewDone { handoff }));
        }
        review_ended(state);
    }
}

/// The running tool cell shows its whole seconds: changed (and re-laid out) once a second.
fn count_tool_seconds(state: &mut AppState, now: Instant) {
    let Some((idx, since)) = state.running_tool else {
        return;
    };
    let secs = now.saturating_duration_since(since).as_secs();
    let stale = matches!(
        state.chat.get(idx),
        Some(Cell::Tool { status: ToolStatus::Running { secs: s, .. }, .. }) if *s != secs
    );
    if stale
        && let Some(Cell::Tool {
            status: ToolStatus::Running { secs: s, .. },
            ..
        }) = state.chat.get_mut(idx)
    {
        *s = secs;
    }
}

fn on_key(state: &mut AppState, key: KeyEvent, now: Instant, fx: &mut Vec<Effect>) {
    if key.kind == crossterm::event::KeyEventKind::Release {
        return;
    }
    let before = (state.input.cursor(), state.input_edited_at, state.focus);
    dispatch_key(state, key, now, fx);
    // The `@` popup follows what is typed and where the cursor is.
    if (state.input.cursor(), state.input_edited_at, state.focus) != before {
        mention::sync(state, fx);
    }
}

fn dispatch_key(state: &mut AppState, key: KeyEvent, now: Instant, fx: &mut Vec<Effect>) {
    match keymap::lookup(&state.contexts(now), &key) {
        Some(action) => on_action(state, action, key, now, fx),
        // A picker has every key until it closes.
        None if state.picker.is_some() || state.rewind.picker.is_some() => {}
        None if state.search.is_some() => search::key(state, key),
        None => match state.focus {
            Focus::Input => input_key(state, key, now),
            Focus::Editor => editor_key(state, key, now),
        },
    }
}

/// A key the input's textarea handles itself.
fn input_key(state: &mut AppState, key: KeyEvent, now: Instant) {
    if state.input.input(key) {
        state.popup = Popup::Auto { selected: 0 };
        state.input_edited(now);
        state.typed_at = Some(now);
        if state.input.is_empty() {
            state.pastes.clear();
        }
    }
}

fn set_input(state: &mut AppState, text: &str, now: Instant) {
    state.input = new_input();
    state.input.insert_str(text);
    state.popup = Popup::Auto { selected: 0 };
    state.input_edited(now);
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
            if !(state.input.is_empty() && queue::recall_newest(state, now)) {
                recall(state, true, key, now);
            }
        }
        Action::HistoryNext => recall(state, false, key, now),
        Action::Abort => abort(state, now, fx),
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
        },
        Action::Save => save(state, fx),
        Action::ExternalEditor => external_editor(state, now, fx),
        Action::ToggleTool => toggle_tool(state, fx),
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
        Action::HistorySearch => search::start(state),
        Action::PasteImage => fx.push(Effect::PasteImage),
        Action::SearchOlder => search::older(state),
        Action::SearchAccept => search::accept(state, now),
        Action::SearchCancel => search::cancel(state),
        Action::PickerNext | Action::PickerPrev if state.rewind.picker.is_some() => {
            rewind_picker::step(state, action == Action::PickerNext)
        }
        Action::PickerChoose if state.rewind.picker.is_some() => rewind_picker::choose(state, fx),
        Action::PickerClose if state.rewind.picker.is_some() => state.rewind.picker = None,
        Action::PickerNext | Action::PickerPrev => {
            session_picker::step(state, action == Action::PickerNext)
        }
        Action::PickerChoose => session_picker::choose(state, fx),
        Action::PickerClose => state.picker = None,
        Action::MentionNext => mention::step(state, true),
        Action::MentionPrev => mention::step(state, false),
        Action::MentionComplete => mention::complete(state, fx),
        Action::MentionClose => mention::dismiss(state),
        Action::PopupNext => popup_move(state, true),
        Action::PopupPrev => popup_move(state, false),
        Action::PopupComplete => popup_complete(state, now),
        Action::PopupClose => state.popup = Popup::Dismissed,
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
            if let Some(ed) = state.editor.as_mut() {
                ed.resolve_conflict(action == Action::Reload);
            }
        }
        Action::RestoreUnsaved | Action::DiscardUnsaved => {
            unsaved::answer(state, action == Action::RestoreUnsaved, fx)
        }
    }
}

/// Esc: drops the newest queued message when the input is empty; else cancels a handoff written
/// in the background (the main turn goes on; the next Esc interrupts it), interrupts the running
/// turn, or, idle on an empty input, counts toward the rewind picker's double Esc.
fn abort(state: &mut AppState, now: Instant, fx: &mut Vec<Effect>) {
    if state.input.is_empty() && queue::drop_newest(state) {
        return;
    }
    if let Some(bg) = state.background.filter(|b| b.writing()) {
        fx.push(Effect::SendOp(Op::CancelHandoff {
            handoff: bg.handoff,
        }));
    } else if state.is_running() {
        fx.push(Effect::SendOp(Op::Abort {
            turn: state.abort_turn(),
        }));
    } else if state.input.is_empty() {
        rewind_picker::idle_esc(state, now, fx);
    }
}

/// Up on the input's first line recalls an older message, Down on its last line a newer one;
/// elsewhere (or with no more history) the key moves the cursor.
fn recall(state: &mut AppState, older: bool, key: KeyEvent, now: Instant) {
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
        Some(text) => set_input(state, &text, now),
        None => input_key(state, key, now),
    }
}

/// Ctrl-C: clears the input; on an empty input drops the newest queued message, else
/// interrupts the running turn; on an idle empty input a second press within [`QUIT_WINDOW`]
/// quits. Interrupting never arms the quit: hammering Ctrl-C to stop the agent does not leave.
/// With the focus in the side editor it only interrupts or quits (`editor_ctrl_c`).
fn clear_or_quit(state: &mut AppState, now: Instant, fx: &mut Vec<Effect>) {
    if state.focus == Focus::Editor {
        if editor_ctrl_c(state, now, fx) {
            request_quit(state, fx);
        }
        return;
    }
    if !state.input.is_empty() {
        state.input = new_input();
        state.pastes.clear();
        state.popup = Popup::Auto { selected: 0 };
        state.history.reset_browsing();
        state.input_edited(now);
        if !state.busy() {
            state.ctrl_c_at = Some(now);
        }
        return;
    }
    if queue::drop_newest(state) {
        return;
    }
    if state.busy() || state.is_running() {
        state.ctrl_c_at = None;
        fx.push(Effect::SendOp(Op::Abort {
            turn: state.abort_turn(),
        }));
        return;
    }
    if state.quit_armed(now) {
        request_quit(state, fx);
    } else {
        state.ctrl_c_at = Some(now);
    }
}

/// Ctrl-T: the selected tool cell (else the newest) expands or collapses.
fn toggle_tool(state: &mut AppState, fx: &mut Vec<Effect>) {
    let target = state.selected_tool.or_else(|| state.chat.tool_before(None));
    if let Some(idx) = target
        && state.chat.toggle_tool_expanded(idx)
    {
        fx.push(Effect::ScrollChat(ChatScroll::Reveal(idx)));
    }
}

/// Alt-Up / Alt-Down: select the previous / next tool cell and bring it into view. Down past
/// the newest clears the selection.
fn select_tool(state: &mut AppState, prev: bool, fx: &mut Vec<Effect>) {
    let next = match (prev, state.selected_tool) {
        (true, None) => state.chat.tool_before(None),
        (true, Some(i)) => state.chat.tool_before(Some(i)).or(Some(i)),
        (false, None) => None,
        (false, Some(i)) => state.chat.tool_after(i),
    };
    state.selected_tool = next;
    match next {
        Some(idx) => fx.push(Effect::ScrollChat(ChatScroll::Reveal(idx))),
        None => fx.push(Effect::ScrollChat(ChatScroll::Bottom)),
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
fn popup_complete(state: &mut AppState, now: Instant) {
    if let Some(spec) = state.popup_items().get(state.popup_selected()).cloned() {
        let text = if spec.args.is_empty() {
            format!("/{}", spec.name)
        } else {
            format!("/{} ", spec.name)
        };
        set_input(state, &text, now);
    }
}

fn answer(
    state: &mut AppState,
    decision: Approval,
    key: KeyEvent,
    now: Instant,
    fx: &mut Vec<Effect>,
) {
    if !state.approval_takes_keys(now) {
        return; // typed before the prompt could be read, or meant for the input
    }
    if decision == Approval::Always && state.approvals.front().is_some_and(|p| p.always.is_none()) {
        return; // not offered: the prompt does not name the key (nor for `.mcp.json`)
    }
    let Some(p) = state.approvals.pop_front() else {
        return;
    };
    let text = match (p.asked, decision, &p.always) {
        (Asked::Tool { id }, _, always) => {
            if decision != Approval::Deny {
                approval_allowed(state, &id, now);
            }
            fx.push(Effect::SendOp(Op::Approval { id, decision }));
            match (decision, always) {
                (Approval::Once, _) => "allowed once".to_string(),
                (Approval::Always, Some(offer)) => offer.label.clone(),
                (Approval::Always, None) => "always allowed".to_string(),
                (Approval::Deny, _) => "denied".to_string(),
            }
        }
        // Esc leaves it undecided: the servers stay off now and the next launch asks again.
        (Asked::McpJson { .. }, _, _) if key.code == KeyCode::Esc => {
            "not decided: its servers stay off, the next launch asks again".to_string()
        }
        (Asked::Overwrite { retry }, _, _) => {
            undo_commands::answered(retry, decision, key.code == KeyCode::Esc, fx)
        }
        (Asked::Hooks { .. }, _, _) if key.code == KeyCode::Esc => {
            "not decided: its hooks do not run, the next launch asks again".to_string()
        }
        (Asked::Hooks { sha256 }, _, _) => {
            let approve = decision != Approval::Deny;
            fx.push(Effect::SendOp(Op::HooksDecision { sha256, approve }));
            if approve {
                "approved for this workspace".to_string()
            } else {
                "declined for this workspace (asked again when the file changes)".to_string()
            }
        }
        (Asked::McpJson { sha256 }, _, _) => {
            let approve = decision != Approval::Deny;
            fx.push(Effect::SendOp(Op::McpJsonDecision { sha256, approve }));
            if approve {
                "approved for this workspace".to_string()
            } else {
                "declined for this workspace (asked again when the file changes)".to_string()
            }
        }
    };
    match state.chat.get_mut(p.cell) {
        Some(
            Cell::Approval { answer, .. }
            | Cell::McpJson { answer, .. }
            | Cell::HooksQuestion { answer, .. },
        ) => *answer = Some(text),
        _ => state.notice(format!("→ {text}")),
    }
    state.approval_shown_at = if state.approvals.is_empty() {
        None
    } else {
        Some(now) // the next prompt takes the place of this one
    };
}

fn on_paste(state: &mut AppState, text: String, now: Instant) {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    match state.focus {
        Focus::Input => {
            if state.search.is_some() {
                state.search = None; // a paste is text for the input, not a query
            }
            if input::needs_chip(&text) {
                let label = state.pastes.add(text);
                state.input.insert_str(label);
            } else {
                state.input.insert_str(text);
            }
            state.popup = Popup::Auto { selected: 0 };
            state.input_edited(now);
            state.typed_at = Some(now);
        }
        Focus::Editor => {
            if let Some(ed) = state.editor.as_mut().filter(|ed| !ed.asks()) {
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
    }
}

fn on_mouse(
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
            match state.editor.as_mut() {
                _ if pane == Some(Pane::Approval) => {
                    let d = i32::from(WHEEL_LINES);
                    fx.push(Effect::ScrollPrompt(if up { -d } else { d }));
                }
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
        MouseEventKind::Down(_) => {
            let target = match pane {
                Some(Pane::Editor) if state.editor.is_some() => Focus::Editor,
                Some(Pane::Input | Pane::Approval) => Focus::Input,
                Some(Pane::Chat) => return click_chat(state, cell, fx),
                _ => return false,
            };
            let changed = state.focus != target;
            if changed && target == Focus::Input {
                state.input_edited(now); // the prompt does not answer a key meant for the editor
            }
            state.focus = target;
            changed
        }
        _ => false,
    }
}

/// A click in the chat: on a tool cell it selects it and expands or collapses it.
fn click_chat(state: &mut AppState, cell: Option<usize>, fx: &mut Vec<Effect>) -> bool {
    let Some(idx) = cell.filter(|i| state.chat.get(*i).is_some_and(Cell::is_expandable)) else {
        return false;
    };
    state.selected_tool = Some(idx);
    toggle_tool(state, fx);
    true
}

fn on_send_failed(state: &mut AppState, op: Op, reason: String, now: Instant) {
    state.error(format!("Could not reach the engine ({reason})"));
    if let Some(turn) = op.starts_turn() {
        state.in_flight.retain(|t| *t != turn);
    }
    let given_back = match op {
        Op::UserTurn { text, .. } => Some(text),
        Op::Command { name, args, .. } => Some(format!("/{name} {args}").trim_end().to_string()),
        _ => None,
    };
    if let Some(text) = given_back {
        if matches!(state.running, Running::Streaming { .. }) {
            state.running = Running::Idle;
        }
        if state.input.is_empty() {
            // Give the message back so it is not lost.
            on_paste(state, text, now);
        }
    }
}
