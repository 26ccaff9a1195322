//! Two subagents at once: only their reports reach the parent, nothing of them reaches the main
//! gauge, their cost and transcripts are in the ledger; Esc stops both with every call answered.

use std::time::Duration;

use flower_tui::engine::ledger::{Manifest, load_transcript};
use flower_tui::engine::protocol::{Event, ExitReason, HandoffPhase, Op, SubagentPhase};
use flower_tui::engine::session::repair_dangling_tool_uses;
use serde_json::json;

use super::{
    alpha_and_beta, calls, end_of, is_child, main_requests, phases, requests_for, task,
    tool_results,
};
use crate::support::check::{assert_event, assert_starts_with, picked};
use crate::support::fake::{Reply, U, anthropic as a};
use crate::support::harness::{Harness, start, turn_end};
use crate::support::requests::tool_names;

fn price(input: u64, output: u64) -> f64 {
    crate::support::harness::price(MODEL, input, output)
}

const MODEL: &str = "claude-sonnet-test";

fn read(id: &str, path: &str, usage: U) -> Reply {
    a::tool_use(id, "read_file", &json!({ "path": path }).to_string(), usage)
}

#[tokio::test]
async fn two_tasks_run_at_once_and_only_their_reports_reach_the_parent() {
    let h = Harness::new().await;
    h.file("a.txt", "FILE-A-CONTENT-7781\n");
    h.file("b.txt", "beta FILE-B-CONTENT-3302\n");
    let both = alpha_and_beta("BETA-JOB: grep for beta and report");
    // Window 60K, headroom 20K: the main thread warns at 20K and hands off at 40K. Each child
    // sees 31K: counted in the main thread, they would cross both lines.
    h.server.push(a::text_then_tools(
        "Splitting the work.",
        &calls(&both),
        U::new(5_000, 100),
    ));
    let slow = Duration::from_millis(150);
    h.server.push_for(
        "ALPHA-JOB",
        read("ca1", "a.txt", U::new(30_000, 50)).with_delay(slow),
    );
    h.server.push_for(
        "ALPHA-JOB",
        a::text("ALPHA REPORT: a.txt holds one line.", U::new(31_000, 80)),
    );
    h.server.push_for(
        "BETA-JOB",
        a::tool_use(
            "cb1",
            "grep",
            &json!({"pattern": "beta"}).to_string(),
            U::new(30_000, 50),
        )
        .with_delay(slow),
    );
    h.server.push_for(
        "BETA-JOB",
        a::text("BETA REPORT: beta is in b.txt:1.", U::new(31_000, 80)),
    );
    h.script().usage(U::new(5_400, 60)).text("Both done.");
    let mut p = h.params(60_000, 20_000);
    p.settings.model = MODEL.into();
    let mut r = start(p);
    let ev = r.completed_turn("survey the code").await;

    // The parent's next request carries the two reports as the two calls' results, and nothing
    // the children read or called.
    let recorded = h.server.recorded();
    let mains = main_requests(&recorded);
    assert_eq!(mains.len(), 2);
    let next = &mains[1];
    let results = tool_results(next);
    assert_eq!(results.len(), 2, "{next:#}");
    assert_eq!(results[0]["tool_use_id"], "task_a");
    assert_eq!(results[0]["content"], "ALPHA REPORT: a.txt holds one line.");
    assert_eq!(results[1]["tool_use_id"], "task_b");
    assert_eq!(results[1]["content"], "BETA REPORT: beta is in b.txt:1.");
    let text = next.to_string();
    for child_only in ["FILE-A-CONTENT-7781", "FILE-B-CONTENT-3302", "ca1", "cb1"] {
        assert!(
            !text.contains(child_only),
            "{child_only} reached the parent"
        );
    }
    assert!(tool_names(&mains[0]).contains(&"task".to_string()));

    // They ran at the same time: each child's first request came before the other's second.
    let (alpha, beta) = (
        requests_for(&recorded, "ALPHA-JOB"),
        requests_for(&recorded, "BETA-JOB"),
    );
    assert_eq!((alpha.len(), beta.len()), (2, 2));
    assert!(alpha[0].arrived < beta[1].arrived && beta[0].arrived < alpha[1].arrived);
    for child in alpha.iter().chain(&beta) {
        assert!(is_child(&child.body));
        let names = tool_names(&child.body);
        assert!(!names.contains(&"task".to_string()), "{names:?}");
        assert!(names.contains(&"read_file".to_string()));
    }
    // A child's own history holds its reading.
    assert!(alpha[1].body.to_string().contains("FILE-A-CONTENT-7781"));

    // The main gauge: only the main thread's responses, never the children's.
    let readings: Vec<(u64, bool)> = picked!(
        ev,
        Event::Usage { context, estimated, .. } => (*context, *estimated)
    );
    let measured: Vec<u64> = readings.iter().filter(|r| !r.1).map(|r| r.0).collect();
    assert_eq!(measured, [5_100, 5_460]);
    assert!(readings.iter().all(|(c, _)| *c < 20_000), "{readings:?}");
    assert!(
        !ev.iter().any(|e| matches!(e, Event::Handoff(_))),
        "no warning, no handoff"
    );

    // Headless-style events: start, tool call, end with usage, for each.
    for (id, tool) in [("task_a", "read_file"), ("task_b", "grep")] {
        let mine: Vec<SubagentPhase> = phases(&ev).into_iter().filter(|p| p.id() == id).collect();
        assert!(matches!(&mine[0], SubagentPhase::Start { .. }), "{mine:#?}");
        assert_event!(mine, SubagentPhase::ToolCall { name, calls: 1, .. } if name == tool);
        let SubagentPhase::End {
            outcome,
            usage,
            tool_calls,
            context,
            cost_usd,
            ..
        } = end_of(&ev, id)
        else {
            unreachable!()
        };
        assert_eq!(outcome.to_string(), "completed");
        assert_eq!((usage.input_tokens, usage.output_tokens), (61_000, 130));
        assert_eq!((tool_calls, context), (1, 31_080));
        assert!((cost_usd - (price(30_000, 50) + price(31_000, 80))).abs() < 1e-12);
    }

    // Cost: in the Cost event (rows, total, the subagents) and the ledger.
    let child_cost = 2.0 * (price(30_000, 50) + price(31_000, 80));
    let main_cost = price(5_000, 100) + price(5_400, 60);
    r.send(Op::Cost).await;
    let got = r.until(|e| matches!(e, Event::Cost { .. })).await;
    let Some(Event::Cost {
        rows,
        subagents,
        total_usd,
        ..
    }) = got.last()
    else {
        unreachable!()
    };
    assert!(
        (total_usd - (main_cost + child_cost)).abs() < 1e-9,
        "{total_usd}"
    );
    assert!((rows[0].cost_usd - total_usd).abs() < 1e-12);
    assert!((rows[0].subagents_usd - child_cost).abs() < 1e-12);
    assert_eq!(subagents.len(), 2);

    // The ledger links each transcript: parent session, description, tokens, cost.
    let manifest: Manifest = r.manifest();
    let step = &manifest.steps[0];
    assert!((step.figures.cost_usd - (main_cost + child_cost)).abs() < 1e-9);
    let mut descriptions: Vec<&str> = step
        .subagents
        .iter()
        .map(|s| s.description.as_str())
        .collect();
    descriptions.sort_unstable();
    assert_eq!(descriptions, ["alpha survey", "beta search"]);
    for rec in &step.subagents {
        assert_eq!(rec.parent_session, step.session_id);
        assert_eq!(rec.outcome, "completed");
        assert_eq!(rec.usage.input_tokens, 61_000);
        assert_eq!(rec.tool_calls, 1);
        let path = r.run_root.join(&rec.transcript);
        let (header, mut messages) = load_transcript(&path).unwrap();
        assert_eq!(header.session_id, rec.session_id);
        assert_eq!(
            header.parent_session.as_deref(),
            Some(step.session_id.as_str())
        );
        let marker = header.subagent.expect("marked as a subagent's");
        assert_eq!(marker.call_id, rec.call_id);
        assert_eq!(marker.description, rec.description);
        assert_eq!(messages.len(), 4, "prompt, call, result, report");
        assert_eq!(repair_dangling_tool_uses(&mut messages), None);
    }
    // The main transcript names the calls and their reports only.
    let main = r
        .run_root
        .join("sessions")
        .join(format!("{}.jsonl", step.session_id));
    let main_text = std::fs::read_to_string(main).unwrap();
    assert!(main_text.contains("ALPHA REPORT") && !main_text.contains("FILE-A-CONTENT-7781"));
    r.shutdown().await;
}

