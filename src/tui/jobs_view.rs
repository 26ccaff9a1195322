//! The background jobs as the TUI knows them: the engine's last list (the status line counts the
//! running ones), a chat cell when one ends, and `/jobs`: the list (command, age, state, output
//! size), `/jobs N` a job's last lines, `/jobs stop N` stops one. Esc never touches them: it
//! aborts the turn, and jobs are not part of a turn.

use std::time::Instant;

use crate::engine::jobs::JobInfo;
use crate::engine::protocol::{Event, JobsOp, Op};

use super::msg::Effect;
use super::state::AppState;

/// The jobs, as the engine last listed them.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct JobsView {
    jobs: Vec<JobInfo>,
    /// `/jobs` asked for the list: the next one is shown in the chat.
    listing: bool,
}

impl JobsView {
    /// How many run now (the status line shows it when any does).
    pub(crate) fn running(&self) -> usize {
        self.jobs.iter().filter(|j| j.state.is_running()).count()
    }

    /// The `/jobs` listing.
    fn report(&self) -> String {
        if self.jobs.is_empty() {
            return "No background jobs. The model starts one with bash's run_in_background."
                .to_string();
        }
        let mut lines = vec!["Background jobs:".to_string()];
        let now = crate::engine::fsutil::now_unix().0;
        for j in &self.jobs {
            let age = crate::engine::jobs::age(now.saturating_sub(j.started_unix));
            let mut line = format!(
                "  #{} · {} · {age} · {} · {}",
                j.id,
                j.state.describe(),
                crate::engine::jobs::size(j.bytes),
                crate::engine::text::one_line(&j.command, 80)
            );
            if let Some(url) = &j.url {
                line.push_str(&format!(" · {url}"));
            }
            lines.push(line);
        }
        lines.push("/jobs N shows a job's last lines; /jobs stop N stops it".to_string());
        lines.join("\n")
    }
}

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
            state.jobs.jobs = jobs;
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
