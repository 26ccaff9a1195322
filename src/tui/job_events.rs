//! `/jobs` and the engine's jobs events: `/jobs` opens the list (`jobs_view`, its keys below),
//! `/jobs N` shows a job's last lines in the chat, `/jobs stop N` stops one; a chat line when a
//! job ends. Esc never touches a job: it aborts the turn (jobs are not part of a turn), and in
//! the list it closes the list.

use std::time::Instant;

use crate::engine::protocol::{Event, JobsOp, Op};

use super::keymap::Action;
use super::msg::Effect;
use super::state::AppState;

/// `/jobs [N | stop N]`.
pub(crate) fn command(state: &mut AppState, arg: Option<&str>, fx: &mut Vec<Effect>) {
    let words: Vec<&str> = arg.unwrap_or_default().split_whitespace().collect();
    let id = |w: &str| w.trim_start_matches('#').parse::<u32>().ok();
    match words.as_slice() {
        [] => fx.push(Effect::SendOp(state.jobs.open())),
        [n] if id(n).is_some() => {
            if let Some(id) = id(n) {
                fx.push(Effect::SendOp(Op::Jobs(JobsOp::Output { id })));
            }
        }
        ["stop", n] if id(n).is_some() => {
            if let Some(id) = id(n) {
                fx.push(Effect::SendOp(Op::Jobs(JobsOp::Stop { id })));
            }
        }
        _ => state.chat.error("usage: /jobs, /jobs N, or /jobs stop N"),
    }
}

/// The engine's jobs events.
pub(crate) fn on_event(state: &mut AppState, ev: Event, _now: Instant) {
    match ev {
        Event::Jobs { jobs } => state.jobs.update(jobs),
        Event::JobEnded { job } => {
            let mut text = format!(
                "job #{} ended: {} · {}",
                job.id,
                job.state.describe(),
                crate::engine::text::one_line(&job.command, 80)
            );
            if let Some(last) = job.last_lines.last() {
                text.push_str(&format!("\n  {}", crate::engine::text::one_line(last, 200)));
            }
            state.chat.notice(text);
        }
        Event::JobOutput { id, text } => {
            if let Some(text) = state.jobs.on_output(id, text) {
                state.chat.notice(format!("job #{id}, last lines:\n{text}"));
            }
        }
        _ => {}
    }
}

/// A key of the open list.
pub(crate) fn key(state: &mut AppState, action: Action, fx: &mut Vec<Effect>) {
    let op = match action {
        Action::JobsNext | Action::JobsPrev => {
            state.jobs.step(action == Action::JobsNext);
            None
        }
        Action::JobsOutput => state.jobs.show_output(),
        Action::JobsStop => state.jobs.stop(),
        _ => {
            state.jobs.back();
            None
        }
    };
    fx.extend(op.map(Effect::SendOp));
}

/// A frame: the open list asks for fresh figures.
pub(crate) fn tick(state: &mut AppState, now: Instant, fx: &mut Vec<Effect>) {
    fx.extend(state.jobs.tick(now).into_iter().map(Effect::SendOp));
}
