//! Wrapping styled text to a width, plus text sanitising for the terminal. Widths are measured
//! per grapheme cluster, exactly as ratatui's buffer lays them out (an emoji sequence, a flag, a
//! letter with its accents is one cluster), so a wrapped line is as wide on screen as it was
//! measured here.

use std::borrow::Cow;

use ratatui::buffer::CellWidth as _;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation as _;

use crate::engine::text::skip_escape;

/// How a logical line breaks when it is wider than the width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WrapMode {
    /// Break between words; a word wider than the line breaks between characters.
    Words,
    /// Break between characters, keeping every space (code, tool output).
    Chars,
}

/// The columns a string takes on screen (the sum of its grapheme clusters' widths).
pub(crate) fn str_width(s: &str) -> usize {
    if s.is_ascii() {
        return s.bytes().filter(|b| !b.is_ascii_control()).count();
    }
    s.graphemes(true).map(cluster_width).sum()
}

/// The columns one grapheme cluster takes in ratatui's buffer (0: it is not drawn).
pub(crate) fn cluster_width(g: &str) -> usize {
    if g.contains(char::is_control) {
        return 0; // the buffer drops it
    }
    usize::from(g.cell_width())
}

/// The grapheme clusters of `s` (a byte of ASCII is one, without segmenting).
fn clusters(s: &str) -> Box<dyn Iterator<Item = &str> + '_> {
    if s.is_ascii() {
        Box::new((0..s.len()).filter_map(move |i| s.get(i..i + 1)))
    } else {
        Box::new(s.graphemes(true))
    }
}

fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| str_width(&s.content)).sum()
}

/// Makes text safe to put in a terminal cell: tabs become spaces, ANSI escape sequences are removed,
/// `\r\n` becomes `\n`, and other control characters are dropped.
pub(crate) fn sanitize(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\n') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push('\n'),
            '\t' => out.push_str("    "),
            '\u{1b}' => skip_escape(&mut chars),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Builds wrapped lines one grapheme cluster at a time, merging runs of the same style.
struct Builder<'p> {
    width: usize,
    first_prefix: &'p [Span<'static>],
    rest_prefix: &'p [Span<'static>],
    lines: Vec<Line<'static>>,
    runs: Vec<Span<'static>>,
    used: usize,
    /// Columns the current line's prefix takes; content starts after it.
    prefix_used: usize,
    /// Spans of `runs` that are the prefix.
    prefix_spans: usize,
    /// The current line holds content (zero-width clusters count).
    content: bool,
}

impl<'p> Builder<'p> {
    fn new(width: usize, first: &'p [Span<'static>], rest: &'p [Span<'static>]) -> Self {
        let mut b = Builder {
            width: width.max(1),
            first_prefix: first,
            rest_prefix: rest,
            lines: Vec::new(),
            runs: Vec::new(),
            used: 0,
            prefix_used: 0,
            prefix_spans: 0,
            content: false,
        };
        b.start(true);
        b
    }

    fn start(&mut self, first: bool) {
        let prefix = if first {
            self.first_prefix
        } else {
            self.rest_prefix
        };
        let w = spans_width(prefix);
        // A prefix that leaves no room for text is dropped so every line makes progress.
        if w < self.width {
            self.runs.extend(prefix.iter().cloned());
            self.prefix_spans = prefix.len();
            self.used = w;
        } else {
            self.prefix_spans = 0;
            self.used = 0;
        }
        self.prefix_used = self.used;
        self.content = false;
    }

    fn has_content(&self) -> bool {
        self.content
    }

    fn room(&self) -> usize {
        self.width.saturating_sub(self.used)
    }

    fn newline(&mut self) {
        let runs = std::mem::take(&mut self.runs);
        self.lines.push(Line::from(runs));
        self.start(false);
    }

    fn push_cluster(&mut self, g: &str, style: Style) {
        let w = cluster_width(g);
        // Break only after visible content; zero-width marks stay with the character they mark.
        if w > self.room() && self.used > self.prefix_used {
            self.newline();
        }
        if w > self.room() && self.prefix_used > 0 {
            // The prefix leaves no room for this (wide) character: drop it on this line.
            self.runs.drain(..self.prefix_spans);
            self.used -= self.prefix_used;
            self.prefix_used = 0;
            self.prefix_spans = 0;
        }
        let merge = self.has_content();
        match self.runs.last_mut() {
            Some(last) if merge && last.style == style => last.content.to_mut().push_str(g),
            _ => self.runs.push(Span::styled(g.to_string(), style)),
        }
        self.used += w;
        self.content = true;
    }

    fn push_str(&mut self, s: &str, style: Style) {
        for g in clusters(s) {
            self.push_cluster(g, style);
        }
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        let runs = std::mem::take(&mut self.runs);
        self.lines.push(Line::from(runs));
        self.lines
    }
}

