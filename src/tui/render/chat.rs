//! The chat's view of the transcript: each cell's wrapped height and lines cached per width (and
//! per revision), and the scroll position. Only the cells that intersect the viewport are laid
//! out and drawn; when following the bottom, the walk starts from the last cell.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::cell::{AssistantState, Cell};
use super::stream_view::StreamLines;
use super::theme::Theme;
use super::transcript::Transcript;

/// A scroll the reducer asks of the chat view (`Effect::ScrollChat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChatScroll {
    /// Up by the viewport's height, less two rows of context.
    PageUp,
    /// Down by the viewport's height, less two rows of context.
    PageDown,
    /// Up by this many rows.
    Up(u16),
    /// Down by this many rows.
    Down(u16),
    /// To the bottom, following it again.
    Bottom,
    /// To the top.
    Top,
    /// Bring cell `n` into view (its first row at the top when it was not fully shown).
    Reveal(usize),
}

/// A cell's lines: all of them, or a streaming message's committed lines plus its live tail.
enum Lines {
    All(Vec<Line<'static>>),
    Stream(Box<StreamLines>),
}

impl Lines {
    fn len(&self) -> usize {
        match self {
            Lines::All(l) => l.len(),
            Lines::Stream(s) => s.len(),
        }
    }

    fn get(&self, i: usize) -> Option<&Line<'static>> {
        match self {
            Lines::All(l) => l.get(i),
            Lines::Stream(s) => s.get(i),
        }
    }
}

/// A cell's lines at one width and revision. `lines` is dropped once the cell leaves the
/// viewport (a streaming message keeps its committed lines); the height stays (it does not
/// depend on the theme, only on the width).
struct Layout {
    rev: u64,
    width: u16,
    height: usize,
    lines: Option<Lines>,
}

/// The viewport's top row while scrolled up: row `line` of cell `cell` (row 0 of every cell after
/// the first is the blank line that separates it from the previous one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Anchor {
    cell: usize,
    line: usize,
}

/// What the last [`render_chat`] did, for tests and benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct RenderStats {
    /// Cells whose lines were computed (cache misses).
    pub(crate) laid_out: usize,
    /// Cells drawn into the buffer.
    pub(crate) drawn: usize,
}

/// How a [`Transcript`] is shown: cached layouts plus scroll state. Scrolling is in lines; the
/// view follows the bottom until scrolled up, and scrolling back to the bottom follows again.
pub struct ChatView {
    layouts: Vec<Option<Layout>>,
    follow: bool,
    /// The top of the viewport while not following; stays put when content grows below it.
    anchor: Option<Anchor>,
    /// Scroll requested since the last render, in lines (positive is down).
    pending: i64,
    /// The theme the cached lines were drawn with.
    theme: Option<Theme>,
    /// Cells holding cached lines (drawn last frame).
    with_lines: Vec<usize>,
    stats: RenderStats,
    /// A cell to bring into view at the next render.
    reveal: Option<usize>,
    /// The transcript's revision when the view stopped following the bottom: anything newer is
    /// new output below.
    seen_rev: Option<u64>,
    /// The cell drawn on each row of the last frame, from the pane's top.
    row_cells: Vec<Option<usize>>,
    /// Where the last frame drew the chat.
    area: Rect,
    /// The cell drawn highlighted (the selected tool call).
    pub(crate) highlight: Option<usize>,
}

impl Default for ChatView {
    fn default() -> Self {
        ChatView::new()
    }
}

impl ChatView {
    /// A view following the bottom, nothing cached.
    pub fn new() -> Self {
        ChatView {
            layouts: Vec::new(),
            follow: true,
            anchor: None,
            pending: 0,
            theme: None,
            with_lines: Vec::new(),
            stats: RenderStats::default(),
            reveal: None,
            seen_rev: None,
            row_cells: Vec::new(),
            area: Rect::default(),
            highlight: None,
        }
    }

