//! `recall` over big transcripts: how long a search and a whole-message read take over
//! eight retired generations of a long session (~150k tokens each, mostly tool results), as the
//! tool reads them from disk on every call.

use std::path::Path;
use std::time::Instant;

use flower_tui::engine::ledger::{SessionHeader, Transcript, TranscriptLine, now_stamp};
use flower_tui::engine::tools::recall::{Source, run_call};
use flower_tui::engine::types::{Block, Message, Role};
use serde_json::json;

/// Generations, and tool calls in each (every call a ~2.5 KB result).
const GENERATIONS: u32 = 8;
const CALLS: usize = 240;

fn write_generation(dir: &Path, generation: u32) -> Source {
    let id = format!("g{generation}");
    let path = dir.join(format!("{id}.jsonl"));
    let header = SessionHeader {
        session_id: id.clone(),
        parent_session: (generation > 1).then(|| format!("g{}", generation - 1)),
        generation,
        step: "bench".into(),
        model: "m".into(),
        provider: "p".into(),
        started: now_stamp(),
        workspace: dir.to_path_buf(),
        subagent: None,
    };
    let mut t = Transcript::create(path.clone(), &header);
    t.append(&TranscriptLine::Message {
        message: Message::user("continue the refactoring of the parser"),
    });
    for i in 0..CALLS {
        let call = format!("c{generation}-{i}");
        t.append(&TranscriptLine::Message {
            message: Message {
                role: Role::Assistant,
                content: vec![
                    Block::text(format!("Reading part {i} of the parser.")),
                    Block::ToolUse {
                        id: call.clone(),
                        name: "read_file".into(),
                        input: json!({"path": format!("src/parser/part{i}.rs")}),
                        from_text: false,
                    },
                ],
            },
        });
        let body: String = (0..40)
            .map(|l| {
                format!("    {l:>4}\tlet token_{l} = lexer.next_token(&mut state)?; // part {i}\n")
            })
            .collect();
        // One needle in the whole run.
        let body = if generation == 3 && i == 117 {
            format!("{body}error[E0599]: no method named `peek_char` found\n")
        } else {
            body
        };
        t.append(&TranscriptLine::Message {
            message: Message {
                role: Role::User,
                content: vec![Block::ToolResult {
                    tool_use_id: call,
                    content: body,
                    is_error: false,
                }],
            },
        });
    }
    Source { generation, path }
}

pub fn run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sources: Vec<Source> = (1..=GENERATIONS)
        .map(|g| write_generation(dir.path(), g))
        .collect();
    let bytes: u64 = sources
        .iter()
        .filter_map(|s| std::fs::metadata(&s.path).ok())
        .map(|m| m.len())
        .sum();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let time = |input: serde_json::Value| {
        let mut ms: Vec<f64> = (0..5)
            .map(|_| {
                let t = Instant::now();
                let out = rt.block_on(run_call(&input, sources.clone()));
                assert!(!out.is_error, "{}", out.content);
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        ms.sort_by(f64::total_cmp);
        ms[2]
    };
    println!(
        "  {GENERATIONS} transcripts, {:.1} MB, {} messages",
        bytes as f64 / 1e6,
        GENERATIONS as usize * (1 + CALLS * 3)
    );
    println!(
        "  words, one hit (\"peek_char found\"):   {:>7.1} ms",
        time(json!({"query": "peek_char found"}))
    );
    println!(
        "  words, every message hit (\"parser\"): {:>7.1} ms",
        time(json!({"query": "parser"}))
    );
    println!(
        "  regex (E0\\d{{3}}):                      {:>7.1} ms",
        time(json!({"query": r"E0\d{3}", "regex": true}))
    );
    println!(
        "  one generation, words:                {:>7.1} ms",
        time(json!({"query": "peek_char", "generation": 3}))
    );
    println!(
        "  a whole message (generation 3, #355):  {:>7.1} ms",
        time(json!({"generation": 3, "message": 355}))
    );
}
