//! The step's memory against the fake provider: pins, the plan, the
//! standing focus and `recall` reach every successor, survive degraded documents and
//! `--continue`, and the ledger says what each retired generation held.

mod carried;
mod pins;

use flower_tui::engine::policy::FrontEnd;
use flower_tui::engine::protocol::{Event, HandoffPhase, MemoryRefusal, Op, PinChange, PinRef};
use flower_tui::engine::step_memory::{PinSource, TodoStatus};
use serde_json::Value;

use crate::support::fake::Reply;
use crate::support::harness::{Harness, Running, start};
use crate::support::requests::{first_blocks, tool_names};

const DOC: &str = "## Doing\nRefactoring the parser.\n\n## Decided\n- Keep the old API.\n\n## Next\nRun the parser tests.\n\n## Scene\n- src/parser.rs\n";

const PLAN: &str = r#"{"items": [{"text": "read the parser", "status": "done"}, {"text": "fix nested quotes", "status": "in_progress"}, {"text": "run the tests", "status": "pending"}]}"#;

fn overflow() -> Reply {
    Reply::status(
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 45000 tokens > 40000 maximum"}}"#,
    )
}

/// The text of the last message of a request body.
fn last_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_array())
        .map(|b| {
            b.iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// The block the engine writes itself (pins, plan, focus).
fn carried(body: &Value) -> String {
    first_blocks(body)
        .into_iter()
        .find(|b| b.starts_with("The harness carries"))
        .unwrap_or_else(|| panic!("no carried block: {body:#}"))
}

async fn pin(r: &mut Running, text: &str) -> Event {
    r.send(Op::Pin { text: text.into() }).await;
    r.until(|e| matches!(e, Event::Pins { .. } | Event::MemoryRefused { .. }))
        .await
        .pop()
        .unwrap()
}

/// A manual handoff (headless: no review) and its successor.
async fn handoff(r: &mut Running) -> Vec<Event> {
    let turn = r.send_handoff(None).await;
    r.until_end(turn).await
}
