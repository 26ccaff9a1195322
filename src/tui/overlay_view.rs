//! Overlays the view draws over the chat: the session picker (`/resume`, `--resume`), the model
//! picker (`/model`) and the `@path` completion popup above the input box.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

use super::keymap::{Action, label_for};
use super::mention::Mention;
use super::model_picker::ModelPicker;
use super::render::theme::Theme;
use super::render::wrap::{WrapMode, sanitize, str_width, truncate, wrap_text};
use super::session_picker::SessionPicker;
use crate::engine::protocol::SessionSummary;

/// Rows the `@` popup lists at most.
const MENTION_ROWS: u16 = 8;

/// `2026-12-01 11:18` from an RFC 3339 time.
fn short_time(rfc3339: &str) -> String {
    let t: String = rfc3339.chars().take(16).collect();
    t.replace('T', " ")
}

/// One picker row: time, generations, turns, cost, first message.
pub(crate) fn picker_row(s: &SessionSummary, current: bool, width: usize) -> String {
    let gens = if s.generations == 1 {
        "1 gen ".to_string()
    } else {
        format!("{} gens", s.generations)
    };
    let turns = if s.num_turns == 1 { "turn " } else { "turns" };
    let head = format!(
        "{}  {gens}  {:>3} {turns}  ${:>7.4}  ",
        short_time(&s.updated),
        s.num_turns,
        s.cost_usd
    );
    let first = sanitize(&s.first_message).replace('\n', " ");
    let first = if current {
        format!("(open now) {first}")
    } else {
        first
    };
    let room = width.saturating_sub(str_width(&head));
    truncate(&format!("{head}{}", truncate(&first, room)), width)
}

/// The session picker, centred over `area`.
pub(crate) fn draw_picker(p: &SessionPicker, area: Rect, buf: &mut Buffer, theme: &Theme) {
    if area.width < 20 || area.height < 5 {
        return;
    }
    let width = area.width.saturating_sub(4).min(120);
    let rows = (p.sessions().len() as u16)
        .min(area.height.saturating_sub(4))
        .max(1);
    let height = rows + 2;
    let rect = Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height.saturating_sub(height)) / 2,
        width,
        height,
    );
    let title = format!(" sessions of this workspace · {} ", picker_keys());
    let (inner, first) = popup_frame(rect, buf, title, p.selected(), theme);
    let lines: Vec<Line> = p
        .sessions()
        .iter()
        .enumerate()
        .skip(first)
        .take(usize::from(inner.height))
        .map(|(i, s)| {
            let current = p.is_current(s);
            let style = if i == p.selected() {
                theme.selection
            } else if current {
                theme.dim
            } else {
                Style::default()
            };
            Line::styled(picker_row(s, current, usize::from(inner.width)), style)
        })
        .collect();
    Paragraph::new(lines).render(inner, buf);
}

/// The most rows the model picker gives to why the provider's list is missing.
const STATUS_ROWS: usize = 4;

/// The model picker, centred over `area`: the models, the one in use marked, and under them
/// whether the provider's list is awaited or why it is missing.
pub(crate) fn draw_model_picker(p: &ModelPicker, area: Rect, buf: &mut Buffer, theme: &Theme) {
    if area.width < 20 || area.height < 5 {
        return;
    }
    let width = area.width.saturating_sub(4).min(80);
    // Why the provider's list is missing is said whole, over as many rows as it takes (at most
    // a few), under the models.
    let status: Vec<Line> = p.status().map_or_else(Vec::new, |s| {
        let w = usize::from(width.saturating_sub(2)).max(1);
        let mut rows = wrap_text(&sanitize(&s), theme.dim, w, &[], &[], WrapMode::Words);
        rows.truncate(STATUS_ROWS);
        rows
    });
    let listed = p.models().len() + status.len();
    let rows = u16::try_from(listed)
        .unwrap_or(u16::MAX)
        .min(area.height.saturating_sub(4))
        .max(1);
    let height = rows + 2;
    let rect = Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height.saturating_sub(height)) / 2,
        width,
        height,
    );
    let title = format!(
        " model · {} uses it · {} closes ",
        label_for(Action::PickerChoose),
        label_for(Action::PickerClose)
    );
    let (inner, first) = popup_frame(rect, buf, title, p.selected(), theme);
    let room = usize::from(inner.height)
        .saturating_sub(status.len())
        .max(1);
    let w = usize::from(inner.width);
    let mut lines: Vec<Line> = p
        .models()
        .iter()
        .enumerate()
        .skip(first)
        .take(room)
        .map(|(i, m)| {
            let (text, style) = if p.is_current(m) {
                (format!("{} (in use)", sanitize(m)), theme.dim)
            } else {
                (sanitize(m).into_owned(), Style::default())
            };
            let style = if i == p.selected() {
                theme.selection
            } else {
                style
            };
            Line::styled(truncate(&text, w), style)
        })
        .collect();
    lines.extend(status);
    Paragraph::new(lines).render(inner, buf);
}

