//! Background jobs, end to end: a job that writes a heartbeat file keeps running while the turn
//! goes on and after a handoff, and stops when flower-tui leaves (the engine's way out, and a
//! `kill -9` of the real binary); an ending job's exit code and last line reach the next request
//! unasked; the successor's first request names the running job; a flood stays bounded.

mod engine;
mod headless;
mod kill;
mod resume;
mod subagent;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::fake::{Reply, U, anthropic as a};

/// The heartbeat a job writes: nanoseconds, rewritten every 100 ms.
pub(super) const HEARTBEAT: &str =
    "while :; do date +%s%N > heartbeat.tmp && mv heartbeat.tmp heartbeat; sleep 0.1; done";

/// The heartbeat's value, if it has one.
pub(super) fn beat(ws: &Path) -> Option<String> {
    std::fs::read_to_string(ws.join("heartbeat"))
        .ok()
        .filter(|s| !s.trim().is_empty())
}

/// Whether the heartbeat moves within `within`.
pub(super) fn beating(ws: &Path, within: Duration) -> bool {
    let first = beat(ws);
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        if beat(ws).is_some() && beat(ws) != first {
            return true;
        }
    }
    false
}

/// Whether the heartbeat stops within `within` (and stays still for a second after).
pub(super) fn stops(ws: &Path, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if !beating(ws, Duration::from_secs(1)) {
            return true;
        }
    }
    false
}

/// [`beating`] off the async runtime.
pub(super) async fn beats(ws: &Path, within: Duration) -> bool {
    let ws = ws.to_path_buf();
    tokio::task::spawn_blocking(move || beating(&ws, within))
        .await
        .unwrap()
}

/// [`stops`] off the async runtime.
pub(super) async fn stopped(ws: &Path, within: Duration) -> bool {
    let ws = ws.to_path_buf();
    tokio::task::spawn_blocking(move || stops(&ws, within))
        .await
        .unwrap()
}

/// The model reads the heartbeat a second later (call `id`).
pub(super) fn read_heartbeat(id: &str) -> Reply {
    a::tool_use(
        id,
        "bash",
        &json!({"command": "sleep 1; cat heartbeat"}).to_string(),
        U::new(1100, 20),
    )
}

/// The jobs notice of a request: what follows its "background jobs changed" line.
#[track_caller]
pub(super) fn notice(body: &Value) -> String {
    let asked = texts(body);
    asked
        .split_once("background jobs changed")
        .map(|(_, n)| n.to_string())
        .unwrap_or_else(|| panic!("no notice: {asked}"))
}

/// The model starts `command` in the background (call `id`).
pub(super) fn background(id: &str, command: &str) -> Reply {
    a::tool_use(
        id,
        "bash",
        &json!({ "command": command, "run_in_background": true }).to_string(),
        U::new(1000, 20),
    )
}

/// Every text of a request, in order.
pub(super) fn texts(body: &Value) -> String {
    let mut out = String::new();
    for m in body["messages"].as_array().into_iter().flatten() {
        match &m["content"] {
            Value::String(s) => out.push_str(s),
            Value::Array(blocks) => {
                for b in blocks {
                    for k in ["text", "content"] {
                        if let Some(t) = b[k].as_str() {
                            out.push_str(t);
                            out.push('\n');
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}
