//! A subagent's cell (a `task` call): live while the child works (what it was asked, its tool
//! calls so far, the tokens it holds, the time it has taken, what it does now), its report once
//! it is over; expanded (Ctrl-T), the child's transcript as its events told it.

use std::path::PathBuf;

use ratatui::text::{Line, Span};

use super::theme::Theme;
use super::tool_cell::{ToolStatus, output_lines, summary_spans};
use super::wrap::{WrapMode, sanitize, truncate, wrap_spans, wrap_text};
use crate::engine::context::{fmt_tokens, fmt_window};
use crate::engine::protocol::SubagentOutcome;

/// Characters of one reply the transcript keeps for the expanded view (the whole is on disk).
pub(crate) const STEP_TEXT_MAX: usize = 4_000;
/// Lines of a tool result the expanded transcript shows under its call.
const RESULT_LINES: usize = 3;

/// One entry of a child's transcript as the front end saw it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AgentStep {
    /// One of its replies (cut at [`STEP_TEXT_MAX`] characters).
    Text(String),
    /// A tool call, and once it returned: whether it failed and the head of its output.
    Tool {
        call_id: String,
        summary: String,
        result: Option<(bool, String)>,
    },
}

/// What the cell shows of one subagent.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentCell {
    /// The `task` call's id (every subagent event names it).
    pub(crate) id: String,
    /// The task call's one-line summary (`task: <description>`).
    pub(crate) summary: String,
    /// The model it runs on.
    pub(crate) model: String,
    /// Its own window.
    pub(crate) window: u64,
    /// Its transcript on disk.
    pub(crate) transcript: PathBuf,
    /// Tool calls so far.
    pub(crate) calls: u32,
    /// What its last response held (its own gauge).
    pub(crate) context: u64,
    /// What it has cost so far.
    pub(crate) cost_usd: f64,
    /// Time it has taken (whole seconds while it runs, exact once over).
    pub(crate) elapsed_ms: u64,
    /// None while it runs.
    pub(crate) outcome: Option<SubagentOutcome>,
    /// The report the parent got (the `task` call's result), once it came.
    pub(crate) report: ToolStatus,
    /// Its transcript so far.
    pub(crate) steps: Vec<AgentStep>,
    /// Ctrl-T: the transcript is shown.
    pub(crate) expanded: bool,
}

impl AgentCell {
    /// A subagent that just started, in the place of its `task` call.
    pub(crate) fn started(
        id: String,
        summary: String,
        model: String,
        window: u64,
        transcript: PathBuf,
    ) -> Self {
        AgentCell {
            id,
            summary,
            model,
            window,
            transcript,
            calls: 0,
            context: 0,
            cost_usd: 0.0,
            elapsed_ms: 0,
            outcome: None,
            report: ToolStatus::running(),
            steps: Vec::new(),
            expanded: false,
        }
    }

    /// The cell's lines at `w` columns.
    pub(crate) fn lines(&self, w: usize, theme: &Theme) -> Vec<Line<'static>> {
        let failed = self.outcome.is_some_and(SubagentOutcome::is_error)
            || matches!(self.report, ToolStatus::Failed(_));
        let mark_style = if failed { theme.error } else { theme.tool };
        let mark = if self.expanded { "▾ " } else { "▸ " };
        let mut head = vec![Span::styled(mark, mark_style)];
        head.extend(summary_spans("task", &self.summary, mark_style, theme.text));
        head.push(Span::styled(format!(" · {}", self.stats()), theme.dim));
        let indent = [Span::styled("  ", theme.text)];
        let mut lines = wrap_spans(&head, w, &[], &indent, WrapMode::Words);
        let note = |text: String| {
            wrap_spans(
                &[Span::styled(text, theme.dim)],
                w,
                &indent,
                &indent,
                WrapMode::Words,
            )
        };
        if self.expanded {
            lines.extend(note(format!(
                "{} · its own {} window · transcript {}",
                self.model,
                fmt_window(self.window),
                self.transcript.display()
            )));
            // Its last reply is its report, shown below once it came: not twice.
            let report = match &self.report {
                ToolStatus::Succeeded(r) | ToolStatus::Failed(r) => Some(r.trim()),
                ToolStatus::AwaitsApproval | ToolStatus::Running { .. } => None,
            };
            let shown = match (self.steps.last(), report) {
                (Some(AgentStep::Text(t)), Some(r))
                    if !t.trim().is_empty() && r.starts_with(t.trim()) =>
                {
                    self.steps.len() - 1
                }
                _ => self.steps.len(),
            };
            for step in self.steps.iter().take(shown) {
                lines.extend(step_lines(step, w, theme));
            }
        } else if self.outcome.is_none() {
            lines.extend(note(self.now_doing()));
        }
        match &self.report {
            ToolStatus::AwaitsApproval | ToolStatus::Running { .. } => {}
            ToolStatus::Succeeded(r) | ToolStatus::Failed(r) => {
                let style = if failed {
                    theme.error
                } else {
                    theme.tool_output
                };
                let clean = sanitize(r);
                let report = clean.trim_end_matches('\n');
                if report.is_empty() {
                    lines.extend(note("(no report)".into()));
                } else {
                    if self.expanded {
                        lines.extend(note("report:".into()));
                    }
                    lines.extend(output_lines(report, style, self.expanded, w, theme));
                }
            }
        }
        lines
    }

    /// `3 tool calls · 12.4K tokens · 8s`, and how it ended (and its cost) once it did.
    fn stats(&self) -> String {
        let calls = match self.calls {
            1 => "1 tool call".to_string(),
            n => format!("{n} tool calls"),
        };
        let secs = self.elapsed_ms / 1000;
        let elapsed = if secs >= 60 {
            format!("{}m{:02}s", secs / 60, secs % 60)
        } else {
            format!("{secs}s")
        };
        let mut parts = Vec::new();
        if let Some(o) = self.outcome {
            parts.push(outcome_label(o));
        }
        parts.push(calls);
        parts.push(format!("{} tokens", fmt_tokens(self.context)));
        // Its cost once it is over (while it runs the header stays short).
        if self.outcome.is_some() && self.cost_usd > 0.0 {
            parts.push(format!("${:.4}", self.cost_usd));
        }
        parts.push(elapsed);
        parts.join(" · ")
    }

    /// What a running child does now: its last tool call, or that it thinks.
    fn now_doing(&self) -> String {
        match self.steps.last() {
            Some(AgentStep::Tool {
                summary,
                result: None,
                ..
            }) => format!("running {}", sanitize(summary).replace('\n', " ")),
            Some(_) => "thinking…".into(),
            None => "starting…".into(),
        }
    }
}

