//! Tests of the chat's view: snapshots of every cell kind, following the bottom and scrolling,
//! the height cache, laying out only the visible cells, theme changes, huge and streaming cells.

use super::*;
use crate::engine::diff::DiffLimits;
use crate::engine::protocol::{CommandExit, FileDiff};
use crate::engine::tools::CommandEnd;
use crate::tui::render::cell::AssistantState;
use crate::tui::render::tool_cell::ToolStatus;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// The transcript and its view, as the app holds them (the state and the view cache).
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
    fn find_tool_mut(&mut self, id: &str) -> Option<&mut Cell> {
        self.t.find_tool_mut(id)
    }
    fn toggle_last_tool_expanded(&mut self) {
        self.t.toggle_last_tool_expanded();
    }
    fn scroll_up(&mut self, lines: u16) {
        self.v.scroll_up(lines);
    }
    fn scroll_down(&mut self, lines: u16) {
        self.v.scroll_down(lines);
    }
    fn scroll_to_bottom(&mut self) {
        self.v.scroll_to_bottom();
    }
    fn following(&self) -> bool {
        self.v.following()
    }
    fn stats(&self) -> RenderStats {
        self.v.stats()
    }
}

fn render(chat: &mut Chat, area: Rect, buf: &mut Buffer, theme: &Theme) {
    render_chat(&chat.t, &mut chat.v, area, buf, theme);
}

fn theme() -> Theme {
    Theme::builtin("dark").unwrap()
}

fn notice(i: usize) -> Cell {
    Cell::Notice {
        message: format!("n{i}"),
    }
}

/// Renders into a bare buffer and returns its rows as text (trailing spaces trimmed).
fn rows(chat: &mut Chat, w: u16, h: u16) -> Vec<String> {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    render(chat, area, &mut buf, &theme());
    (0..h)
        .map(|y| {
            (0..w)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}

fn every_kind() -> Chat {
    let mut chat = Chat::new();
    chat.push(Cell::User {
        text: "Fix the failing test in src/lib.rs, please.".into(),
    });
    chat.push(Cell::Thinking {
        text: "The test probably fails on an off-by-one.\nCheck the loop bound first.".into(),
        expanded: false,
    });
    chat.push(Cell::Assistant {
        markdown: "## Plan\n\n1. Read `src/lib.rs`\n2. Run **tests**\n   - then fix\n\nSee [docs](https://docs.rs).\n\n```rust\nfn add(a: i32, b: i32) -> i32 {\n    a + b // fixed\n}\n```\n".into(),
        state: AssistantState::Done,
    });
    chat.push(Cell::Tool {
        id: "t1".into(),
        name: "bash".into(),
        summary: "bash: cargo test".into(),
        status: ToolStatus::Succeeded(
            "running 3 tests\ntest a ... ok\ntest b ... ok\ntest c ... ok\n\ntest result: ok"
                .into(),
        ),
        expanded: false,
        diff: None,
        exit: Some(CommandExit {
            end: CommandEnd::Exited { code: 0 },
            elapsed_ms: 1_240,
            summary: "exit code 0".into(),
        }),
    });
    chat.push(Cell::Tool {
        id: "e1".into(),
        name: "edit_file".into(),
        summary: "edit_file: src/lib.rs".into(),
        status: ToolStatus::Succeeded("Edited src/lib.rs: replaced 1 occurrence.".into()),
        expanded: false,
        diff: Some(Box::new(FileDiff::new(
            "src/lib.rs",
            Some("fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n"),
            "fn add(a: i32, b: i32) -> i32 {\n    a + b // fixed\n}\n",
            DiffLimits::RESULT,
        ))),
        exit: None,
    });
    chat.push(Cell::Tool {
        id: "t2".into(),
        name: "read_file".into(),
        summary: "read_file: src/missing.rs".into(),
        status: ToolStatus::Failed("No such file or directory".into()),
        expanded: false,
        diff: None,
        exit: None,
    });
    chat.push(Cell::Tool {
        id: "t3".into(),
        name: "bash".into(),
        summary: "bash: sleep 10".into(),
        status: ToolStatus::running(),
        expanded: false,
        diff: None,
        exit: None,
    });
    chat.push(Cell::Approval {
        name: "bash".into(),
        summary: "bash: rm -rf target".into(),
        always: true,
        answer: Some("allowed once".into()),
    });
    chat.push(Cell::Retry {
        attempt: 2,
        max: 5,
        reason: "overloaded".into(),
        delay_ms: 2000,
    });
    chat.push(Cell::Error {
        message: "HTTP 500: internal error".into(),
    });
    chat.push(Cell::Notice {
        message: "Handoff written to notes/handoff-x.md".into(),
    });
    chat.push(Cell::Divider {
        generation: 2,
        context: 152_000,
        window: 200_000,
        path: Some("notes/handoff-x.md".into()),
        degraded: true,
        held: None,
    });
    chat.push(Cell::Assistant {
        markdown: "Picking up from the handoff".into(),
        state: AssistantState::Interrupted,
    });
    chat
}

fn terminal(chat: &mut Chat, w: u16, h: u16, theme: &Theme) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| render(chat, f.area(), f.buffer_mut(), theme))
        .unwrap();
    t
}

