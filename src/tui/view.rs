//! The view: lays out the screen and draws the state. It reads the state and writes only its own
//! [`ViewCache`]: the chat's cached layouts and scroll position, and where the last frame put the
//! panes (the app hit-tests mouse events against it). The textareas keep their own scroll
//! position through `&TextArea` rendering (ratatui-textarea stores it in a cell).

use std::path::{Component, Path};
use std::time::Instant;

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget};
use unicode_width::UnicodeWidthStr;

use super::approval_view::{PromptModel, approval_model, draw_approval, max_prompt_scroll};
use super::editor::SideEditor;
use super::editor_review::{Prompt, conflict_keys, restore_keys, unsaved_keys};
use super::keymap::{self, Action, short_label_for};
use super::msg::{ChatScroll, Pane};
use super::questions::Asked;
use super::render::chat::{ChatView, render_chat};
use super::render::editor_view::{editor_block, editor_title_tagged, title_tag};
use super::render::plan_view::plan_lines;
use super::render::prompt_view::{
    mcp_json_hints, overwrite_hints, queued_lines, tool_approval_hints,
};
use super::render::safe_cells::make_safe;
use super::render::spinner::render_spinner;
use super::render::status::{StatusModel, render_status};
use super::render::theme::Theme;
use super::state::{AppState, Focus, Picker};

/// Below this size nothing is drawn (a 1×1 terminal must not panic).
pub(crate) const MIN_WIDTH: u16 = 10;
/// Below this height nothing is drawn.
pub(crate) const MIN_HEIGHT: u16 = 3;
/// The input box grows up to this many text lines.
pub(crate) const INPUT_MAX_LINES: u16 = 8;
/// From this width the side editor sits beside the chat; narrower, below it.
pub(crate) const SIDE_BY_SIDE_WIDTH: u16 = 100;
/// The plan above the input shows only when the chat keeps at least this many rows.
const PLAN_MIN_CHAT_ROWS: u16 = 4;
/// Rows the slash popup lists at most.
const POPUP_MAX_ROWS: u16 = 8;
/// Where the last frame put things (for page sizes and mouse hit-tests).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LayoutCache {
    /// The chat pane.
    pub(crate) chat: Rect,
    /// The input box.
    pub(crate) input: Rect,
    /// The approval prompt, when one waits.
    pub(crate) approval: Option<Rect>,
    /// The side editor, when open.
    pub(crate) editor: Option<Rect>,
}

/// What the view keeps between frames. Nothing in it is model: dropping it loses the scroll
/// position and costs a re-layout, nothing else.
#[derive(Default)]
pub(crate) struct ViewCache {
    /// Where the last frame put the panes.
    pub(crate) layout: LayoutCache,
    /// The chat's cached layouts and scroll position.
    pub(crate) chat: ChatView,
    /// The approval prompt's scroll: the call it belongs to and its first body row shown.
    pub(crate) prompt_scroll: Option<(String, u16)>,
    /// The largest scroll of the prompt drawn last (its body rows less those shown).
    pub(crate) prompt_max_scroll: u16,
}

impl ViewCache {
    /// An empty cache: the chat follows the bottom.
    pub(crate) fn new() -> Self {
        ViewCache::default()
    }

    /// The pane at a screen position in the last frame (the editor wins where they overlap).
    pub(crate) fn pane_at(&self, column: u16, row: u16) -> Option<Pane> {
        let at = Position::new(column, row);
        if self.layout.editor.is_some_and(|r| r.contains(at)) {
            Some(Pane::Editor)
        } else if self.layout.approval.is_some_and(|r| r.contains(at)) {
            Some(Pane::Approval)
        } else if self.layout.input.contains(at) {
            Some(Pane::Input)
        } else if self.layout.chat.contains(at) {
            Some(Pane::Chat)
        } else {
            None
        }
    }

    /// The chat cell drawn at a screen position in the last frame.
    pub(crate) fn cell_at(&self, column: u16, row: u16) -> Option<usize> {
        self.chat.cell_at(column, row)
    }

