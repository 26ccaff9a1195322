//! Markdown (pulldown-cmark) to wrapped, styled lines: headings, nested and numbered lists, emphasis,
//! links as `text (url)`, inline code, block quotes, tables, and fenced code highlighted by
//! [`super::highlight`]. Every line break of the text is kept, a single newline too: a model's
//! "Files changed:" followed by a path a line stays on its lines. Streaming-safe: half a list or
//! an unterminated fence renders as what it is so far (an open fence is a code block to the end
//! of the text).

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::highlight::{self, HlLine, MAX_DOC_BYTES};
use super::table;
use super::theme::Theme;
use super::wrap::{WrapMode, sanitize, str_width, wrap_spans};

/// Renders markdown to lines at most `width` columns wide (assistant text style as the base); at
/// least one line.
pub(crate) fn render_markdown(src: &str, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let src = sanitize(src);
    let mut out = render_blocks(&src, width, theme, src.len() <= MAX_DOC_BYTES, false);
    if out.is_empty() {
        out.push(Line::default());
    }
    out
}

/// Renders sanitized markdown to lines (none for text without blocks); `highlight` allows code
/// highlighting (the whole document's size decides it). The stream view renders a message in
/// parts with it, cut at block boundaries: `preceded` says lines came before, so the part's
/// first block starts with the blank line it would have inside the whole text.
pub(crate) fn render_blocks(
    src: &str,
    width: usize,
    theme: &Theme,
    highlight: bool,
    preceded: bool,
) -> Vec<Line<'static>> {
    let mut r = Renderer::new(width.max(1), theme, highlight);
    r.need_blank = preceded;
    r.preceded = preceded;
    let opts = Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(src, opts) {
        r.event(event);
    }
    r.finish()
}

/// A block that prefixes the lines inside it.
enum Container {
    Quote,
    List { next: Option<u64> },
    Item { marker: String, pending: bool },
}

struct CodeBlock {
    lang: String,
    text: String,
}

struct Renderer<'t> {
    width: usize,
    theme: &'t Theme,
    highlight: bool,
    out: Vec<Line<'static>>,
    inline: Vec<Span<'static>>,
    styles: Vec<Style>,
    /// Open links: the URL and where the link text starts in `inline`.
    links: Vec<(String, usize)>,
    containers: Vec<Container>,
    heading: Option<HeadingLevel>,
    code: Option<CodeBlock>,
    table: Option<table::TableBuilder>,
    need_blank: bool,
    /// Lines came before this text (it is a part of a streaming message).
    preceded: bool,
}

impl<'t> Renderer<'t> {
    fn new(width: usize, theme: &'t Theme, highlight: bool) -> Self {
        Renderer {
            width,
            theme,
            highlight,
            out: Vec::new(),
            inline: Vec::new(),
            styles: Vec::new(),
            links: Vec::new(),
            containers: Vec::new(),
            heading: None,
            code: None,
            table: None,
            need_blank: false,
            preceded: false,
        }
    }

    /// The style of text at this point: block style patched by every open inline style.
    fn style(&self) -> Style {
        let mut s = self.theme.assistant;
        if self
            .containers
            .iter()
            .any(|c| matches!(c, Container::Quote))
        {
            s = s.patch(self.theme.quote);
        }
        if let Some(level) = self.heading {
            s = s.patch(self.theme.heading);
            s = match level {
                HeadingLevel::H1 => s.add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
                HeadingLevel::H2 => s.add_modifier(Modifier::BOLD),
                _ => s.add_modifier(Modifier::BOLD | Modifier::ITALIC),
            };
        }
        self.styles.iter().fold(s, |acc, st| acc.patch(*st))
    }

    /// Prefixes for the next wrapped block: (first line, continuation lines). The first line carries
    /// the innermost pending list marker.
    fn prefixes(&self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let mut first = Vec::new();
        let mut rest = Vec::new();
        let last_item = self
            .containers
            .iter()
            .rposition(|c| matches!(c, Container::Item { .. }));
        for (i, c) in self.containers.iter().enumerate() {
            match c {
                Container::Quote => {
                    let bar = Span::styled("▎ ", self.theme.quote);
                    first.push(bar.clone());
                    rest.push(bar);
                }
                Container::List { .. } => {}
                Container::Item { marker, pending } => {
                    let pad = " ".repeat(str_width(marker));
                    if *pending && Some(i) == last_item {
                        first.push(Span::styled(marker.clone(), self.theme.accent));
                    } else {
                        first.push(Span::raw(pad.clone()));
                    }
                    rest.push(Span::raw(pad));
                }
            }
        }
        (first, rest)
    }

    fn consume_marker(&mut self) {
        for c in &mut self.containers {
            if let Container::Item { pending, .. } = c {
                *pending = false;
            }
        }
    }

    fn blank_if_needed(&mut self) {
        if self.need_blank && (self.preceded || !self.out.is_empty()) {
            let (_, rest) = self.prefixes();
            let quotes: Vec<Span<'static>> = rest
                .into_iter()
                .filter(|s| s.content.trim() != "")
                .map(|s| Span::styled(s.content.trim_end().to_string(), s.style))
                .collect();
            self.out.push(Line::from(quotes));
        }
        self.need_blank = false;
    }

