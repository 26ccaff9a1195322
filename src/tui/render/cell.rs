//! Transcript cells and the lines each one draws at a given width.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::markdown::render_markdown;
use super::theme::Theme;
use super::wrap::{WrapMode, sanitize, str_width, truncate, wrap_spans, wrap_text};
use crate::engine::context::{fmt_tokens, fmt_window};

/// Tool output lines shown while a tool cell is collapsed.
pub const COLLAPSED_LINES: usize = 3;

/// One entry of the chat transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// A message the user sent.
    User { text: String },
    /// Assistant text (markdown); `streaming` while deltas still arrive.
    Assistant {
        markdown: String,
        streaming: bool,
        interrupted: bool,
    },
    /// Thinking text.
    Thinking { text: String },
    /// A tool call; `output` is `None` while it runs.
    Tool {
        id: String,
        name: String,
        summary: String,
        output: Option<String>,
        is_error: bool,
        expanded: bool,
    },
    /// A permission question; `answer` once the user answered (`allowed once`, `denied`, ...).
    Approval {
        name: String,
        summary: String,
        answer: Option<String>,
    },
    /// An error message.
    Error { message: String },
    /// An informational message.
    Notice { message: String },
    /// A provider retry.
    Retry {
        attempt: u32,
        max: u32,
        reason: String,
        delay_ms: u64,
    },
    /// A generation boundary: a handoff ended the previous generation at `context`/`window`.
    Divider {
        generation: u32,
        context: u64,
        window: u64,
        path: Option<String>,
        degraded: bool,
    },
}

fn raw(s: impl Into<String>, style: Style) -> Span<'static> {
    Span::styled(s.into(), style)
}

impl Cell {
    /// The cell's lines wrapped to `width` columns (at least one line).
    pub fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let w = usize::from(width.max(1));
        match self {
            Cell::User { text } => {
                let first = [raw("› ", theme.accent)];
                let rest = [raw("  ", theme.user)];
                wrap_text(
                    &sanitize(text),
                    theme.user,
                    w,
                    &first,
                    &rest,
                    WrapMode::Words,
                )
            }
            Cell::Assistant {
                markdown,
                streaming,
                interrupted,
            } => {
                let mut lines = if markdown.is_empty() && *streaming {
                    vec![Line::from(raw("…", theme.dim))]
                } else {
                    render_markdown(markdown, w, theme)
                };
                if *interrupted {
                    lines.push(Line::from(raw("[interrupted]", theme.warning)));
                }
                lines
            }
            Cell::Thinking { text } => {
                let bar = [raw("┊ ", theme.thinking)];
                wrap_text(
                    sanitize(text).trim_end(),
                    theme.thinking,
                    w,
                    &bar,
                    &bar,
                    WrapMode::Words,
                )
            }
            Cell::Tool {
                name,
                summary,
                output,
                is_error,
                expanded,
                ..
            } => tool_lines(
                name,
                summary,
                output.as_deref(),
                *is_error,
                *expanded,
                w,
                theme,
            ),
            Cell::Approval {
                name,
                summary,
                answer,
            } => {
                let head = vec![
                    raw("? ", theme.warning),
                    raw(format!("allow {name}"), theme.warning),
                    raw("  ", theme.text),
                    raw(sanitize(summary).replace('\n', " "), theme.text),
                ];
                let mut lines =
                    wrap_spans(&head, w, &[], &[raw("  ", theme.text)], WrapMode::Words);
                let tail = match answer {
                    Some(a) => vec![raw("→ ", theme.dim), raw(a.clone(), theme.text)],
                    None => vec![
                        raw("y", theme.key),
                        raw(" once  ", theme.dim),
                        raw("a", theme.key),
                        raw(" always  ", theme.dim),
                        raw("n", theme.key),
                        raw(" deny", theme.dim),
                    ],
                };
                let pad = [raw("  ", theme.text)];
                lines.extend(wrap_spans(&tail, w, &pad, &pad, WrapMode::Words));
                lines
            }
            Cell::Error { message } => {
                let first = [raw("✗ ", theme.error)];
                let rest = [raw("  ", theme.error)];
                wrap_text(
                    sanitize(message).trim_end(),
                    theme.error,
                    w,
                    &first,
                    &rest,
                    WrapMode::Words,
                )
            }
            Cell::Notice { message } => {
                let first = [raw("• ", theme.notice)];
                let rest = [raw("  ", theme.notice)];
                wrap_text(
                    sanitize(message).trim_end(),
                    theme.notice,
                    w,
                    &first,
                    &rest,
                    WrapMode::Words,
                )
            }
            Cell::Retry {
                attempt,
                max,
                reason,
                delay_ms,
            } => {
                let text = format!(
                    "{} — retrying in {:.1}s ({attempt}/{max})",
                    sanitize(reason).trim(),
                    *delay_ms as f64 / 1000.0,
                );
                let first = [raw("⟳ ", theme.warning)];
                let rest = [raw("  ", theme.warning)];
                wrap_text(&text, theme.warning, w, &first, &rest, WrapMode::Words)
            }
            Cell::Divider {
                generation,
                context,
                window,
                path,
                degraded,
            } => {
                vec![divider_line(
                    *generation,
                    *context,
                    *window,
                    path.as_deref(),
                    *degraded,
                    w,
                    theme,
                )]
            }
        }
    }
}

