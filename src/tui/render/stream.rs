//! The stream controller: where a streaming markdown message may be cut so that the part before
//! the cut (the *committed* part) renders the same on its own as it does inside the whole text.
//! It is pure and incremental: each delta scans only the lines it completed, and cuts fall only
//! at newlines. The stream view (`stream_view.rs`) renders the committed part once per width and
//! only the live tail on every frame.
//!
//! A cut is made
//! - before a line that starts a top-level block no earlier block can continue: after a blank
//!   line, a line at column 0 that is not a list item continuing a list (a list going on across
//!   blank lines stays one list); or a fence or ATX heading line at column 0 (they close
//!   whatever was open);
//! - inside a top-level fenced code block, after every code line (the fence stays open across the
//!   cut: the view carries the highlighter's state over);
//! - after the line that closes a top-level fence.
//!
//! What it cannot follow stops the cutting for the rest of the message (the tail then grows as
//! before the controller existed; correctness first): a line starting an HTML block (which may
//! span blank lines), a terminal escape (it can swallow the next line), a fence nested in a list
//! whose lines leave the list's indentation, and link reference definitions (they apply to the
//! text before them, so every cut is undone).

use super::wrap::sanitize;

/// A top-level fenced code block, as its opening line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fence {
    /// `` ` `` or `~`.
    ch: char,
    /// How many of them opened it (the closing line needs as many).
    len: usize,
    /// Spaces before the opening line's fence: as many are taken off each code line.
    pub(crate) indent: usize,
    /// The info string (the language first).
    pub(crate) info: String,
    /// The closing line is committed.
    pub(crate) closed: bool,
}

impl Fence {
    /// True if `line` (sanitized, without its newline) closes this fence.
    pub(crate) fn is_closed_by(&self, line: &str) -> bool {
        let (ind, rest) = indent(line);
        ind <= 3 && closes(rest, self.ch, self.len)
    }
}

/// What a committed range holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SegmentKind {
    /// Whole top-level blocks: they render on their own.
    Blocks,
    /// A top-level fenced code block from its opening line: the code lines committed so far, and
    /// its closing line once `closed`.
    Fence(Fence),
}

/// A committed range of the text, `start..end` in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Segment {
    /// Where it starts.
    pub(crate) start: usize,
    /// Where it ends (the next segment starts there).
    pub(crate) end: usize,
    /// What it holds.
    pub(crate) kind: SegmentKind,
}

/// The scanner's view of the line it reads next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scan {
    /// Between or inside ordinary blocks. `blank`: the previous line was blank; `container`: a
    /// list or quote line came since the last cut (an indented fence may then be nested).
    Text { blank: bool, container: bool },
    /// Inside the top-level fence the last segment holds.
    Fence,
    /// Inside a fence nested in a list item, indented `indent`: no cuts until it closes.
    Nested { ch: char, len: usize, indent: usize },
    /// Something it cannot follow came: no more cuts.
    Opaque,
}

/// The committed segments of one streaming message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamCommits {
    segments: Vec<Segment>,
    /// Bytes of the text scanned: complete lines only.
    scanned: usize,
    scan: Scan,
}

impl Default for StreamCommits {
    fn default() -> Self {
        StreamCommits::new()
    }
}

impl StreamCommits {
    /// Nothing committed yet.
    pub(crate) fn new() -> Self {
        StreamCommits {
            segments: Vec::new(),
            scanned: 0,
            scan: Scan::Text {
                blank: false,
                container: false,
            },
        }
    }

    /// The commits of `text` as if it had streamed in one piece.
    pub(crate) fn of(text: &str) -> Self {
        let mut c = StreamCommits::new();
        c.advance(text);
        c
    }

    /// The committed segments, in order.
    pub(crate) fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Bytes committed: the live tail starts here.
    pub(crate) fn committed(&self) -> usize {
        self.segments.last().map_or(0, |s| s.end)
    }