#[tokio::test]
async fn esc_stops_both_and_leaves_every_call_answered() {
    let h = Harness::new().await;
    let both = [
        task(
            "task_a",
            "runs a command",
            "ALPHA-JOB: run the slow command",
        ),
        task("task_b", "waits on the model", "BETA-JOB: think hard"),
    ];
    h.server.push(a::text_then_tools(
        "Two at once.",
        &calls(&both),
        U::new(2_000, 50),
    ));
    // One child is inside a command (the harness approves commands: `--yes`), the other inside a
    // stream that never ends.
    h.server.push_for(
        "ALPHA-JOB",
        a::tool_use(
            "ca1",
            "bash",
            &json!({"command": "sleep 30"}).to_string(),
            U::new(1_000, 20),
        ),
    );
    h.server.push_for(
        "BETA-JOB",
        Reply::Stall {
            prefix: crate::support::harness::text_prefix("Thinking about"),
        },
    );
    let mut r = start(h.params(200_000, 50_000));
    let turn = r.send_turn("do two things").await;
    r.until(
        |e| matches!(e, Event::Subagent(SubagentPhase::ToolCall { name, .. }) if name == "bash"),
    )
    .await;
    // The other child's request is on the wire.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while requests_for(&h.server.recorded(), "BETA-JOB").is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "beta never asked");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let asked = std::time::Instant::now();
    r.send(Op::Abort { turn }).await;
    let ev = r.until_end(turn).await;
    assert!(asked.elapsed() < Duration::from_secs(5), "the abort waited");
    assert_eq!(turn_end(&ev), ExitReason::Interrupted.to_string());
    for id in ["task_a", "task_b"] {
        let SubagentPhase::End { outcome, .. } = end_of(&ev, id) else {
            unreachable!()
        };
        assert_eq!(outcome.to_string(), "interrupted");
    }
    let results: Vec<(String, String, bool)> = picked!(
        ev,
        Event::ToolResult { id, output, is_error, .. } => (id.clone(), output.clone(), *is_error)
    );
    assert_eq!(results.len(), 2, "{results:#?}");
    for (_, output, is_error) in &results {
        assert!(
            *is_error && output.contains("the user interrupted it"),
            "{output}"
        );
    }
    assert!(
        results[0].1.contains("bash: sleep 30 (did not finish)"),
        "{}",
        results[0].1
    );

    // No tool_use without its result: not in the parent, not in either child.
    let manifest = r.manifest();
    let step = &manifest.steps[0];
    let main = r
        .run_root
        .join("sessions")
        .join(format!("{}.jsonl", step.session_id));
    let (_, mut messages) = load_transcript(&main).unwrap();
    assert_eq!(repair_dangling_tool_uses(&mut messages), None);
    assert_eq!(step.subagents.len(), 2);
    for rec in &step.subagents {
        assert_eq!(rec.outcome, "interrupted");
        let (_, mut messages) = load_transcript(&r.run_root.join(&rec.transcript)).unwrap();
        assert_eq!(
            repair_dangling_tool_uses(&mut messages),
            None,
            "{}: {messages:#?}",
            rec.description
        );
    }
    // The parent goes on: the provider (the fake checks it) accepts its history.
    h.script().at(2_500).text("Stopped.");
    r.completed_turn("what now").await;
    r.shutdown().await;
}

