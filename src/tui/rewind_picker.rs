//! `/rewind` as the user sees it: the overlay the view draws (`/rewind`, or Esc twice on an empty
//! input while nothing runs, asks the engine for the step's user messages; the picker lists them
//! newest first with their time, generation, `(undone)` when the turn's files were undone, and
//! the files each turn changed; Enter on one offers code and conversation / conversation only /
//! code only; Enter on that sends `Op::Rewind`), and the notice of the engine's `Rewound` answer
//! naming the files put back. Where the picker stands is `rewind_state`.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

use crate::engine::ledger::{RewindMode, RewindPoint};

use super::render::theme::Theme;
use super::render::wrap::{sanitize, str_width, truncate};
use super::rewind_state::{MODES, RewindPicker};

/// The engine rewound: name what it put back.
pub(super) fn rewound_notice(
    turn: u64,
    mode: RewindMode,
    files: &[String],
    kept: &[String],
    generation: Option<u32>,
) -> String {
    let what = MODES
        .iter()
        .find(|(m, _)| *m == mode)
        .map_or("", |(_, label)| label);
    let mut s = format!("Rewound to before turn {turn} ({what})");
    if let Some(g) = generation {
        s.push_str(&format!(
            "; generation {g} starts from that generation's handoff"
        ));
    }
    if mode.code() {
        if files.is_empty() {
            s.push_str("\n  no file to put back");
        }
        for f in files {
            s.push_str(&format!("\n  restored {f}"));
        }
        for f in kept {
            s.push_str(&format!("\n  kept as you changed it: {f}"));
        }
    }
    s
}

/// `12-01 11:42` from seconds since the epoch (UTC).
fn short_time(at: u64) -> String {
    let days = at / 86_400;
    let secs = at % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    format!(
        "{month:02}-{day:02} {:02}:{:02}",
        secs / 3_600,
        (secs % 3_600) / 60
    )
}

/// One row of the list: time, generation, whether its turn is undone, the message's first line,
/// the files its turn changed.
pub(crate) fn row(p: &RewindPoint, width: usize) -> String {
    let undone = if p.undone { "(undone) " } else { "" };
    let head = format!("{}  gen {}  {undone}", short_time(p.at), p.generation);
    let files = match p.files.len() {
        0 => String::new(),
        1..=2 => format!("  · {}", p.files.join(", ")),
        n => format!(
            "  · {} and {} more",
            p.files
                .iter()
                .take(2)
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
            n - 2
        ),
    };
    let text = sanitize(p.text.lines().next().unwrap_or_default());
    let room = width.saturating_sub(str_width(&head) + str_width(&files));
    truncate(&format!("{head}{}{files}", truncate(&text, room)), width)
}

/// The picker, centred over `area`.
pub(crate) fn draw(p: &RewindPicker, area: Rect, buf: &mut Buffer, theme: &Theme) {
    if area.width < 20 || area.height < 5 {
        return;
    }
    let (title, rows): (String, Vec<(String, bool)>) = match p {
        RewindPicker::Loading => (" rewind ".into(), vec![("reading the step…".into(), false)]),
        RewindPicker::Messages { points, selected } => (
            " rewind to before a message · Enter picks · Esc closes ".into(),
            points
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    (
                        row(p, usize::from(area.width.saturating_sub(6))),
                        i == *selected,
                    )
                })
                .collect(),
        ),
        RewindPicker::Mode { point, selected } => (
            format!(
                " rewind to before turn {} · Enter rewinds · Esc closes ",
                point.turn
            ),
            MODES
                .iter()
                .enumerate()
                .map(|(i, (_, label))| ((*label).to_string(), i == *selected))
                .collect(),
        ),
    };
    let width = area.width.saturating_sub(4).min(120);
    let height = (rows.len() as u16)
        .min(area.height.saturating_sub(4))
        .max(1)
        + 2;
    let rect = Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height.saturating_sub(height)) / 2,
        width,
        height,
    );
    Clear.render(rect, buf);
    let block = Block::bordered()
        .title(title)
        .border_style(theme.border_focus);
    let inner = block.inner(rect);
    block.render(rect, buf);
    let chosen = rows.iter().position(|(_, s)| *s).unwrap_or(0);
    let first = chosen.saturating_sub(usize::from(inner.height).saturating_sub(1));
    let lines: Vec<Line> = rows
        .into_iter()
        .skip(first)
        .take(usize::from(inner.height))
        .map(|(text, sel)| {
            let style = if sel {
                theme.selection
            } else {
                Style::default()
            };
            Line::styled(truncate(&text, usize::from(inner.width)), style)
        })
        .collect();
    Paragraph::new(lines).render(inner, buf);
}

#[cfg(test)]
#[path = "rewind_picker_tests.rs"]
mod tests;