/// Wraps one logical line (styled spans, no `\n`) to `width` columns. `first_prefix` starts the first
/// output line, `rest_prefix` every continuation line (list indents, quote bars). Always returns at
/// least one line.
pub(crate) fn wrap_spans(
    spans: &[Span<'_>],
    width: usize,
    first_prefix: &[Span<'static>],
    rest_prefix: &[Span<'static>],
    mode: WrapMode,
) -> Vec<Line<'static>> {
    let mut b = Builder::new(width, first_prefix, rest_prefix);
    if mode == WrapMode::Chars {
        for span in spans {
            b.push_str(&span.content, span.style);
        }
        return b.finish();
    }
    // Words: stream the clusters, holding back the current word and the spaces before it.
    let mut word: Vec<(&str, Style)> = Vec::new();
    let mut word_w = 0usize;
    let mut pending: Vec<(&str, Style)> = Vec::new();
    let mut at_line_start = true;
    // Inside a word wider than a line: its clusters go straight to the builder.
    let mut breaking = false;
    let emit =
        |b: &mut Builder<'_>, word: &mut Vec<(&str, Style)>, pending: &mut Vec<(&str, Style)>| {
            let word_w: usize = word.iter().map(|&(g, _)| cluster_width(g)).sum();
            let pending_w: usize = pending.iter().map(|&(g, _)| cluster_width(g)).sum();
            if b.has_content() && pending_w + word_w > b.room() {
                b.newline();
                pending.clear();
            }
            for (g, s) in pending.drain(..).chain(word.drain(..)) {
                b.push_cluster(g, s);
            }
        };
    for span in spans {
        for g in clusters(&span.content) {
            if g == " " {
                breaking = false;
                if !word.is_empty() {
                    emit(&mut b, &mut word, &mut pending);
                    word_w = 0;
                    at_line_start = false;
                }
                if at_line_start && !b.has_content() {
                    // Leading indentation of the logical line is kept.
                    b.push_cluster(g, span.style);
                } else {
                    pending.push((g, span.style));
                }
            } else if breaking {
                b.push_cluster(g, span.style);
            } else {
                word.push((g, span.style));
                word_w += cluster_width(g);
                // A word wider than a whole line breaks between characters anyway: place it now,
                // which also keeps memory bounded on one enormous word.
                if word_w > b.width {
                    emit(&mut b, &mut word, &mut pending);
                    word_w = 0;
                    at_line_start = false;
                    breaking = true;
                }
            }
        }
    }
    if !word.is_empty() {
        emit(&mut b, &mut word, &mut pending);
    }
    b.finish()
}

/// Wraps multi-line plain text in one style; every `\n` starts a new logical line.
pub(crate) fn wrap_text(
    text: &str,
    style: Style,
    width: usize,
    first_prefix: &[Span<'static>],
    rest_prefix: &[Span<'static>],
    mode: WrapMode,
) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for (n, line) in text.split('\n').enumerate() {
        let first = if n == 0 { first_prefix } else { rest_prefix };
        out.extend(wrap_spans(
            &[Span::styled(line, style)],
            width,
            first,
            rest_prefix,
            mode,
        ));
    }
    out
}

/// Cuts a string to at most `width` columns, ending with `…` when it was cut (never inside a
/// grapheme cluster).
pub(crate) fn truncate(s: &str, width: usize) -> String {
    if str_width(s) <= width {
        return s.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for g in clusters(s) {
        let w = cluster_width(g);
        if used + w > width - 1 {
            break;
        }
        out.push_str(g);
        used += w;
    }
    out.push('…');
    out
}

/// The text of each line, its styles dropped (what the render tests compare).
#[cfg(test)]
pub(crate) fn line_texts(lines: &[Line<'_>]) -> Vec<String> {
    lines.iter().map(|l| l.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::line_texts as text;
    use super::*;

    #[test]
    fn words_wrap_at_spaces() {
        let out = wrap_text(
            "the quick brown fox jumps",
            Style::new(),
            10,
            &[],
            &[],
            WrapMode::Words,
        );
        assert_eq!(text(&out), ["the quick", "brown fox", "jumps"]);
    }

    #[test]
    fn long_words_break_and_prefixes_apply() {
        let p1 = [Span::raw("- ")];
        let p2 = [Span::raw("  ")];
        let out = wrap_text("abcdefghij xy", Style::new(), 6, &p1, &p2, WrapMode::Words);
        assert_eq!(text(&out), ["- abcd", "  efgh", "  ij", "  xy"]);
        for l in &out {
            assert!(l.width() <= 6);
        }
    }

    #[test]
    fn wide_chars_and_tiny_widths_make_progress() {
        let out = wrap_text("日本語テキスト", Style::new(), 5, &[], &[], WrapMode::Words);
        assert_eq!(text(&out), ["日本", "語テ", "キス", "ト"]);
        // Width 1 with a double-width char: one char a line, never a loop.
        let out = wrap_text(
            "日本",
            Style::new(),
            1,
            &[Span::raw("> ")],
            &[],
            WrapMode::Chars,
        );
        assert_eq!(text(&out), ["日", "本"]);
        let out = wrap_text("", Style::new(), 0, &[], &[], WrapMode::Words);
        assert_eq!(out.len(), 1);
        // A prefix that leaves too little room for a wide char gives way on that line (found by
        // proptest), keeping a combining mark that came before it.
        let p = [Span::raw("> ")];
        let out = wrap_text("日", Style::new(), 3, &p, &p, WrapMode::Words);
        assert_eq!(text(&out), ["日"]);
        let out = wrap_text("\u{301}日", Style::new(), 3, &p, &p, WrapMode::Words);
        assert_eq!(text(&out), ["\u{301}日"]);
    }

    #[test]
    fn grapheme_clusters_are_measured_and_kept_whole() {
        let family = "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}";
        let flag = "\u{1f1eb}\u{1f1f7}";
        let heart = "\u{2764}\u{fe0f}";
        let accent = "e\u{301}";
        for (g, w) in [(family, 2), (flag, 2), (heart, 2), (accent, 1), ("日", 2)] {
            assert_eq!(str_width(g), w, "{g:?}");
            // What ratatui's buffer lays out is what was measured.
            let mut buf = ratatui::buffer::Buffer::empty(ratatui::layout::Rect::new(0, 0, 10, 1));
            let (x, _) = buf.set_stringn(0, 0, g, 10, Style::new());
            assert_eq!(usize::from(x), w, "{g:?}");
        }
        // Wrapped and cut between clusters, never inside one.
        let text = format!("{family}{family}{flag}{heart}{accent}");
        let out = wrap_text(&text, Style::new(), 3, &[], &[], WrapMode::Chars);
        assert_eq!(
            line_texts(&out),
            [family, family, flag, &format!("{heart}{accent}")]
        );
        assert_eq!(truncate(&text, 5), format!("{family}{family}…"));
        let out = wrap_text(
            &format!("ab {family} cd"),
            Style::new(),
            4,
            &[],
            &[],
            WrapMode::Words,
        );
        assert_eq!(line_texts(&out), ["ab", family, "cd"]);
    }

    #[test]
    fn indentation_kept_in_chars_mode() {
        let out = wrap_text("    let x = 1;", Style::new(), 8, &[], &[], WrapMode::Chars);
        assert_eq!(text(&out), ["    let ", "x = 1;"]);
        let out = wrap_text(
            "  indented words",
            Style::new(),
            40,
            &[],
            &[],
            WrapMode::Words,
        );
        assert_eq!(text(&out), ["  indented words"]);
    }

    #[test]
    fn sanitize_strips_escapes_and_controls() {
        assert!(matches!(sanitize("plain"), Cow::Borrowed(_)));
        assert_eq!(sanitize("\u{1b}[32mok\u{1b}[0m\r\n\tx\u{7}"), "ok\n    x");
        assert_eq!(sanitize("a\u{1b}]0;title\u{7}b\u{1b}]8;;u\u{1b}\\c"), "abc");
        assert_eq!(sanitize("end\u{1b}"), "end");
    }

    #[test]
    fn truncate_marks_the_cut() {
        assert_eq!(truncate("hello", 5), "hello");
        assert_eq!(truncate("hello world", 6), "hello…");
        assert_eq!(truncate("hello", 0), "");
        assert_eq!(truncate("日本語", 4), "日…");
    }

    proptest::proptest! {
        #[test]
        fn wrapping_respects_width_and_keeps_text(
            text in "[a-z 日é\u{301}]{0,80}",
            width in 0usize..30,
            chars_mode in proptest::bool::ANY,
        ) {
            let mode = if chars_mode { WrapMode::Chars } else { WrapMode::Words };
            let p1 = [Span::raw("> ")];
            let p2 = [Span::raw("  ")];
            let out = wrap_text(&text, Style::new(), width, &p1, &p2, mode);
            proptest::prop_assert!(!out.is_empty());
            let w = width.max(1);
            for l in &out {
                // Only a lone double-width char may overflow a 1-column line.
                proptest::prop_assert!(l.width() <= w || (w == 1 && l.width() == 2), "{:?}", l.to_string());
            }
            let strip = |s: &str| s.chars().filter(|c| *c != ' ').collect::<String>();
            let joined: String = out
                .iter()
                .map(|l| {
                    let s = l.to_string();
                    s.strip_prefix("> ").or_else(|| s.strip_prefix("  ")).unwrap_or(&s).to_string()
                })
                .collect();
            proptest::prop_assert_eq!(strip(&joined), strip(&text));
        }
    }
}
