//! Tests of the safe cells: every cell after the pass is measured alike by ratatui and by a
//! terminal that adds up its characters' widths, a wide character another widget drew over is
//! blanked, and frames drawn over frames through the real crossterm backend into a vt100
//! terminal leave no stray glyph.

use ratatui::backend::{Backend as _, CrosstermBackend};
use ratatui::buffer::{Buffer, CellWidth as _};
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};

use super::*;

pub(crate) const FAMILY: &str = "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}";
pub(crate) const FLAG: &str = "\u{1f1eb}\u{1f1f7}";
const HEART: &str = "\u{2764}\u{fe0f}";
const THUMB: &str = "\u{1f44d}\u{1f3fd}";
const KEYCAP: &str = "1\u{fe0f}\u{20e3}";
const ACCENT: &str = "e\u{301}";

/// Rows of text with every kind of cluster, and a frame of plain text to draw over them.
fn tricky_rows() -> Vec<String> {
    vec![
        format!("a {FAMILY} b {FLAG} c {HEART} d"),
        format!("{THUMB}{KEYCAP} caf{ACCENT} 日本語 {FAMILY}{FAMILY}"),
        format!("{HEART}{HEART}{HEART} end"),
    ]
}

fn buffer_of(rows: &[String], width: u16) -> Buffer {
    let mut buf = Buffer::empty(Rect::new(0, 0, width, rows.len() as u16));
    for (y, row) in rows.iter().enumerate() {
        buf.set_stringn(0, y as u16, row, usize::from(width), Style::new());
    }
    buf
}

/// The width a terminal that joins nothing gives `s`: its characters' widths added up.
fn codepoint_width(s: &str) -> usize {
    use unicode_width::UnicodeWidthChar as _;
    s.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// Every cell: one character takes all the columns ratatui laid it out with (so a terminal that
/// joins nothing gives it the same width), and the columns a wide cell covers are blank.
pub(crate) fn assert_safe(buf: &Buffer) {
    let area = buf.area;
    for y in area.top()..area.bottom() {
        let mut x = area.left();
        while x < area.right() {
            let cell = &buf[(x, y)];
            let w = cell.cell_width();
            let symbol = cell.symbol();
            assert!(
                symbol.len() == 1 || one_cell(symbol, usize::from(w)),
                "cell {x},{y} {symbol:?}"
            );
            assert_eq!(
                codepoint_width(symbol).max(1),
                usize::from(w).max(1),
                "cell {x},{y} {symbol:?}"
            );
            for dx in 1..w {
                assert!(x + dx < area.right(), "cell {x},{y} runs past the row");
                assert_eq!(buf[(x + dx, y)].symbol(), " ", "cell {},{y}", x + dx);
            }
            x += w.max(1);
        }
    }
}

#[test]
fn every_cell_is_measured_alike_by_every_terminal() {
    let mut buf = buffer_of(&tricky_rows(), 40);
    make_safe(&mut buf);
    assert_safe(&buf);
    // The family keeps its two columns as its first person, the flag as its letters, the heart
    // as a heart and a blank, a thumb without its skin tone, a keycap as its digit; the accent
    // and CJK stay as they are.
    assert_eq!(
        rows_of(&buf),
        [
            "a \u{1f468} b FR c \u{2764}  d",
            "\u{1f44d}1  cafe\u{301} 日本語 \u{1f468}\u{1f468}",
            "\u{2764} \u{2764} \u{2764}  end",
        ]
    );
}

#[test]
fn narrowed_clusters_keep_their_colours() {
    let mut buf = Buffer::empty(Rect::new(0, 0, 6, 1));
    let style = Style::new().bg(Color::Blue);
    buf.set_stringn(0, 0, HEART, 6, style);
    make_safe(&mut buf);
    assert_eq!(buf[(0, 0)].symbol(), "\u{2764}");
    assert_eq!((buf[(1, 0)].symbol(), buf[(1, 0)].bg), (" ", Color::Blue));
}

#[test]
fn a_wide_character_drawn_over_is_blanked() {
    let mut buf = Buffer::empty(Rect::new(0, 0, 8, 2));
    buf.set_stringn(0, 0, "日本語x", 8, Style::new());
    // A popup's border lands on the second column of 本.
    buf[(3, 0)].set_symbol("│");
    // A wide character put in the last column by hand runs past the row.
    buf[(7, 1)].set_symbol("日");
    make_safe(&mut buf);
    assert_safe(&buf);
    let row: String = (0..8).map(|x| buf[(x, 0)].symbol().to_string()).collect();
    assert_eq!(row, "日  │語 x ");
    assert_eq!(buf[(7, 1)].symbol(), " ");
}

/// The screen a terminal that adds up character widths (vt100) shows after `frames` were sent
/// one after the other through the crossterm backend, each as ratatui's diff from the last.
pub(crate) fn terminal_after(frames: &[Buffer], safe: bool) -> vt100::Parser {
    let area = frames.first().map_or_else(Rect::default, |f| f.area);
    let mut bytes = Vec::<u8>::new();
    let mut backend = CrosstermBackend::new(&mut bytes);
    let mut prev = Buffer::empty(area);
    for frame in frames {
        let mut next = frame.clone();
        if safe {
            make_safe(&mut next);
        }
        backend
            .draw(prev.diff(&next).into_iter())
            .expect("write to memory");
        prev = next;
    }
    ratatui::backend::Backend::flush(&mut backend).expect("flush");
    let mut parser = vt100::Parser::new(area.height, area.width, 0);
    parser.process(&bytes);
    parser
}

/// A buffer's rows as a terminal shows them (a wide cell's covered columns left out).
pub(crate) fn rows_of(buf: &Buffer) -> Vec<String> {
    let area = buf.area;
    (area.top()..area.bottom())
        .map(|y| {
            let mut row = String::new();
            let mut x = area.left();
            while x < area.right() {
                let cell = &buf[(x, y)];
                row.push_str(cell.symbol());
                x += cell.cell_width().max(1);
            }
            row.trim_end().to_string()
        })
        .collect()
}

pub(crate) fn screen_rows(p: &vt100::Parser, width: u16) -> Vec<String> {
    p.screen()
        .rows(0, width)
        .map(|r| r.trim_end().to_string())
        .collect()
}

#[test]
fn frames_over_frames_leave_no_stray_glyph_in_the_terminal() {
    let w = 40;
    let tricky = buffer_of(&tricky_rows(), w);
    let shifted: Vec<String> = tricky_rows().iter().map(|r| format!("  {r}")).collect();
    let plain = buffer_of(
        &[
            "plain text over the first row".to_string(),
            "x".to_string(),
            String::new(),
        ],
        w,
    );
    let frames = [
        tricky.clone(),
        buffer_of(&shifted, w),
        plain.clone(),
        tricky,
        plain,
    ];
    for n in 1..=frames.len() {
        let shown = terminal_after(&frames[..n], true);
        let mut want = frames[n - 1].clone();
        make_safe(&mut want);
        assert_eq!(screen_rows(&shown, w), rows_of(&want), "after frame {n}");
    }
    // Without the pass the terminal shows what ratatui never drew (the test can fail).
    let shown = terminal_after(&frames[..2], false);
    assert_ne!(screen_rows(&shown, w), rows_of(&frames[1]));
}
