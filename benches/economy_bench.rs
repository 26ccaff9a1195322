//! The engine's own time for the token economy: masking a long history for one request (done
//! before every main-thread request), and building the `Touched` section from a long tool log
//! (done once per handoff).

use std::collections::HashMap;
use std::hint::black_box;

use flower_tui::engine::handoff::touched::{self, ToolLog};
use flower_tui::engine::mask::{self, MaskSettings};
use flower_tui::engine::types::{Block, Message, Role};
use serde_json::json;

use super::{median_of, timed};

/// Tool calls in the history: reads of ~12 KB, edits, commands with ~6 KB of output.
const CALLS: usize = 300;

fn history() -> Vec<Message> {
    let mut out = vec![Message::user("refactor the parser")];
    let page: String = (1..=150)
        .map(|n| format!("{n:>6}\tsome line of a file being read\n"))
        .collect();
    for i in 0..CALLS {
        let id = format!("c{i}");
        let (name, input, result) = match i % 3 {
            0 => (
                "read_file",
                json!({"path": format!("src/m{i}.rs")}),
                page.clone(),
            ),
            1 => (
                "edit_file",
                json!({"path": format!("src/m{}.rs", i - 1), "old_string": "a\nb", "new_string": "a\nc\nd"}),
                format!("Edited src/m{}.rs: replaced 1 occurrence.\n", i - 1),
            ),
            _ => (
                "bash",
                json!({"command": format!("cargo test -p m{i}")}),
                format!(
                    "{}\ntest result: ok. 3 passed\n\n[exit code 0]",
                    "output line\n".repeat(500)
                ),
            ),
        };
        out.push(Message {
            role: Role::Assistant,
            content: vec![
                Block::text("next"),
                Block::ToolUse {
                    id: id.clone(),
                    name: name.into(),
                    input,
                    from_text: false,
                },
            ],
        });
        out.push(Message {
            role: Role::User,
            content: vec![Block::ToolResult {
                tool_use_id: id,
                content: result,
                is_error: false,
            }],
        });
    }
    out
}

pub fn run() {
    let h = history();
    let chars: usize = h.iter().map(Message::char_len).sum();
    let size = |m: &Message| (m.char_len() as u64).div_ceil(4);
    let settings = MaskSettings::default();
    // A request between steps: the boundary is where the last step left it.
    let boundary = mask::mask(&h, &settings, 200_000, 0, size).boundary;
    let between = median_of(30, || {
        timed(|| {
            black_box(mask::mask(
                black_box(&h),
                &settings,
                200_000,
                boundary,
                size,
            ));
        })
    });
    // The clone every request makes anyway, for scale.
    let clone = median_of(30, || {
        timed(|| {
            black_box(black_box(&h).to_vec());
        })
    });
    println!(
        "mask: {} messages ({:.1} MB of text), boundary {boundary}: {:.2} ms per request \
         (cloning the history alone {:.2} ms)",
        h.len(),
        chars as f64 / 1e6,
        between.as_secs_f64() * 1e3,
        clone.as_secs_f64() * 1e3
    );
    let counts = HashMap::new();
    let log = ToolLog {
        messages: &h,
        counts: &counts,
        undone: &[],
        generation: 3,
        workspace: None,
        previous: None,
        open_problems: None,
    };
    let first = touched::section(log);
    let carried = ToolLog {
        previous: Some(&first),
        open_problems: None,
        ..log
    };
    let once = median_of(30, || timed(|| drop(black_box(touched::section(carried)))));
    println!(
        "touched: {CALLS} calls and the previous section carried: {:.2} ms, {} characters",
        once.as_secs_f64() * 1e3,
        touched::section(carried).chars().count()
    );
}
