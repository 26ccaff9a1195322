//! The chat's cells (a message, a reply, thinking, a tool call, a subagent, the `.mcp.json`
//! and hooks questions, a hook that ran, an approval, a notice or error, a retry, a generation divider) and the lines each
//! draws at a given width. A tool call's lines are drawn by `tool_cell`, a subagent's by
//! `agent_cell`.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::agent_cell::AgentCell;
use super::markdown::render_markdown;
use super::stream::StreamCommits;
use super::theme::Theme;
use super::tool_cell::{ToolStatus, ToolView, summary_spans, tool_lines};
use super::wrap::{WrapMode, sanitize, str_width, truncate, wrap_spans, wrap_text};
use crate::engine::context::{fmt_tokens, fmt_window};
use crate::engine::protocol::{CommandExit, FileDiff, Held};
use crate::tui::keymap::{Action, label_for, short_label_for};

/// Where an assistant message is in its life.
#[derive(Debug, Clone, PartialEq)]
pub enum AssistantState {
    /// Deltas still arrive; the stream controller knows which part is committed.
    Streaming(StreamCommits),
    /// Complete.
    Done,
    /// Cut short by Esc (marked `[interrupted]`).
    Interrupted,
}

/// One entry of the chat transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// A message the user sent.
    User { text: String },
    /// Assistant text (markdown).
    Assistant {
        markdown: String,
        state: AssistantState,
    },
    /// Thinking text: collapsed to a line until expanded.
    Thinking { text: String, expanded: bool },
    /// A tool call: its output, or the diff of the change it made, and how a command ended.
    Tool {
        id: String,
        name: String,
        summary: String,
        status: ToolStatus,
        expanded: bool,
        diff: Option<Box<FileDiff>>,
        exit: Option<CommandExit>,
    },
    /// A subagent (a `task` call, once its child started): live, then its report.
    Subagent(Box<AgentCell>),
    /// The question whether the workspace's `.mcp.json` may start its servers (name, command or
    /// URL each); `answer` once the user answered.
    McpJson {
        path: String,
        servers: Vec<(String, String)>,
        answer: Option<String>,
    },
    /// The question whether a workspace settings file's hooks may run (one line each);
    /// `answer` once the user answered.
    HooksQuestion {
        path: String,
        hooks: Vec<String>,
        answer: Option<String>,
    },
    /// A hook that ran: its event, command, how it ended, the start of its output.
    Hook(Box<crate::engine::hooks::HookNote>),
    /// What the language servers said about the files a tool call changed (under its cell).
    Diagnostics(Box<crate::engine::lsp::ChangeReport>),
    /// A permission question; `answer` once the user answered (`allowed once`, `denied`, ...).
    /// `always`: "always" is offered for it (its key is named only then).
    Approval {
        name: String,
        summary: String,
        always: bool,
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
    /// A generation boundary: a handoff ended the previous generation at `context`/`window`;
    /// `held` is what that generation held and where its transcript is.
    Divider {
        generation: u32,
        context: u64,
        window: u64,
        path: Option<String>,
        degraded: bool,
        held: Option<Held>,
    },
}

fn raw(s: impl Into<String>, style: Style) -> Span<'static> {
    Span::styled(s.into(), style)
}

impl Cell {
    /// A streaming assistant message holding `text` so far.
    pub fn streaming(text: String) -> Cell {
        let commits = StreamCommits::of(&text);
        Cell::Assistant {
            markdown: text,
            state: AssistantState::Streaming(commits),
        }
    }

    /// Appends a delta to a streaming assistant message; false (and nothing changes) for any
    /// other cell.
    pub fn push_delta(&mut self, delta: &str) -> bool {
        match self {
            Cell::Assistant {
                markdown,
                state: AssistantState::Streaming(commits),
            } => {
                markdown.push_str(delta);
                commits.advance(markdown);
                true
            }
            _ => false,
        }
    }

    /// True for a cell Ctrl-T expands: a tool call, thinking.
    pub(crate) fn is_expandable(&self) -> bool {
        matches!(
            self,
            Cell::Tool { .. } | Cell::Thinking { .. } | Cell::Subagent(_)
        )
    }

    /// True for an assistant message still streaming.
    pub(crate) fn is_streaming(&self) -> bool {
        matches!(
            self,
            Cell::Assistant {
                state: AssistantState::Streaming(_),
                ..
            }
        )
    }