fn tool_lines(
    name: &str,
    summary: &str,
    output: Option<&str>,
    is_error: bool,
    expanded: bool,
    w: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mark_style = if is_error { theme.error } else { theme.tool };
    let mark = if expanded { "▾ " } else { "▸ " };
    let mut head = vec![raw(mark, mark_style), raw(name.to_string(), mark_style)];
    let summary = sanitize(summary).replace('\n', " ");
    if !summary.is_empty() {
        head.push(raw("  ", theme.text));
        head.push(raw(summary, theme.text));
    }
    let indent = [raw("  ", theme.text)];
    let mut lines = wrap_spans(&head, w, &[], &indent, WrapMode::Words);
    let out_style = if is_error {
        theme.error
    } else {
        theme.tool_output
    };
    let Some(output) = output else {
        lines.extend(wrap_spans(
            &[raw("running…", theme.dim)],
            w,
            &indent,
            &indent,
            WrapMode::Words,
        ));
        return lines;
    };
    let output = sanitize(output);
    let output = output.trim_end_matches('\n');
    if output.is_empty() {
        lines.extend(wrap_spans(
            &[raw("(no output)", theme.dim)],
            w,
            &indent,
            &indent,
            WrapMode::Words,
        ));
        return lines;
    }
    let total = output.split('\n').count();
    let room = w.saturating_sub(2).max(1);
    let fits = total <= COLLAPSED_LINES + 1 && output.split('\n').all(|l| str_width(l) <= room);
    if expanded || fits {
        lines.extend(wrap_text(
            output,
            out_style,
            w,
            &indent,
            &indent,
            WrapMode::Chars,
        ));
        return lines;
    }
    // Collapsed: the first lines, each cut to one row, then how much is hidden.
    let shown = total.min(COLLAPSED_LINES);
    for line in output.split('\n').take(shown) {
        let mut spans = indent.to_vec();
        spans.push(raw(truncate(line, room), out_style));
        lines.push(Line::from(spans));
    }
    let more = match total - shown {
        0 => "… (long lines cut, ctrl-t to expand)".to_string(),
        1 => "… (1 more line, ctrl-t to expand)".to_string(),
        n => format!("… ({n} more lines, ctrl-t to expand)"),
    };
    lines.extend(wrap_spans(
        &[raw(more, theme.dim)],
        w,
        &indent,
        &indent,
        WrapMode::Words,
    ));
    lines
}

