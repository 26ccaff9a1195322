//! A file change (the engine's [`FileDiff`]) as lines: each diff line with its number, a `-` in the
//! removed style or a `+` in the added style, context lines plain, hunks apart by `⋮`. A collapsed
//! view keeps the first lines up to a budget and counts the rest; the approval prompt shows it
//! whole. The engine already cut what no one can read (its hidden hunks are counted here too).

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::theme::Theme;
use super::wrap::{WrapMode, sanitize, str_width, truncate, wrap_spans};
use crate::engine::protocol::{DiffLine, FileChange, FileDiff, LineKind};

/// Diff lines a collapsed tool cell shows.
pub(crate) const COLLAPSED_DIFF_LINES: usize = 12;

fn raw(s: impl Into<String>, style: Style) -> Span<'static> {
    Span::styled(s.into(), style)
}

/// `+3 -1`, or `new file, +40` for a created one.
pub(crate) fn diff_stat(diff: &FileDiff) -> String {
    match diff.change {
        FileChange::Created => format!("new file, +{}", diff.added),
        FileChange::Modified => diff.stat(),
    }
}

/// The diff's lines at width `w`, indented by `indent` columns. `budget`: at most that many diff
/// lines (collapsed, each cut to a row), then a count of what is left; `None`: all of them,
/// long lines wrapped.
pub(crate) fn diff_lines(
    diff: &FileDiff,
    budget: Option<usize>,
    indent: usize,
    w: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let pad = " ".repeat(indent);
    let mut out = Vec::new();
    if diff.too_large {
        out.push(Line::from(vec![
            raw(pad.clone(), theme.text),
            raw(
                format!(
                    "(too large to show: {} lines before, {} after)",
                    diff.removed, diff.added
                ),
                theme.dim,
            ),
        ]));
        return out;
    }
    if diff.is_empty() && diff.hunks.is_empty() {
        out.push(Line::from(vec![
            raw(pad.clone(), theme.text),
            raw("(no change)", theme.dim),
        ]));
        return out;
    }
    let digits = diff
        .hunks
        .iter()
        .flat_map(|h| h.lines.iter())
        .filter_map(|l| l.new.max(l.old))
        .max()
        .unwrap_or(1)
        .to_string()
        .len();
    // Collapsed: the changed lines with one line of context each side.
    let kept: Vec<Vec<&DiffLine>> = diff
        .hunks
        .iter()
        .map(|h| {
            let changed = |i: usize| h.lines.get(i).is_some_and(|l| l.kind != LineKind::Context);
            h.lines
                .iter()
                .enumerate()
                .filter(|(i, l)| {
                    budget.is_none()
                        || l.kind != LineKind::Context
                        || changed(i + 1)
                        || i.checked_sub(1).is_some_and(changed)
                })
                .map(|(_, l)| l)
                .collect()
        })
        .collect();
    let total: usize = kept.iter().map(Vec::len).sum();
    let mut shown = 0usize;
    let mut hunks_shown = 0usize;
    'hunks: for (i, hunk) in kept.iter().enumerate() {
        if budget.is_some_and(|b| shown >= b) {
            break;
        }
        if i > 0 {
            out.push(Line::from(vec![
                raw(pad.clone(), theme.text),
                raw(format!("{:>digits$} ⋮", ""), theme.dim),
            ]));
        }
        hunks_shown += 1;
        for l in hunk {
            if budget.is_some_and(|b| shown >= b) {
                break 'hunks;
            }
            shown += 1;
            let lead = Lead { pad: &pad, digits };
            out.extend(line_rows(l, &lead, budget.is_some(), w, theme));
        }
    }
    let left_here = total - shown;
    let hunks_left = diff.hunks.len() - hunks_shown + diff.hidden_hunks;
    let lines_left = left_here + diff.hidden_lines;
    if lines_left > 0 {
        let what = match (lines_left, hunks_left) {
            (1, 0) => "… 1 more line".to_string(),
            (n, 0) => format!("… {n} more lines"),
            (n, 1) => format!("… {n} more lines, 1 more hunk"),
            (n, h) => format!("… {n} more lines in {h} more hunks"),
        };
        let room = w.saturating_sub(indent).max(1);
        out.push(Line::from(vec![
            raw(pad, theme.text),
            raw(truncate(&what, room), theme.dim),
        ]));
    }
    out
}

