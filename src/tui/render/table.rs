//! Markdown tables: columns padded and aligned when they fit the width, else one wrapped line a row.

use pulldown_cmark::Alignment;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::wrap::{WrapMode, wrap_spans};

type CellSpans = Vec<Span<'static>>;

/// Collects a table's cells from parser events, then lays it out.
pub(crate) struct TableBuilder {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<CellSpans>>,
    row: Option<Vec<CellSpans>>,
    cell: Option<CellSpans>,
}

/// The padding left and right of a cell `text_w` wide in a column `col_w` wide.
fn align_pad(text_w: usize, col_w: usize, align: Alignment) -> (usize, usize) {
    let extra = col_w.saturating_sub(text_w);
    match align {
        Alignment::Right => (extra, 0),
        Alignment::Center => (extra / 2, extra - extra / 2),
        Alignment::Left | Alignment::None => (0, extra),
    }
}

fn cell_width(cell: &CellSpans) -> usize {
    cell.iter().map(|s| s.width()).sum()
}

impl TableBuilder {
    pub(crate) fn new(aligns: Vec<Alignment>) -> Self {
        TableBuilder {
            aligns,
            rows: Vec::new(),
            row: None,
            cell: None,
        }
    }

    pub(crate) fn start_row(&mut self) {
        self.row = Some(Vec::new());
    }

    pub(crate) fn start_cell(&mut self) {
        self.cell = Some(Vec::new());
    }

    pub(crate) fn push(&mut self, span: Span<'static>) {
        if let Some(cell) = &mut self.cell {
            cell.push(Span::styled(span.content.replace('\n', " "), span.style));
        }
    }

    pub(crate) fn end_cell(&mut self) {
        if let (Some(cell), Some(row)) = (self.cell.take(), self.row.as_mut()) {
            row.push(cell);
        }
    }

    pub(crate) fn end_row(&mut self) {
        if let Some(row) = self.row.take() {
            self.rows.push(row);
        }
    }

    /// Lines for the table at `width` columns; row 0 is the header, drawn in `header`.
    pub(crate) fn render(
        mut self,
        width: usize,
        header: Style,
        border: Style,
    ) -> Vec<Line<'static>> {
        self.end_cell();
        self.end_row();
        let ncols = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        if ncols == 0 {
            return Vec::new();
        }
        let mut widths = vec![0usize; ncols];
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell_width(cell));
            }
        }
        let total: usize = widths.iter().sum::<usize>() + 3 * (ncols - 1);
        let mut out = Vec::new();
        for (r, row) in self.rows.iter().enumerate() {
            let style_cell = |cell: &CellSpans| -> CellSpans {
                if r == 0 {
                    cell.iter()
                        .map(|s| Span::styled(s.content.clone(), s.style.patch(header)))
                        .collect()
                } else {
                    cell.clone()
                }
            };
            if total <= width {
                let mut spans = Vec::new();
                for (i, w) in widths.iter().enumerate() {
                    if i > 0 {
                        spans.push(Span::styled(" │ ", border));
                    }
                    let empty = Vec::new();
                    let cell = row.get(i).unwrap_or(&empty);
                    let align = self.aligns.get(i).copied().unwrap_or(Alignment::None);
                    let (left, right) = align_pad(cell_width(cell), *w, align);
                    spans.push(Span::raw(" ".repeat(left)));
                    spans.extend(style_cell(cell));
                    // No trailing padding on the last column.
                    if i + 1 < ncols {
                        spans.push(Span::raw(" ".repeat(right)));
                    }
                }
                out.push(Line::from(spans));
                if r == 0 {
                    let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                    out.push(Line::from(Span::styled(rule.join("─┼─"), border)));
                }
            } else {
                let mut spans = Vec::new();
                for (i, cell) in row.iter().enumerate() {
                    if i > 0 {
                        spans.push(Span::styled(" │ ", border));
                    }
                    spans.extend(style_cell(cell));
                }
                out.extend(wrap_spans(&spans, width, &[], &[], WrapMode::Words));
                if r == 0 {
                    out.push(Line::from(Span::styled("─".repeat(width.max(1)), border)));
                }
            }
        }
        out
    }
}