    /// The fence the tail continues (the tail's lines are its code), if one is open.
    pub(crate) fn open_fence(&self) -> Option<&Fence> {
        match (self.scan, self.segments.last()) {
            (
                Scan::Fence,
                Some(Segment {
                    kind: SegmentKind::Fence(f),
                    ..
                }),
            ) if !f.closed => Some(f),
            _ => None,
        }
    }

    /// Scans the lines `text` completed since the last call (`text` only ever grows while a
    /// message streams).
    pub(crate) fn advance(&mut self, text: &str) {
        while let Some(rest) = text.get(self.scanned..)
            && let Some(nl) = rest.find('\n')
        {
            let start = self.scanned;
            let end = start + nl + 1;
            let line = rest.get(..nl).unwrap_or_default();
            self.line(line, start, end);
            self.scanned = end;
        }
        // A definition applies as soon as it is there, unfinished line or not.
        if self.scan != Scan::Fence
            && let Some(partial) = text.get(self.scanned..)
            && is_link_definition(indent(&sanitize(partial)).1)
        {
            self.give_up(true);
        }
    }

    /// Commits `..at` as whole blocks.
    fn cut(&mut self, at: usize) {
        let from = self.committed();
        if at <= from {
            return;
        }
        match self.segments.last_mut() {
            Some(s) if s.kind == SegmentKind::Blocks => s.end = at,
            _ => self.segments.push(Segment {
                start: from,
                end: at,
                kind: SegmentKind::Blocks,
            }),
        }
    }

    /// Stops cutting; `undo` drops every commit (the whole text becomes the tail again).
    fn give_up(&mut self, undo: bool) {
        if undo {
            self.segments.clear();
        } else if self.scan == Scan::Fence {
            // The open fence is no longer followed: it goes back to the tail.
            self.segments.pop();
        }
        self.scan = Scan::Opaque;
    }

    /// One complete line, `start..end` in the text (`end` after its newline).
    fn line(&mut self, raw: &str, start: usize, end: usize) {
        if self.scan == Scan::Opaque {
            // Not followed any more, but a definition still reaches back over every cut.
            if is_link_definition(indent(&sanitize(raw)).1) {
                self.segments.clear();
            }
            return;
        }
        if raw.contains('\u{1b}') {
            return self.give_up(false);
        }
        let line = sanitize(raw);
        match self.scan {
            Scan::Text { blank, container } => self.text_line(&line, blank, container, start, end),
            Scan::Fence => self.fence_line(&line, end),
            Scan::Nested { ch, len, indent: k } => {
                let (ind, rest) = indent(&line);
                if rest.is_empty() {
                    return;
                }
                if is_link_definition(rest) {
                    return self.give_up(true);
                }
                if ind < k {
                    // It may have left the list item, closing the fence: cannot tell.
                    return self.give_up(false);
                }
                if ind <= k.max(3) && closes(rest, ch, len) {
                    self.scan = Scan::Text {
                        blank: false,
                        container: true,
                    };
                }
            }
            Scan::Opaque => {}
        }
    }

    fn text_line(&mut self, line: &str, blank: bool, container: bool, start: usize, end: usize) {
        let (ind, rest) = indent(line);
        if rest.is_empty() {
            self.scan = Scan::Text {
                blank: true,
                container,
            };
            return;
        }
        if is_link_definition(rest) {
            return self.give_up(true);
        }
        let top = ind == 0 || (ind <= 3 && !container);
        let fence = if ind <= 3 { fence_open(rest) } else { None };
        let hard = top && (fence.is_some() || is_atx_heading(rest));
        let mut container = container;
        // After a blank line a new block starts, unless a list goes on: a list item continues
        // a list (or a quote holding one) seen since the last cut.
        let fresh = blank && ind == 0 && (!container || list_marker(rest).is_none());
        if fresh || hard {
            self.cut(start);
            container = false;
        }
        if ind <= 3 && rest.starts_with('<') {
            // An HTML block may run over blank lines and hide fences: not followed.
            return self.give_up(false);
        }
        if let Some((ch, len, info)) = fence {
            if container {
                self.scan = Scan::Nested {
                    ch,
                    len,
                    indent: ind,
                };
            } else {
                self.segments.push(Segment {
                    start,
                    end,
                    kind: SegmentKind::Fence(Fence {
                        ch,
                        len,
                        indent: ind,
                        info,
                        closed: false,
                    }),
                });
                self.scan = Scan::Fence;
            }
            return;
        }
        if ind <= 3 {
            if let Some(width) = list_marker(rest) {
                container = true;
                // A fence on the item's own line (`- ```rust`) is nested in the item.
                let after = rest.get(width..).unwrap_or_default();
                let (pad, body) = indent(after);
                if let Some((ch, len, _)) = fence_open(body) {
                    self.scan = Scan::Nested {
                        ch,
                        len,
                        indent: ind + width + pad,
                    };
                    return;
                }
            } else if rest.starts_with('>') {
                container = true;
            }
        }
        self.scan = Scan::Text {
            blank: false,
            container,
        };
    }