/// How a subagent ended, in a few words.
fn outcome_label(o: SubagentOutcome) -> String {
    match o {
        SubagentOutcome::Completed => "done".into(),
        SubagentOutcome::MaxIterations { n, max } => format!("budget spent ({n}/{max})"),
        SubagentOutcome::ContextFull => "context full, reported".into(),
        SubagentOutcome::Overflow => "overflowed, reported what it read".into(),
        SubagentOutcome::Interrupted => "interrupted".into(),
        SubagentOutcome::Error(kind) => format!("failed: {kind}"),
    }
}

/// One transcript entry, indented under the header.
fn step_lines(step: &AgentStep, w: usize, theme: &Theme) -> Vec<Line<'static>> {
    let indent = [Span::styled("  ", theme.text)];
    match step {
        AgentStep::Text(text) => {
            let bar = Span::styled("  │ ", theme.assistant);
            let clean = sanitize(text);
            wrap_text(
                clean.trim_end(),
                theme.assistant,
                w,
                std::slice::from_ref(&bar),
                std::slice::from_ref(&bar),
                WrapMode::Words,
            )
        }
        AgentStep::Tool {
            summary, result, ..
        } => {
            let failed = matches!(result, Some((true, _)));
            let mark_style = if failed { theme.error } else { theme.tool };
            let mut head = vec![Span::styled("  ▸ ", mark_style)];
            head.push(Span::styled(
                sanitize(summary).replace('\n', " "),
                theme.text,
            ));
            let mut lines = wrap_spans(&head, w, &[], &indent, WrapMode::Words);
            let room = w.saturating_sub(4).max(1);
            let style = if failed {
                theme.error
            } else {
                theme.tool_output
            };
            let body: Vec<String> = match result {
                None => vec!["running…".into()],
                Some((_, out)) => {
                    let clean = sanitize(out);
                    let all: Vec<&str> = clean.trim_end().split('\n').collect();
                    let mut shown: Vec<String> = all
                        .iter()
                        .take(RESULT_LINES)
                        .map(|l| truncate(l, room))
                        .collect();
                    if all.len() > RESULT_LINES {
                        shown.push(format!("… ({} more lines)", all.len() - RESULT_LINES));
                    }
                    shown
                }
            };
            for l in body {
                lines.push(Line::from(vec![
                    Span::styled("    ", theme.text),
                    Span::styled(l, style),
                ]));
            }
            lines
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(cell: &AgentCell, w: usize) -> Vec<String> {
        cell.lines(w, &Theme::plain())
            .iter()
            .map(|l| l.to_string())
            .collect()
    }

    fn cell() -> AgentCell {
        AgentCell::started(
            "c1".into(),
            "task: find the parser".into(),
            "m".into(),
            200_000,
            PathBuf::from("/d/runs/r/sessions/child.jsonl"),
        )
    }

    #[test]
    fn running_then_over() {
        let mut c = cell();
        assert_eq!(
            text(&c, 80),
            [
                "▸ task: find the parser · 0 tool calls · 0 tokens · 0s",
                "  starting…"
            ]
        );
        c.calls = 1;
        c.context = 12_400;
        c.elapsed_ms = 75_000;
        c.steps.push(AgentStep::Tool {
            call_id: "k1".into(),
            summary: "grep: fn parse".into(),
            result: None,
        });
        assert_eq!(
            text(&c, 80),
            [
                "▸ task: find the parser · 1 tool call · 12.4K tokens · 1m15s",
                "  running grep: fn parse"
            ]
        );
        c.outcome = Some(SubagentOutcome::ContextFull);
        c.report = ToolStatus::Succeeded("it is in src/parse.rs".into());
        assert_eq!(
            text(&c, 100),
            [
                "▸ task: find the parser · context full, reported · 1 tool call · 12.4K tokens · 1m15s",
                "  it is in src/parse.rs"
            ]
        );
        // Expanded: its last reply is the report, shown once.
        c.steps
            .push(AgentStep::Text("it is in src/parse.rs".into()));
        c.expanded = true;
        let open = text(&c, 100);
        assert_eq!(
            open.iter()
                .filter(|l| l.contains("it is in src/parse.rs"))
                .count(),
            1,
            "{open:#?}"
        );
        assert_eq!(
            open.last().map(String::as_str),
            Some("  it is in src/parse.rs")
        );
        c.expanded = false;
        // Narrow: the header wraps, nothing is wider than the cell.
        for w in [8, 20, 33] {
            for l in text(&c, w) {
                assert!(super::super::wrap::str_width(&l) <= w.max(1), "{w}: {l}");
            }
        }
    }
}
