//! flower-tui's benchmarks, chosen by name: `cargo bench --bench perf -- sse` runs one, no name runs
//! all. Each bench prints its own figures (median of several runs). To add one: write a `mod` with a
//! `pub fn run()` and list it in [`BENCHES`].

// Bench code: it measures the product and stops loudly on a broken set-up (unwrap, expect, an
// index) rather than reporting a figure it did not take. The deny lints are for the product's code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::hint::black_box;
use std::time::{Duration, Instant};

/// Every benchmark: (name, what it measures, entry point).
const BENCHES: &[(&str, &str, fn())] = &[
    (
        "sse",
        "SSE decoding and Anthropic event handling of 100,000 content_block_delta events",
        sse::run,
    ),
    (
        "handoff",
        "the engine's own time for a handoff on the loopback provider",
        engine_bench::handoff,
    ),
    (
        "render",
        "full-frame chat render at 200x50 with 100 and 10,000 cells",
        render_bench::run,
    ),
    (
        "stream",
        "cost per streamed delta (delta + frame) into a 10 KB and a 200 KB message",
        render_bench::stream,
    ),
    (
        "concurrency",
        "30 same-step pairs of real processes in one workspace each: lost documents, cross-briefings, lock time",
        continuity_bench::run,
    ),
    (
        "memory",
        "memory after 8 generations of ~150k-token sessions",
        engine_bench::memory,
    ),
    (
        "turnover",
        "the wait at the turnover with a 20 s writing turn: background against blocking, side by side",
        handoff_bg_bench::turnover,
    ),
    (
        "rescue",
        "overflow handoffs on a fake enforcing its window by body size: the share rescued",
        handoff_bg_bench::rescue,
    ),
    (
        "continuity",
        "four handoffs in one turn (written, degraded, rescued, written): what each successor is told",
        handoff_bg_bench::continuity,
    ),
    (
        "recall",
        "recall over 8 retired generations read from disk: a search, a regex, a whole message",
        recall_bench::run,
    ),
    (
        "chaos",
        "turns completed and cost per fault under a 40 % fault rate (both protocols)",
        chaos_bench::run,
    ),
    (
        "mcp",
        "MCP tool-call round trip over stdio beyond the server's own time",
        mcp_bench::run,
    ),
    (
        "subagent",
        "the engine's own time around a subagent: its start, its report back, four at once",
        engine_bench::subagent,
    ),
    (
        "diff",
        "the unified diff of a 5,000-line file (edit_file / write_file results and previews)",
        daily_bench::diff,
    ),
    (
        "mentions",
        "@ completion over a 100,000-file tree: first results, the walk, one query",
        daily_bench::mentions,
    ),
    (
        "faults",
        "a ledger save merging one step under the run's lock; a bash call with its lifeline",
        faults_bench::run,
    ),
    (
        "sandbox",
        "a bash `true` with the sandbox off and on (Landlock + seccomp), and its preparation alone",
        sandbox_bench::run,
    ),
    (
        "economy",
        "masking a 300-call history for one request; the Touched section of a 300-call log",
        economy_bench::run,
    ),
    (
        "probe",
        "asking a local server for its window at start: answered, 404, refused, silent",
        local_bench::probe_costs,
    ),
    (
        "lsp",
        "pylsp and typescript-language-server: edit end to diagnostics (warm p50/p95), cold start, memory",
        lsp_bench::run,
    ),
    (
        "acp",
        "flower-tui acp: session/prompt to the first agent_message_chunk over pipes (p50, p95)",
        acp_bench::run,
    ),
    (
        "checkpoint",
        "checkpoints of a 5,000-file, 100 MB workspace: the first, after a one-file turn, undo",
        checkpoint_bench::run,
    ),
    (
        "eyes",
        "a request with one screenshot before/after scaling; web_fetch of a 1.3 MB page: time, memory",
        eyes_bench::run,
    ),
];

#[allow(dead_code)]
#[path = "../tests/support"]
mod support {
    pub mod fake;
    pub mod lsp_setup;
    pub mod mcp_server;
    pub mod registry;
}
use support::fake;

mod acp_bench;
mod chaos_bench;
mod checkpoint_bench;
mod continuity_bench;
mod daily_bench;
mod economy_bench;
mod engine_bench;
mod eyes_bench;
mod faults_bench;
mod handoff_bg_bench;
mod local_bench;
mod lsp_bench;
mod mcp_bench;
mod recall_bench;
mod render_bench;
mod sandbox_bench;

