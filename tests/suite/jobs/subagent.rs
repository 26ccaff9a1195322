//! A job started by a subagent ends with its task: the child's own table, stopped when its task
//! ends, named in its report.

use std::time::Duration;

use super::super::subagents::{calls, task};
use super::{HEARTBEAT, background, beats, read_heartbeat, stopped};
use crate::support::fake::anthropic::tool_results;
use crate::support::fake::{U, anthropic as a};
use crate::support::harness::{Harness, start};

#[tokio::test]
async fn a_subagents_job_runs_while_it_works_and_ends_with_its_task() {
    let h = Harness::new().await;
    let one = [task(
        "task_a",
        "serve and look",
        "SERVE-JOB: start the heartbeat",
    )];
    h.server
        .push(a::text_then_tools("", &calls(&one), U::new(1000, 20)));
    h.server.push_for("SERVE-JOB", background("c1", HEARTBEAT));
    h.server.push_for("SERVE-JOB", read_heartbeat("c2"));
    h.server.push_for(
        "SERVE-JOB",
        a::text("REPORT: the heartbeat beats", U::new(1200, 20)),
    );
    h.server.push(a::text("done", U::new(1300, 20)));
    let mut p = h.params(200_000, 50_000);
    p.tools.jobs.first_wait = Duration::from_millis(300);
    let mut r = start(p);
    r.completed_turn("have a subagent serve it").await;
    // While the child worked, its job ran: its second call read the heartbeat.
    let recorded = h.server.recorded();
    let child: Vec<_> = recorded
        .iter()
        .filter(|r| r.body["system"].to_string().contains("You are a subagent"))
        .collect();
    assert_eq!(child.len(), 3, "the child's three requests");
    let started = tool_results(&child[1].body)[0]["content"].to_string();
    assert!(
        started.contains("Job #1 runs in the background"),
        "{started}"
    );
    let read = tool_results(&child[2].body)[0]["content"].to_string();
    assert!(
        read.chars().any(|c| c.is_ascii_digit()),
        "the heartbeat was read: {read}"
    );
    // The task ended: the job is gone, and the report says it was stopped.
    assert!(
        !beats(&h.workspace, Duration::from_secs(2)).await,
        "the job ended with its task"
    );
    let main = recorded.last().unwrap();
    let report = tool_results(&main.body)[0]["content"].to_string();
    assert!(report.contains("REPORT: the heartbeat beats"), "{report}");
    assert!(
        report.contains("background jobs were stopped when its task ended: #1 `while :; do date"),
        "{report}"
    );
    r.shutdown().await;
    assert!(stopped(&h.workspace, Duration::from_secs(3)).await);
}
