//! Syntax highlighting of fenced code with syntect: the syntax and theme sets load once (`OnceLock`),
//! results are memoised by content (a streaming message re-renders finished blocks for free), and
//! input over the size limits is left plain.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

use ratatui::style::{Color, Modifier, Style};
use syntect::highlighting::{FontStyle, HighlightIterator, HighlightState, Highlighter, ThemeSet};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

/// Code blocks larger than this (bytes) are not highlighted.
pub(crate) const MAX_CODE_BYTES: usize = 20 * 1024;
/// Markdown documents larger than this (bytes) get no highlighting at all.
pub(crate) const MAX_DOC_BYTES: usize = 200 * 1024;
/// Memoised results kept before the cache is emptied.
const CACHE_ENTRIES: usize = 128;

/// One highlighted line: `(style, text)` runs without the newline.
pub(crate) type HlLine = Vec<(Style, String)>;

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

fn themes() -> &'static ThemeSet {
    static SET: OnceLock<ThemeSet> = OnceLock::new();
    SET.get_or_init(ThemeSet::load_defaults)
}

fn cache() -> &'static Mutex<HashMap<u64, Arc<Vec<HlLine>>>> {
    static CACHE: OnceLock<Mutex<HashMap<u64, Arc<Vec<HlLine>>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Drops the memoised results (benchmarks measuring cold renders; memory pressure).
pub fn clear_cache() {
    if let Ok(mut c) = cache().lock() {
        c.clear();
    }
}

/// The names of the syntect themes a theme file's `syntax` key may name.
pub(crate) fn theme_names() -> Vec<String> {
    themes().themes.keys().cloned().collect()
}

/// The syntax for a fence's info string (`rust`, `py`, `sh`, `rust,ignore`, ...), if known.
fn find_syntax(lang: &str) -> Option<&'static SyntaxReference> {
    let token = lang
        .split(|c: char| c == ',' || c == '{' || c.is_whitespace())
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let token = match token.as_str() {
        "" => return None,
        "shell" | "console" | "shellscript" | "zsh" | "sh" => "bash",
        "py3" | "python3" => "python",
        "c++" => "cpp",
        "golang" => "go",
        "jsonc" => "json",
        "yml" => "yaml",
        "patch" => "diff",
        other => other,
    };
    let set = syntaxes();
    set.find_syntax_by_token(token)
        .or_else(|| set.find_syntax_by_extension(token))
}

/// True if `lang` and the syntect theme `theme` are both known (code in `lang` can highlight).
pub(crate) fn supports(lang: &str, theme: &str) -> bool {
    find_syntax(lang).is_some() && themes().themes.contains_key(theme)
}

/// Highlights `code` written in `lang` with the syntect theme `theme`: one entry per line of
/// `code`, each line highlighted with its `\n` (the newline syntaxes need it). `None` when the
/// language or theme is unknown, the code (less its final newline) is over [`MAX_CODE_BYTES`],
/// or syntect fails: render it plain then.
pub(crate) fn highlight(code: &str, lang: &str, theme: &str) -> Option<Arc<Vec<HlLine>>> {
    if code.strip_suffix('\n').unwrap_or(code).len() > MAX_CODE_BYTES {
        return None;
    }
    let syntax = find_syntax(lang)?;
    let key = {
        let mut h = DefaultHasher::new();
        (code, syntax.name.as_str(), theme).hash(&mut h);
        h.finish()
    };
    if let Some(hit) = cache().lock().ok().and_then(|c| c.get(&key).cloned()) {
        return Some(hit);
    }
    let mut hl = LineHighlighter::for_syntax(syntax, theme)?;
    let mut out = Vec::new();
    for line in LinesWithEndings::from(code) {
        out.push(hl.line(line)?);
    }
    let out = Arc::new(out);
    if let Ok(mut c) = cache().lock() {
        if c.len() >= CACHE_ENTRIES {
            c.clear();
        }
        c.insert(key, Arc::clone(&out));
    }
    Some(out)
}

