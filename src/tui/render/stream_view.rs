//! The stream view: a streaming message's lines at one width, drawn from the controller's commits
//! (`stream.rs`). The committed part is rendered (markdown, wrap, highlight) once, as its
//! segments commit, and kept; each frame renders only the live tail. A fence still open at the
//! tail keeps its highlighter's state, so its last line highlights as part of the block.
//!
//! The lines equal `render_markdown` of the whole text at every moment (the tests check every
//! prefix of tricky documents). The size limits of highlighting are kept too: crossing one (a
//! code block over [`MAX_CODE_BYTES`], the message over [`MAX_DOC_BYTES`]) redraws the committed
//! part once, plain.

use ratatui::text::Line;

use super::highlight::{self, LineHighlighter, MAX_CODE_BYTES, MAX_DOC_BYTES};
use super::markdown::{code_line, render_blocks, render_markdown};
use super::stream::{Fence, SegmentKind, StreamCommits};
use super::theme::Theme;
use super::wrap::sanitize;

/// A fence whose code lines are being committed.
struct OpenFence {
    /// Its segment's start (which fence it is).
    start: usize,
    /// Its highlighter after the last committed line (`None`: plain).
    hl: Option<LineHighlighter>,
    /// Code bytes committed (each line with its newline).
    code_len: usize,
    /// Code lines committed.
    lines: usize,
}

/// The code a fence holds in a piece of text (its lines after the opening line).
struct FenceCode {
    /// Bytes, each complete line with its newline.
    len: usize,
    /// Lines.
    lines: usize,
    /// The last line has no newline yet.
    partial: bool,
    /// Where the text after the closing line starts, if the piece closes the fence.
    closed_at: Option<usize>,
}

impl FenceCode {
    /// The length of this (complete) code followed by `more`, as the whole-text renderer
    /// measures it: without the final newline.
    fn stripped(&self, more: &FenceCode) -> usize {
        let len = self.len + more.len;
        if more.partial {
            len
        } else {
            len.saturating_sub(1)
        }
    }
}

/// Walks the code lines of `fence` in `part` (sanitized line by line), stopping at its closing
/// line; `each` gets every code line (indentation taken off) and whether it is complete.
fn walk_code(part: &str, fence: &Fence, mut each: impl FnMut(&str, bool)) -> FenceCode {
    let mut code = FenceCode {
        len: 0,
        lines: 0,
        partial: false,
        closed_at: None,
    };
    let mut at = 0;
    for raw in part.split_inclusive('\n') {
        at += raw.len();
        let clean = sanitize(raw);
        let complete = clean.ends_with('\n');
        let body = clean.strip_suffix('\n').unwrap_or(&clean);
        if fence.is_closed_by(body) {
            code.closed_at = Some(at);
            break;
        }
        if !complete && body.len() < 4 && body.trim_start_matches(' ').is_empty() {
            // The parser drops an unfinished last line of fewer than four spaces.
            break;
        }
        let line = strip_indent(body, fence.indent);
        code.len += line.len() + usize::from(complete);
        code.lines += 1;
        code.partial = !complete;
        each(line, complete);
    }
    code
}

/// `line` less up to `n` leading spaces.
fn strip_indent(line: &str, n: usize) -> &str {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    line.get(spaces.min(n)..).unwrap_or(line)
}

/// A streaming message's lines at one width.
pub(crate) struct StreamLines {
    width: u16,
    /// Highlighting allowed (the message is under [`MAX_DOC_BYTES`]) when the committed part was
    /// drawn.
    highlight: bool,
    /// Bytes of the text drawn into `committed`.
    upto: usize,
    /// Their length once sanitized.
    sanitized: usize,
    committed: Vec<Line<'static>>,
    /// The fence `upto` is inside, if any.
    fence: Option<OpenFence>,
    tail: Vec<Line<'static>>,
    /// Bytes of committed text drawn since this view was made, redraws included (tests and
    /// benchmarks check that a delta does not redraw what was committed).
    drawn: usize,
}

/// The committed part must be drawn again from the start.
struct Redraw;

