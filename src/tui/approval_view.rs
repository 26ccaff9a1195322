//! The approval prompt above the input: the tool call (or the `.mcp.json` question) it asks
//! about, its whole command or diff in a body as tall as the screen allows (the input box, the
//! status line and a few rows of chat stay; a body that does not fit scrolls, the rows shown and
//! the keys that scroll it said), the notes under it, and the keys that answer it (or why they
//! do not answer yet).

use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

use super::questions::{Asked, PendingApproval};
use super::render::prompt_view::{
    PromptBody, PromptKeys, mcp_json_hints, overwrite_hints, prompt_body_lines, prompt_keys_line,
    prompt_note_lines, question_keys_line,
};
use super::render::theme::Theme;
use super::state::{AppState, Focus};

/// Body rows the approval prompt shows at least when it has them (a longer body scrolls).
const APPROVAL_MIN_ROWS: u16 = 3;
/// Rows of chat the prompt leaves above it (what the call is about stays in sight).
const CHAT_ROWS_KEPT: u16 = 3;

/// The approval prompt as drawn this frame: its body lines, the keys state, its height.
pub(super) struct PromptModel {
    /// The body's lines (the command, the diff, ...).
    pub(super) lines: Vec<Line<'static>>,
    /// Fixed lines under the body.
    pub(super) notes: Vec<Line<'static>>,
    /// Which keys answer it now.
    pub(super) keys: PromptKeys,
    /// Body rows shown.
    pub(super) rows: u16,
    /// Rows it takes on screen (body, notes, keys line, border).
    pub(super) height: u16,
}

/// The prompt of approval `p` in a screen of `area` where `reserved` rows are taken by the
/// rest (the input box, the status line, the spinner, …): its body lines, notes and keys, and
/// the rows it takes (all the body when it fits, leaving a few rows of chat; at least a few
/// body rows).
pub(super) fn approval_model(
    state: &AppState,
    p: &PendingApproval,
    (area, reserved): (Rect, u16),
    theme: &Theme,
    now: Instant,
) -> PromptModel {
    let inner = usize::from(area.width.saturating_sub(2).max(1));
    let body = PromptBody {
        summary: &p.summary,
        outside_workspace: p.outside_workspace,
        command: p.command.as_deref(),
        diff: p.diff.as_deref(),
        always: p.always.as_ref(),
        unsandboxed: p.unsandboxed.as_deref(),
    };
    let lines = prompt_body_lines(&body, inner, theme);
    // The `.mcp.json` question has no tool's notes ("always" is not a thing there).
    let notes = match p.asked {
        Asked::Tool { .. } => prompt_note_lines(&body, inner, theme),
        Asked::McpJson { .. } | Asked::Hooks { .. } | Asked::Overwrite { .. } => Vec::new(),
    };
    let keys = if state.approval_takes_keys(now) {
        PromptKeys::Live
    } else if state.focus == Focus::Editor {
        PromptKeys::EditorFocused
    } else if !state.input.is_empty() {
        PromptKeys::InputHasText
    } else {
        PromptKeys::Settling
    };
    // The screen less the rest, a few rows of chat, the border, the notes and the keys line.
    let fixed = notes.len() as u16;
    let room = area
        .height
        .saturating_sub(reserved.saturating_add(CHAT_ROWS_KEPT + 3 + fixed))
        .max(APPROVAL_MIN_ROWS);
    let rows = (lines.len() as u16).clamp(1, room);
    PromptModel {
        lines,
        notes,
        keys,
        rows,
        height: rows + fixed + 3,
    }
}

/// The longest scroll of a prompt whose body has `lines` rows and shows `rows` of them.
pub(crate) fn max_prompt_scroll(lines: usize, rows: u16) -> u16 {
    (lines.saturating_sub(usize::from(rows))).min(usize::from(u16::MAX)) as u16
}

/// The prompt: its title (the tool, or the `.mcp.json` question, and how many more wait), the
/// body from row `scroll`, the notes under it, and the keys that answer it.
pub(super) fn draw_approval(
    p: &PendingApproval,
    m: &PromptModel,
    scroll: u16,
    queued: usize,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
) {
    let more = if queued > 1 {
        format!(" (+{} more)", queued - 1)
    } else {
        String::new()
    };
    let mcp_json = matches!(p.asked, Asked::McpJson { .. } | Asked::Hooks { .. });
    let overwrite = matches!(p.asked, Asked::Overwrite { .. });
    let title = if let Asked::Hooks { .. } = p.asked {
        format!(" {}?{more} ", p.name)
    } else if mcp_json {
        format!(" Start the MCP servers of this workspace's .mcp.json?{more} ")
    } else if overwrite {
        format!(" /{}: files changed since. Write over them?{more} ", p.name)
    } else if p.unsandboxed.is_some() {
        format!(
            " The sandbox stopped {}: run it once outside the sandbox?{more} ",
            p.name
        )
    } else {
        format!(" Allow {}?{more} ", p.name)
    };
    let total = m.lines.len();
    let position = if total > usize::from(m.rows) {
        let first = usize::from(scroll) + 1;
        let last = (usize::from(scroll) + usize::from(m.rows)).min(total);
        format!(" lines {first}-{last} of {total} ")
    } else {
        String::new()
    };
    let block = Block::bordered()
        .title(title)
        .title_bottom(Line::from(position).right_aligned())
        .border_style(theme.warning);
    let inner = block.inner(area);
    Clear.render(area, buf);
    block.render(area, buf);
    if inner.is_empty() {
        return;
    }
    let [body, notes, keys] = Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(m.notes.len() as u16),
        Constraint::Length(1),
    ])
    .areas(inner);
    Paragraph::new(m.notes.clone()).render(notes, buf);
    let shown: Vec<Line> = m
        .lines
        .iter()
        .skip(usize::from(scroll))
        .take(usize::from(body.height))
        .cloned()
        .collect();
    Paragraph::new(shown).render(body, buf);
    let scrollable = total > usize::from(m.rows);
    let keys_line = if mcp_json {
        question_keys_line(mcp_json_hints(), m.keys, theme)
    } else if overwrite {
        question_keys_line(overwrite_hints(), m.keys, theme)
    } else {
        prompt_keys_line(m.keys, p.always.is_some(), scrollable, theme)
    };
    Paragraph::new(keys_line).render(keys, buf);
}