    /// Scrolls the approval prompt drawn last by `delta` rows, within its body.
    pub(crate) fn scroll_prompt(&mut self, delta: i32) {
        if let Some((_, row)) = self.prompt_scroll.as_mut() {
            let next = i64::from(*row) + i64::from(delta);
            *row = next.clamp(0, i64::from(self.prompt_max_scroll)) as u16;
        }
    }

    /// Scrolls the chat (a page is the chat pane's height in the last frame, less two rows).
    pub(crate) fn scroll_chat(&mut self, s: ChatScroll) {
        self.chat.scroll(s, self.layout.chat.height);
    }
}

/// Draw the whole screen.
pub(crate) fn view(
    frame: &mut Frame<'_>,
    state: &AppState,
    cache: &mut ViewCache,
    theme: &Theme,
    now: Instant,
) {
    let area = frame.area();
    draw(area, frame.buffer_mut(), state, cache, theme, now);
}

/// Draw into a buffer (the view without a `Frame`, for tests and benchmarks); every cell is made
/// safe to send last (`safe_cells`).
pub(crate) fn draw(
    area: Rect,
    buf: &mut Buffer,
    state: &AppState,
    cache: &mut ViewCache,
    theme: &Theme,
    now: Instant,
) {
    draw_panes(area, buf, state, cache, theme, now);
    make_safe(buf);
}

fn draw_panes(
    area: Rect,
    buf: &mut Buffer,
    state: &AppState,
    cache: &mut ViewCache,
    theme: &Theme,
    now: Instant,
) {
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        cache.layout = LayoutCache::default();
        return;
    }
    let spinner_h = u16::from(state.spinner().is_some());
    let background_h = u16::from(state.handoff.spinner().is_some());
    let queued = queued_rows(state, area.width, theme);
    let input_h = input_height(state, area.width);
    let queued_h = u16::try_from(queued.len()).unwrap_or(u16::MAX);
    // Everything below the chat but the prompt, the status line included.
    let others = spinner_h
        .saturating_add(background_h)
        .saturating_add(queued_h)
        .saturating_add(input_h);
    let prompt = state
        .questions
        .front()
        .map(|p| approval_model(state, p, (area, others.saturating_add(1)), theme, now));
    let prompt_h = prompt.as_ref().map_or(0, |m| m.height);
    let fixed = others.saturating_add(prompt_h);
    let plan = plan_rows(state, area, fixed, theme);
    let [
        body,
        queue,
        plan_area,
        background,
        spin,
        approval,
        bottom,
        status,
    ] = Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(queued_h),
        Constraint::Length(u16::try_from(plan.len()).unwrap_or(0)),
        Constraint::Length(background_h),
        Constraint::Length(spinner_h),
        Constraint::Length(prompt_h),
        Constraint::Length(input_h),
        Constraint::Length(1),
    ])
    .areas(area);

    let (chat, editor) = split_body(body, state.editor.is_open());
    if !chat.is_empty() {
        cache.chat.highlight = state.chat.selected_tool();
        render_chat(state.chat.cells(), &mut cache.chat, chat, buf, theme);
    }
    if let (Some(ed), Some(rect)) = (state.editor.get(), editor) {
        let focus = state.memory.focus();
        draw_editor(
            ed,
            state.focus == Focus::Editor,
            focus,
            rect,
            buf,
            theme,
            now,
        );
    }
    Paragraph::new(queued).render(queue, buf);
    Paragraph::new(plan).render(plan_area, buf);
    draw_spinners(state, background, spin, buf, theme, now);
    draw_prompt(state, prompt.as_ref(), approval, cache, buf, theme);
    match state.input.search() {
        Some(search) if state.focus == Focus::Input => {
            draw_search(state, search, bottom, buf, theme)
        }
        _ => draw_input(state, bottom, buf, theme),
    }
    draw_popup(state, body, bottom, buf, theme);
    if let Some(m) = state.mention.visible(state.focus == Focus::Input) {
        super::overlay_view::draw_mentions(m, body, bottom, buf, theme);
    }
    match &state.picker {
        Some(Picker::Sessions(p)) => super::overlay_view::draw_picker(p, body, buf, theme),
        Some(Picker::Models(p)) => super::overlay_view::draw_model_picker(p, body, buf, theme),
        None => {}
    }
    if let Some(p) = state.rewind.picker() {
        super::rewind_picker::draw(p, body, buf, theme);
    }
    let wall = crate::engine::fsutil::now_unix().0;
    super::jobs_overlay::draw(&state.jobs, body, buf, theme, wall);
    draw_status(state, status, buf, theme, now);
    cache.layout = LayoutCache {
        chat,
        input: bottom,
        approval: prompt.is_some().then_some(approval),
        editor,
    };
}

