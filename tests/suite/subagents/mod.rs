//! Subagents: the `task` tool on the loopback fake. Each child's requests are routed by
//! its prompt (`FakeServer::push_for`), so children that run at once each get their own script.

mod cli;
mod e2e;
mod engine;
mod limits;

use flower_tui::engine::protocol::{Event, SubagentPhase};
use serde_json::{Value, json};

use crate::support::check::picked;
use crate::support::fake::Recorded;
pub(super) use crate::support::fake::anthropic::tool_results;

/// A `task` call as the model sends it: `(id, "task", input)`.
pub(super) fn task(id: &str, description: &str, prompt: &str) -> (String, &'static str, String) {
    (
        id.to_string(),
        "task",
        json!({"description": description, "prompt": prompt}).to_string(),
    )
}

/// Two children at once: `task_a` surveys a.txt, `task_b` does `beta_job`.
fn alpha_and_beta(beta_job: &str) -> [(String, &'static str, String); 2] {
    [
        task("task_a", "alpha survey", "ALPHA-JOB: read a.txt and report"),
        task("task_b", "beta search", beta_job),
    ]
}

/// The `(id, name, input)` triples as `text_then_tools` takes them.
pub(super) fn calls<'a>(
    c: &'a [(String, &'static str, String)],
) -> Vec<(&'a str, &'a str, &'a str)> {
    c.iter()
        .map(|(id, name, input)| (id.as_str(), *name, input.as_str()))
        .collect()
}

/// A request of a subagent (its system prompt is the subagent's).
fn is_child(body: &Value) -> bool {
    body["system"]
        .to_string()
        .contains("You are a subagent of flower")
}

/// The requests whose first user message holds `key` (one child's), in order.
fn requests_for(recorded: &[Recorded], key: &str) -> Vec<Recorded> {
    recorded
        .iter()
        .filter(|r| {
            r.body["messages"]
                .as_array()
                .and_then(|m| m.iter().find(|m| m["role"] == "user"))
                .is_some_and(|m| m.to_string().contains(key))
        })
        .cloned()
        .collect()
}

/// The main thread's requests.
fn main_requests(recorded: &[Recorded]) -> Vec<Value> {
    recorded
        .iter()
        .filter(|r| !is_child(&r.body))
        .map(|r| r.body.clone())
        .collect()
}

/// The subagent phases among `events`.
fn phases(events: &[Event]) -> Vec<SubagentPhase> {
    picked!(events, Event::Subagent(p) => p.clone())
}

/// The `end` phase of subagent `id`.
fn end_of(events: &[Event], id: &str) -> SubagentPhase {
    phases(events)
        .into_iter()
        .find(|p| matches!(p, SubagentPhase::End { .. }) && p.id() == id)
        .unwrap_or_else(|| panic!("no end phase for {id}: {:#?}", phases(events)))
}