/// What goes before each diff line's number: the indentation and the number's width.
struct Lead<'a> {
    pad: &'a str,
    digits: usize,
}

/// One diff line: its number, its sign and its text; `cut` to one row (collapsed), else wrapped
/// under its text.
fn line_rows(
    l: &DiffLine,
    lead: &Lead<'_>,
    cut: bool,
    w: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let (sign, number, style) = match l.kind {
        LineKind::Added => ('+', l.new, theme.diff_added),
        LineKind::Removed => ('-', l.old, theme.diff_removed),
        LineKind::Context => (' ', l.new, theme.tool_output),
    };
    let number = number.map(|n| n.to_string()).unwrap_or_default();
    let (pad, digits) = (lead.pad, lead.digits);
    let lead = format!("{pad}{number:>digits$} ");
    let text = sanitize(&l.text).into_owned();
    let mark = raw(format!("{sign} "), style);
    let lead_w = str_width(&lead) + 2;
    if cut {
        let room = w.saturating_sub(lead_w).max(1);
        return vec![Line::from(vec![
            raw(lead, theme.dim),
            mark,
            raw(truncate(&text, room), style),
        ])];
    }
    let first = [raw(lead, theme.dim), mark];
    let rest = [raw(" ".repeat(lead_w), theme.text)];
    wrap_spans(&[raw(text, style)], w, &first, &rest, WrapMode::Chars)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::diff::DiffLimits;
    use crate::tui::render::wrap::line_texts as text;

    #[test]
    fn an_edit_shows_old_and_new_lines_with_numbers() {
        let old = "fn main() {\n    println!(\"hi\");\n}\n";
        let new = "fn main() {\n    println!(\"hello\");\n    exit(0);\n}\n";
        let d = FileDiff::new("src/main.rs", Some(old), new, DiffLimits::RESULT);
        assert_eq!(diff_stat(&d), "+2 -1");
        assert_eq!(
            text(&diff_lines(&d, None, 2, 80, &Theme::plain())),
            [
                "  1   fn main() {",
                "  2 -     println!(\"hi\");",
                "  2 +     println!(\"hello\");",
                "  3 +     exit(0);",
                "  4   }",
            ]
        );
    }

    #[test]
    fn a_new_file_is_added_lines_and_long_diffs_are_counted() {
        let body: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let d = FileDiff::new("new.txt", None, &body, DiffLimits::RESULT);
        assert_eq!(diff_stat(&d), "new file, +30");
        let lines = text(&diff_lines(
            &d,
            Some(COLLAPSED_DIFF_LINES),
            2,
            80,
            &Theme::plain(),
        ));
        assert_eq!(lines.len(), COLLAPSED_DIFF_LINES + 1);
        assert_eq!(lines[0], "   1 + line 1");
        assert_eq!(lines[COLLAPSED_DIFF_LINES], "  … 18 more lines");
        // Two changes far apart: two hunks, the second counted when the budget is spent.
        let old: String = (1..=100).map(|i| format!("l{i}\n")).collect();
        let new = old.replace("l10\n", "L10\n").replace("l90\n", "L90\n");
        let d = FileDiff::new("f", Some(&old), &new, DiffLimits::RESULT);
        let all = text(&diff_lines(&d, None, 0, 80, &Theme::plain()));
        assert!(all.iter().any(|l| l.trim() == "⋮"), "{all:?}");
        let few = text(&diff_lines(&d, Some(4), 0, 80, &Theme::plain()));
        assert_eq!(
            few,
            [
                " 9   l9",
                "10 - l10",
                "10 + L10",
                "11   l11",
                "… 4 more lines, 1 more hunk"
            ]
        );
        // Narrow: rows never overflow.
        for w in [1, 8, 20] {
            for l in diff_lines(&d, Some(5), 2, w, &Theme::plain()) {
                assert!(l.width() <= w.max(8), "{w}: {l}");
            }
        }
    }
}