#[test]
fn transcript_snapshots() {
    let mut chat = every_kind();
    insta::assert_snapshot!(
        "transcript_80x48",
        terminal(&mut chat, 80, 48, &theme()).backend()
    );
    insta::assert_debug_snapshot!(
        "transcript_80x48_styled",
        terminal(&mut chat, 80, 48, &theme()).backend().buffer()
    );
    insta::assert_snapshot!(
        "transcript_20x5",
        terminal(&mut chat, 20, 5, &theme()).backend()
    );
    insta::assert_snapshot!(
        "transcript_1x1",
        terminal(&mut chat, 1, 1, &theme()).backend()
    );
    insta::assert_snapshot!(
        "transcript_40x16_plain",
        terminal(&mut chat, 40, 16, &Theme::plain()).backend()
    );
    for (w, h) in [(0, 0), (0, 10), (10, 0), (2, 3), (250, 60)] {
        terminal(&mut chat, w, h, &theme());
    }
    // An area outside the buffer is clipped, not a panic.
    let mut buf = Buffer::empty(Rect::new(0, 0, 10, 4));
    render(&mut chat, Rect::new(5, 2, 40, 40), &mut buf, &theme());
    render(&mut chat, Rect::new(50, 50, 4, 4), &mut buf, &theme());
}

#[test]
fn follows_the_bottom_and_scrolls() {
    let mut chat = Chat::new();
    for i in 0..10 {
        chat.push(notice(i));
    }
    // Each cell after the first is a blank line plus its text: 19 rows in all.
    assert_eq!(rows(&mut chat, 10, 3), ["• n8", "", "• n9"]);
    assert!(chat.following());

    chat.scroll_up(2);
    assert!(!chat.following());
    assert_eq!(rows(&mut chat, 10, 3), ["• n7", "", "• n8"]);

    // New content below does not move a scrolled-up view.
    chat.push(notice(10));
    assert_eq!(rows(&mut chat, 10, 3), ["• n7", "", "• n8"]);
    assert!(!chat.following());

    // Scrolling past the top stops at the first line.
    chat.scroll_up(1000);
    assert_eq!(rows(&mut chat, 10, 3), ["• n0", "", "• n1"]);

    // Back down to the bottom: following resumes.
    chat.scroll_down(16);
    assert_eq!(rows(&mut chat, 10, 3), ["• n8", "", "• n9"]);
    assert!(!chat.following());
    chat.scroll_down(2);
    assert_eq!(rows(&mut chat, 10, 3), ["• n9", "", "• n10"]);
    assert!(chat.following());
    chat.push(notice(11));
    assert_eq!(rows(&mut chat, 10, 3), ["• n10", "", "• n11"]);

    chat.scroll_up(5);
    rows(&mut chat, 10, 3);
    chat.scroll_to_bottom();
    assert!(chat.following());
    assert_eq!(rows(&mut chat, 10, 3), ["• n10", "", "• n11"]);
}

#[test]
fn short_content_always_follows() {
    let mut chat = Chat::new();
    chat.push(notice(0));
    chat.scroll_up(3);
    assert_eq!(rows(&mut chat, 10, 3), ["• n0", "", ""]);
    assert!(chat.following(), "nothing to scroll: back to following");
    let mut empty = Chat::new();
    empty.scroll_up(1);
    assert_eq!(rows(&mut empty, 5, 2), ["", ""]);
}