#[tokio::test]
async fn a_child_over_its_own_line_writes_its_report_and_the_main_thread_never_hands_off() {
    let h = Harness::new().await;
    h.file("a.txt", "alpha\n");
    let one = [task("task_a", "big read", "ALPHA-JOB: read everything")];
    h.server
        .push(a::text_then_tools("", &calls(&one), U::new(3_000, 40)));
    // Window 30K, headroom 10K: the handoff line is at 20K, for the main thread and (its own) for
    // the child. The child's first reply reports 25K: it is asked for its report at once.
    h.server
        .push_for("ALPHA-JOB", read("ca1", "a.txt", U::new(25_000, 50)));
    h.server.push_for(
        "ALPHA-JOB",
        a::text("PARTIAL REPORT: a.txt says alpha.", U::new(25_200, 60)),
    );
    h.script().at(3_200).text("ok");
    let mut r = start(h.params(30_000, 10_000));
    let ev = r.completed_turn("go").await;
    let recorded = h.server.recorded();
    let child = requests_for(&recorded, "ALPHA-JOB");
    assert_eq!(child.len(), 2);
    let last = &child[1].body;
    assert_eq!(
        last["tool_choice"]["type"], "none",
        "the report request has no tools"
    );
    assert!(
        last.to_string()
            .contains("Your context window is nearly full")
    );
    let mains = main_requests(&recorded);
    let report = tool_results(&mains[1])[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert_starts_with(&report, "[The subagent's context filled up");
    assert!(report.ends_with("PARTIAL REPORT: a.txt says alpha."));
    let SubagentPhase::End { outcome, .. } = end_of(&ev, "task_a") else {
        unreachable!()
    };
    assert_eq!(outcome.to_string(), "context_full");
    assert!(
        !ev.iter()
            .any(|e| matches!(e, Event::Handoff(HandoffPhase::Writing { .. }))),
        "the child's 25K is not the main thread's"
    );
    r.shutdown().await;
}

#[tokio::test]
async fn a_child_whose_context_overflows_returns_what_it_read() {
    let h = Harness::new().await;
    h.file("a.txt", "alpha\n");
    let one = [task("task_a", "huge read", "ALPHA-JOB: read a.txt")];
    h.server
        .push(a::text_then_tools("", &calls(&one), U::new(3_000, 40)));
    h.server
        .push_for("ALPHA-JOB", read("ca1", "a.txt", U::new(4_000, 50)));
    h.server.push_for(
        "ALPHA-JOB",
        a::error_status(
            400,
            "invalid_request_error",
            "prompt is too long: 250000 tokens > 200000 maximum",
        ),
    );
    h.script().at(3_200).text("ok");
    let mut r = start(h.params(200_000, 50_000));
    let ev = r.completed_turn("go").await;
    let Some(Event::ToolResult {
        output, is_error, ..
    }) = ev
        .iter()
        .find(|e| matches!(e, Event::ToolResult { id, .. } if id == "task_a"))
    else {
        unreachable!()
    };
    assert!(!is_error, "a report all the same");
    assert!(
        output.starts_with("[This report was put together by flower-tui")
            && output.contains("context window was exceeded")
            && output.contains("- read_file: a.txt\n"),
        "{output}"
    );
    let SubagentPhase::End { outcome, .. } = end_of(&ev, "task_a") else {
        unreachable!()
    };
    assert_eq!(outcome.to_string(), "overflow");
    // The overflow was the child's: the main thread neither learned a window nor handed off.
    assert!(
        !ev.iter()
            .any(|e| matches!(e, Event::WindowLearned { .. } | Event::Handoff(_)))
    );
    r.shutdown().await;
}
