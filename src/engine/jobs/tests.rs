use std::time::Duration;

use serde_json::json;

use super::*;
use crate::engine::tools::names;

fn table(dir: &Path, limits: JobLimits) -> Jobs {
    Jobs::new(dir.join("jobs"), limits, true)
}

fn quick() -> JobLimits {
    JobLimits {
        max_running: 2,
        grace: Duration::from_millis(500),
        first_wait: Duration::from_millis(300),
    }
}

fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

async fn wait_until(mut f: impl FnMut() -> bool) -> bool {
    for _ in 0..100 {
        if f() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn a_job_runs_is_read_and_its_end_is_told_once() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = table(dir.path(), quick());
    let ctx = ToolCtx::new(dir.path(), "s");
    let out = jobs
        .run_start(
            &json!({"command": "echo ready at http://127.0.0.1:4321/; read -t 2 _ </dev/zero || sleep 0.6; echo done; exit 3", "run_in_background": true}),
            &ctx,
        )
        .await;
    assert!(!out.is_error, "{}", out.content);
    assert!(
        out.content.contains("Job #1 runs in the background"),
        "{}",
        out.content
    );
    assert!(
        out.content.contains("http://127.0.0.1:4321/"),
        "{}",
        out.content
    );
    assert!(wait_until(|| jobs.running() == 0).await, "the job ends");
    let notice = jobs.take_notice().expect("an end is told");
    assert!(
        notice.contains("#1") && notice.contains("exit code 3"),
        "{notice}"
    );
    assert!(notice.contains("done"), "the last line: {notice}");
    assert_eq!(jobs.take_notice(), None, "told once");
    let read = jobs
        .run_tool(names::JOB_OUTPUT, &json!({"id": 1}))
        .await
        .unwrap();
    assert!(
        read.content.contains("New output:\ndone"),
        "{}",
        read.content
    );
    let again = jobs
        .run_tool(names::JOB_OUTPUT, &json!({"id": "#1"}))
        .await
        .unwrap();
    assert!(again.content.contains("No new output"), "{}", again.content);
    let log = std::fs::read_to_string(dir.path().join("jobs/1.log")).unwrap();
    assert_eq!(log, "ready at http://127.0.0.1:4321/\ndone\n");
}

#[tokio::test]
async fn a_job_ignoring_sigterm_is_killed_after_the_grace_period() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = table(dir.path(), quick());
    let ctx = ToolCtx::new(dir.path(), "s");
    let out = jobs
        .run_start(
            &json!({"command": "trap '' TERM; echo $$; sleep 30 & wait; sleep 30", "run_in_background": true}),
            &ctx,
        )
        .await;
    let pid: u32 = out
        .content
        .lines()
        .find_map(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("{}", out.content));
    assert!(alive(pid));
    let stopped = jobs
        .run_tool(names::JOB_STOP, &json!({"id": 1}))
        .await
        .unwrap();
    assert!(
        stopped.content.contains("stopped after"),
        "{}",
        stopped.content
    );
    assert!(!alive(pid), "killed after the grace period");
    assert_eq!(jobs.list(0)[0].state, JobState::Stopped);
    assert_eq!(jobs.take_notice(), None, "the model saw the end itself");
}

#[tokio::test]
async fn the_cap_refuses_a_job_over_it_and_dropping_the_table_kills_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = table(dir.path(), quick());
    let ctx = ToolCtx::new(dir.path(), "s");
    let mut pids = Vec::new();
    for _ in 0..2 {
        let out = jobs
            .run_start(
                &json!({"command": "echo $$; sleep 30", "run_in_background": true}),
                &ctx,
            )
            .await;
        pids.push(
            out.content
                .lines()
                .find_map(|l| l.trim().parse::<u32>().ok())
                .unwrap(),
        );
    }
    let third = jobs
        .run_start(
            &json!({"command": "sleep 1", "run_in_background": true}),
            &ctx,
        )
        .await;
    assert!(
        third.is_error && third.content.contains("not started"),
        "{}",
        third.content
    );
    drop(jobs);
    assert!(
        wait_until(|| pids.iter().all(|&p| !alive(p))).await,
        "every job dies with its table"
    );
}

#[tokio::test]
async fn a_flooding_job_stays_bounded_and_a_filter_finds_its_lines() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = table(dir.path(), quick());
    let ctx = ToolCtx::new(dir.path(), "s");
    jobs.run_start(
        &json!({"command": "for i in $(seq 1 200000); do echo \"line $i of the flood\"; done; echo NEEDLE", "run_in_background": true}),
        &ctx,
    )
    .await;
    assert!(wait_until(|| jobs.running() == 0).await);
    {
        let t = jobs.table.lock().unwrap();
        let job = t.job(1).unwrap();
        assert!(job.log.total() > 4_000_000, "{}", job.log.total());
        assert!(job.log.held() <= output::RING + 8 * 1024);
    }
    let read = jobs
        .run_tool(names::JOB_OUTPUT, &json!({"id": 1}))
        .await
        .unwrap();
    assert!(read.content.len() < 20_000, "{}", read.content.len());
    assert!(
        read.content.contains("not shown; all of it is in"),
        "{}",
        &read.content[..300]
    );
    assert!(read.content.ends_with("NEEDLE"));
    let found = jobs
        .run_tool(
            names::JOB_OUTPUT,
            &json!({"id": 1, "filter": "^line 1999[0-9]{2} "}),
        )
        .await
        .unwrap();
    assert!(
        found.content.contains("0 new line(s) match"),
        "read to the end: {}",
        found.content
    );
    let tail = jobs
        .run_tool(names::JOB_OUTPUT, &json!({"id": 1, "tail": 2}))
        .await
        .unwrap();
    assert!(
        tail.content.ends_with("line 200000 of the flood\nNEEDLE"),
        "{}",
        tail.content
    );
}