/// The `@` popup just above the input box, matched characters of each path in the key style.
pub(crate) fn draw_mentions(m: &Mention, body: Rect, input: Rect, buf: &mut Buffer, theme: &Theme) {
    if body.height < 3 {
        return;
    }
    let rows = (m.items().len() as u16).clamp(1, MENTION_ROWS);
    let height = (rows + 2).min(body.height);
    let width = body.width.min(80);
    let rect = Rect::new(body.x, input.y.saturating_sub(height), width, height);
    let status = if m.partial() {
        format!(" files · indexing… {} so far ", m.indexed())
    } else {
        format!(" files · {} indexed ", m.indexed())
    };
    let (inner, first) = popup_frame(rect, buf, status, m.selected(), theme);
    let lines: Vec<Line> = if m.items().is_empty() {
        vec![Line::styled("(no match yet)", theme.dim)]
    } else {
        m.items()
            .iter()
            .enumerate()
            .skip(first)
            .take(usize::from(inner.height))
            .map(|(i, path)| {
                let base = if i == m.selected() {
                    theme.selection
                } else {
                    Style::default()
                };
                path_line(path, m.query(), usize::from(inner.width), base, theme)
            })
            .collect()
    };
    Paragraph::new(lines).render(inner, buf);
}

/// A popup's frame over `rect`: cleared, bordered in the focus style with `title`. Returns the
/// area inside and the first row to show so that row `selected` stays in view.
fn popup_frame(
    rect: Rect,
    buf: &mut Buffer,
    title: String,
    selected: usize,
    theme: &Theme,
) -> (Rect, usize) {
    Clear.render(rect, buf);
    let block = Block::bordered()
        .title(title)
        .border_style(theme.border_focus);
    let inner = block.inner(rect);
    block.render(rect, buf);
    let first = selected.saturating_sub(usize::from(inner.height).saturating_sub(1));
    (inner, first)
}

/// A path with the query's characters (matched in order, case-insensitively) highlighted.
fn path_line(path: &str, query: &str, width: usize, base: Style, theme: &Theme) -> Line<'static> {
    let shown = truncate(&sanitize(path), width);
    let mut wanted = query.chars().flat_map(char::to_lowercase).peekable();
    let mut spans: Vec<Span<'static>> = Vec::new();
    for c in shown.chars() {
        let hit = wanted
            .peek()
            .is_some_and(|w| c.to_lowercase().next() == Some(*w));
        if hit {
            wanted.next();
        }
        let style = if hit { theme.key.patch(base) } else { base };
        spans.push(Span::styled(c.to_string(), style));
    }
    Line::from(spans)
}

/// The picker's keys, for its title.
pub(crate) fn picker_keys() -> String {
    format!(
        "{} continues · {} closes",
        label_for(Action::PickerChoose),
        label_for(Action::PickerClose)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picker_rows_fit_and_say_what_each_session_was() {
        let s = SessionSummary {
            run_id: "20261201-111800-ab12".into(),
            run_dir: "/d/runs/x".into(),
            created: "2026-12-01T11:18:00Z".into(),
            updated: "2026-12-01T11:42:10Z".into(),
            updated_unix_ms: 0,
            step: "fix-build".into(),
            first_message: "Why does the\nmacOS build fail?".into(),
            generations: 2,
            num_turns: 7,
            cost_usd: 1.056,
            model: "claude".into(),
            session_id: "s".into(),
        };
        assert_eq!(
            picker_row(&s, false, 90),
            "2026-12-01 11:42  2 gens    7 turns  $ 1.0560  Why does the macOS build fail?"
        );
        for w in [10, 40, 60] {
            assert!(str_width(&picker_row(&s, true, w)) <= w);
        }
    }
}