/// The plan above the input while it has open items, in at most a third of the screen and never
/// taking the chat's last rows (`fixed`: the rows the other lines under the chat take).
fn plan_rows(state: &AppState, area: Rect, fixed: u16, theme: &Theme) -> Vec<Line<'static>> {
    let room = area
        .height
        .saturating_sub(fixed.saturating_add(1 + PLAN_MIN_CHAT_ROWS))
        .min(area.height / 3);
    plan_lines(
        state.memory.plan(),
        usize::from(area.width),
        usize::from(room),
        theme,
    )
}

/// The spinner lines: the main thread's, and above it a handoff written beside it.
fn draw_spinners(
    state: &AppState,
    background: Rect,
    spin: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    now: Instant,
) {
    if let Some((label, since, hint)) = state.handoff.spinner() {
        render_spinner(
            &label,
            now.saturating_duration_since(since),
            &hint,
            background,
            buf,
            theme,
        );
    }
    if let Some((label, since, hint)) = state.spinner() {
        render_spinner(
            &label,
            now.saturating_duration_since(since),
            &hint,
            spin,
            buf,
            theme,
        );
    }
}

/// The first waiting approval's prompt, scrolled where the user left it (a new prompt starts at
/// its top); the cache keeps the scroll and its limit for the next scroll keys.
fn draw_prompt(
    state: &AppState,
    prompt: Option<&PromptModel>,
    area: Rect,
    cache: &mut ViewCache,
    buf: &mut Buffer,
    theme: &Theme,
) {
    match (state.questions.front(), prompt) {
        (Some(p), Some(m)) => {
            let max = max_prompt_scroll(m.lines.len(), m.rows);
            let scroll = match &cache.prompt_scroll {
                Some((id, row)) if id == p.asked.key() => (*row).min(max),
                _ => 0,
            };
            cache.prompt_scroll = Some((p.asked.key().to_string(), scroll));
            cache.prompt_max_scroll = max;
            draw_approval(p, m, scroll, state.questions.len(), area, buf, theme);
        }
        _ => {
            cache.prompt_scroll = None;
            cache.prompt_max_scroll = 0;
        }
    }
}

/// The queued messages' rows (none when nothing is queued).
fn queued_rows(state: &AppState, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    if state.input.queued().is_empty() {
        return Vec::new();
    }
    // A key typed into a queued message is drawn masked, as the model will get it.
    let masked: Vec<String> = state
        .input
        .queued()
        .iter()
        .map(|q| crate::engine::secrets::redact(&q.raw).into_owned())
        .collect();
    let texts: Vec<&str> = masked.iter().map(String::as_str).collect();
    let hint = state.focus == Focus::Input && state.input.is_empty();
    queued_lines(&texts, usize::from(width), hint, theme)
}

/// The chat and editor rects: side by side when wide, stacked when narrow, the editor alone
/// when the body is too short to share.
fn split_body(body: Rect, editor_open: bool) -> (Rect, Option<Rect>) {
    if !editor_open {
        return (body, None);
    }
    if body.width >= SIDE_BY_SIDE_WIDTH {
        let [chat, ed] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(body);
        (chat, Some(ed))
    } else if body.height >= 12 {
        let [chat, ed] =
            Layout::vertical([Constraint::Percentage(40), Constraint::Percentage(60)]).areas(body);
        (chat, Some(ed))
    } else {
        (Rect::new(body.x, body.y, body.width, 0), Some(body))
    }
}

/// Rows the input box needs: its wrapped text (1..=8 lines) plus the border.
fn input_height(state: &AppState, width: u16) -> u16 {
    let inner = usize::from(width.saturating_sub(2).max(1));
    let mut rows = 0usize;
    for line in state.input.lines() {
        rows += line.width().div_ceil(inner).max(1);
        if rows >= usize::from(INPUT_MAX_LINES) {
            break;
        }
    }
    (rows as u16).clamp(1, INPUT_MAX_LINES) + 2
}