/// A code block highlighted a line at a time, keeping syntect's state between lines: a fence
/// that is still streaming highlights only its new lines. Cloning it forks the state (the live
/// last line is highlighted on a copy).
#[derive(Clone)]
pub(crate) struct LineHighlighter {
    highlighter: Arc<Highlighter<'static>>,
    parse: ParseState,
    state: HighlightState,
}

impl LineHighlighter {
    /// A highlighter for `lang` in the syntect theme `theme`; `None` when either is unknown.
    pub(crate) fn new(lang: &str, theme: &str) -> Option<Self> {
        LineHighlighter::for_syntax(find_syntax(lang)?, theme)
    }

    fn for_syntax(syntax: &SyntaxReference, theme: &str) -> Option<Self> {
        let highlighter = Highlighter::new(themes().themes.get(theme)?);
        let state = HighlightState::new(&highlighter, ScopeStack::new());
        Some(LineHighlighter {
            highlighter: Arc::new(highlighter),
            parse: ParseState::new(syntax),
            state,
        })
    }

    /// Highlights the next line (with its `\n`, unless it is the unfinished last one); `None`
    /// if syntect fails.
    pub(crate) fn line(&mut self, line: &str) -> Option<HlLine> {
        let ops = self.parse.parse_line(line, syntaxes()).ok()?;
        let runs = HighlightIterator::new(&mut self.state, &ops, line, &self.highlighter)
            .filter_map(|(style, text)| {
                let text = text.trim_end_matches(['\n', '\r']);
                (!text.is_empty()).then(|| (to_style(style), text.to_string()))
            })
            .collect();
        Some(runs)
    }
}

fn to_style(s: syntect::highlighting::Style) -> Style {
    let mut style = Style::new().fg(Color::Rgb(s.foreground.r, s.foreground.g, s.foreground.b));
    if s.font_style.contains(FontStyle::BOLD) {
        style = style.add_modifier(Modifier::BOLD);
    }
    if s.font_style.contains(FontStyle::ITALIC) {
        style = style.add_modifier(Modifier::ITALIC);
    }
    if s.font_style.contains(FontStyle::UNDERLINE) {
        style = style.add_modifier(Modifier::UNDERLINED);
    }
    style
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_is_coloured_and_text_is_kept() {
        let code = "fn main() {\n    let x = 1;\n}\n";
        let lines = highlight(code, "rust", "base16-ocean.dark").unwrap();
        assert_eq!(lines.len(), 3);
        let joined: Vec<String> = lines
            .iter()
            .map(|l| l.iter().map(|(_, t)| t.as_str()).collect())
            .collect();
        assert_eq!(joined, ["fn main() {", "    let x = 1;", "}"]);
        let colours: std::collections::HashSet<_> =
            lines.iter().flatten().filter_map(|(s, _)| s.fg).collect();
        assert!(
            colours.len() >= 2,
            "keywords and identifiers differ: {colours:?}"
        );
        // Memoised: the same Arc comes back.
        let again = highlight(code, "rust", "base16-ocean.dark").unwrap();
        assert!(Arc::ptr_eq(&lines, &again));
    }

    #[test]
    fn aliases_and_unknowns() {
        assert!(highlight("echo hi", "sh", "base16-ocean.dark").is_some());
        assert!(highlight("x = 1", "py3", "InspiredGitHub").is_some());
        assert!(highlight("let a", "rust,ignore", "InspiredGitHub").is_some());
        assert!(highlight("x", "", "base16-ocean.dark").is_none());
        assert!(highlight("x", "no-such-lang", "base16-ocean.dark").is_none());
        assert!(highlight("x", "rust", "no-such-theme").is_none());
        assert!(theme_names().iter().any(|n| n == "base16-ocean.dark"));
    }

    #[test]
    fn big_code_is_plain() {
        let code = "let x = 1;\n".repeat(MAX_CODE_BYTES / 10);
        assert!(code.len() > MAX_CODE_BYTES);
        assert!(highlight(&code, "rust", "base16-ocean.dark").is_none());
    }
}