fn main() {
    // Re-executed as the MCP server of the `mcp` bench.
    mcp_bench::serve_if_asked();
    // `cargo bench` passes `--bench`; anything starting with `-` is not a bench name.
    let names: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let unknown: Vec<&String> = names
        .iter()
        .filter(|n| !BENCHES.iter().any(|(b, _, _)| b == n))
        .collect();
    if !unknown.is_empty() {
        let known: Vec<&str> = BENCHES.iter().map(|(b, _, _)| *b).collect();
        eprintln!("unknown bench {unknown:?}; known: {}", known.join(", "));
        std::process::exit(2);
    }
    for (name, what, run) in BENCHES {
        if names.is_empty() || names.iter().any(|n| n == name) {
            println!("== {name}: {what}");
            run();
        }
    }
}

/// The median of `runs` timings of `f`.
pub fn median_of(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..runs.max(1)).map(|_| f()).collect();
    times.sort_unstable();
    times[times.len() / 2]
}

/// Time one call of `f`.
pub fn timed(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

// ---------------------------------------------------------------------------------------------
// sse
// ---------------------------------------------------------------------------------------------
mod sse {
    use super::{black_box, median_of, timed};
    use flower_tui::engine::provider::anthropic::AnthropicStream;
    use flower_tui::engine::provider::sse::{SseDecoder, SseEvent};
    use flower_tui::engine::types::Delta;

    const EVENTS: usize = 100_000;
    const CHUNK: usize = 4096;
    const RUNS: usize = 7;

    /// A realistic Anthropic stream: message_start, one text block of `EVENTS` deltas (a few words
    /// each, some non-ASCII and escapes), then the closing events.
    fn body() -> Vec<u8> {
        let words = [
            "the ",
            "build ",
            "is ",
            "green, ",
            "and ",
            "the ",
            "tests ",
            "pass: ",
            "λ-calculus ",
            "naïve ",
            "\\\"quoted\\\" ",
            "fn main() ",
            "{ ",
            "}\\n",
            "→ ",
            "世界 ",
        ];
        let mut out = String::with_capacity(EVENTS * 120);
        out.push_str("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5-20250929\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":472,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":2}}}\n\n");
        out.push_str("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
        out.push_str("event: ping\ndata: {\"type\": \"ping\"}\n\n");
        for i in 0..EVENTS {
            let text = format!(
                "{}{}",
                words[i % words.len()],
                words[(i * 7 + 3) % words.len()]
            );
            out.push_str("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"");
            out.push_str(&text);
            out.push_str("\"}}\n\n");
        }
        out.push_str(
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        );
        out.push_str("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":100000}}\n\n");
        out.push_str("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
        out.into_bytes()
    }

    fn rate(events: usize, d: std::time::Duration) -> f64 {
        events as f64 / d.as_secs_f64()
    }

    pub fn run() {
        let bytes = body();
        let total = EVENTS + 6;
        println!(
            "   input: {} events, {:.1} MiB, fed in {} KiB chunks; median of {RUNS} runs",
            total,
            bytes.len() as f64 / (1024.0 * 1024.0),
            CHUNK / 1024
        );

        let mut count = 0;
        let decode = median_of(RUNS, || {
            timed(|| {
                let mut d = SseDecoder::new();
                let mut out: Vec<SseEvent> = Vec::with_capacity(64);
                let mut n = 0;
                for chunk in bytes.chunks(CHUNK) {
                    d.push_into(black_box(chunk), &mut out);
                    n += out.len();
                    black_box(&out);
                    out.clear();
                }
                count = n;
            })
        });
        assert_eq!(count, total, "decoder lost events");
        println!(
            "   decoder only:             {:>10.0} events/s  ({:.1} ms, {:.0} MiB/s)",
            rate(total, decode),
            decode.as_secs_f64() * 1e3,
            bytes.len() as f64 / (1024.0 * 1024.0) / decode.as_secs_f64()
        );

        let mut text_len = 0;
        let full = median_of(RUNS, || {
            timed(|| {
                let mut d = SseDecoder::new();
                let mut out: Vec<SseEvent> = Vec::with_capacity(64);
                let mut state = AnthropicStream::new();
                let mut chars = 0usize;
                let mut sink = |delta: Delta| {
                    if let Delta::Text(t) = delta {
                        chars += t.len();
                    }
                };
                for chunk in bytes.chunks(CHUNK) {
                    d.push_into(black_box(chunk), &mut out);
                    for ev in out.drain(..) {
                        if let Err(e) = state.on_event(&ev, &mut sink) {
                            panic!("bench stream failed: {e}");
                        }
                    }
                }
                match state.finish() {
                    Ok(r) => text_len = black_box(r).text().len(),
                    Err(e) => panic!("bench stream incomplete: {e}"),
                }
                black_box(chars);
            })
        });
        assert!(text_len > EVENTS, "the response text is missing");
        println!(
            "   decoder + Anthropic events: {:>8.0} events/s  ({:.1} ms)",
            rate(total, full),
            full.as_secs_f64() * 1e3
        );
    }
}