    /// Jumps to the top; stops following the bottom.
    pub(crate) fn scroll_to_top(&mut self) {
        self.follow = false;
        self.anchor = Some(Anchor { cell: 0, line: 0 });
        self.pending = 0;
    }

    /// The cell drawn at a screen position in the last frame.
    pub(crate) fn cell_at(&self, column: u16, row: u16) -> Option<usize> {
        if !self
            .area
            .contains(ratatui::layout::Position::new(column, row))
        {
            return None;
        }
        let i = usize::from(row.checked_sub(self.area.y)?);
        self.row_cells.get(i).copied().flatten()
    }

    /// Scrolls toward older cells; stops following the bottom.
    pub fn scroll_up(&mut self, lines: u16) {
        if lines == 0 {
            return;
        }
        self.pending -= i64::from(lines);
        self.follow = false;
    }

    /// Scrolls toward newer cells; reaching the bottom (at the next render) follows it again.
    pub(crate) fn scroll_down(&mut self, lines: u16) {
        if !self.follow {
            self.pending += i64::from(lines);
        }
    }

    /// Jumps to the bottom and follows it.
    pub fn scroll_to_bottom(&mut self) {
        self.follow = true;
        self.anchor = None;
        self.pending = 0;
    }

    /// Applies a scroll request; `rows` is the height of the chat pane (for pages).
    pub(crate) fn scroll(&mut self, s: ChatScroll, rows: u16) {
        let page = rows.saturating_sub(2).max(1);
        match s {
            ChatScroll::PageUp => self.scroll_up(page),
            ChatScroll::PageDown => self.scroll_down(page),
            ChatScroll::Up(n) => self.scroll_up(n),
            ChatScroll::Down(n) => self.scroll_down(n),
            ChatScroll::Bottom => self.scroll_to_bottom(),
            ChatScroll::Top => self.scroll_to_top(),
            ChatScroll::Reveal(cell) => self.reveal = Some(cell),
        }
    }

    /// True while the view sticks to the newest line.
    #[cfg(test)]
    pub(crate) fn following(&self) -> bool {
        self.follow
    }

    /// What the last render laid out and drew.
    #[cfg(test)]
    pub(crate) fn stats(&self) -> RenderStats {
        self.stats
    }
}

/// One render pass: the transcript with its view.
struct Pass<'a> {
    t: &'a Transcript,
    v: &'a mut ChatView,
    theme: &'a Theme,
}

