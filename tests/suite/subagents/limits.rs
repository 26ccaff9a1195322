//! What a subagent may not do (start subagents, run commands the user was not asked about), its
//! iteration budget, at most four at once, and stream faults replayed inside a child.

use std::time::Duration;

use flower_tui::engine::policy::ApprovalPolicy;
use flower_tui::engine::protocol::{Event, SubagentPhase};
use flower_tui::engine::tools::sandbox::{SandboxPolicy, Support};
use serde_json::json;

use super::{calls, end_of, main_requests, requests_for, task, tool_results};
use crate::support::check::{assert_contains, assert_file};
use crate::support::fake::{Reply, U, anthropic as a};
use crate::support::harness::{Harness, start, text_prefix};
use crate::support::requests::tool_names;

#[tokio::test]
async fn a_child_cannot_start_subagents_and_has_no_bash_under_ask() {
    let h = Harness::new().await;
    let one = [task("task_a", "tries too much", "ALPHA-JOB: go")];
    h.server
        .push(a::text_then_tools("", &calls(&one), U::new(2_000, 40)));
    let nested = json!({"description": "deeper", "prompt": "recurse"}).to_string();
    let command = json!({"command": "touch made-by-child"}).to_string();
    h.server.push_for(
        "ALPHA-JOB",
        a::text_then_tools(
            "Trying.",
            &[("c1", "task", &nested), ("c2", "bash", &command)],
            U::new(1_000, 30),
        ),
    );
    h.server.push_for(
        "ALPHA-JOB",
        a::text("I could do neither.", U::new(1_200, 20)),
    );
    h.script().at(2_100).text("ok");
    // Headless without --yes: the main thread's commands would be denied, so a child has none.
    let mut p = h.params(200_000, 50_000);
    p.tools.approvals = ApprovalPolicy::Ask;
    let mut r = start(p);
    r.completed_turn("go").await;
    let recorded = h.server.recorded();
    let child = requests_for(&recorded, "ALPHA-JOB");
    assert_eq!(
        tool_names(&child[0].body),
        ["read_file", "grep", "glob", "list_dir"]
    );
    let results = tool_results(&child[1].body);
    assert_eq!(results.len(), 2);
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .contains("cannot start subagents")
    );
    assert!(results[0]["is_error"] == true && results[1]["is_error"] == true);
    assert!(
        results[1]["content"]
            .as_str()
            .unwrap()
            .contains("`bash` cannot be called here")
    );
    assert!(!h.workspace.join("made-by-child").exists());
    // The main thread is told the child has no bash.
    let mains = main_requests(&recorded);
    let spec = mains[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "task")
        .unwrap()
        .clone();
    assert!(!spec["description"].as_str().unwrap().contains("bash"));
    assert_eq!(tool_results(&mains[1])[0]["content"], "I could do neither.");
    r.shutdown().await;
}

