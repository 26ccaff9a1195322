//! The questions about a workspace's files in the chat: which servers its `.mcp.json` would
//! start, or which hooks its settings file would run, then the keys that answer it, or the
//! answer given.

use ratatui::text::{Line, Span};

use super::theme::Theme;
use super::wrap::{WrapMode, sanitize, wrap_spans};
use crate::engine::hooks::Grant;
use crate::tui::keymap::{Action, label_for};

/// `? start the MCP servers of /w/.mcp.json?`, one line per server, then the keys.
pub(crate) fn mcp_json_lines(
    path: &str,
    servers: &[(String, String)],
    answer: Option<&str>,
    w: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    file_question("start the MCP servers of ", path, servers, answer, w, theme)
}

/// `? run the hooks of /w/.claude/settings.json?` (`? trust …?` when the file also grants allow
/// rules or commands' tools), one line per item (`EVENT [matcher]: command`, `allow: RULE`,
/// `command /name: TOOLS`), then the keys.
pub(crate) fn hooks_question_lines(
    path: &str,
    hooks: &[String],
    answer: Option<&str>,
    w: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let items: Vec<(String, String)> = hooks
        .iter()
        .map(|h| match h.split_once(": ") {
            Some((when, command)) => (when.to_string(), command.to_string()),
            None => (h.clone(), String::new()),
        })
        .collect();
    let asks = if hooks.iter().all(|h| Grant::of(h) == Grant::Hook) {
        "run the hooks of "
    } else {
        "trust "
    };
    file_question(asks, path, &items, answer, w, theme)
}

/// A question about a workspace file: what it would do, item by item, then the keys.
fn file_question(
    asks: &str,
    path: &str,
    items: &[(String, String)],
    answer: Option<&str>,
    w: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let pad = [Span::styled("  ", theme.text)];
    let head = [
        Span::styled("? ", theme.warning),
        Span::styled(asks.to_string(), theme.warning),
        Span::styled(sanitize(path).into_owned(), theme.text),
        Span::styled(
            "? (asked once for this workspace and version of the file)",
            theme.warning,
        ),
    ];
    let mut lines = wrap_spans(&head, w, &[], &pad, WrapMode::Words);
    for (name, transport) in items {
        let spans = [
            Span::styled(sanitize(name).into_owned(), theme.tool),
            Span::styled(": ", theme.dim),
            Span::styled(sanitize(transport).replace('\n', " "), theme.text),
        ];
        lines.extend(wrap_spans(
            &spans,
            w,
            &pad,
            &[Span::styled("    ", theme.text)],
            WrapMode::Words,
        ));
    }
    let tail = match answer {
        Some(a) => vec![
            Span::styled("→ ", theme.dim),
            Span::styled(a.to_string(), theme.text),
        ],
        None => vec![
            Span::styled(label_for(Action::ApproveOnce), theme.key),
            Span::styled(" approve  ", theme.dim),
            Span::styled(label_for(Action::Deny), theme.key),
            Span::styled(" decline  ", theme.dim),
            Span::styled("Esc", theme.key),
            Span::styled(" ask at the next launch", theme.dim),
        ],
    };
    lines.extend(wrap_spans(&tail, w, &pad, &pad, WrapMode::Words));
    lines
}
