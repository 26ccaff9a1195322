//! `/resume` inside a running process: the resumed run's jobs join the table, the ones that ran
//! there listed gone (this process's own job keeps running and its id), and the next request
//! tells the model so, naming the id the resumed conversation knew.

use flower_tui::engine::ledger::RunDir;
use flower_tui::engine::policy::FrontEnd;
use flower_tui::engine::protocol::{Event, JobState, Op};

use super::{HEARTBEAT, background, notice};
use crate::support::fake::{U, anthropic as a};
use crate::support::harness::{Harness, start};

#[tokio::test]
async fn resume_in_a_running_process_lists_the_other_runs_jobs_gone() {
    let h = Harness::new().await;
    // Run A starts the heartbeat, then its process ends (and stops it).
    h.server.push(background("t1", HEARTBEAT));
    h.server.push(a::text("serving", U::new(1100, 20)));
    let mut first = start(h.params(200_000, 50_000));
    first.completed_turn("start the server").await;
    let run_a = RunDir::open(&first.run_root).run_id;
    first.shutdown().await;
    // Another process, its own job running, resumes run A.
    h.server.push(background("t2", "sleep 30"));
    h.server.push(a::text("waiting", U::new(1100, 20)));
    let mut p = h.params(200_000, 50_000);
    p.front_end = FrontEnd::Interactive { review: false };
    p.start.step = Some("waiting".into());
    let mut r = start(p);
    r.completed_turn("wait a while").await;
    r.send(Op::Resume { run_id: run_a }).await;
    let listed = r
        .until_some(|e| match e {
            Event::Jobs { jobs } if jobs.len() == 2 => Some(jobs.clone()),
            _ => None,
        })
        .await;
    let seen: Vec<(u32, JobState, &str)> = listed
        .iter()
        .map(|j| (j.id, j.state, j.command.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            (1, JobState::Running, "sleep 30"),
            (2, JobState::Gone, HEARTBEAT)
        ]
    );
    h.server.push(a::text("restarting it", U::new(1200, 20)));
    r.completed_turn("is the server up?").await;
    let notice = notice(h.server.requests().last().unwrap());
    assert!(
        notice.contains("Job #1 `while :; do date")
            && notice.contains("(#1 in the session you resumed; #2 now) is gone"),
        "{notice}"
    );
    assert!(
        !notice.contains("sleep 30"),
        "its own job runs on: {notice}"
    );
    r.shutdown().await;
}