#[test]
fn height_cache_is_invalidated() {
    let mut chat = Chat::new();
    chat.push(Cell::User { text: "hi".into() });
    chat.push(Cell::streaming("one".into()));
    rows(&mut chat, 20, 6);
    assert_eq!(chat.stats().laid_out, 2);
    // Nothing changed: both heights and lines come from the cache.
    rows(&mut chat, 20, 6);
    assert_eq!(
        chat.stats(),
        RenderStats {
            laid_out: 0,
            drawn: 2
        }
    );

    // Streaming: the last cell grows; only it is laid out again.
    if let Some(Cell::Assistant { markdown, .. }) = chat.last_mut() {
        markdown.push_str("\n\ntwo\n\nthree");
    }
    assert_eq!(rows(&mut chat, 20, 6), ["", "one", "", "two", "", "three"]);
    assert_eq!(chat.stats().laid_out, 1);

    // A new width re-lays out what is shown.
    rows(&mut chat, 30, 6);
    assert_eq!(
        chat.stats().laid_out,
        1,
        "the assistant cell fills the view"
    );

    // Tool output arriving for an older cell.
    chat.push(Cell::Tool {
        id: "t9".into(),
        name: "bash".into(),
        summary: "bash: ls".into(),
        status: ToolStatus::running(),
        expanded: false,
        diff: None,
        exit: None,
    });
    chat.push(notice(1));
    assert!(rows(&mut chat, 30, 6).contains(&"  running…".to_string()));
    if let Some(Cell::Tool { status, .. }) = chat.find_tool_mut("t9") {
        *status = ToolStatus::Succeeded("a\nb\nc\nd\ne\nf\ng\nh".into());
    }
    let shown = rows(&mut chat, 40, 8);
    assert!(
        shown.contains(&"  … 3 more lines (ctrl-t expands)".to_string()),
        "{shown:?}"
    );
    chat.toggle_last_tool_expanded();
    let shown = rows(&mut chat, 40, 12);
    assert!(shown.contains(&"  e".to_string()), "{shown:?}");
    assert!(chat.find_tool_mut("nope").is_none());
}

#[test]
fn only_visible_cells_are_laid_out() {
    let mut chat = Chat::new();
    for i in 0..10_000 {
        chat.push(notice(i));
    }
    assert_eq!(rows(&mut chat, 40, 20)[19], "• n9999");
    let s = chat.stats();
    assert_eq!(s.drawn, 10, "20 rows hold 10 two-row cells");
    assert!(s.laid_out <= 11, "laid out {} of 10,000", s.laid_out);

    // Scrolled to the middle: still only about a screenful.
    chat.scroll_up(10_000);
    rows(&mut chat, 40, 20);
    assert!(
        chat.stats().laid_out <= 5_002,
        "walking up lays out what it passes"
    );
    rows(&mut chat, 40, 20);
    assert!(
        chat.stats().laid_out <= 11,
        "cached heights: {}",
        chat.stats().laid_out
    );
    assert_eq!(chat.stats().drawn, 10);

    // A resize lays out only the new viewport.
    chat.scroll_to_bottom();
    rows(&mut chat, 60, 20);
    assert!(chat.stats().laid_out <= 11);
    // Only drawn cells keep their lines.
    let holding = chat
        .v
        .layouts
        .iter()
        .flatten()
        .filter(|l| l.lines.is_some())
        .count();
    assert!(holding <= 11, "{holding} cells hold lines");
}

#[test]
fn theme_change_redraws_with_new_styles() {
    let mut chat = Chat::new();
    chat.push(Cell::Error {
        message: "boom".into(),
    });
    let dark = theme();
    let area = Rect::new(0, 0, 10, 1);
    let mut buf = Buffer::empty(area);
    render(&mut chat, area, &mut buf, &dark);
    assert_eq!(buf[(2, 0)].fg, dark.error.fg.unwrap());
    let plain = Theme::plain();
    let mut buf = Buffer::empty(area);
    render(&mut chat, area, &mut buf, &plain);
    assert_eq!(buf[(2, 0)].fg, ratatui::style::Color::Reset);
}