fn draw_input(state: &AppState, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let focused = state.focus == Focus::Input;
    let block = Block::bordered().border_style(if focused {
        theme.border_focus
    } else {
        theme.border
    });
    let inner = block.inner(area);
    block.render(area, buf);
    Widget::render(state.input.area(), inner, buf);
}

/// The last components of a path, for a title: `…/.flower/notes/handoff-x.md`.
fn short_path(path: &Path, keep: usize) -> String {
    let parts: Vec<_> = path
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .collect();
    let start = parts.len().saturating_sub(keep);
    let tail: std::path::PathBuf = parts.get(start..).unwrap_or_default().iter().collect();
    if start > 0 {
        format!("…/{}", tail.display())
    } else {
        path.display().to_string()
    }
}

fn draw_editor(
    ed: &SideEditor,
    focused: bool,
    standing_focus: Option<&str>,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    now: Instant,
) {
    let conflict = matches!(ed.prompt(), Prompt::Conflict { .. });
    let tag = title_tag(ed.degraded(), standing_focus);
    let title = editor_title_tagged(
        &short_path(ed.path(), 3),
        ed.countdown(now),
        ed.is_paused(),
        ed.is_dirty(),
        conflict,
        tag.as_deref(),
        area.width.saturating_sub(2),
    );
    let block = editor_block(&title, theme, focused);
    let inner = block.inner(area);
    block.render(area, buf);
    let line = match ed.prompt() {
        Prompt::Conflict { .. } => Some(Line::styled(
            format!("file changed on disk: {}", conflict_keys()),
            theme.warning,
        )),
        Prompt::Restore { text, .. } => Some(Line::styled(
            // The keys first: a narrow editor still shows what to press.
            format!(
                "{}: your unsaved edits of the interrupted review ({} lines)",
                restore_keys(),
                text.lines().count()
            ),
            theme.warning,
        )),
        // The keys first: a narrow editor still shows what to press.
        Prompt::Unsaved => Some(Line::styled(
            format!("{}: your unsaved edits", unsaved_keys()),
            theme.warning,
        )),
        Prompt::Plan => Some(Line::styled(
            format!("{}: the plan", super::plan_review::plan_keys()),
            theme.warning,
        )),
        Prompt::None => ed.note().map(|n| Line::styled(n.to_string(), theme.dim)),
    };
    let text_area = match line {
        Some(line) if inner.height >= 2 => {
            let [text, bottom] =
                Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(inner);
            Paragraph::new(line).render(bottom, buf);
            text
        }
        _ => inner,
    };
    Widget::render(ed.area(), text_area, buf);
}

/// Ctrl-R: the input box shows the match and the query in its title.
fn draw_search(
    state: &AppState,
    search: &super::search::Search,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
) {
    let found = state.input.search_match();
    let query = search.query();
    let title = match found {
        Some(_) => format!(" history search: {query} "),
        None if query.is_empty() => " history search: type to search ".to_string(),
        None => format!(" history search: {query} (no match) "),
    };
    let block = Block::bordered()
        .title(title)
        .border_style(theme.border_focus);
    let inner = block.inner(area);
    block.render(area, buf);
    let text = found.unwrap_or_default();
    Paragraph::new(text.to_string())
        .style(theme.text)
        .wrap(ratatui::widgets::Wrap { trim: false })
        .render(inner, buf);
}

fn draw_popup(state: &AppState, body: Rect, input: Rect, buf: &mut Buffer, theme: &Theme) {
    let items = state.popup_items();
    if items.is_empty() || body.height < 3 {
        return;
    }
    let rows = (items.len() as u16).min(POPUP_MAX_ROWS);
    let height = (rows + 2).min(body.height);
    let width = body.width.min(80);
    let rect = Rect::new(body.x, input.y.saturating_sub(height), width, height);
    Clear.render(rect, buf);
    let block = Block::bordered()
        .title(format!(
            " commands · {} completes · {} runs ",
            keymap::label_for(Action::PopupComplete),
            keymap::label_for(Action::Send)
        ))
        .border_style(theme.border_focus);
    let inner = block.inner(rect);
    block.render(rect, buf);
    let selected = state.popup_selected();
    let first = selected.saturating_sub(usize::from(inner.height).saturating_sub(1));
    let lines: Vec<Line> = items
        .iter()
        .enumerate()
        .skip(first)
        .take(usize::from(inner.height))
        .map(|(i, spec)| {
            let style = if i == selected {
                theme.selection
            } else {
                Style::default()
            };
            Line::from(vec![
                Span::styled(format!("{:<22}", spec.synopsis()), theme.key.patch(style)),
                Span::styled(spec.desc.clone(), theme.dim.patch(style)),
            ])
        })
        .collect();
    Paragraph::new(lines).render(inner, buf);
}

