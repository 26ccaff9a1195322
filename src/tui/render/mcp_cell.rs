//! The question about the workspace's `.mcp.json` in the chat: which servers it would start, then
//! the keys that answer it, or the answer given.

use ratatui::text::{Line, Span};

use super::theme::Theme;
use super::wrap::{WrapMode, sanitize, wrap_spans};
use crate::tui::keymap::{Action, label_for};

/// `? start the MCP servers of /w/.mcp.json?`, one line per server, then the keys.
pub(crate) fn mcp_json_lines(
    path: &str,
    servers: &[(String, String)],
    answer: Option<&str>,
    w: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let pad = [Span::styled("  ", theme.text)];
    let head = [
        Span::styled("? ", theme.warning),
        Span::styled("start the MCP servers of ", theme.warning),
        Span::styled(sanitize(path).into_owned(), theme.text),
        Span::styled(
            "? (asked once for this workspace and version of the file)",
            theme.warning,
        ),
    ];
    let mut lines = wrap_spans(&head, w, &[], &pad, WrapMode::Words);
    for (name, transport) in servers {
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
