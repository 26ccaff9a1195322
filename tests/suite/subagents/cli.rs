//! The real binary, headless: `subagent` JSON lines, the config keys, the ledger on disk.

use flower_tui::engine::ledger::{Manifest, load_transcript};
use serde_json::Value;

use super::{calls, requests_for, task};
use crate::support::check::{assert_success, tool_result};
use crate::support::fake::{FakeServer, U, anthropic as a};
use crate::support::files::write;
use crate::support::headless::{bin_for, lines, newest_run};

#[tokio::test]
async fn headless_prints_subagent_events_and_the_child_uses_subagent_model() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("config/flower");
    write(
        &config.join("config.toml"),
        "subagent_model = \"claude-haiku-test\"\nsubagent_max_iterations = 3\n",
    );
    std::fs::write(home.path().join("notes.txt"), "the answer is 42\n").unwrap();
    let one = [task(
        "toolu_task1",
        "read the notes",
        "NOTES-JOB: read notes.txt",
    )];
    server.push(a::text_then_tools("", &calls(&one), U::new(2_000, 30)));
    server.push_for(
        "NOTES-JOB",
        a::tool_use(
            "c1",
            "read_file",
            r#"{"path": "notes.txt"}"#,
            U::new(1_500, 20),
        ),
    );
    server.push_for("NOTES-JOB", a::text("The notes say 42.", U::new(1_700, 15)));
    server.script().at(2_200).text("It is 42.");
    let mut c = bin_for(home.path(), &server);
    c.env("ANTHROPIC_MODEL", "claude-sonnet-test")
        .args(["-p", "what do the notes say", "--yes"]);
    let out = crate::support::headless::run(c).await.output;
    assert_success(&out);
    let events = lines(&out);
    let sub: Vec<&Value> = events.iter().filter(|e| e["type"] == "subagent").collect();
    let phases: Vec<&str> = sub.iter().filter_map(|e| e["phase"].as_str()).collect();
    assert_eq!(phases.first(), Some(&"start"), "{phases:?}");
    assert_eq!(phases.last(), Some(&"end"), "{phases:?}");
    for want in ["tool_call", "tool_result", "usage", "text"] {
        assert!(phases.contains(&want), "{want} missing: {phases:?}");
    }
    assert!(sub.iter().all(|e| e["id"] == "toolu_task1"));
    let start = sub[0];
    assert_eq!(start["model"], "claude-haiku-test");
    assert_eq!(start["description"], "read the notes");
    assert_eq!(start["window"], 200_000, "a haiku's own window");
    let end = sub.last().unwrap();
    assert_eq!(end["outcome"], "completed");
    assert_eq!(end["usage"]["input_tokens"], 3_200);
    assert_eq!(end["tool_calls"], 1);
    // The child asked with its own model; the parent's result is the report.
    let child = requests_for(&server.recorded(), "NOTES-JOB");
    assert_eq!(child.len(), 2);
    assert_eq!(child[0].body["model"], "claude-haiku-test");
    let result = tool_result(&events, "toolu_task1");
    assert_eq!(result["output"], "The notes say 42.");
    let last = events.last().unwrap();
    assert_eq!(last["type"], "result");
    // The result's cost is the ledger's, the child's included.
    let run = newest_run(home.path());
    let manifest = Manifest::load(&run.join("manifest.json")).unwrap();
    let step = &manifest.steps[0];
    assert_eq!(step.subagents.len(), 1);
    let rec = &step.subagents[0];
    assert_eq!(rec.model, "claude-haiku-test");
    assert!(rec.cost_usd > 0.0);
    assert!((last["cost_usd"].as_f64().unwrap() - step.figures.cost_usd).abs() < 1e-12);
    let (header, _) = load_transcript(&run.join(&rec.transcript)).unwrap();
    assert_eq!(header.subagent.unwrap().description, "read the notes");
    assert_eq!(
        header.parent_session.as_deref(),
        Some(step.session_id.as_str())
    );
}