#[test]
fn ten_megabyte_paste_renders() {
    let line = "word ".repeat(20) + "\n";
    let text = line.repeat(10 * 1024 * 1024 / line.len());
    let mut chat = Chat::new();
    chat.push(Cell::User { text });
    chat.push(Cell::Tool {
        id: "t".into(),
        name: "bash".into(),
        summary: "bash: cat big".into(),
        status: ToolStatus::Succeeded("x".repeat(10 * 1024 * 1024)),
        expanded: false,
        diff: None,
        exit: None,
    });
    let shown = rows(&mut chat, 80, 6);
    assert_eq!(
        shown[5], "  … (long lines cut, ctrl-t expands)",
        "{shown:?}"
    );
    // The paste wraps in full (about 200,000 rows); its first row is reachable.
    for _ in 0..10 {
        chat.scroll_up(u16::MAX);
    }
    assert_eq!(
        rows(&mut chat, 80, 1),
        ["› word word word word word word word word word word word word word word word"]
    );
}

#[test]
fn a_streaming_message_shows_what_its_whole_text_renders() {
    let answer = "## Plan\n\n1. Read `src/lib.rs`\n2. Fix\n\n```rust\nfn add(a: i32) -> i32 {\n    a + 1 /* note\n    more */\n}\n```\n\nDone, and the tests pass.\n";
    let mut chat = Chat::new();
    chat.push(Cell::User { text: "go".into() });
    chat.push(Cell::streaming(String::new()));
    assert_eq!(rows(&mut chat, 40, 4), ["› go", "", "…", ""]);
    let mut text = String::new();
    let chars: Vec<char> = answer.chars().collect();
    for piece in chars.chunks(3) {
        let piece: String = piece.iter().collect();
        text.push_str(&piece);
        assert!(chat.last_mut().is_some_and(|c| c.push_delta(&piece)));
        let mut whole = Chat::new();
        whole.push(Cell::User { text: "go".into() });
        whole.push(Cell::Assistant {
            markdown: text.clone(),
            state: AssistantState::Done,
        });
        for (w, h) in [(40, 30), (23, 8)] {
            let area = Rect::new(0, 0, w, h);
            let mut a = Buffer::empty(area);
            let mut b = Buffer::empty(area);
            render(&mut chat, area, &mut a, &theme());
            render(&mut whole, area, &mut b, &theme());
            assert_eq!(a, b, "after {text:?} at {w}x{h}");
        }
    }
    // Finished: the cell renders whole, as before.
    if let Some(Cell::Assistant { state, .. }) = chat.last_mut() {
        *state = AssistantState::Done;
    }
    assert!(rows(&mut chat, 40, 30).contains(&"Done, and the tests pass.".to_string()));
    assert!(!Cell::User { text: "x".into() }.push_delta("y"));
}

#[test]
fn diagnostics_under_a_tool_cell_snapshot() {
    use crate::engine::lsp::{ChangeReport, Finding, Severity};
    let finding = |line, severity, message: &str| Finding {
        path: "calc.py".into(),
        line,
        col: 12,
        severity,
        message: message.into(),
        source: Some("pyflakes".into()),
    };
    let mut chat = Chat::new();
    chat.push(Cell::Tool {
        id: "e1".into(),
        name: "edit_file".into(),
        summary: "edit_file: calc.py".into(),
        status: ToolStatus::Succeeded("edited calc.py".into()),
        expanded: false,
        diff: None,
        exit: None,
    });
    chat.push(Cell::Diagnostics(Box::new(ChangeReport {
        checked: vec!["calc.py".into()],
        new: vec![
            finding(2, Severity::Error, "undefined name 'bonus'"),
            finding(1, Severity::Warning, "'os' imported but unused"),
        ],
        gone: vec![finding(7, Severity::Error, "undefined name 'bonsu'")],
        kept_errors: 1,
        notes: vec!["`typescript` is still starting: no diagnostics for app.ts yet".into()],
        ..Default::default()
    })));
    insta::assert_snapshot!(
        "diagnostics_60x10",
        terminal(&mut chat, 60, 10, &theme()).backend()
    );
}
