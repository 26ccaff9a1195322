//! bash output streams while the command runs; Esc keeps the partial output for the model.

use std::time::{Duration, Instant};

use flower_tui::engine::protocol::{Event, Op};
use serde_json::{Value, json};

use crate::support::check::{assert_contains, assert_starts_with};
use crate::support::fake::{U, anthropic as a};
use crate::support::harness::{Harness, start, turn_end};

fn bash(id: &str, command: &str) -> crate::support::fake::Reply {
    a::tool_use(
        id,
        "bash",
        &json!({ "command": command }).to_string(),
        U::new(1000, 20),
    )
}

#[tokio::test]
async fn output_streams_as_events_and_the_result_has_the_exit() {
    let h = Harness::new().await;
    h.server.push(bash(
        "t1",
        "for i in 1 2 3; do echo step $i; sleep 0.2; done",
    ));
    h.script().usage(U::new(1100, 20)).text("done");
    let mut r = start(h.params(200_000, 50_000));
    let started = Instant::now();
    let turn = r.send_turn("count").await;
    let first = r
        .until(|e| matches!(e, Event::ToolOutputDelta { .. }))
        .await;
    let first_at = started.elapsed();
    let ev = r.until_end(turn).await;
    let deltas: Vec<&str> = first
        .iter()
        .chain(&ev)
        .filter_map(|e| match e {
            Event::ToolOutputDelta { id, text } if id == "t1" => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas.concat(), "step 1\nstep 2\nstep 3\n");
    assert!(deltas.len() >= 2, "{deltas:?}");
    let Some(Event::ToolResult { exit, .. }) =
        ev.iter().find(|e| matches!(e, Event::ToolResult { .. }))
    else {
        panic!("no result: {ev:?}")
    };
    let exit = exit.as_ref().unwrap();
    assert_eq!(
        (exit.code(), exit.summary.as_str()),
        (Some(0), "exit code 0")
    );
    assert!(
        first_at < Duration::from_millis(exit.elapsed_ms),
        "the first line came before the end ({first_at:?} vs {} ms)",
        exit.elapsed_ms
    );
    r.shutdown().await;
}

#[tokio::test]
async fn esc_on_a_running_command_sends_its_partial_output_to_the_model_marked_interrupted() {
    let h = Harness::new().await;
    h.server
        .push(bash("t1", "echo compiled 41 crates; sleep 30; echo never"));
    h.script()
        .usage(U::new(1200, 20))
        .text("I see it was stopped.");
    let mut r = start(h.params(200_000, 50_000));
    let turn = r.send_turn("build").await;
    r.until(|e| matches!(e, Event::ToolOutputDelta { .. }))
        .await;
    let stopped = Instant::now();
    r.send(Op::Abort { turn }).await;
    let ev = r.until_end(turn).await;
    assert!(
        stopped.elapsed() < Duration::from_secs(3),
        "{:?}",
        stopped.elapsed()
    );
    assert_eq!(turn_end(&ev), "interrupted");
    let result = ev
        .iter()
        .find_map(|e| match e {
            Event::ToolResult { output, exit, .. } => Some((output.clone(), exit.clone())),
            _ => None,
        })
        .unwrap();
    assert_starts_with(&result.0, "compiled 41 crates\n");
    assert!(result.1.unwrap().interrupted());

    // The next request shows the model what the command printed, and that it was stopped.
    r.completed_turn("what happened?").await;
    let requests = h.server.requests();
    let body = &requests[1];
    let msgs = body["messages"].as_array().unwrap();
    let results: Vec<Value> = msgs
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 1);
    let content = results[0]["content"].as_str().unwrap();
    assert_starts_with(content, "compiled 41 crates");
    assert_contains(content, "the user stopped the command");
    assert_eq!(results[0]["is_error"], true);
    // The results and the question travel in one user message, results first.
    assert_eq!(a::tool_results(body).len(), 1);
    let last = msgs.last().unwrap()["content"].as_array().unwrap();
    assert_eq!(last.last().unwrap()["text"], "what happened?");
    r.shutdown().await;
}