impl StreamLines {
    /// Nothing drawn yet.
    pub(crate) fn new(width: u16) -> Self {
        StreamLines::fresh(width, true)
    }

    fn fresh(width: u16, highlight: bool) -> Self {
        StreamLines {
            width,
            highlight,
            upto: 0,
            sanitized: 0,
            committed: Vec::new(),
            fence: None,
            tail: Vec::new(),
            drawn: 0,
        }
    }

    /// Bytes of committed text drawn so far, redraws included.
    #[cfg(test)]
    pub(crate) fn drawn(&self) -> usize {
        self.drawn
    }

    /// Rows.
    pub(crate) fn len(&self) -> usize {
        self.committed.len() + self.tail.len()
    }

    /// Row `i`.
    pub(crate) fn get(&self, i: usize) -> Option<&Line<'static>> {
        match i.checked_sub(self.committed.len()) {
            None => self.committed.get(i),
            Some(j) => self.tail.get(j),
        }
    }

    /// The rows, as one list (for tests).
    #[cfg(test)]
    pub(crate) fn to_vec(&self) -> Vec<Line<'static>> {
        self.committed.iter().chain(&self.tail).cloned().collect()
    }

    /// Brings the lines up to date with `text` and its commits: draws what was committed since the
    /// last update, then the tail.
    pub(crate) fn update(
        &mut self,
        text: &str,
        commits: &StreamCommits,
        width: u16,
        theme: &Theme,
    ) {
        let doc_len = self.sanitized + text.get(self.upto..).map_or(0, |t| sanitize(t).len());
        let highlight = doc_len <= MAX_DOC_BYTES;
        if width != self.width || commits.committed() < self.upto || highlight != self.highlight {
            self.reset(width, highlight);
        }
        for _ in 0..2 {
            let drawn = self
                .draw_committed(text, commits, theme)
                .and_then(|()| self.draw_tail(text, commits, theme));
            if drawn.is_ok() {
                return;
            }
            self.reset(width, highlight);
        }
        // Commits that do not fit the text (not expected): draw it whole, start over next time.
        self.tail = render_markdown(text, self.cols(), theme);
        self.upto = usize::MAX;
    }

    fn reset(&mut self, width: u16, highlight: bool) {
        let drawn = self.drawn;
        *self = StreamLines::fresh(width, highlight);
        self.drawn = drawn;
    }

    fn cols(&self) -> usize {
        usize::from(self.width.max(1))
    }

    /// Whether a fence's code of `stripped` bytes is highlighted: a known language in a syntax
    /// theme, the message and the block under their limits.
    fn highlights(&self, fence: &Fence, stripped: usize, theme: &Theme) -> bool {
        self.highlight
            && stripped <= MAX_CODE_BYTES
            && theme
                .syntax
                .as_deref()
                .is_some_and(|name| highlight::supports(&fence.info, name))
    }

    fn draw_committed(
        &mut self,
        text: &str,
        commits: &StreamCommits,
        theme: &Theme,
    ) -> Result<(), Redraw> {
        let segments = commits.segments();
        let first = segments.partition_point(|s| s.end <= self.upto);
        for seg in segments.iter().skip(first) {
            let from = self.upto.max(seg.start);
            let part = text.get(from..seg.end).ok_or(Redraw)?;
            self.drawn += part.len();
            match &seg.kind {
                SegmentKind::Blocks => {
                    let src = sanitize(part);
                    self.sanitized += src.len();
                    let preceded = !self.committed.is_empty();
                    let lines = render_blocks(&src, self.cols(), theme, self.highlight, preceded);
                    self.committed.extend(lines);
                }
                SegmentKind::Fence(fence) => {
                    let body = if from == seg.start {
                        let open_len = part.find('\n').map_or(part.len(), |n| n + 1);
                        let (open, body) = part.split_at(open_len);
                        self.sanitized += sanitize(open).len();
                        let tail = match commits.open_fence() {
                            Some(_) if !fence.closed => text.get(seg.end..).unwrap_or_default(),
                            _ => "",
                        };
                        self.open_fence(seg.start, fence, body, tail, theme);
                        body
                    } else {
                        part
                    };
                    self.draw_code(seg.start, fence, body, theme)?;
                }
            }
            self.upto = seg.end;
        }
        Ok(())
    }

    /// A fence's opening line is committed: the blank line before it, and its highlighter,
    /// chosen by the size of all the code it holds so far (`body` committed, `tail` live).
    fn open_fence(&mut self, start: usize, fence: &Fence, body: &str, tail: &str, theme: &Theme) {
        if !self.committed.is_empty() {
            self.committed.push(Line::default());
        }
        let held = walk_code(body, fence, |_, _| {});
        let live = walk_code(tail, fence, |_, _| {});
        let hl = if self.highlights(fence, held.stripped(&live), theme) {
            theme
                .syntax
                .as_deref()
                .and_then(|name| LineHighlighter::new(&fence.info, name))
        } else {
            None
        };
        self.fence = Some(OpenFence {
            start,
            hl,
            code_len: 0,
            lines: 0,
        });
    }

    /// Committed code lines of the fence starting at `start` (and its closing line, if in `body`).
    fn draw_code(
        &mut self,
        start: usize,
        fence: &Fence,
        body: &str,
        theme: &Theme,
    ) -> Result<(), Redraw> {
        let cols = self.cols();
        let Some(open) = self.fence.as_mut().filter(|f| f.start == start) else {
            return Err(Redraw);
        };
        let out = &mut self.committed;
        let mut hl = open.hl.take();
        let code = walk_code(body, fence, |line, _| {
            let runs = hl.as_mut().and_then(|h| h.line(&format!("{line}\n")));
            code_line(out, line, runs.as_ref(), &[], &[], cols, theme);
        });
        open.hl = hl;
        open.code_len += code.len;
        open.lines += code.lines;
        self.sanitized += sanitize(body).len();
        if code.closed_at.is_some() {
            let lines = open.lines;
            let code_len = open.code_len;
            let highlighted = open.hl.is_some();
            self.fence = None;
            if lines == 0 {
                code_line(&mut self.committed, "", None, &[], &[], cols, theme);
            }
            // The block's final size decides its highlighting, as in the whole text.
            let stripped = code_len.saturating_sub(1);
            if highlighted && stripped > MAX_CODE_BYTES {
                return Err(Redraw);
            }
        }
        Ok(())
    }

    fn draw_tail(
        &mut self,
        text: &str,
        commits: &StreamCommits,
        theme: &Theme,
    ) -> Result<(), Redraw> {
        self.tail.clear();
        let cols = self.cols();
        let rest = text.get(commits.committed()..).unwrap_or_default();
        let mut after_fence = rest;
        if let (Some(fence), Some(open)) = (commits.open_fence(), self.fence.as_ref()) {
            // The tail goes on with the open fence's code, on a copy of its highlighter.
            let mut hl = open.hl.clone();
            let out = &mut self.tail;
            let code = walk_code(rest, fence, |line, complete| {
                let src = if complete {
                    format!("{line}\n")
                } else {
                    line.to_string()
                };
                let runs = hl.as_mut().and_then(|h| h.line(&src));
                code_line(out, line, runs.as_ref(), &[], &[], cols, theme);
            });
            if open.lines + code.lines == 0 {
                code_line(&mut self.tail, "", None, &[], &[], cols, theme);
            }
            let held = FenceCode {
                len: open.code_len,
                lines: open.lines,
                partial: false,
                closed_at: None,
            };
            let wanted = self.highlights(fence, held.stripped(&code), theme);
            if wanted != open.hl.is_some() {
                return Err(Redraw);
            }
            after_fence = match code.closed_at {
                Some(at) => rest.get(at..).unwrap_or_default(),
                None => "",
            };
        } else if commits.open_fence().is_some() {
            return Err(Redraw);
        }
        if !after_fence.is_empty() {
            let preceded = !self.committed.is_empty() || !self.tail.is_empty();
            let lines = render_blocks(
                &sanitize(after_fence),
                cols,
                theme,
                self.highlight,
                preceded,
            );
            self.tail.extend(lines);
        }
        if self.committed.is_empty() && self.tail.is_empty() {
            self.tail.push(Line::default());
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "stream_view_tests.rs"]
mod tests;