#[tokio::test]
async fn under_ask_a_child_runs_commands_the_sandbox_confines_as_the_parent_would() {
    if !Support::current().confines_writes() {
        eprintln!("NOT ENFORCED: this kernel cannot confine writes; the child has no bash here");
        return;
    }
    let h = Harness::new().await;
    let one = [task("task_a", "runs a check", "ALPHA-JOB: run it")];
    h.server
        .push(a::text_then_tools("", &calls(&one), U::new(2_000, 40)));
    let outside = tempfile::tempdir_in(crate::suite::sandbox::base()).unwrap();
    let stray = outside.path().join("child-wrote");
    let command = format!(
        "echo CHILD-RAN > made-by-child; echo escaped > {}",
        stray.display()
    );
    h.server.push_for(
        "ALPHA-JOB",
        a::tool_use(
            "c1",
            "bash",
            &json!({ "command": command }).to_string(),
            U::new(1_000, 20),
        ),
    );
    h.server
        .push_for("ALPHA-JOB", a::text("REPORT: ran.", U::new(1_200, 20)));
    h.script().at(2_100).text("ok");
    let mut p = h.params(200_000, 50_000);
    p.tools.approvals = ApprovalPolicy::Ask;
    p.tools.sandbox = SandboxPolicy::default();
    let mut r = start(p);
    let ev = r.completed_turn("go").await;
    assert!(
        !ev.iter()
            .any(|e| matches!(e, Event::ApprovalRequest { .. })),
        "nothing was asked"
    );
    let recorded = h.server.recorded();
    let child = requests_for(&recorded, "ALPHA-JOB");
    assert!(tool_names(&child[0].body).contains(&"bash".to_string()));
    let results = tool_results(&child[1].body);
    let result = results[0]["content"].as_str().unwrap();
    // It ran in the sandbox: inside the workspace it wrote, outside it was stopped.
    assert_file(h.workspace.join("made-by-child"), "CHILD-RAN\n");
    assert!(!stray.exists(), "{result}");
    assert_contains(result, "[sandbox: the sandbox refused the write");
    // Without the sandbox the same policy gives it none (the test above).
    r.shutdown().await;
}

#[tokio::test]
async fn under_yes_a_child_runs_commands_and_its_budget_ends_in_a_report() {
    let h = Harness::new().await;
    let one = [task("task_a", "runs checks", "ALPHA-JOB: run the checks")];
    h.server
        .push(a::text_then_tools("", &calls(&one), U::new(2_000, 40)));
    let echo = |id: &str, word: &str| {
        a::tool_use(
            id,
            "bash",
            &json!({ "command": format!("echo {word}") }).to_string(),
            U::new(1_000, 20),
        )
    };
    h.server.push_for("ALPHA-JOB", echo("c1", "CHILD-RAN-1"));
    h.server.push_for("ALPHA-JOB", echo("c2", "CHILD-RAN-2"));
    // The budget (2) is spent: one last request without tools asks for the report.
    h.server.push_for(
        "ALPHA-JOB",
        a::text("BUDGET REPORT: both ran.", U::new(1_400, 20)),
    );
    h.script().at(2_100).text("ok");
    let mut p = h.params(200_000, 50_000);
    p.tools.subagent.max_iterations = 2;
    let mut r = start(p);
    let ev = r.completed_turn("go").await;
    let child = requests_for(&h.server.recorded(), "ALPHA-JOB");
    assert_eq!(child.len(), 3);
    assert!(tool_names(&child[0].body).contains(&"bash".to_string()));
    assert!(child[2].body.to_string().contains("CHILD-RAN-2"));
    assert_eq!(child[2].body["tool_choice"]["type"], "none");
    assert!(child[2].body.to_string().contains("iteration budget (2/2)"));
    let SubagentPhase::End {
        outcome,
        tool_calls,
        iterations,
        ..
    } = end_of(&ev, "task_a")
    else {
        unreachable!()
    };
    assert_eq!(outcome.to_string(), "max_iterations_reached(2/2)");
    assert_eq!((tool_calls, iterations), (2, 2));
    let report = ev
        .iter()
        .find_map(|e| match e {
            Event::ToolResult { id, output, .. } if id == "task_a" => Some(output.clone()),
            _ => None,
        })
        .unwrap();
    assert!(report.contains("(2/2)") && report.ends_with("BUDGET REPORT: both ran."));
    r.shutdown().await;
}