fn draw_status(state: &AppState, area: Rect, buf: &mut Buffer, theme: &Theme, now: Instant) {
    let armed = state.quit_armed(now);
    let running = state.activity.is_running();
    // The prompt waiting for keys names the keys that answer it (no "always" where it is not
    // offered; the `.mcp.json` question's own words).
    let answers = state
        .questions
        .front()
        .filter(|_| state.approval_takes_keys(now))
        .map(|p| match p.asked {
            Asked::Tool { .. } => tool_approval_hints(p.always.is_some()),
            Asked::McpJson { .. } | Asked::Hooks { .. } => mcp_json_hints(),
            Asked::Overwrite { .. } => overwrite_hints(),
        });
    let answer = |a: Action| {
        matches!(
            a,
            Action::ApproveOnce | Action::ApproveAlways | Action::Deny
        )
    };
    let mut hints: Vec<(String, &str)> = keymap::hints(&state.contexts(now))
        .into_iter()
        .filter(|h| running || h.action != Action::Abort)
        .filter(|h| !armed || h.action != Action::ClearOrQuit)
        .filter(|h| answers.is_none() || !answer(h.action))
        .map(|h| (h.keys, h.text))
        .collect();
    if let Some(answers) = answers {
        hints.splice(0..0, answers);
    }
    if armed {
        hints.insert(0, (short_label_for(Action::ClearOrQuit), "again to quit"));
    }
    let quiet = state.chat.folded_hooks();
    let quiet_text = format!("{quiet} hook(s) ran quietly");
    if quiet > 0 {
        hints.insert(0, (short_label_for(Action::ShowQuietHooks), &quiet_text));
    }
    let pairs: Vec<(&str, &str)> = hints.iter().map(|(k, h)| (k.as_str(), *h)).collect();
    let model = state.status.model_label();
    let labels = state.status.labels();
    let jobs = match state.jobs.running() {
        0 => None,
        1 => Some("1 job".to_string()),
        n => Some(format!("{n} jobs")),
    };
    render_status(
        &StatusModel {
            gauge: state.status.gauge(),
            model: &model,
            provider: &labels.provider,
            demo: labels.demo,
            mode: state.plan.mode().label(),
            hints: &pairs,
            news: quiet > 0,
            jobs: jobs.as_deref(),
        },
        area,
        buf,
        theme,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_paths() {
        let p = Path::new("/home/u/proj/.flower/notes/handoff-x.md");
        assert_eq!(short_path(p, 3), "…/.flower/notes/handoff-x.md");
        assert_eq!(short_path(Path::new("notes/h.md"), 3), "notes/h.md");
        assert_eq!(short_path(Path::new("/n/h.md"), 3), "/n/h.md");
    }

    #[test]
    fn body_split_by_width_and_height() {
        let wide = Rect::new(0, 0, 120, 30);
        let (chat, ed) = split_body(wide, true);
        assert_eq!(
            (chat.width, ed.map(|r| (r.x, r.width))),
            (60, Some((60, 60)))
        );
        let narrow = Rect::new(0, 0, 80, 20);
        let (chat, ed) = split_body(narrow, true);
        assert_eq!(
            (chat.height, ed.map(|r| (r.y, r.height))),
            (8, Some((8, 12)))
        );
        let short = Rect::new(0, 0, 80, 6);
        let (chat, ed) = split_body(short, true);
        assert_eq!((chat.height, ed), (0, Some(short)));
        assert_eq!(split_body(wide, false), (wide, None));
    }
}
