//! What the session does with its background jobs (the table is [`crate::engine::jobs`]): the
//! main thread's table lives in the run's context for the whole process, so jobs run on through
//! handoffs; its changes reach the front end as events from one task (`Jobs` at every start and
//! end and when asked, each preceded by the `JobEnded` of every job it shows ended for the first
//! time, so no list shows an end before the end is told), the front end's `/jobs` ops are
//! answered beside the turn, and the engine stops every job when it leaves.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::engine::jobs::{JobLimits, Jobs};
use crate::engine::protocol::{Event, JobsOp};

/// Lines of each job a `Jobs` event carries.
const EVENT_LINES: usize = 3;
/// Lines of a job a `JobEnded` event carries.
const ENDED_LINES: usize = 5;
/// Lines a front end's `JobsOp::Output` gets.
const OUTPUT_LINES: usize = 200;
/// When flower-tui leaves, how long its jobs have after `SIGTERM` at most.
const LEAVING_GRACE: Duration = Duration::from_secs(2);

/// The main thread's table for the run directory `run_root`, its changes told on `events`.
pub(super) fn main_table(
    run_root: &std::path::Path,
    limits: JobLimits,
    events: &mpsc::UnboundedSender<Event>,
) -> Arc<Jobs> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let jobs =
        Arc::new(Jobs::new(crate::engine::jobs::dir_in(run_root), limits, true).with_changes(tx));
    let table = Arc::downgrade(&jobs);
    let events = events.clone();
    tokio::spawn(async move {
        while rx.recv().await.is_some() {
            let Some(jobs) = table.upgrade() else { break };
            // The changes queued meanwhile are answered by the same list.
            while rx.try_recv().is_ok() {}
            // The list walks `/proc` for ports: off the runtime's workers.
            let events = events.clone();
            let _ = tokio::task::spawn_blocking(move || tell(&jobs, &events)).await;
        }
    });
    jobs
}

/// The ends not told yet, then the list.
fn tell(jobs: &Jobs, events: &mpsc::UnboundedSender<Event>) {
    let now = jobs.front_list(ENDED_LINES);
    for job in now.ended {
        let _ = events.send(Event::JobEnded { job });
    }
    let jobs = now
        .all
        .into_iter()
        .map(|mut j| {
            let cut = j.last_lines.len().saturating_sub(EVENT_LINES);
            j.last_lines.drain(..cut);
            j
        })
        .collect();
    let _ = events.send(Event::Jobs { jobs });
}

/// Answer a front end's op about the jobs (stops run beside the engine's loop).
pub(super) fn answer(jobs: &Arc<Jobs>, op: JobsOp, events: &mpsc::UnboundedSender<Event>) {
    match op {
        JobsOp::List => jobs.ask_list(),
        JobsOp::Output { id } => {
            let text = match jobs.get(id, OUTPUT_LINES) {
                Some(job) if job.last_lines.is_empty() => "(no output yet)".to_string(),
                Some(job) => {
                    crate::engine::secrets::redact(&job.last_lines.join("\n")).into_owned()
                }
                None => {
                    // Not an output: a front end must not show it as a job's lines.
                    let message = format!("there is no job #{id}");
                    let _ = events.send(Event::Notice { message });
                    return;
                }
            };
            let _ = events.send(Event::JobOutput { id, text });
        }
        JobsOp::Stop { id } => {
            // Said once it is known: a job that is not running is named as such, never
            // "stopping" first.
            let message = match jobs.request_stop(id) {
                Ok(_) => format!("stopping job #{id}"),
                Err(message) => message,
            };
            let _ = events.send(Event::Notice { message });
        }
        JobsOp::StopAll => {
            let jobs = Arc::clone(jobs);
            tokio::spawn(async move {
                jobs.leave(jobs.limits().grace).await;
                jobs.ask_list();
            });
        }
    }
}

/// The engine leaves: every job is asked to stop, and killed after a short grace; the run's
/// record lists them gone.
pub(super) async fn leave(jobs: &Jobs) {
    jobs.leave(LEAVING_GRACE.min(jobs.limits().grace)).await;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::engine::tools::ToolCtx;

    fn notices(rx: &mut mpsc::UnboundedReceiver<Event>) -> Vec<String> {
        std::iter::from_fn(|| rx.try_recv().ok())
            .filter_map(|e| match e {
                Event::Notice { message } => Some(message),
                _ => None,
            })
            .collect()
    }

    #[tokio::test]
    async fn a_stop_is_said_once_known_and_a_job_that_is_not_running_is_never_stopping() {
        let dir = tempfile::tempdir().unwrap();
        let limits = JobLimits {
            max_running: 2,
            grace: Duration::from_millis(300),
            first_wait: Duration::from_millis(100),
        };
        let jobs = Arc::new(Jobs::new(dir.path().join("jobs"), limits, false));
        let ctx = ToolCtx::new(dir.path(), "s");
        let start = json!({"command": "sleep 30", "run_in_background": true});
        assert!(!jobs.run_start(&start, &ctx).await.is_error);
        let (tx, mut rx) = mpsc::unbounded_channel();
        answer(&jobs, JobsOp::Stop { id: 1 }, &tx);
        assert_eq!(notices(&mut rx), ["stopping job #1"]);
        for _ in 0..100 {
            if jobs.running() == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(jobs.running(), 0, "the job stopped");
        answer(&jobs, JobsOp::Stop { id: 1 }, &tx);
        let said = notices(&mut rx);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].starts_with("job #1 is not running"), "{said:?}");
        answer(&jobs, JobsOp::Stop { id: 9 }, &tx);
        assert_eq!(notices(&mut rx), ["there is no job #9"]);
    }
}