#[tokio::test]
async fn a_later_process_lists_the_running_jobs_as_gone() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolCtx::new(dir.path(), "s");
    {
        let jobs = table(dir.path(), quick());
        jobs.run_start(
            &json!({"command": "echo up; sleep 30", "run_in_background": true}),
            &ctx,
        )
        .await;
        // The process "dies" (its jobs with it): its record still says running.
        let pgid = jobs.table.lock().unwrap().jobs[0].pgid;
        process::signal_group(pgid, libc::SIGKILL);
        let record = std::fs::read_to_string(dir.path().join("jobs/jobs.json")).unwrap();
        assert!(record.contains("\"running\""), "{record}");
        std::mem::forget(jobs);
    }
    let later = table(dir.path(), quick());
    let all = later.list(1);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].state, JobState::Gone);
    let notice = later.take_notice().unwrap();
    assert!(
        notice.contains("#1 `echo up; sleep 30` is gone"),
        "{notice}"
    );
    let next = later
        .run_start(&json!({"command": "true", "run_in_background": true}), &ctx)
        .await;
    assert!(
        next.content.contains("Job #2"),
        "ids go on: {}",
        next.content
    );
    let read = later
        .run_tool(names::JOB_OUTPUT, &json!({"id": 1, "tail": 5}))
        .await
        .unwrap();
    assert!(
        read.content.contains("up"),
        "its file is still read: {}",
        read.content
    );
}

#[tokio::test]
async fn jobs_stopped_on_leaving_are_recorded_gone_and_a_resume_adopts_them() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolCtx::new(dir.path(), "s");
    let start = |command: &str| json!({"command": command, "run_in_background": true});
    // Run A: a server stopped as its process leaves, and a job that ended by itself.
    let run_a = dir.path().join("a");
    {
        let jobs = table(&run_a, quick());
        jobs.run_start(&start("echo served; sleep 30"), &ctx).await;
        jobs.run_start(&start("echo done"), &ctx).await;
        assert!(wait_until(|| jobs.running() == 1).await);
        jobs.leave(Duration::from_secs(1)).await;
        let seen: Vec<JobState> = jobs.list(0).iter().map(|j| j.state).collect();
        assert_eq!(
            seen,
            [JobState::Stopped, JobState::Exited { code: 0 }],
            "this process sees it stopped"
        );
    }
    // Run B, another process: its own job runs, then `/resume` moves it to run A.
    let b = table(&dir.path().join("b"), quick());
    b.run_start(&start("sleep 30"), &ctx).await;
    b.take_notice();
    b.adopt(dir_in(&run_a));
    let all: Vec<(u32, JobState)> = b.list(0).iter().map(|j| (j.id, j.state)).collect();
    assert_eq!(
        all,
        [
            (1, JobState::Running),
            (2, JobState::Exited { code: 0 }),
            (3, JobState::Gone)
        ],
        "its own job keeps #1; run A's #1 takes the next free id"
    );
    let notice = b.take_notice().unwrap();
    assert!(
        notice.contains(
            "Job #1 `echo served; sleep 30` (#1 in the session you resumed; #3 now) is gone"
        ),
        "{notice}"
    );
    assert_eq!(b.take_notice(), None, "told once");
    let read = b
        .run_tool(names::JOB_OUTPUT, &json!({"id": 3, "tail": 5}))
        .await
        .unwrap();
    assert!(read.content.contains("served"), "{}", read.content);
    // The record moved to run A, and so do new jobs' logs.
    let next = b.run_start(&start("echo four"), &ctx).await;
    assert!(next.content.contains("Job #4"), "{}", next.content);
    assert!(dir_in(&run_a).join("4.log").exists());
    let record = std::fs::read_to_string(dir_in(&run_a).join("jobs.json")).unwrap();
    assert_eq!(record.matches("\"id\"").count(), 4, "{record}");
    // Adopting the same run again changes nothing.
    b.adopt(dir_in(&run_a));
    assert_eq!(b.list(0).len(), 4);
}

#[tokio::test]
async fn the_next_read_after_a_start_goes_on_after_the_lines_the_start_showed() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = table(dir.path(), quick());
    let ctx = ToolCtx::new(dir.path(), "s");
    let start = json!({"command": "seq -f 'line %g' 1 60; sleep 30", "run_in_background": true});
    let out = jobs.run_start(&start, &ctx).await;
    assert!(out.content.contains("line 20\n"), "{}", out.content);
    assert!(!out.content.contains("line 21"), "{}", out.content);
    assert!(
        out.content.contains("[… 60 lines so far in all]"),
        "{}",
        out.content
    );
    let read = jobs
        .run_tool(names::JOB_OUTPUT, &json!({"id": 1}))
        .await
        .unwrap();
    assert!(
        read.content.contains("New output:\nline 21\n"),
        "the middle is read next: {}",
        read.content
    );
    assert!(read.content.ends_with("line 60"), "{}", read.content);
    // A `tail` out of its range, or not a number, is refused rather than guessed at.
    for bad in [json!(-1), json!(0), json!(100_000), json!("5"), json!(2.5)] {
        let out = jobs
            .run_tool(names::JOB_OUTPUT, &json!({"id": 1, "tail": bad}))
            .await
            .unwrap();
        assert!(out.is_error, "{bad}: {}", out.content);
        assert!(out.content.contains("`tail`"), "{}", out.content);
    }
    let last = jobs
        .run_tool(names::JOB_OUTPUT, &json!({"id": 1, "tail": 2}))
        .await
        .unwrap();
    assert!(
        last.content.ends_with("line 59\nline 60"),
        "{}",
        last.content
    );
}
