//! Hooks in the chat: a hook that ran (its event, command, how it ended and the start of its
//! output, dimmed), and the question whether a workspace settings file's hooks may run.

use ratatui::text::{Line, Span};

use super::theme::Theme;
use super::wrap::{WrapMode, sanitize, wrap_spans};
use crate::engine::hooks::HookNote;

/// At most this many lines of a hook's output are drawn in its cell.
const OUTPUT_LINES: usize = 6;

/// `▹ PreToolUse hook ./check.sh · blocked (exit code 2) · 12 ms`, then its output.
pub(crate) fn hook_lines(note: &HookNote, w: usize, theme: &Theme) -> Vec<Line<'static>> {
    let state_style = match note.outcome {
        "succeeded" => theme.dim,
        "blocked" => theme.warning,
        _ => theme.error,
    };
    let head = [
        Span::styled("▹ ", theme.tool),
        Span::styled(format!("{} hook ", sanitize(&note.event)), theme.tool),
        Span::styled(sanitize(&note.name).into_owned(), theme.text),
        Span::styled(" · ", theme.dim),
        Span::styled(note.outcome.to_string(), state_style),
        Span::styled(
            format!(" ({}) · {} ms", sanitize(&note.exit), note.elapsed_ms),
            theme.dim,
        ),
    ];
    let pad = [Span::styled("  ", theme.text)];
    let mut lines = wrap_spans(&head, w, &[], &pad, WrapMode::Words);
    let output = sanitize(&note.output).into_owned();
    let all: Vec<&str> = output.lines().collect();
    for line in all.iter().take(OUTPUT_LINES) {
        let spans = [Span::styled((*line).to_string(), theme.dim)];
        lines.extend(wrap_spans(&spans, w, &pad, &pad, WrapMode::Chars));
    }
    if all.len() > OUTPUT_LINES {
        let more = [Span::styled(
            format!("… {} more lines", all.len() - OUTPUT_LINES),
            theme.dim,
        )];
        lines.extend(wrap_spans(&more, w, &pad, &pad, WrapMode::Words));
    }
    lines
}
