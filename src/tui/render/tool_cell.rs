//! A tool call's cell: the engine's one-line summary of the call, how a command ended, the diff
//! of a change (collapsed to its first lines), and the output, collapsed to its first and last
//! lines until expanded. The subagent cell draws its own tool calls with the same pieces.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::diff_view::{COLLAPSED_DIFF_LINES, diff_lines, diff_stat};
use super::live_output::LiveOutput;
use super::theme::Theme;
use super::wrap::{WrapMode, sanitize, str_width, truncate, wrap_spans, wrap_text};
use crate::engine::protocol::{CommandExit, FileDiff};
use crate::tui::keymap::{Action, short_label_for};

/// Output lines a collapsed tool cell shows from the start of its output.
pub(crate) const HEAD_LINES: usize = 2;
/// Output lines a collapsed tool cell shows from the end of its output (where a command says
/// how it ended).
pub(crate) const TAIL_LINES: usize = 3;

/// Where a tool call is: waiting for the user's approval, running, or finished with its output.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolStatus {
    /// Not started: it waits for the user's answer to its approval prompt.
    AwaitsApproval,
    /// No result yet; it has run this many whole seconds, printing `live` so far.
    Running {
        /// Seconds since the call started.
        secs: u64,
        /// What a running command printed so far.
        live: LiveOutput,
    },
    /// It succeeded with this output.
    Succeeded(String),
    /// It failed with this output.
    Failed(String),
}

impl ToolStatus {
    /// Just started: no output, no time yet.
    pub(crate) fn running() -> ToolStatus {
        ToolStatus::Running {
            secs: 0,
            live: LiveOutput::default(),
        }
    }
}

fn raw(s: impl Into<String>, style: Style) -> Span<'static> {
    Span::styled(s.into(), style)
}

/// The engine's one-line summary of a tool call (`bash: cargo test`), the tool's name in
/// `name_style` and the rest in `rest_style`.
pub(super) fn summary_spans(
    name: &str,
    summary: &str,
    name_style: Style,
    rest_style: Style,
) -> Vec<Span<'static>> {
    let summary = sanitize(summary).replace('\n', " ");
    match summary.strip_prefix(name) {
        Some(rest) => vec![
            raw(name.to_string(), name_style),
            raw(rest.to_string(), rest_style),
        ],
        None => vec![raw(summary, rest_style)],
    }
}

/// What a tool cell draws.
pub(super) struct ToolView<'a> {
    pub(super) name: &'a str,
    pub(super) summary: &'a str,
    pub(super) status: &'a ToolStatus,
    pub(super) expanded: bool,
    pub(super) diff: Option<&'a FileDiff>,
    pub(super) exit: Option<&'a CommandExit>,
}