/// `── generation 2 · handed off at 152.0K/200K · notes/handoff-x.md · DEGRADED ──`, centred. At narrow
/// widths the path shrinks to its file name, then the label is cut.
fn divider_line(
    generation: u32,
    context: u64,
    window: u64,
    path: Option<&str>,
    degraded: bool,
    w: usize,
    theme: &Theme,
) -> Line<'static> {
    let base = format!(
        "generation {generation} · handed off at {}/{}",
        fmt_tokens(context),
        fmt_window(window)
    );
    let tail = if degraded { " · DEGRADED" } else { "" };
    let file_name = path.map(|p| p.rsplit(['/', '\\']).next().unwrap_or(p));
    let candidates = [
        path.map(|p| format!("{base} · {p}{tail}")),
        file_name.map(|f| format!("{base} · {f}{tail}")),
        Some(format!("{base}{tail}")),
        Some(format!("generation {generation}{tail}")),
        Some(format!("gen {generation}{tail}")),
    ];
    // Prefer a label with at least `── ` on each side, then one with `─ `, then cut the shortest.
    let fits = |l: &String, pad: usize| str_width(l) + pad <= w;
    let label = candidates
        .iter()
        .flatten()
        .find(|l| fits(l, 6))
        .or_else(|| candidates.iter().flatten().find(|l| fits(l, 4)))
        .cloned()
        .unwrap_or_else(|| truncate(&format!("gen {generation}{tail}"), w.saturating_sub(2)));
    let label_w = str_width(&label);
    if label_w + 2 > w {
        return Line::from(raw(truncate(&label, w), theme.divider));
    }
    let fill = w - label_w - 2;
    let left = fill / 2;
    let right = fill - left;
    let mut spans = vec![raw(format!("{} ", "─".repeat(left)), theme.divider)];
    match label.strip_suffix(" · DEGRADED") {
        Some(head) if degraded => {
            spans.push(raw(head.to_string(), theme.divider));
            spans.push(raw(" · ", theme.divider));
            spans.push(raw("DEGRADED", theme.warning));
        }
        _ => spans.push(raw(label, theme.divider)),
    }
    spans.push(raw(format!(" {}", "─".repeat(right)), theme.divider));
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(cell: &Cell, width: u16) -> Vec<String> {
        cell.lines(width, &Theme::plain())
            .iter()
            .map(|l| l.to_string())
            .collect()
    }

    fn tool(output: Option<&str>, expanded: bool) -> Cell {
        Cell::Tool {
            id: "t1".into(),
            name: "bash".into(),
            summary: "cargo test".into(),
            output: output.map(str::to_string),
            is_error: false,
            expanded,
        }
    }

    #[test]
    fn tool_collapses_and_expands() {
        assert_eq!(
            text(&tool(None, false), 40),
            ["▸ bash  cargo test", "  running…"]
        );
        let out = "1\n2\n3\n4\n5\n6\n";
        assert_eq!(
            text(&tool(Some(out), false), 40),
            [
                "▸ bash  cargo test",
                "  1",
                "  2",
                "  3",
                "  … (3 more lines, ctrl-t to expand)"
            ]
        );
        assert_eq!(text(&tool(Some(out), true), 40).len(), 7);
        // One hidden line is shown rather than a note of the same size.
        assert_eq!(text(&tool(Some("a\nb\nc\nd"), false), 40).len(), 5);
        // ... unless it is too long for one row.
        let four = format!("a\nb\nc\n{}", "d".repeat(50));
        assert_eq!(
            text(&tool(Some(&four), false), 40)[4],
            "  … (1 more line, ctrl-t to expand)"
        );
        assert_eq!(text(&tool(Some(""), false), 40)[1], "  (no output)");
        // A long collapsed line is cut to one row.
        let long = format!("{}\nx\ny\nz\nw", "a".repeat(100));
        assert_eq!(
            text(&tool(Some(&long), false), 20)[1],
            format!("  {}…", "a".repeat(17))
        );
    }

    #[test]
    fn divider_centres_and_shrinks() {
        let d = Cell::Divider {
            generation: 2,
            context: 152_000,
            window: 200_000,
            path: Some("notes/handoff-x.md".into()),
            degraded: true,
        };
        let wide = &text(&d, 90)[0];
        assert!(
            wide.contains(
                " generation 2 · handed off at 152.0K/200K · notes/handoff-x.md · DEGRADED "
            ),
            "{wide}"
        );
        assert!(wide.starts_with("──") && wide.ends_with("──"));
        assert_eq!(str_width(wide), 90);
        let narrow = &text(&d, 76)[0];
        assert!(
            narrow.contains("handoff-x.md · DEGRADED") && !narrow.contains("notes/"),
            "{narrow}"
        );
        assert_eq!(str_width(narrow), 76);
        for w in [0u16, 1, 5, 12, 30] {
            let l = &text(&d, w)[0];
            assert!(str_width(l) <= usize::from(w.max(1)), "{w}: {l}");
        }
    }

    #[test]
    fn small_cells() {
        let r = Cell::Retry {
            attempt: 2,
            max: 5,
            reason: "overloaded".into(),
            delay_ms: 2000,
        };
        assert_eq!(text(&r, 80), ["⟳ overloaded — retrying in 2.0s (2/5)"]);
        let a = Cell::Assistant {
            markdown: "hi".into(),
            streaming: false,
            interrupted: true,
        };
        assert_eq!(text(&a, 80), ["hi", "[interrupted]"]);
        let u = Cell::User {
            text: "one two three".into(),
        };
        assert_eq!(text(&u, 9), ["› one two", "  three"]);
        let ap = Cell::Approval {
            name: "bash".into(),
            summary: "rm -rf target".into(),
            answer: None,
        };
        assert_eq!(
            text(&ap, 80),
            ["? allow bash  rm -rf target", "  y once  a always  n deny"]
        );
    }
}