    fn fence_line(&mut self, line: &str, end: usize) {
        let Some(Segment {
            end: seg_end,
            kind: SegmentKind::Fence(f),
            ..
        }) = self.segments.last_mut()
        else {
            self.scan = Scan::Opaque;
            return;
        };
        *seg_end = end;
        if f.is_closed_by(line) {
            f.closed = true;
            self.scan = Scan::Text {
                blank: false,
                container: false,
            };
        }
    }
}

/// Leading spaces (columns; the text is sanitized, so no tabs) and the rest of the line.
fn indent(line: &str) -> (usize, &str) {
    let rest = line.trim_start_matches(' ');
    (line.len() - rest.len(), rest)
}

/// A fence opening `rest` (the line after its indentation): its character, length and info.
fn fence_open(rest: &str) -> Option<(char, usize, String)> {
    let ch = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = rest.chars().take_while(|c| *c == ch).count();
    if len < 3 {
        return None;
    }
    let info = rest.get(len..).unwrap_or_default();
    if ch == '`' && info.contains('`') {
        return None;
    }
    Some((ch, len, info.trim().to_string()))
}

/// True if `rest` (a line after its indentation) closes a fence of `len` × `ch`.
fn closes(rest: &str, ch: char, len: usize) -> bool {
    let n = rest.chars().take_while(|c| *c == ch).count();
    n >= len
        && rest
            .get(n..)
            .is_some_and(|after| after.trim_matches([' ', '\t']).is_empty())
}

/// `# Title` … `###### Title` (or a bare `#`).
fn is_atx_heading(rest: &str) -> bool {
    let n = rest.chars().take_while(|c| *c == '#').count();
    (1..=6).contains(&n)
        && rest
            .get(n..)
            .is_some_and(|after| after.is_empty() || after.starts_with(' '))
}

/// The width of a list item marker starting `rest` (`- `, `* `, `+ `, `1. `, `2) `), if any.
fn list_marker(rest: &str) -> Option<usize> {
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    let marker = match rest.chars().next()? {
        '-' | '*' | '+' => 1,
        _ if (1..=9).contains(&digits)
            && rest
                .get(digits..)
                .is_some_and(|r| r.starts_with('.') || r.starts_with(')')) =>
        {
            digits + 1
        }
        _ => return None,
    };
    let after = rest.get(marker..)?;
    if after.is_empty() {
        Some(marker)
    } else if after.starts_with(' ') {
        Some(marker + 1)
    } else {
        None
    }
}

/// A line that may hold a link reference definition (`[label]: url`), also inside quotes and
/// list items.
fn is_link_definition(rest: &str) -> bool {
    let mut s = rest;
    loop {
        let trimmed = s.trim_start_matches([' ', '>']);
        match list_marker(trimmed) {
            Some(w) => s = trimmed.get(w..).unwrap_or_default(),
            None => {
                s = trimmed;
                break;
            }
        }
    }
    s.starts_with('[') && s.contains("]:")
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
