//! `/jobs` and the engine's jobs events: `/jobs` lists them, `/jobs N` shows a job's last lines,
//! `/jobs stop N` stops one; a chat line when a job ends. Esc never touches them: it aborts the
//! turn, and jobs are not part of a turn.

use std::time::Instant;

use crate::engine::protocol::{Event, JobsOp, Op};

use super::msg::Effect;
use super::state::AppState;

/// `/jobs [N | stop N]`.
pub(crate) fn command(state: &mut AppState, arg: Option<&str>, fx: &mut Vec<Effect>) {
    let words: Vec<&str> = arg.unwrap_or_default().split_whitespace().collect();
    let id = |w: &str| w.trim_start_matches('#').parse::<u32>().ok();
    match words.as_slice() {
        [] => {
            state.jobs.listing = true;
            fx.push(Effect::SendOp(Op::Jobs(JobsOp::List)));
        }
        [n] if id(n).is_some() => {
            if let Some(id) = id(n) {
                fx.push(Effect::SendOp(Op::Jobs(JobsOp::Output { id })));
            }
        }
        ["stop", n] if id(n).is_some() => {
            if let Some(id) = id(n) {
                state.chat.notice(format!("stopping job #{id}"));
                fx.push(Effect::SendOp(Op::Jobs(JobsOp::Stop { id })));
            }
        }
        _ => state.chat.error("usage: /jobs, /jobs N, or /jobs stop N"),
    }
}

/// The engine's jobs events.
pub(crate) fn on_event(state: &mut AppState, ev: Event, _now: Instant) {
    match ev {
        Event::Jobs { jobs } => {
            state.jobs.update(jobs);
            if std::mem::take(&mut state.jobs.listing) {
                let text = state.jobs.report();
                state.chat.notice(text);
            }
        }
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
            state.chat.notice(format!("job #{id}, last lines:\n{text}"));
        }
        _ => {}
    }
}