#[tokio::test]
async fn a_broken_stream_inside_a_child_is_replayed() {
    let h = Harness::new().await;
    let one = [task("task_a", "flaky", "ALPHA-JOB: answer")];
    h.server
        .push(a::text_then_tools("", &calls(&one), U::new(2_000, 40)));
    h.server.push_for(
        "ALPHA-JOB",
        Reply::Cut {
            bytes: text_prefix("half an ans"),
        },
    );
    h.server
        .push_for("ALPHA-JOB", a::text("WHOLE REPORT", U::new(900, 20)));
    h.script().at(2_100).text("ok");
    let mut r = start(h.params(200_000, 50_000));
    let ev = r.completed_turn("go").await;
    assert_eq!(requests_for(&h.server.recorded(), "ALPHA-JOB").len(), 2);
    let SubagentPhase::End { outcome, .. } = end_of(&ev, "task_a") else {
        unreachable!()
    };
    assert_eq!(outcome.to_string(), "completed");
    // The child's broken try never showed on the main thread.
    assert!(
        !ev.iter()
            .any(|e| matches!(e, Event::Stream(_) | Event::Retry { .. }))
    );
    let mains = main_requests(&h.server.recorded());
    assert_eq!(tool_results(&mains[1])[0]["content"], "WHOLE REPORT");
    r.shutdown().await;
}

#[tokio::test]
async fn at_most_four_run_at_once() {
    let h = Harness::new().await;
    let keys = ["JOB-ONE", "JOB-TWO", "JOB-THREE", "JOB-FOUR", "JOB-FIVE"];
    let five: Vec<_> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| task(&format!("task_{i}"), k, &format!("{k}: answer")))
        .collect();
    h.server
        .push(a::text_then_tools("", &calls(&five), U::new(2_000, 40)));
    for k in keys {
        // Each reply takes a while to stream, so the ones running overlap.
        let reply = a::Stream::new(U::new(500, 20))
            .text(&format!(
                "{k} done with a reply long enough to stream in pieces"
            ))
            .reply()
            .with_delay(Duration::from_millis(60));
        h.server.push_for(k, reply);
    }
    h.script().at(2_500).text("ok");
    let mut r = start(h.params(200_000, 50_000));
    r.completed_turn("go").await;
    let spans: Vec<_> = keys
        .iter()
        .map(|k| {
            let req = &requests_for(&h.server.recorded(), k)[0];
            (req.arrived, req.finished.unwrap())
        })
        .collect();
    let most = spans
        .iter()
        .map(|(at, _)| spans.iter().filter(|(s, e)| s <= at && at < e).count())
        .max()
        .unwrap();
    assert!((2..=4).contains(&most), "{most} at once");
    let mains = main_requests(&h.server.recorded());
    let results = tool_results(&mains[1]);
    assert_eq!(results.len(), 5);
    for (i, k) in keys.iter().enumerate() {
        assert_eq!(results[i]["tool_use_id"], format!("task_{i}"));
        assert!(results[i]["content"].as_str().unwrap().starts_with(k));
    }
    r.shutdown().await;
}

#[tokio::test]
async fn a_report_too_large_for_the_context_is_spilled_like_any_result() {
    let h = Harness::new().await;
    let one = [task("task_a", "writes a lot", "ALPHA-JOB: say everything")];
    h.server
        .push(a::text_then_tools("", &calls(&one), U::new(2_000, 40)));
    let long: String = (0..4_000)
        .map(|i| format!("finding {i:05}: something long enough\n"))
        .collect();
    assert!(long.len() > 100_000);
    h.server
        .push_for("ALPHA-JOB", a::text(&long, U::new(900, 30_000)));
    h.script().at(2_500).text("ok");
    let mut r = start(h.params(200_000, 50_000));
    let ev = r.completed_turn("go").await;
    let Some(Event::ToolResult {
        output, spilled, ..
    }) = ev
        .iter()
        .find(|e| matches!(e, Event::ToolResult { id, .. } if id == "task_a"))
    else {
        unreachable!()
    };
    let path = spilled.as_ref().expect("spilled");
    assert_eq!(std::fs::read_to_string(path).unwrap(), long.trim());
    assert!(
        output.len() < 3_000 && output.contains("finding 00000"),
        "{output}"
    );
    let mains = main_requests(&h.server.recorded());
    let sent = tool_results(&mains[1])[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(&sent, output);
    r.shutdown().await;
}
