//! The transcript view model: cells, each with its wrapped height cached per width, and a scroll
//! position. Only the cells that intersect the viewport are laid out and drawn; when following the
//! bottom, the walk starts from the last cell.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::cell::Cell;
use super::theme::Theme;

/// A cell's lines at one width. `lines` is dropped once the cell leaves the viewport; the height
/// stays (it does not depend on the theme, only on the width).
struct Layout {
    width: u16,
    height: usize,
    lines: Option<Vec<Line<'static>>>,
}

struct Entry {
    cell: Cell,
    layout: Option<Layout>,
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
pub struct RenderStats {
    /// Cells whose lines were computed (cache misses).
    pub laid_out: usize,
    /// Cells drawn into the buffer.
    pub drawn: usize,
}

/// The chat transcript: cells plus scroll state. Scrolling is in lines; the view follows the
/// bottom until scrolled up, and scrolling back to the bottom follows again.
pub struct Chat {
    entries: Vec<Entry>,
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
}

impl Default for Chat {
    fn default() -> Self {
        Chat::new()
    }
}

impl Chat {
    /// An empty transcript following the bottom.
    pub fn new() -> Self {
        Chat {
            entries: Vec::new(),
            follow: true,
            anchor: None,
            pending: 0,
            theme: None,
            with_lines: Vec::new(),
            stats: RenderStats::default(),
        }
    }

    /// Appends a cell.
    pub fn push(&mut self, cell: Cell) {
        self.entries.push(Entry { cell, layout: None });
    }

    /// Removes the last cell (a replayed stream takes back what its broken try showed).
    pub fn pop(&mut self) -> Option<Cell> {
        let entry = self.entries.pop()?;
        let n = self.entries.len();
        self.with_lines.retain(|&i| i < n);
        Some(entry.cell)
    }

    /// The last cell, for in-place updates (streaming text). Its cached layout is dropped here, so
    /// the change shows at the next render; [`Chat::invalidate_last`] is then harmless.
    pub fn last_mut(&mut self) -> Option<&mut Cell> {
        let entry = self.entries.last_mut()?;
        entry.layout = None;
        Some(&mut entry.cell)
    }

    /// Marks the last cell's cached height stale.
    pub fn invalidate_last(&mut self) {
        if let Some(e) = self.entries.last_mut() {
            e.layout = None;
        }
    }

    /// Marks cell `idx`'s cached height stale.
    pub fn invalidate(&mut self, idx: usize) {
        if let Some(e) = self.entries.get_mut(idx) {
            e.layout = None;
        }
    }

    /// Drops every cached layout (e.g. after changing how cells render).
    pub fn invalidate_all(&mut self) {
        for e in &mut self.entries {
            e.layout = None;
        }
        self.with_lines.clear();
    }

    /// The most recent tool cell with this call id; its cached layout is dropped (as with
    /// [`Chat::last_mut`]) so an update shows at the next render.
    pub fn find_tool_mut(&mut self, id: &str) -> Option<&mut Cell> {
        let entry = self
            .entries
            .iter_mut()
            .rev()
            .find(|e| matches!(&e.cell, Cell::Tool { id: i, .. } if i == id))?;
        entry.layout = None;
        Some(&mut entry.cell)
    }

    /// Cell `idx`, mutable; its cached layout is dropped.
    pub fn get_mut(&mut self, idx: usize) -> Option<&mut Cell> {
        let entry = self.entries.get_mut(idx)?;
        entry.layout = None;
        Some(&mut entry.cell)
    }

    /// Cell `idx`.
    pub fn get(&self, idx: usize) -> Option<&Cell> {
        self.entries.get(idx).map(|e| &e.cell)
    }

