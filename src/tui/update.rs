//! The reducer: `update(&mut AppState, Msg, now) -> Vec<Effect>`. Pure: no I/O, no clock (every
//! handler takes the `now` it was given); the app executes the effects and feeds their results
//! back as messages. Keys are in `key_actions.rs` (Esc and Ctrl-C in `interrupt_keys.rs`, the
//! answers to questions in `question_answers.rs`), pastes and the mouse in `paste_and_mouse.rs`,
//! engine events in `events.rs`, Enter and slash commands in `commands.rs`, the side editor in
//! `editor_update.rs`; all of them import the state and `msg`, never this file.

use std::time::Instant;

use crate::engine::protocol::Op;

use super::editor::SideEditor;
use super::editor_update::{on_saved, on_unsaved_kept, review_ended};
use super::events::on_event;
use super::key_actions::{on_key, sync_mention};
use super::msg::{Effect, Msg};
use super::paste_and_mouse::{on_mouse, on_paste};
use super::state::{AppState, Focus};
use super::unsaved;

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
            sync_mention(state, &mut fx);
        }
        Msg::Mouse { event, pane, cell } => {
            if !on_mouse(state, event, pane, cell, now, &mut fx) {
                return fx; // motion and clicks that change nothing: no redraw
            }
        }
        Msg::Resize => {}
        Msg::Engine(ev) => on_event(state, ev, now, &mut fx),
        Msg::EngineClosed => {
            // Nothing of ours runs any more (the queue stays, to be recalled).
            state.turns.engine_gone();
            state.activity.engine_gone();
            state.sync_gauge_mode();
            state.chat.error("The engine stopped; /quit to leave");
        }
        Msg::Tick => {
            on_tick(state, now, &mut fx);
            if let Some(d) = state.next_frame_in(now) {
                fx.push(Effect::ScheduleFrame(Some(d)));
            }
            return fx; // the frame this tick belongs to is being drawn already
        }
        Msg::FileChanged { path, content } => {
            if let Some(ed) = state.editor.on_file(&path) {
                ed.disk_changed(content);
            }
        }
        Msg::EditorLoaded { path, content } => match content {
            Ok(text) => {
                state
                    .editor
                    .put(SideEditor::open(path.clone(), &text, None, now));
                state.focus = Focus::Editor;
                fx.push(Effect::WatchFile(path));
            }
            Err(e) => state
                .chat
                .error(format!("Cannot open {}: {e}", path.display())),
        },
        Msg::Saved { path, text, result } => on_saved(state, path, text, result, &mut fx),
        Msg::ExternalEditorDone { path, result } => match result {
            Ok(text) => {
                if let Some(ed) = state.editor.on_file(&path) {
                    ed.disk_changed(Ok(text));
                }
            }
            Err(e) => state.chat.error(format!("$EDITOR failed: {e}")),
        },
        Msg::UnsavedKept { from, result } => on_unsaved_kept(state, from, result),
        Msg::WatchFailed { path, reason } => {
            if let Some(ed) = state.editor.on_file(&path) {
                ed.set_note(format!(
                    "not watching the file for outside changes: {reason}"
                ));
            }
        }
        Msg::Exported { path, result } => super::info_commands::exported(state, path, result),
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
        } => state
            .mention
            .on_matches(seq, items, complete, indexed, &mut fx),
        // The pasted image goes into the message as a mention of its file.
        Msg::ImagePasted(Ok(path)) => state.input.paste(format!("@\"{}\" ", path.display()), now),
        Msg::ImagePasted(Err(why)) => state.chat.notice(format!("no image pasted: {why}")),
    }
    fx.push(Effect::ScheduleFrame(None));
    fx
}

fn on_tick(state: &mut AppState, now: Instant, fx: &mut Vec<Effect>) {
    state.quit.expire(now);
    super::subagent_events::on_tick(state, now);
    state.chat.count_tool_seconds(now);
    state.mention.on_tick(fx);
    super::job_events::tick(state, now, fx);
    let ended = state.editor.tick(now);
    if ended {
        if super::editor_update::write_back_deleted(state, fx) {
            return;
        }
        if let Some(ed) = state.editor.get_mut() {
            ed.set_note("review over: the next session reads this file");
        }
        if let Some(handoff) = state.editor.take_review_handoff() {
            fx.push(Effect::SendOp(Op::ReviewDone { handoff }));
        }
        review_ended(state);
    }
}

fn on_send_failed(state: &mut AppState, op: Op, reason: String, now: Instant) {
    state
        .chat
        .error(format!("Could not reach the engine ({reason})"));
    if let Some(turn) = op.starts_turn() {
        state.turns.over(turn);
    }
    let given_back = match op {
        Op::UserTurn { text, .. } => Some(text),
        Op::Command { name, args, .. } => Some(format!("/{name} {args}").trim_end().to_string()),
        Op::Shell { command, .. } => Some(format!("!{command}")),
        _ => None,
    };
    if let Some(text) = given_back {
        state.activity.send_failed();
        if state.input.is_empty() {
            // Give the message back so it is not lost.
            on_paste(state, text, now);
        }
    }
}
