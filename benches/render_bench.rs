//! Render benchmarks: full frames of the chat at 200×50 with 100 and 10,000 cells.

use std::time::{Duration, Instant};

use flower_tui::tui::render::{Cell, Chat, Theme, highlight, render_chat};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

/// Runs `f` `n` times and returns the median duration.
fn median(n: usize, mut f: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..n).map(|_| f()).collect();
    times.sort();
    times[n / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

/// A transcript of `n` cells cycling through the common kinds, with markdown and code.
fn transcript(n: usize) -> Chat {
    let mut chat = Chat::new();
    for i in 0..n {
        let cell = match i % 5 {
            0 => Cell::User { text: format!("Message {i}: please look at src/lib.rs and fix the failing test.") },
            1 => Cell::Assistant {
                markdown: format!(
                    "## Step {i}\n\nI read the file. The bug is an **off-by-one** in `sum`:\n\n- loop bound\n- empty input\n\n```rust\nfn sum(xs: &[i32]) -> i32 {{\n    xs.iter().sum() // {i}\n}}\n```\n"
                ),
                streaming: false,
                interrupted: false,
            },
            2 => Cell::Tool {
                id: format!("t{i}"),
                name: "bash".into(),
                summary: "cargo test".into(),
                output: Some("running 3 tests\ntest a ... ok\ntest b ... ok\ntest c ... ok\n\ntest result: ok".into()),
                is_error: false,
                expanded: false,
            },
            3 => Cell::Notice { message: format!("note {i}") },
            _ => Cell::Thinking { text: "Considering the loop bound and the empty case.".into() },
        };
        chat.push(cell);
    }
    chat
}

pub fn run() {
    let theme = Theme::builtin("dark").unwrap_or_else(|_| Theme::plain());
    let area = Rect::new(0, 0, 200, 50);
    let runs = 51;
    // The very first frame also pays for loading syntect's syntaxes and theme (once per process).
    let mut chat = transcript(100);
    let mut buf = Buffer::empty(area);
    let t = Instant::now();
    render_chat(&mut chat, area, &mut buf, &theme);
    println!(
        "render: first frame of the process (syntect load incl.): {}",
        ms(t.elapsed())
    );
    for n in [100usize, 10_000] {
        // Cold: a fresh transcript, nothing cached, highlighting redone (a first frame or resize).
        let cold = median(runs, || {
            let mut chat = transcript(n);
            highlight::clear_cache();
            let mut buf = Buffer::empty(area);
            let t = Instant::now();
            render_chat(&mut chat, area, &mut buf, &theme);
            t.elapsed()
        });
        // Warm: the same transcript redrawn (heights and visible lines cached).
        let mut chat = transcript(n);
        let mut buf = Buffer::empty(area);
        render_chat(&mut chat, area, &mut buf, &theme);
        let warm = median(runs, || {
            let mut buf = Buffer::empty(area);
            let t = Instant::now();
            render_chat(&mut chat, area, &mut buf, &theme);
            t.elapsed()
        });
        // Streaming: a delta appended to the last (assistant) cell, then a frame.
        chat.push(Cell::Assistant {
            markdown: String::new(),
            streaming: true,
            interrupted: false,
        });
        let mut k = 0;
        let stream = median(runs, || {
            if let Some(Cell::Assistant { markdown, .. }) = chat.last_mut() {
                k += 1;
                markdown.push_str(&format!("word{k} and `code` "));
                if k % 10 == 0 {
                    markdown.push_str("\n\n");
                }
            }
            let mut buf = Buffer::empty(area);
            let t = Instant::now();
            render_chat(&mut chat, area, &mut buf, &theme);
            t.elapsed()
        });
        // Scrolling up a page at a time (new cells come into view each frame).
        let scroll = median(runs, || {
            chat.scroll_up(25);
            let mut buf = Buffer::empty(area);
            let t = Instant::now();
            render_chat(&mut chat, area, &mut buf, &theme);
            t.elapsed()
        });
        // Streaming into a long message (~50 KB of markdown with code): the whole message is
        // re-rendered each frame; finished code blocks come from the highlight memo.
        let block = "Some prose with **bold** and `code` in it, long enough to wrap around.\n\n```rust\nfn f(x: u32) -> u32 {\n    x * 2\n}\n```\n\n";
        chat.push(Cell::Assistant {
            markdown: block.repeat(50_000 / block.len()),
            streaming: true,
            interrupted: false,
        });
        chat.scroll_to_bottom();
        let long = median(runs, || {
            if let Some(Cell::Assistant { markdown, .. }) = chat.last_mut() {
                markdown.push_str("more words ");
            }
            let mut buf = Buffer::empty(area);
            let t = Instant::now();
            render_chat(&mut chat, area, &mut buf, &theme);
            t.elapsed()
        });
        println!(
            "render: 200x50, {n:>6} cells: cold {}, warm {}, streaming delta {}, scroll page {} (median of {runs})",
            ms(cold),
            ms(warm),
            ms(stream),
            ms(scroll)
        );
        println!(
            "render: 200x50, {n:>6} cells: streaming delta into a 50 KB message {}",
            ms(long)
        );
    }
}