    /// The cells, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Cell> {
        self.entries.iter().map(|e| &e.cell)
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are no cells.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Removes every cell and follows the bottom again.
    pub fn clear(&mut self) {
        *self = Chat {
            theme: self.theme.take(),
            ..Chat::new()
        };
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
    pub fn scroll_down(&mut self, lines: u16) {
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

    /// True while the view sticks to the newest line.
    pub fn following(&self) -> bool {
        self.follow
    }

    /// Expands or collapses the most recent tool cell's output.
    pub fn toggle_last_tool_expanded(&mut self) {
        if let Some(e) = self
            .entries
            .iter_mut()
            .rev()
            .find(|e| matches!(e.cell, Cell::Tool { .. }))
        {
            if let Cell::Tool { expanded, .. } = &mut e.cell {
                *expanded = !*expanded;
            }
            e.layout = None;
        }
    }

    /// What the last render laid out and drew.
    pub fn stats(&self) -> RenderStats {
        self.stats
    }

    /// Rows cell `idx` takes at `width` (its separating blank line included), laying it out if needed.
    fn height(&mut self, idx: usize, width: u16, theme: &Theme) -> usize {
        let gap = usize::from(idx > 0);
        let entry = &mut self.entries[idx];
        if let Some(l) = &entry.layout
            && l.width == width
        {
            return l.height;
        }
        let lines = entry.cell.lines(width, theme);
        let height = gap + lines.len();
        entry.layout = Some(Layout {
            width,
            height,
            lines: Some(lines),
        });
        self.with_lines.push(idx);
        self.stats.laid_out += 1;
        height
    }

    /// Cell `idx`'s lines at `width`, computing them if only the height was cached.
    fn lines(&mut self, idx: usize, width: u16, theme: &Theme) -> &[Line<'static>] {
        self.height(idx, width, theme);
        let missing = self.entries[idx]
            .layout
            .as_ref()
            .is_none_or(|l| l.lines.is_none());
        if missing {
            let lines = self.entries[idx].cell.lines(width, theme);
            self.stats.laid_out += 1;
            self.with_lines.push(idx);
            if let Some(l) = &mut self.entries[idx].layout {
                l.lines = Some(lines);
            }
        }
        self.entries[idx]
            .layout
            .as_ref()
            .and_then(|l| l.lines.as_deref())
            .unwrap_or(&[])
    }

    /// The top row of the view when it is aligned to the bottom: (cell, row within it).
    fn bottom_view(&mut self, width: u16, rows: usize, theme: &Theme) -> Anchor {
        let mut sum = 0;
        let mut idx = self.entries.len();
        while idx > 0 && sum < rows {
            idx -= 1;
            sum += self.height(idx, width, theme);
        }
        Anchor {
            cell: idx,
            line: sum.saturating_sub(rows),
        }
    }

    /// Resolves follow / anchor / pending scroll into the viewport's top row.
    fn viewport(&mut self, width: u16, rows: usize, theme: &Theme) -> Anchor {
        let n = self.entries.len();
        if n == 0 || self.follow {
            self.pending = 0;
            self.anchor = None;
            return self.bottom_view(width, rows, theme);
        }
        let mut a = match self.anchor {
            Some(a) if a.cell < n => a,
            _ => self.bottom_view(width, rows, theme),
        };
        a.line = a
            .line
            .min(self.height(a.cell, width, theme).saturating_sub(1));
        let mut d = std::mem::take(&mut self.pending);
        while d < 0 {
            if a.line > 0 {
                let step = a.line.min(d.unsigned_abs() as usize);
                a.line -= step;
                d += step as i64;
            } else if a.cell > 0 {
                a.cell -= 1;
                a.line = self.height(a.cell, width, theme).saturating_sub(1);
                d += 1;
            } else {
                break;
            }
        }
        while d > 0 {
            let h = self.height(a.cell, width, theme);
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
        let mut below = self.height(a.cell, width, theme) - a.line;
        let mut i = a.cell + 1;
        while below <= rows && i < n {
            below += self.height(i, width, theme);
            i += 1;
        }
        if below <= rows {
            self.follow = true;
            self.anchor = None;
            return self.bottom_view(width, rows, theme);
        }
        self.anchor = Some(a);
        a
    }
}

/// Draws the visible part of the transcript into `area`, laying out only the cells it shows.
pub fn render_chat(chat: &mut Chat, area: Rect, buf: &mut Buffer, theme: &Theme) {
    chat.stats = RenderStats::default();
    let area = area.intersection(buf.area);
    if area.is_empty() {
        return;
    }
    if chat.theme.as_ref() != Some(theme) {
        for e in &mut chat.entries {
            if let Some(l) = &mut e.layout {
                l.lines = None;
            }
        }
        chat.with_lines.clear();
        chat.theme = Some(theme.clone());
    }
    let width = area.width;
    let rows = usize::from(area.height);
    let top = chat.viewport(width, rows, theme);
    let previous = std::mem::take(&mut chat.with_lines);
    let mut drawn = Vec::new();
    let mut y = 0usize;
    let mut idx = top.cell;
    let mut skip = top.line;
    while y < rows && idx < chat.entries.len() {
        let gap = usize::from(idx > 0);
        let lines = chat.lines(idx, width, theme);
        let height = gap + lines.len();
        for row in skip..height {
            if y >= rows {
                break;
            }
            if row >= gap {
                let line = &lines[row - gap];
                let ry = area.y + y as u16;
                if line.style.bg.is_some() {
                    buf.set_style(Rect::new(area.x, ry, width, 1), line.style);
                }
                buf.set_line(area.x, ry, line, width);
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
        .chain(std::mem::take(&mut chat.with_lines))
    {
        if !drawn.contains(&i)
            && let Some(l) = chat.entries.get_mut(i).and_then(|e| e.layout.as_mut())
        {
            l.lines = None;
        }
    }
    chat.stats.drawn = drawn.len();
    chat.with_lines = drawn;
}

#[cfg(test)]
#[path = "chat_tests.rs"]
mod tests;
