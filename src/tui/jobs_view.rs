//! The background jobs as the TUI knows them: the engine's last list (the status line counts the
//! running ones), and where `/jobs`'s overlay stands — the row chosen, a job's output shown in
//! place of the list, the jobs asked to stop that still run, a note on why a key did nothing —
//! moved by its keys. While it is open the overlay asks the engine for a fresh list every
//! [`REFRESH`] (output sizes grow; ages are drawn from the clock), and for the output it shows
//! while that job runs. What it draws is `jobs_overlay`.

use std::time::{Duration, Instant};

use crate::engine::jobs::JobInfo;
use crate::engine::protocol::{JobsOp, Op};

/// How often the open overlay asks for the list again.
pub(crate) const REFRESH: Duration = Duration::from_secs(1);

/// The jobs, as the engine last listed them, and the overlay while it is open.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct JobsView {
    jobs: Vec<JobInfo>,
    overlay: Option<JobsOverlay>,
}

/// `/jobs`'s overlay.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct JobsOverlay {
    /// The row chosen in the list.
    pub(crate) selected: usize,
    /// A job's output, shown in place of the list.
    pub(crate) output: Option<Output>,
    /// Jobs asked to stop that the engine still lists running.
    pub(crate) stopping: Vec<u32>,
    /// Why the last key did nothing.
    pub(crate) note: Option<String>,
    /// When the list was last asked for (None: with the opening, not seen by a tick yet).
    asked_at: Option<Instant>,
}

/// A job's output in the overlay.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Output {
    pub(crate) id: u32,
    /// Its last lines, once the engine sent them.
    pub(crate) text: Option<String>,
    /// Lines scrolled up from the end.
    pub(crate) scroll: usize,
}

fn list_op() -> Op {
    Op::Jobs(JobsOp::List)
}

impl JobsView {
    /// How many run now (the status line shows it when any does).
    pub(crate) fn running(&self) -> usize {
        self.jobs.iter().filter(|j| j.state.is_running()).count()
    }

    /// The jobs, oldest first.
    pub(crate) fn jobs(&self) -> &[JobInfo] {
        &self.jobs
    }

    /// The overlay, while it is open.
    pub(crate) fn overlay(&self) -> Option<&JobsOverlay> {
        self.overlay.as_ref()
    }

    /// Whether the overlay is open (it takes every key).
    pub(crate) fn is_open(&self) -> bool {
        self.overlay.is_some()
    }

    /// `/jobs`: the overlay opens on the list as it is; the op asks the engine for a fresh one.
    pub(crate) fn open(&mut self) -> Op {
        self.overlay = Some(JobsOverlay::default());
        list_op()
    }

    /// The engine's new list: the chosen row stays in it; a stop it shows ended is done.
    pub(crate) fn update(&mut self, jobs: Vec<JobInfo>) {
        self.jobs = jobs;
        let Some(o) = self.overlay.as_mut() else {
            return;
        };
        o.selected = o.selected.min(self.jobs.len().saturating_sub(1));
        let running: Vec<u32> = self
            .jobs
            .iter()
            .filter(|j| j.state.is_running())
            .map(|j| j.id)
            .collect();
        o.stopping.retain(|id| running.contains(id));
    }

    /// A job's last lines from the engine: kept when the overlay shows that job's output, else
    /// given back (they are for the chat: `/jobs N`).
    pub(crate) fn on_output(&mut self, id: u32, text: String) -> Option<String> {
        match self.overlay.as_mut().and_then(|o| o.output.as_mut()) {
            Some(out) if out.id == id => {
                out.text = Some(text);
                None
            }
            _ => Some(text),
        }
    }

    /// Esc: from a job's output back to the list; from the list, the overlay closes.
    pub(crate) fn back(&mut self) {
        match self.overlay.as_mut() {
            Some(o) if o.output.is_some() => o.output = None,
            _ => self.overlay = None,
        }
    }

    /// Up or Down: the row chosen in the list; in a job's output, a line of scroll.
    pub(crate) fn step(&mut self, down: bool) {
        let n = self.jobs.len();
        let Some(o) = self.overlay.as_mut() else {
            return;
        };
        o.note = None;
        if let Some(out) = o.output.as_mut() {
            let lines = out.text.as_deref().map_or(0, |t| t.lines().count());
            out.scroll = if down {
                out.scroll.saturating_sub(1)
            } else {
                (out.scroll + 1).min(lines.saturating_sub(1))
            };
            return;
        }
        if n == 0 {
            return;
        }
        o.selected = if down {
            (o.selected + 1) % n
        } else {
            (o.selected + n - 1) % n
        };
    }

    /// The job the keys are about: the one whose output shows, else the chosen row.
    fn current(&self) -> Option<&JobInfo> {
        let o = self.overlay.as_ref()?;
        match &o.output {
            Some(out) => self.jobs.iter().find(|j| j.id == out.id),
            None => self.jobs.get(o.selected),
        }
    }

    /// Enter or `o`: the chosen job's output in place of the list (the op asks for it); in the
    /// output, it is asked for again.
    pub(crate) fn show_output(&mut self) -> Option<Op> {
        let id = self.current()?.id;
        let o = self.overlay.as_mut()?;
        o.note = None;
        if o.output.as_ref().is_none_or(|out| out.id != id) {
            o.output = Some(Output {
                id,
                text: None,
                scroll: 0,
            });
        }
        Some(Op::Jobs(JobsOp::Output { id }))
    }

    /// `s` or Delete: stop the chosen job (the engine sends `SIGTERM` to its group, `SIGKILL`
    /// after the grace period); a job that does not run says why in a note.
    pub(crate) fn stop(&mut self) -> Option<Op> {
        let job = self.current()?;
        let (id, state) = (job.id, job.state);
        let o = self.overlay.as_mut()?;
        if !state.is_running() {
            o.note = Some(format!("job #{id} is not running: {}", state.describe()));
            return None;
        }
        if o.stopping.contains(&id) {
            o.note = Some(format!(
                "job #{id} was asked to stop; it is killed if it is still there after the grace period"
            ));
            return None;
        }
        o.stopping.push(id);
        o.note = None;
        Some(Op::Jobs(JobsOp::Stop { id }))
    }

    /// A frame: every [`REFRESH`] the open overlay asks for the list, and for the output it
    /// shows while that job runs.
    pub(crate) fn tick(&mut self, now: Instant) -> Vec<Op> {
        let running_output = self
            .current()
            .filter(|j| j.state.is_running())
            .map(|j| j.id)
            .filter(|_| self.overlay.as_ref().is_some_and(|o| o.output.is_some()));
        let Some(o) = self.overlay.as_mut() else {
            return Vec::new();
        };
        match o.asked_at {
            None => {
                o.asked_at = Some(now);
                Vec::new()
            }
            Some(at) if now.saturating_duration_since(at) >= REFRESH => {
                o.asked_at = Some(now);
                let mut ops = vec![list_op()];
                ops.extend(running_output.map(|id| Op::Jobs(JobsOp::Output { id })));
                ops
            }
            Some(_) => Vec::new(),
        }
    }

    /// When the open overlay wants its next frame (to ask again).
    pub(crate) fn next_refresh_in(&self, now: Instant) -> Option<Duration> {
        let o = self.overlay.as_ref()?;
        Some(match o.asked_at {
            None => Duration::ZERO,
            Some(at) => REFRESH.saturating_sub(now.saturating_duration_since(at)),
        })
    }
}
