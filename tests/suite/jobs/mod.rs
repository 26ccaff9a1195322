//! Background jobs, end to end: a job that writes a heartbeat file keeps running while the turn
//! goes on and after a handoff, and stops when flower-tui leaves (the engine's way out, and a
//! `kill -9` of the real binary); an ending job's exit code and last line reach the next request
//! unasked; the successor's first request names the running job; a flood stays bounded.

mod engine;
mod kill;

use std::path::Path;
use std::time::{Duration, Instant};

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