    /// The cell's lines wrapped to `width` columns (at least one line).
    pub(crate) fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let w = usize::from(width.max(1));
        let t = theme;
        match self {
            Cell::User { text } => {
                let (first, rest) = (raw("› ", t.accent), raw("  ", t.user));
                marked(first, rest, &sanitize(text), t.user, w)
            }
            Cell::Assistant { markdown, state } => assistant_lines(markdown, state, w, t),
            Cell::Thinking { text, expanded } => thinking_lines(text, *expanded, w, t),
            Cell::Tool {
                name,
                summary,
                status,
                expanded,
                diff,
                exit,
                ..
            } => tool_lines(
                &ToolView {
                    name,
                    summary,
                    status,
                    expanded: *expanded,
                    diff: diff.as_deref(),
                    exit: exit.as_ref(),
                },
                w,
                t,
            ),
            Cell::Subagent(agent) => agent.lines(w, t),
            Cell::McpJson {
                path,
                servers,
                answer,
            } => super::mcp_cell::mcp_json_lines(path, servers, answer.as_deref(), w, t),
            Cell::HooksQuestion {
                path,
                hooks,
                answer,
            } => super::mcp_cell::hooks_question_lines(path, hooks, answer.as_deref(), w, t),
            Cell::Hook(note) => super::hook_cell::hook_lines(note, w, t),
            Cell::Diagnostics(report) => super::diagnostics_cell::diagnostics_lines(report, w, t),
            Cell::Approval {
                name,
                summary,
                always,
                answer,
            } => approval_lines(name, summary, *always, answer.as_deref(), w, t),
            Cell::Error { message } => {
                let (first, rest) = (raw("✗ ", t.error), raw("  ", t.error));
                marked(first, rest, sanitize(message).trim_end(), t.error, w)
            }
            Cell::Notice { message } => {
                let (first, rest) = (raw("• ", t.notice), raw("  ", t.notice));
                marked(first, rest, sanitize(message).trim_end(), t.notice, w)
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
                let (first, rest) = (raw("⟳ ", t.warning), raw("  ", t.warning));
                marked(first, rest, &text, t.warning, w)
            }
            Cell::Divider {
                generation,
                context,
                window,
                path,
                degraded,
                held,
            } => {
                let mut lines = vec![divider_line(
                    *generation,
                    *context,
                    *window,
                    path.as_deref(),
                    *degraded,
                    w,
                    t,
                )];
                if let Some(held) = held {
                    lines.push(held_line(generation.saturating_sub(1), held, w, t));
                }
                lines
            }
        }
    }
}

/// `text` wrapped at words after `first` (its first row) and `rest` (the rows after).
fn marked(
    first: Span<'static>,
    rest: Span<'static>,
    text: &str,
    style: Style,
    w: usize,
) -> Vec<Line<'static>> {
    wrap_text(text, style, w, &[first], &[rest], WrapMode::Words)
}

fn assistant_lines(
    markdown: &str,
    state: &AssistantState,
    w: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let streaming = matches!(state, AssistantState::Streaming(_));
    let mut lines = if markdown.is_empty() && streaming {
        vec![Line::from(raw("…", theme.dim))]
    } else {
        render_markdown(markdown, w, theme)
    };
    if *state == AssistantState::Interrupted {
        lines.push(Line::from(raw("[interrupted]", theme.warning)));
    }
    lines
}

/// `? allow bash: rm -rf target`, then the keys that answer it, or the answer given.
fn approval_lines(
    name: &str,
    summary: &str,
    always: bool,
    answer: Option<&str>,
    w: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut head = vec![raw("? ", theme.warning), raw("allow ", theme.warning)];
    head.extend(summary_spans(name, summary, theme.warning, theme.text));
    let pad = [raw("  ", theme.text)];
    let mut lines = wrap_spans(&head, w, &[], &pad, WrapMode::Words);
    let tail = match answer {
        Some(a) => vec![raw("→ ", theme.dim), raw(a.to_string(), theme.text)],
        None => {
            let mut keys = vec![
                raw(label_for(Action::ApproveOnce), theme.key),
                raw(" once  ", theme.dim),
            ];
            if always {
                keys.push(raw(label_for(Action::ApproveAlways), theme.key));
                keys.push(raw(" always  ", theme.dim));
            }
            keys.push(raw(label_for(Action::Deny), theme.key));
            keys.push(raw(" deny", theme.dim));
            keys
        }
    };
    lines.extend(wrap_spans(&tail, w, &pad, &pad, WrapMode::Words));
    lines
}

/// A thinking cell: one line saying how much was thought (and its start) until expanded.
fn thinking_lines(text: &str, expanded: bool, w: usize, theme: &Theme) -> Vec<Line<'static>> {
    let clean = sanitize(text);
    let body = clean.trim();
    let bar = raw("┊ ", theme.thinking);
    if expanded {
        let mut lines = vec![Line::from(vec![
            bar.clone(),
            raw("thinking", theme.thinking),
        ])];
        lines.extend(marked(bar.clone(), bar, body, theme.thinking, w));
        return lines;
    }
    let n = body.lines().count();
    let first = body.lines().next().unwrap_or("");
    let count = format!(
        "thinking · {n} line{} · {} expands · ",
        if n == 1 { "" } else { "s" },
        short_label_for(Action::ToggleTool)
    );
    let room = w.saturating_sub(str_width(&count) + 2);
    let mut spans = vec![bar, raw(count, theme.thinking)];
    if room > 3 {
        spans.push(raw(truncate(first, room), theme.dim));
    }
    let line = Line::from(spans);
    if line.width() > w {
        return vec![Line::from(raw(
            truncate(&line.to_string(), w),
            theme.thinking,
        ))];
    }
    vec![line]
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