impl Pass<'_> {
    /// Rows cell `idx` takes at `width` (its separating blank line included), laying it out if
    /// needed.
    fn height(&mut self, idx: usize, width: u16) -> usize {
        let gap = usize::from(idx > 0);
        let Some((cell, rev)) = self.t.get_with_rev(idx) else {
            return 0;
        };
        let Some(slot) = self.v.layouts.get_mut(idx) else {
            return 0;
        };
        if let Some(l) = slot
            && l.width == width
            && l.rev == rev
        {
            return l.height;
        }
        let lines = match cell {
            Cell::Assistant {
                markdown,
                state: AssistantState::Streaming(commits),
            } if !markdown.is_empty() => {
                // The committed part is drawn once; only what came since, and the tail, now.
                let mut stream = match slot.take().and_then(|l| l.lines) {
                    Some(Lines::Stream(s)) => s,
                    _ => Box::new(StreamLines::new(width)),
                };
                stream.update(markdown, commits, width, self.theme);
                Lines::Stream(stream)
            }
            cell => Lines::All(cell.lines(width, self.theme)),
        };
        let height = gap + lines.len();
        *slot = Some(Layout {
            rev,
            width,
            height,
            lines: Some(lines),
        });
        self.v.with_lines.push(idx);
        self.v.stats.laid_out += 1;
        height
    }

    /// Cell `idx`'s lines at `width`, computing them if only the height was cached.
    fn lines(&mut self, idx: usize, width: u16) -> Option<&Lines> {
        self.height(idx, width);
        let missing = self
            .v
            .layouts
            .get(idx)
            .is_none_or(|l| l.as_ref().is_none_or(|l| l.lines.is_none()));
        if missing {
            // Dropped with its lines kept: lay it out again.
            if let Some(Some(l)) = self.v.layouts.get_mut(idx) {
                l.rev = 0;
            }
            self.height(idx, width);
        }
        self.v
            .layouts
            .get(idx)
            .and_then(|l| l.as_ref())
            .and_then(|l| l.lines.as_ref())
    }

    /// The top row of the view when it is aligned to the bottom: (cell, row within it).
    fn bottom_view(&mut self, width: u16, rows: usize) -> Anchor {
        let mut sum = 0;
        let mut idx = self.t.len();
        while idx > 0 && sum < rows {
            idx -= 1;
            sum += self.height(idx, width);
        }
        Anchor {
            cell: idx,
            line: sum.saturating_sub(rows),
        }
    }

    /// Moves the view to show cell `idx` whole (from its top when it is taller than the view),
    /// unless it is shown whole already.
    fn reveal(&mut self, idx: usize, width: u16, rows: usize) {
        let n = self.t.len();
        if idx >= n {
            return;
        }
        let top = match (self.v.follow, self.v.anchor) {
            (false, Some(a)) if a.cell < n => a,
            _ => self.bottom_view(width, rows),
        };
        let gap = usize::from(idx > 0);
        let h = self.height(idx, width);
        let shown = if idx < top.cell {
            false
        } else if idx == top.cell {
            top.line <= gap && h.saturating_sub(top.line) <= rows
        } else {
            let mut y = self.height(top.cell, width).saturating_sub(top.line);
            let mut i = top.cell + 1;
            while i < idx && y <= rows {
                y += self.height(i, width);
                i += 1;
            }
            y + h <= rows
        };
        if !shown {
            self.v.follow = false;
            self.v.pending = 0;
            self.v.anchor = Some(Anchor {
                cell: idx,
                line: gap.min(h.saturating_sub(1)),
            });
        }
    }

    /// Resolves follow / anchor / pending scroll into the viewport's top row.
    fn viewport(&mut self, width: u16, rows: usize) -> Anchor {
        if let Some(idx) = self.v.reveal.take() {
            self.reveal(idx, width, rows);
        }
        let n = self.t.len();
        if n == 0 || self.v.follow {
            self.v.pending = 0;
            self.v.anchor = None;
            return self.bottom_view(width, rows);
        }
        let mut a = match self.v.anchor {
            Some(a) if a.cell < n => a,
            _ => self.bottom_view(width, rows),
        };
        a.line = a.line.min(self.height(a.cell, width).saturating_sub(1));
        let mut d = std::mem::take(&mut self.v.pending);
        while d < 0 {
            if a.line > 0 {
                let step = a.line.min(d.unsigned_abs() as usize);
                a.line -= step;
                d += step as i64;
            } else if a.cell > 0 {
                a.cell -= 1;
                a.line = self.height(a.cell, width).saturating_sub(1);
                d += 1;
            } else {
                break;
            }
        }
        while d > 0 {
            let h = self.height(a.cell, width);
            if a.line + 1 < h {
                let step = (h - 1 - a.line).min(d as usize);
                a.line += step;
                d -= step as i64;
            } else if a.cell + 1 < n {
                a.cell += 1;
                a.line = 0;
                d -= 1;
            } else {
                break;
            }
        }
        // Does the content end inside the viewport? Then we are at the bottom: follow it.
        let mut below = self.height(a.cell, width).saturating_sub(a.line);
        let mut i = a.cell + 1;
        while below <= rows && i < n {
            below += self.height(i, width);
            i += 1;
        }
        if below <= rows {
            self.v.follow = true;
            self.v.anchor = None;
            return self.bottom_view(width, rows);
        }
        self.v.anchor = Some(a);
        a
    }

    /// Keeps the view's caches in step with the transcript and the theme.
    fn sync(&mut self) {
        let n = self.t.len();
        self.v.layouts.truncate(n);
        self.v.layouts.resize_with(n, || None);
        self.v.with_lines.retain(|&i| i < n);
        if self.v.theme.as_ref() != Some(self.theme) {
            for l in self.v.layouts.iter_mut().flatten() {
                l.lines = None;
            }
            self.v.with_lines.clear();
            self.v.theme = Some(self.theme.clone());
        }
    }
}

