//! The language servers' word on a tool call's change, under its cell: the problems it
//! introduced (errors, then warnings), the errors it fixed, how many were there before, and why
//! a server said nothing.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::theme::Theme;
use super::wrap::{WrapMode, sanitize, wrap_spans};
use crate::engine::lsp::{ChangeReport, Severity};

/// `◇ diagnostics: 1 new error in a.py`, then a line per problem.
pub(crate) fn diagnostics_lines(r: &ChangeReport, w: usize, theme: &Theme) -> Vec<Line<'static>> {
    let errors = r.new.iter().filter(|f| f.is_error()).count() + r.more_errors;
    let warnings = r.new.len() + r.more_errors + r.more_warnings - errors;
    let (summary, style) = match (errors, warnings) {
        (0, 0) if r.checked.is_empty() => ("no answer".to_string(), theme.dim),
        (0, 0) => ("no new problems".to_string(), theme.success),
        (e, 0) => (count(e, "new error"), theme.error),
        (0, n) => (count(n, "new warning"), theme.warning),
        (e, n) => (
            format!("{}, {}", count(e, "new error"), count(n, "warning")),
            theme.error,
        ),
    };
    let mut head = vec![
        Span::styled("  ◇ diagnostics: ", theme.dim),
        Span::styled(summary, style),
    ];
    if !r.checked.is_empty() {
        head.push(Span::styled(
            format!(" in {}", sanitize(&r.checked.join(", "))),
            theme.dim,
        ));
    }
    let pad = [Span::styled("    ", theme.text)];
    let mut lines = wrap_spans(&head, w, &[], &pad, WrapMode::Words);
    let mut line = |text: String, style: Style| {
        let spans = [Span::styled(sanitize(&text).into_owned(), style)];
        lines.extend(wrap_spans(&spans, w, &pad, &pad, WrapMode::Words));
    };
    for f in &r.new {
        let style = if f.severity == Severity::Error {
            theme.error
        } else {
            theme.warning
        };
        line(f.to_string(), style);
    }
    let hidden = r.more_errors + r.more_warnings;
    if hidden > 0 {
        line(format!("… and {hidden} more"), theme.dim);
    }
    for f in &r.gone {
        line(format!("fixed: {f}"), theme.success);
    }
    if r.kept_errors > 0 {
        line(
            format!(
                "{} there before (not repeated)",
                count(r.kept_errors, "error")
            ),
            theme.dim,
        );
    }
    for n in &r.notes {
        line(n.clone(), theme.dim);
    }
    lines
}

fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}