/// Under the divider, centred: `generation 1 held 48 messages · 31 tool calls · 152.0K tokens ·
/// transcript …/sessions/abc.jsonl`. At narrow widths the transcript shrinks to its file name,
/// then goes, then the counts are cut.
fn held_line(retired: u32, held: &Held, w: usize, theme: &Theme) -> Line<'static> {
    let plural = |n: usize, one: &str, many: &str| {
        if n == 1 {
            format!("1 {one}")
        } else {
            format!("{n} {many}")
        }
    };
    let base = format!(
        "generation {retired} held {} · {} · {} tokens",
        plural(held.messages, "message", "messages"),
        plural(held.tool_calls, "tool call", "tool calls"),
        fmt_tokens(held.tokens)
    );
    let path = held.transcript.as_ref().map(|p| p.display().to_string());
    let file = held
        .transcript
        .as_ref()
        .and_then(|p| p.file_name())
        .map(|f| f.to_string_lossy().into_owned());
    let short = format!(
        "gen {retired}: {} msgs · {} tools · {} tokens",
        held.messages,
        held.tool_calls,
        fmt_tokens(held.tokens)
    );
    let candidates = [
        path.map(|p| format!("{base} · transcript {p}")),
        file.map(|f| format!("{base} · transcript {f}")),
        Some(base.clone()),
        Some(short.clone()),
    ];
    let label = candidates
        .iter()
        .flatten()
        .find(|l| str_width(l) + 2 <= w)
        .cloned()
        .unwrap_or_else(|| truncate(&short, w));
    let pad = w.saturating_sub(str_width(&label)) / 2;
    Line::from(vec![raw(" ".repeat(pad), theme.dim), raw(label, theme.dim)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::render::live_output::LiveOutput;

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
            summary: "bash: cargo test".into(),
            status: output.map_or(ToolStatus::running(), |o| ToolStatus::Succeeded(o.into())),
            expanded,
            diff: None,
            exit: None,
        }
    }

    #[test]
    fn tool_collapses_to_head_and_tail_and_expands() {
        assert_eq!(
            text(&tool(None, false), 40),
            ["▸ bash: cargo test", "  running…"]
        );
        let out = "1\n2\n3\n4\n5\n6\n7\n8\n";
        assert_eq!(
            text(&tool(Some(out), false), 40),
            [
                "▸ bash: cargo test",
                "  1",
                "  2",
                "  … 3 more lines (ctrl-t expands)",
                "  6",
                "  7",
                "  8",
            ]
        );
        assert_eq!(text(&tool(Some(out), true), 40).len(), 9);
        // One hidden line is shown rather than a note of the same size.
        assert_eq!(text(&tool(Some("a\nb\nc\nd\ne\nf"), false), 40).len(), 7);
        // ... a short output with a too long line is cut, line by line.
        let four = format!("a\nb\nc\n{}", "d".repeat(50));
        assert_eq!(
            text(&tool(Some(&four), false), 40)[5],
            "  … (long lines cut, ctrl-t expands)"
        );
        assert_eq!(text(&tool(Some(""), false), 40)[1], "  (no output)");
        // A long collapsed line is cut to one row.
        let long = format!("{}\nx\ny\nz\nw\nv\nu", "a".repeat(100));
        assert_eq!(
            text(&tool(Some(&long), false), 20)[1],
            format!("  {}…", "a".repeat(17))
        );
        let running = Cell::Tool {
            id: "t1".into(),
            name: "bash".into(),
            summary: "bash: sleep 9".into(),
            status: ToolStatus::Running {
                secs: 4,
                live: LiveOutput::default(),
            },
            expanded: false,
            diff: None,
            exit: None,
        };
        assert_eq!(text(&running, 40)[1], "  running… 4s");
    }

    #[test]
    fn divider_centres_and_shrinks() {
        let d = Cell::Divider {
            generation: 2,
            context: 152_000,
            window: 200_000,
            path: Some("notes/handoff-x.md".into()),
            degraded: true,
            held: None,
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
            state: AssistantState::Interrupted,
        };
        assert_eq!(text(&a, 80), ["hi", "[interrupted]"]);
        let u = Cell::User {
            text: "one two three".into(),
        };
        assert_eq!(text(&u, 9), ["› one two", "  three"]);
        let ap = Cell::Approval {
            name: "bash".into(),
            summary: "bash: rm -rf target".into(),
            always: true,
            answer: None,
        };
        assert_eq!(
            text(&ap, 80),
            ["? allow bash: rm -rf target", "  y once  a always  n deny"]
        );
        let once = Cell::Approval {
            name: "bash".into(),
            summary: "bash: ls /etc".into(),
            always: false,
            answer: None,
        };
        assert_eq!(text(&once, 80)[1], "  y once  n deny", "always not offered");
    }
}