/// `1.2s`, `59.9s`, `2m05s`.
pub(crate) fn fmt_elapsed(ms: u64) -> String {
    if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        let s = ms / 1000;
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

/// How a command ended, for its header: `exit code 0 · 1.2s`, `interrupted after 2.5s`.
fn exit_text(exit: &CommandExit) -> String {
    let summary = sanitize(&exit.summary).trim().to_string();
    if exit.interrupted() || exit.timed_out() || summary.contains(" after ") {
        summary
    } else {
        format!("{summary} · {}", fmt_elapsed(exit.elapsed_ms))
    }
}

/// The tool cell's lines: the header, then the diff, the output, or how long it has run.
pub(super) fn tool_lines(v: &ToolView<'_>, w: usize, theme: &Theme) -> Vec<Line<'static>> {
    let (output, is_error) = match v.status {
        ToolStatus::AwaitsApproval | ToolStatus::Running { .. } => (None, false),
        ToolStatus::Succeeded(o) => (Some(o.as_str()), false),
        ToolStatus::Failed(o) => (Some(o.as_str()), true),
    };
    let failed = is_error || v.exit.is_some_and(|e| e.code() != Some(0));
    let mark_style = if failed { theme.error } else { theme.tool };
    let mark = if v.expanded { "▾ " } else { "▸ " };
    let mut head = vec![raw(mark, mark_style)];
    head.extend(summary_spans(v.name, v.summary, mark_style, theme.text));
    if let Some(d) = v.diff {
        head.push(raw(format!("  {}", diff_stat(d)), theme.dim));
    }
    // The exit code is in the header, so it shows collapsed too.
    if let Some(e) = v.exit {
        let style = if e.code() == Some(0) {
            theme.success
        } else {
            theme.error
        };
        head.push(raw(" · ", theme.dim));
        head.push(raw(exit_text(e), style));
    }
    let indent = [raw("  ", theme.text)];
    let mut lines = wrap_spans(&head, w, &[], &indent, WrapMode::Words);
    let note = |text: String| {
        wrap_spans(
            &[raw(text, theme.dim)],
            w,
            &indent,
            &indent,
            WrapMode::Words,
        )
    };
    if let (Some(d), false) = (v.diff, is_error) {
        let budget = (!v.expanded).then_some(COLLAPSED_DIFF_LINES);
        let mut body = diff_lines(d, budget, 2, w, theme);
        if !v.expanded
            && let Some(last) = body.last_mut()
            && last.to_string().trim_start().starts_with('…')
        {
            last.spans.push(raw(
                format!(" ({} expands)", short_label_for(Action::ToggleTool)),
                theme.dim,
            ));
        }
        lines.extend(body);
        return lines;
    }
    let Some(output) = output else {
        if let ToolStatus::Running { live, .. } = v.status
            && !live.is_empty()
        {
            let text = live.text();
            lines.extend(output_lines(&text, theme.tool_output, v.expanded, w, theme));
        }
        let text = match v.status {
            ToolStatus::AwaitsApproval => "waits for your approval".to_string(),
            ToolStatus::Running { secs, .. } if *secs > 0 => format!("running… {secs}s"),
            _ => "running…".to_string(),
        };
        lines.extend(note(text));
        return lines;
    };
    let clean = sanitize(output);
    let output = clean.trim_end_matches('\n');
    if output.is_empty() {
        lines.extend(note("(no output)".into()));
    } else {
        let style = if is_error {
            theme.error
        } else {
            theme.tool_output
        };
        lines.extend(output_lines(output, style, v.expanded, w, theme));
    }
    lines
}

/// A tool's output under its header: whole when expanded or short, else its first and last
/// lines cut to a row each, with a note of what is hidden between them.
pub(super) fn output_lines(
    output: &str,
    style: Style,
    expanded: bool,
    w: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let indent = [raw("  ", theme.text)];
    let all: Vec<&str> = output.split('\n').collect();
    let total = all.len();
    let room = w.saturating_sub(2).max(1);
    let fits = total <= HEAD_LINES + TAIL_LINES + 1 && all.iter().all(|l| str_width(l) <= room);
    if expanded || fits {
        return wrap_text(output, style, w, &indent, &indent, WrapMode::Chars);
    }
    let row = |line: &str| {
        Line::from(vec![
            raw("  ", theme.text),
            raw(truncate(line, room), style),
        ])
    };
    // Short output with a long line: every line, cut; else the head, the count, the tail.
    let (head, tail) = if total <= HEAD_LINES + TAIL_LINES + 1 {
        (total, 0)
    } else {
        (HEAD_LINES, TAIL_LINES)
    };
    let hidden = total - head - tail;
    let key = short_label_for(Action::ToggleTool);
    let more = match hidden {
        0 => format!("… (long lines cut, {key} expands)"),
        1 => format!("… 1 more line ({key} expands)"),
        n => format!("… {n} more lines ({key} expands)"),
    };
    let mut lines: Vec<Line<'static>> = all.iter().take(head).map(|l| row(l)).collect();
    let note = wrap_spans(
        &[raw(more, theme.dim)],
        w,
        &indent,
        &indent,
        WrapMode::Words,
    );
    if hidden == 0 {
        lines.extend(note);
        return lines;
    }
    lines.extend(note);
    lines.extend(all.iter().skip(total - tail).map(|l| row(l)));
    lines
}
