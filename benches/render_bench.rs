//! Render benchmarks: full frames of the chat at 200×50 with 100 and 10,000 cells (`render`), and
//! the cost of one streamed delta and its frame into a 10 KB and a 200 KB message (`stream`).

use std::time::{Duration, Instant};

use flower_tui::tui::render::{
    AssistantState, Cell, ChatView, Theme, ToolStatus, Transcript, highlight, render_chat,
};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

/// The transcript (model) and its view (scroll, cached layouts), as the app holds them.
struct Chat {
    t: Transcript,
    v: ChatView,
}

impl Chat {
    fn new() -> Self {
        Chat {
            t: Transcript::new(),
            v: ChatView::new(),
        }
    }
    fn push(&mut self, cell: Cell) {
        self.t.push(cell);
    }
    fn last_mut(&mut self) -> Option<&mut Cell> {
        self.t.last_mut()
    }
    fn scroll_up(&mut self, lines: u16) {
        self.v.scroll_up(lines);
    }
    fn scroll_to_bottom(&mut self) {
        self.v.scroll_to_bottom();
    }
}

fn render(chat: &mut Chat, area: Rect, buf: &mut Buffer, theme: &Theme) {
    render_chat(&chat.t, &mut chat.v, area, buf, theme);
}

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
                state: AssistantState::Done,
            },
            2 => Cell::Tool {
                id: format!("t{i}"),
                name: "bash".into(),
                summary: "bash: cargo test".into(),
                status: ToolStatus::Succeeded("running 3 tests\ntest a ... ok\ntest b ... ok\ntest c ... ok\n\ntest result: ok".into()),
                expanded: false,
                diff: None,
                exit: None,
            },
            3 => Cell::Notice { message: format!("note {i}") },
            _ => Cell::Thinking { text: "Considering the loop bound and the empty case.".into(), expanded: false },
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
    render(&mut chat, area, &mut buf, &theme);
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
            render(&mut chat, area, &mut buf, &theme);
            t.elapsed()
        });
        // Warm: the same transcript redrawn (heights and visible lines cached).
        let mut chat = transcript(n);
        let mut buf = Buffer::empty(area);
        render(&mut chat, area, &mut buf, &theme);
        let warm = median(runs, || {
            let mut buf = Buffer::empty(area);
            let t = Instant::now();
            render(&mut chat, area, &mut buf, &theme);
            t.elapsed()
        });
        // Streaming: a delta appended to the last (assistant) cell, then a frame.
        chat.push(Cell::streaming(String::new()));
        let mut k = 0;
        let stream = median(runs, || {
            if let Some(cell) = chat.last_mut() {
                k += 1;
                cell.push_delta(&format!("word{k} and `code` "));
                if k % 10 == 0 {
                    cell.push_delta("\n\n");
                }
            }
            let mut buf = Buffer::empty(area);
            let t = Instant::now();
            render(&mut chat, area, &mut buf, &theme);
            t.elapsed()
        });
        // Scrolling up a page at a time (new cells come into view each frame).
        let scroll = median(runs, || {
            chat.scroll_up(25);
            let mut buf = Buffer::empty(area);
            let t = Instant::now();
            render(&mut chat, area, &mut buf, &theme);
            t.elapsed()
        });
        // Streaming into a long message (~50 KB of markdown with code): the committed part is
        // drawn once, each frame draws the tail.
        let block = "Some prose with **bold** and `code` in it, long enough to wrap around.\n\n```rust\nfn f(x: u32) -> u32 {\n    x * 2\n}\n```\n\n";
        chat.push(Cell::streaming(block.repeat(50_000 / block.len())));
        chat.scroll_to_bottom();
        let long = median(runs, || {
            if let Some(cell) = chat.last_mut() {
                cell.push_delta("more words ");
            }
            let mut buf = Buffer::empty(area);
            let t = Instant::now();
            render(&mut chat, area, &mut buf, &theme);
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

/// A realistic assistant message of about `bytes` bytes: headings, prose, a list and code blocks.
pub fn long_message(bytes: usize) -> String {
    let section = |i: usize| {
        format!(
            "## Step {i}\n\nI read the module and traced the failure to the **parser**: it treats a \
             trailing `\\r` as part of the token, so the comparison in `eq_token` never matches on \
             Windows files. The fix keeps the tokenizer pure and strips the byte at the boundary.\n\n\
             - keep `Token` as it is\n- strip `\\r` in `next_line`\n- add a test with CRLF input\n\n\
             ```rust\nfn next_line(src: &str) -> Option<&str> {{\n    let line = src.lines().next()?;\n    \
             Some(line.strip_suffix('\\r').unwrap_or(line)) // {i}\n}}\n```\n\n"
        )
    };
    let mut out = String::with_capacity(bytes + 1024);
    let mut i = 0;
    while out.len() < bytes {
        out.push_str(&section(i));
        i += 1;
    }
    out
}

/// The deltas streamed after the long message: prose into a paragraph, or lines into an open
/// code block (`code`).
fn stream_delta(k: usize, code: bool) -> String {
    match (code, k % 8) {
        (false, 7) => "\n\n".to_string(),
        (false, 3) => format!("word{k} and `code`\n"),
        (false, _) => format!("word{k} and `code` "),
        (true, 3 | 7) => format!("x{k});\n"),
        (true, _) => format!("let v{k} = f("),
    }
}

pub fn stream() {
    let theme = Theme::builtin("dark").unwrap_or_else(|_| Theme::plain());
    let area = Rect::new(0, 0, 200, 50);
    let runs = 101;
    for code in [false, true] {
        let mut figures = Vec::new();
        for bytes in [10_000usize, 200_000] {
            let mut chat = transcript(20);
            let mut start = long_message(bytes);
            if code {
                start.push_str("```rust\n");
            }
            chat.push(Cell::streaming(start));
            let mut buf = Buffer::empty(area);
            render(&mut chat, area, &mut buf, &theme);
            let mut k = 0;
            // One delta, then a frame: what a fast stream costs at most (frames coalesce at 60 fps).
            let per_delta = median(runs, || {
                k += 1;
                let delta = stream_delta(k, code);
                let mut buf = Buffer::empty(area);
                let t = Instant::now();
                if let Some(cell) = chat.last_mut() {
                    cell.push_delta(&delta);
                }
                render(&mut chat, area, &mut buf, &theme);
                t.elapsed()
            });
            figures.push(per_delta);
            println!(
                "stream: 200x50, delta + frame into a {:>3} KB message ({}): {} (median of {runs})",
                bytes / 1000,
                if code { "open code block" } else { "prose" },
                ms(per_delta)
            );
        }
        let [small, big] = figures[..] else {
            continue;
        };
        println!(
            "stream: ratio 200 KB / 10 KB ({}): {:.2}",
            if code { "open code block" } else { "prose" },
            big.as_secs_f64() / small.as_secs_f64()
        );
    }
}