/// Draws the visible part of the transcript into `area`, laying out only the cells it shows.
pub fn render_chat(
    transcript: &Transcript,
    view: &mut ChatView,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
) {
    view.stats = RenderStats::default();
    let area = area.intersection(buf.area);
    if area.is_empty() {
        return;
    }
    let mut f = Pass {
        t: transcript,
        v: view,
        theme,
    };
    f.sync();
    let width = area.width;
    let rows = usize::from(area.height);
    let top = f.viewport(width, rows);
    let previous = std::mem::take(&mut f.v.with_lines);
    let mut drawn = Vec::new();
    let mut row_cells = vec![None; rows];
    let highlight = f.v.highlight;
    let mut y = 0usize;
    let mut idx = top.cell;
    let mut skip = top.line;
    while y < rows && idx < f.t.len() {
        let gap = usize::from(idx > 0);
        let lines = f.lines(idx, width);
        let height = gap + lines.map_or(0, Lines::len);
        for row in skip..height {
            if y >= rows {
                break;
            }
            if let Some(line) = row
                .checked_sub(gap)
                .and_then(|i| lines.and_then(|l| l.get(i)))
            {
                let ry = area.y + y as u16;
                if line.style.bg.is_some() {
                    buf.set_style(Rect::new(area.x, ry, width, 1), line.style);
                }
                buf.set_line(area.x, ry, line, width);
                if highlight == Some(idx) {
                    buf.set_style(Rect::new(area.x, ry, width, 1), theme.selection);
                }
                if let Some(slot) = row_cells.get_mut(y) {
                    *slot = Some(idx);
                }
            }
            y += 1;
        }
        drawn.push(idx);
        idx += 1;
        skip = 0;
    }
    // Keep lines only for what is on screen; heights stay cached.
    for i in previous
        .into_iter()
        .chain(std::mem::take(&mut f.v.with_lines))
    {
        if !drawn.contains(&i)
            && let Some(Some(l)) = f.v.layouts.get_mut(i)
            && !matches!(l.lines, Some(Lines::Stream(_)))
        {
            l.lines = None;
        }
    }
    f.v.stats.drawn = drawn.len();
    f.v.with_lines = drawn;
    f.v.row_cells = row_cells;
    f.v.area = area;
    // New output below the view while scrolled up: say so on the last row.
    let latest = transcript.latest_rev();
    let seen = if f.v.follow {
        None
    } else {
        Some(*f.v.seen_rev.get_or_insert(latest))
    };
    f.v.seen_rev = seen;
    if seen.is_some_and(|s| latest > s) {
        draw_new_output_marker(area, buf, theme);
    }
}

/// ` ↓ new output below · End ` at the right of the chat's last row.
fn draw_new_output_marker(area: Rect, buf: &mut Buffer, theme: &Theme) {
    let key = crate::tui::keymap::label_for(crate::tui::keymap::Action::ChatBottom);
    let label = format!(" ↓ new output below · {key} ");
    let w = super::wrap::str_width(&label) as u16;
    if area.width < w || area.height == 0 {
        return;
    }
    let y = area.y + area.height - 1;
    let x = area.x + area.width - w;
    buf.set_style(Rect::new(x, y, w, 1), ratatui::style::Style::reset());
    buf.set_string(x, y, &label, theme.badge);
}

#[cfg(test)]
#[path = "chat_tests.rs"]
mod tests;