    /// Wraps the collected inline text into output lines.
    fn flush_inline(&mut self) {
        if self.inline.is_empty() {
            return;
        }
        let spans = std::mem::take(&mut self.inline);
        let (first, rest) = self.prefixes();
        self.out.extend(wrap_spans(
            &spans,
            self.width,
            &first,
            &rest,
            WrapMode::Words,
        ));
        self.consume_marker();
    }

    fn push_text(&mut self, text: &str, style: Style) {
        if let Some(code) = &mut self.code {
            code.text.push_str(text);
        } else if let Some(t) = &mut self.table {
            t.push(Span::styled(text.to_string(), style));
        } else {
            // Text inside one block may hold newlines (html): each starts a new line, as the
            // line breaks between a paragraph's lines do.
            for (n, part) in text.split('\n').enumerate() {
                if n > 0 {
                    self.line_break();
                }
                if !part.is_empty() {
                    self.inline.push(Span::styled(part.to_string(), style));
                }
            }
        }
    }

    /// A line break inside a block: the model's own line breaks are kept ("Files changed:" and
    /// a path on each line stay three lines), not joined into one paragraph line. Inside a table
    /// or a code block there is none to make.
    fn line_break(&mut self) {
        if self.table.is_some() || self.code.is_some() {
            return;
        }
        self.flush_inline();
        // The link text before the break is drawn: an open link compares what is left of it.
        for (_, start) in &mut self.links {
            *start = 0;
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.push_text(&t, self.style()),
            Event::Code(t) => self.push_text(&t, self.style().patch(self.theme.inline_code)),
            Event::InlineMath(t) | Event::DisplayMath(t) => {
                self.push_text(&t, self.style().patch(self.theme.inline_code))
            }
            Event::Html(t) | Event::InlineHtml(t) => self.push_text(&t, self.theme.dim),
            Event::FootnoteReference(t) => self.push_text(&format!("[^{t}]"), self.theme.dim),
            Event::SoftBreak | Event::HardBreak => self.line_break(),
            Event::Rule => {
                self.flush_inline();
                self.blank_if_needed();
                let (first, _) = self.prefixes();
                let mut spans = fit_prefix(first, self.width);
                let w = self.width - spans_w(&spans);
                spans.push(Span::styled("─".repeat(w), self.theme.dim));
                self.out.push(Line::from(spans));
                self.need_blank = true;
            }
            Event::TaskListMarker(done) => {
                let mark = if done { "[x] " } else { "[ ] " };
                self.push_text(mark, self.theme.accent);
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph | Tag::HtmlBlock => {
                self.flush_inline();
                self.blank_if_needed();
            }
            Tag::Heading { level, .. } => {
                self.flush_inline();
                self.blank_if_needed();
                self.heading = Some(level);
            }
            Tag::BlockQuote(_) => {
                self.flush_inline();
                self.blank_if_needed();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(kind) => {
                self.flush_inline();
                self.blank_if_needed();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some(CodeBlock {
                    lang,
                    text: String::new(),
                });
            }
            Tag::List(start) => {
                self.flush_inline();
                if !self
                    .containers
                    .iter()
                    .any(|c| matches!(c, Container::List { .. }))
                {
                    self.blank_if_needed();
                }
                self.containers.push(Container::List { next: start });
            }
            Tag::Item => {
                self.flush_inline();
                let depth = self
                    .containers
                    .iter()
                    .filter(|c| matches!(c, Container::List { .. }))
                    .count();
                let marker = match self.containers.last_mut() {
                    Some(Container::List { next: Some(n) }) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => match depth {
                        0 | 1 => "• ".to_string(),
                        2 => "◦ ".to_string(),
                        _ => "▪ ".to_string(),
                    },
                };
                self.containers.push(Container::Item {
                    marker,
                    pending: true,
                });
            }
            Tag::Table(aligns) => {
                self.flush_inline();
                self.blank_if_needed();
                self.table = Some(table::TableBuilder::new(aligns));
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.start_row();
                }
            }
            Tag::TableCell => {
                if let Some(t) = &mut self.table {
                    t.start_cell();
                }
            }
            Tag::Emphasis => self
                .styles
                .push(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.styles.push(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self
                .styles
                .push(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Superscript | Tag::Subscript => self.styles.push(Style::new()),
            Tag::Link { dest_url, .. } => {
                self.links.push((dest_url.to_string(), self.inline.len()));
                self.styles.push(self.theme.link);
            }
            Tag::Image { dest_url, .. } => {
                self.push_text("[image: ", self.theme.dim);
                self.links.push((dest_url.to_string(), self.inline.len()));
                self.styles.push(self.theme.link);
            }
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => {
                self.flush_inline();
                self.blank_if_needed();
            }
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock => {
                self.flush_inline();
                self.need_blank = true;
            }
            TagEnd::Heading(_) => {
                self.flush_inline();
                self.heading = None;
                self.need_blank = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                if matches!(self.containers.last(), Some(Container::Quote)) {
                    self.containers.pop();
                }
                self.need_blank = true;
            }
            TagEnd::CodeBlock => {
                if let Some(code) = self.code.take() {
                    self.code_lines(&code);
                }
                self.need_blank = true;
            }
            TagEnd::List(_) => {
                self.flush_inline();
                if matches!(self.containers.last(), Some(Container::List { .. })) {
                    self.containers.pop();
                }
                if !self
                    .containers
                    .iter()
                    .any(|c| matches!(c, Container::List { .. }))
                {
                    self.need_blank = true;
                }
            }
            TagEnd::Item => {
                self.flush_inline();
                if matches!(self.containers.last(), Some(Container::Item { .. })) {
                    self.containers.pop();
                }
            }
            TagEnd::Table => {
                if let Some(t) = self.table.take() {
                    let (first, rest) = self.prefixes();
                    let rest = fit_prefix(rest, self.width);
                    let first = if rest.is_empty() { rest.clone() } else { first };
                    let w = self.width - spans_w(&rest);
                    let header = self.theme.assistant.add_modifier(Modifier::BOLD);
                    for (n, line) in t.render(w, header, self.theme.dim).into_iter().enumerate() {
                        let mut spans = if n == 0 { first.clone() } else { rest.clone() };
                        spans.extend(line.spans);
                        self.out.push(Line::from(spans));
                    }
                    self.consume_marker();
                }
                self.need_blank = true;
            }
            TagEnd::TableHead | TagEnd::TableRow => {
                if let Some(t) = &mut self.table {
                    t.end_row();
                }
            }
            TagEnd::TableCell => {
                if let Some(t) = &mut self.table {
                    t.end_cell();
                }
            }
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => {
                self.styles.pop();
            }
            TagEnd::Link | TagEnd::Image => {
                self.styles.pop();
                if let Some((url, start)) = self.links.pop() {
                    let shown: String = self
                        .inline
                        .get(start..)
                        .unwrap_or_default()
                        .iter()
                        .map(|s| s.content.as_ref())
                        .collect();
                    let image = matches!(tag, TagEnd::Image);
                    if image {
                        self.push_text("]", self.theme.dim);
                    }
                    let bare = url.strip_prefix("mailto:").unwrap_or(&url);
                    if !url.is_empty() && shown.trim() != bare {
                        self.push_text(&format!(" ({url})"), self.theme.dim);
                    }
                }
            }
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_) => {
                self.flush_inline();
                self.need_blank = true;
            }
        }
    }

    /// A fenced code block: highlighted when allowed, hard-wrapped, on the code background.
    fn code_lines(&mut self, code: &CodeBlock) {
        let text = code.text.strip_suffix('\n').unwrap_or(&code.text);
        let highlighted = match (&self.theme.syntax, self.highlight) {
            (Some(name), true) => highlight::highlight(&code.text, &code.lang, name),
            _ => None,
        };
        let (first, rest) = self.prefixes();
        for (n, src_line) in text.split('\n').enumerate() {
            let runs = highlighted.as_ref().and_then(|h| h.get(n));
            let lead = if n == 0 { &first } else { &rest };
            code_line(
                &mut self.out,
                src_line,
                runs,
                lead,
                &rest,
                self.width,
                self.theme,
            );
        }
        self.consume_marker();
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        if let Some(code) = self.code.take() {
            self.code_lines(&code);
        }
        self.flush_inline();
        self.out
    }
}

/// One line of a code block, highlighted (`runs`) or plain, hard-wrapped to `width` after the
/// block's prefixes (`lead` on its first row, `rest` on the others; a code-background space is
/// added to both), padded to the width when the code background has a colour.
pub(crate) fn code_line(
    out: &mut Vec<Line<'static>>,
    src_line: &str,
    runs: Option<&HlLine>,
    lead: &[Span<'static>],
    rest: &[Span<'static>],
    width: usize,
    theme: &Theme,
) {
    let base = theme.code_bg;
    let pad = base.bg.is_some();
    let spans: Vec<Span<'static>> = match runs {
        Some(runs) => runs
            .iter()
            .map(|(st, t)| Span::styled(t.clone(), base.patch(*st)))
            .collect(),
        None => vec![Span::styled(src_line.to_string(), base)],
    };
    let mut lead = lead.to_vec();
    lead.push(Span::styled(" ", base));
    let mut rest = rest.to_vec();
    rest.push(Span::styled(" ", base));
    for mut line in wrap_spans(&spans, width, &lead, &rest, WrapMode::Chars) {
        let w = line.width();
        if pad && w < width {
            line.spans.push(Span::styled(" ".repeat(width - w), base));
        }
        out.push(line);
    }
}

fn spans_w(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| str_width(&s.content)).sum()
}

/// The prefix if it leaves room for at least one column of content, else nothing.
fn fit_prefix(prefix: Vec<Span<'static>>, width: usize) -> Vec<Span<'static>> {
    if spans_w(&prefix) < width {
        prefix
    } else {
        Vec::new()
    }
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
