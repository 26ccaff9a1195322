//! The plan above the input: the `todo` tool's list, compact, drawn only while it
//! has items not done. A header with the count, then the items around the first open one (a done
//! one before it for context), and how many more there are.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::theme::Theme;
use super::wrap::{sanitize, truncate};
use crate::engine::protocol::{TodoItem, TodoStatus};

/// Items shown at most; a longer plan shows a window around its first open item.
pub(crate) const PLAN_MAX_ITEMS: usize = 5;

/// The item shown first: one done item before the first open one, so the list reads as progress.
fn window_start(items: &[TodoItem], shown: usize) -> usize {
    let first_open = items
        .iter()
        .position(|i| i.status != TodoStatus::Done)
        .unwrap_or(0);
    first_open
        .saturating_sub(1)
        .min(items.len().saturating_sub(shown))
}

/// The plan's rows for `width` columns, at most `max_rows` of them (the header first); none when
/// every item is done, when the plan is empty, or when fewer than two rows fit.
pub(crate) fn plan_lines(
    items: &[TodoItem],
    width: usize,
    max_rows: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    if max_rows < 2 || width < 4 || !items.iter().any(|i| i.status != TodoStatus::Done) {
        return Vec::new();
    }
    let done = items
        .iter()
        .filter(|i| i.status == TodoStatus::Done)
        .count();
    let room = (max_rows - 1).min(PLAN_MAX_ITEMS);
    // When the list does not fit, its last row says how many items are not shown.
    let shown = if items.len() <= room {
        items.len()
    } else {
        room.saturating_sub(1).max(1)
    };
    let start = window_start(items, shown);
    let mut out = vec![Line::from(vec![
        Span::styled(" Plan", theme.accent.add_modifier(Modifier::BOLD)),
        Span::styled(format!(" · {done}/{} done", items.len()), theme.dim),
    ])];
    for item in items.iter().skip(start).take(shown) {
        let (mark, mark_style, text_style) = match item.status {
            TodoStatus::Done => ("✓", theme.success, theme.dim),
            TodoStatus::InProgress => ("▸", theme.accent, theme.text.add_modifier(Modifier::BOLD)),
            TodoStatus::Pending => ("○", theme.dim, theme.text),
        };
        let text = sanitize(&item.text).replace('\n', " ");
        out.push(Line::from(vec![
            Span::styled(format!(" {mark} "), mark_style),
            Span::styled(truncate(&text, width.saturating_sub(3)), text_style),
        ]));
    }
    let hidden = items.len() - shown;
    if hidden > 0 {
        let before = start;
        let after = hidden - before;
        let text = match (before, after) {
            (0, n) => format!("   … {n} more"),
            (n, 0) => format!("   … {n} earlier"),
            (b, a) => format!("   … {b} earlier, {a} more"),
        };
        out.push(Line::from(Span::styled(truncate(&text, width), theme.dim)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(text: &str, status: TodoStatus) -> TodoItem {
        TodoItem {
            text: text.into(),
            status,
        }
    }

    fn rows(items: &[TodoItem], width: usize, max: usize) -> Vec<String> {
        plan_lines(items, width, max, &Theme::plain())
            .iter()
            .map(|l| l.to_string())
            .collect()
    }

    #[test]
    fn hidden_when_nothing_is_open() {
        assert!(rows(&[], 80, 6).is_empty());
        let all_done = [item("a", TodoStatus::Done), item("b", TodoStatus::Done)];
        assert!(rows(&all_done, 80, 6).is_empty());
        let open = [item("a", TodoStatus::Pending)];
        assert!(rows(&open, 80, 1).is_empty(), "no room for an item");
        assert_eq!(rows(&open, 80, 2), [" Plan · 0/1 done", " ○ a"]);
    }

    #[test]
    fn a_long_plan_shows_a_window_around_the_first_open_item() {
        use TodoStatus::*;
        let items: Vec<TodoItem> = [
            Done, Done, Done, InProgress, Pending, Pending, Pending, Pending,
        ]
        .iter()
        .enumerate()
        .map(|(i, s)| item(&format!("step {}", i + 1), *s))
        .collect();
        assert_eq!(
            rows(&items, 40, 6),
            [
                " Plan · 3/8 done",
                " ✓ step 3",
                " ▸ step 4",
                " ○ step 5",
                " ○ step 6",
                "   … 2 earlier, 2 more",
            ]
        );
        // Narrow: items are cut to the width.
        let long = [item(&"x".repeat(50), InProgress)];
        let r = rows(&long, 12, 6);
        assert_eq!(r[1], format!(" ▸ {}…", "x".repeat(8)));
    }
}
