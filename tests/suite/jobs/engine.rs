//! Jobs through the engine against the fake provider.

use std::time::Duration;

use flower_tui::engine::protocol::{Event, JobState};
use serde_json::json;

use super::{HEARTBEAT, background, beats, notice, read_heartbeat, stopped, texts};
use crate::support::fake::{U, anthropic as a};
use crate::support::harness::{Harness, start, turn_end};

const DOC: &str = "## Doing\nServing the app.\n\n## Decided\n- Keep it running.\n\n## Dead ends\n(none)\n\n## Next\nTest against the server.\n\n## Scene\n- heartbeat\n";

#[tokio::test]
async fn a_heartbeat_job_runs_through_the_turn_and_a_handoff_and_stops_when_the_engine_leaves() {
    let h = Harness::new().await;
    h.server.push(background("t1", HEARTBEAT));
    h.server.push(read_heartbeat("t2"));
    h.server.push(a::text("the server runs", U::new(1200, 20)));
    h.server.push(a::text(DOC, U::new(1300, 20))); // the /handoff writing turn
    h.server.push(a::text("carrying on", U::new(500, 20)));
    let mut p = h.params(200_000, 50_000);
    p.tools.jobs.first_wait = Duration::from_millis(300);
    let mut r = start(p);
    let ev = r.turn("start the server, then look at it").await;
    assert_eq!(turn_end(&ev), "completed");
    let started = ev
        .iter()
        .find_map(|e| match e {
            Event::ToolResult { id, output, .. } if id == "t1" => Some(output.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        started.contains("Job #1 runs in the background"),
        "{started}"
    );
    assert!(
        beats(&h.workspace, Duration::from_secs(5)).await,
        "the job beats after its turn"
    );
    let turn = r.send_handoff(None).await;
    assert_eq!(turn_end(&r.until_end(turn).await), "handoff");
    assert!(
        beats(&h.workspace, Duration::from_secs(5)).await,
        "the job beats after the handoff"
    );
    assert_eq!(turn_end(&r.turn("go on").await), "completed");
    // The successor's first request: the briefing and the document's Touched name the job.
    let reqs = h.server.requests();
    let first = texts(reqs.last().unwrap());
    assert!(first.contains("## Background jobs"), "{first}");
    assert!(first.contains("#1 `while :; do date"), "{first}");
    assert!(
        first.contains("Background jobs running at this handoff"),
        "{first}"
    );
    r.shutdown().await;
    assert!(
        stopped(&h.workspace, Duration::from_secs(8)).await,
        "no job outlives the engine"
    );
}

/// A command that waits for the file `gate` in the workspace, then runs `then`: the test decides
/// when a job gets going, not the machine's speed.
fn gated(gate: &str, then: &str) -> String {
    format!("until [ -e {gate} ]; do sleep 0.05; done; {then}")
}

#[tokio::test]
async fn an_ending_job_is_told_in_the_next_request_and_a_flood_stays_bounded() {
    let h = Harness::new().await;
    let last_words = gated("end1", "echo the last words; exit 7");
    let flood = gated(
        "flood",
        "head -c 30000000 /dev/zero | tr '\\0' 'x' | fold -w 100; echo FLOOD-END",
    );
    h.server.push(background("t1", &last_words));
    h.server.push(background("t2", &flood));
    h.server.push(a::text("started both", U::new(1100, 20)));
    h.server.push(a::tool_use(
        "t3",
        "job_output",
        &json!({"id": 2}).to_string(),
        U::new(1200, 20),
    ));
    h.server.push(a::text("seen", U::new(1300, 20)));
    let mut p = h.params(200_000, 50_000);
    p.tools.jobs.first_wait = Duration::from_millis(200);
    let mut r = start(p);
    assert_eq!(turn_end(&r.turn("start them").await), "completed");
    // Both end after the turn, while nobody asks.
    for gate in ["end1", "flood"] {
        std::fs::write(h.workspace.join(gate), "").unwrap();
    }
    let mut ended = std::collections::BTreeMap::new();
    r.until(|e| {
        if let Event::JobEnded { job } = e {
            ended.insert(job.id, job.state);
        }
        ended.len() == 2
    })
    .await;
    assert_eq!(ended[&1], JobState::Exited { code: 7 });
    assert_eq!(ended[&2], JobState::Exited { code: 0 });
    let ev = r.turn("what happened?").await;
    assert_eq!(turn_end(&ev), "completed");
    // No list showed a job ended before the front end was told how it ended.
    let mut told = Vec::new();
    for e in &r.events {
        match e {
            Event::JobEnded { job } => told.push(job.id),
            Event::Jobs { jobs } => {
                for j in jobs.iter().filter(|j| !j.state.is_running()) {
                    assert!(told.contains(&j.id), "#{} listed ended before told", j.id);
                }
            }
            _ => {}
        }
    }
    assert_eq!(told, [1, 2], "each end told once");
    // The ends reach the next request unasked, and no request before it.
    let reqs = h.server.requests();
    assert_eq!(reqs.len(), 5);
    let before = texts(&reqs[2]);
    assert!(!before.contains("background jobs changed"), "{before}");
    let notice = notice(&reqs[3]);
    assert!(notice.contains("#1 `until [ -e end1 ]"), "{notice}");
    assert!(notice.contains("exit code 7"), "{notice}");
    assert!(notice.contains("the last words"), "{notice}");
    assert!(notice.contains("#2 `until [ -e flood ]"), "{notice}");
    // The flood: 30 MB printed, a bounded read of its end.
    let read = ev
        .iter()
        .find_map(|e| match e {
            Event::ToolResult { id, output, .. } if id == "t3" => Some(output.clone()),
            _ => None,
        })
        .unwrap();
    let tail = read.get(read.len().saturating_sub(200)..).unwrap_or(&read);
    assert!(read.len() < 20_000, "{}", read.len());
    assert!(read.ends_with("FLOOD-END"), "{tail}");
    let log = std::fs::metadata(r.run_root.join("jobs/2.log"))
        .unwrap()
        .len();
    assert!(log > 30_000_000, "the file has it all: {log}");
    r.shutdown().await;
}

#[tokio::test]
async fn asking_for_the_output_of_no_job_is_a_notice_not_an_output() {
    use flower_tui::engine::protocol::{JobsOp, Op};
    let h = Harness::new().await;
    let mut r = start(h.params(200_000, 50_000));
    r.send(Op::Jobs(JobsOp::Output { id: 99 })).await;
    let got = r
        .until(|e| match e {
            Event::Notice { message } => message.contains("#99"),
            Event::JobOutput { .. } => true,
            _ => false,
        })
        .await;
    match got.last() {
        Some(Event::Notice { message }) => assert_eq!(message, "there is no job #99"),
        other => panic!("not a notice: {other:?}"),
    }
    r.shutdown().await;
}
