//! The line-level grammar of a handoff document: which lines start a section, the escape that keeps
//! section text from being mistaken for a heading, and the `# Handoff · …` header line.
//!
//! Everything here is pure and line-local, so the writer and the reader agree by construction: the
//! writer escapes exactly the lines the reader would treat specially, and the reader unescapes exactly
//! those.

use crate::engine::context::{fmt_tokens, fmt_window};

/// The five sections the model writes, in canonical order, then the one the engine writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Section {
    Doing,
    Decided,
    Deadends,
    Next,
    Scene,
    /// Written by the engine from the tool log (`super::touched`).
    Touched,
}

impl Section {
    /// Every section, in the order the document writes them.
    pub(crate) const ALL: [Section; 6] = [
        Section::Doing,
        Section::Decided,
        Section::Deadends,
        Section::Next,
        Section::Scene,
        Section::Touched,
    ];

    /// The stable key (`doing`, `decided`, `deadends`, `next`, `scene`) used in events and `missing()`.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Section::Doing => "doing",
            Section::Decided => "decided",
            Section::Deadends => "deadends",
            Section::Next => "next",
            Section::Scene => "scene",
            Section::Touched => "touched",
        }
    }

    /// The heading the writer uses.
    pub(crate) fn heading(self) -> &'static str {
        match self {
            Section::Doing => "Doing",
            Section::Decided => "Decided",
            Section::Deadends => "Dead ends",
            Section::Next => "Next",
            Section::Scene => "Scene",
            Section::Touched => "Touched",
        }
    }
}

/// Heading names the reader accepts, matched ASCII-case-insensitively. Longer names first so that
/// `next steps` wins over `next`.
const NAMES: &[(&str, Section)] = &[
    ("currently doing", Section::Doing),
    ("doing", Section::Doing),
    ("decisions", Section::Decided),
    ("decided", Section::Decided),
    ("dead ends", Section::Deadends),
    ("dead-ends", Section::Deadends),
    ("dead_ends", Section::Deadends),
    ("deadends", Section::Deadends),
    ("dead end", Section::Deadends),
    ("dead-end", Section::Deadends),
    ("deadend", Section::Deadends),
    ("next steps", Section::Next),
    ("next step", Section::Next),
    ("next", Section::Next),
    ("key files", Section::Scene),
    ("scene", Section::Scene),
    ("files", Section::Scene),
    ("touched", Section::Touched),
];

/// Section text that means "nothing here" (the writer's `(empty)` and what people type instead).
const EMPTY_TOKENS: &[&str] = &["(empty)", "empty", "(none)", "none", "n/a", "(n/a)", "(空)"];

/// The text the writer puts in an empty section.
pub(crate) const EMPTY: &str = "(empty)";

/// True when `text` (already trimmed) is one of the "nothing here" tokens.
pub(crate) fn is_empty_token(text: &str) -> bool {
    EMPTY_TOKENS.iter().any(|t| t.eq_ignore_ascii_case(text))
}

/// If `line` starts a known section, the section and any text written on the heading line itself
/// (`**Next:** run make` → `run make`; empty for a bare heading).
///
/// Accepted forms, any case, optionally numbered (`1.` / `1)`), optionally with a parenthetical after
/// the name: ATX headings `#`..`######` (`## Doing`, `### 2. Dead ends:`, `## **Next**`), a bold line
/// (`**Doing**`, `**Doing:**`, `__Next__: text`), and a plain label alone on its line ending with a
/// colon (`Doing:`). Anything else, including unknown headings, is not a section start.
pub(crate) fn known_heading(line: &str) -> Option<(Section, &str)> {
    let t = line.trim();
    if t.starts_with('#') {
        let hashes = t.bytes().take_while(|&b| b == b'#').count();
        if hashes > 6 {
            return None;
        }
        let rest = &t[hashes..];
        if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
            return None;
        }
        let text = strip_closing_hashes(rest.trim());
        return bold_label(text).or_else(|| match_name(text));
    }
    if let Some(found) = bold_label(t) {
        return Some(found);
    }
    if t.ends_with(':') || t.ends_with('：') {
        return match match_name(t) {
            Some((section, "")) => Some((section, "")),
            _ => None,
        };
    }
    None
}

/// `**Name**`, `**Name:**`, `**Name**: inline`, `__Name__` — the whole label must be a known name.
fn bold_label(t: &str) -> Option<(Section, &str)> {
    let marker = if t.starts_with("**") {
        "**"
    } else if t.starts_with("__") {
        "__"
    } else {
        return None;
    };
    let inner = &t[2..];
    let close = inner.find(marker)?;
    let label = inner[..close].trim();
    let after = inner[close + 2..].trim();
    let (section, label_inline) = match_name(label)?;
    if !label_inline.is_empty() {
        // `**Next: run make**` — the text is inside the bold; nothing may follow it.
        return after.is_empty().then_some((section, label_inline));
    }
    let after = after
        .strip_prefix(':')
        .or_else(|| after.strip_prefix('：'))
        .unwrap_or(after)
        .trim();
    Some((section, after))
}

/// Match a known name at the start of `text` (after an optional `1.` / `1)` number) and return what
/// follows it: empty, or the text after a `:` / ` — ` / ` - ` separator. A parenthetical right after
/// the name is a description and is dropped. `None` when anything else follows.
fn match_name(text: &str) -> Option<(Section, &str)> {
    let t = strip_number(text.trim());
    let (section, rest) = NAMES.iter().find_map(|&(name, section)| {
        let head = t.get(..name.len())?;
        head.eq_ignore_ascii_case(name)
            .then(|| (section, &t[name.len()..]))
    })?;
    if rest.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
        return None; // `nextgen`, `doings`
    }
    let mut r = rest.trim_start();
    if let Some(after_paren) = r.strip_prefix('(') {
        let close = after_paren.find(')')?;
        r = after_paren[close + 1..].trim_start();
    }
    if r.is_empty() {
        return Some((section, ""));
    }
    for sep in [":", "：", "—", "–"] {
        if let Some(inline) = r.strip_prefix(sep) {
            return Some((section, inline.trim()));
        }
    }
    if let Some(inline) = r.strip_prefix("- ") {
        return Some((section, inline.trim()));
    }
    None
}

/// Drop a leading list number: `1. `, `2) `, `3.`.
fn strip_number(t: &str) -> &str {
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 3 {
        return t;
    }
    match t[digits..].strip_prefix(['.', ')']) {
        Some(rest) => rest.trim_start(),
        None => t,
    }
}

/// `Doing ##` → `Doing` (the optional closing sequence of an ATX heading).
fn strip_closing_hashes(text: &str) -> &str {
    let without = text.trim_end_matches('#');
    if without.len() < text.len() && (without.is_empty() || without.ends_with(char::is_whitespace))
    {
        without.trim_end()
    } else {
        text
    }
}

/// True when the writer must escape `line` so the reader keeps it as text: it would start a section,
/// it is an "empty" token, or it already starts with the escape character in front of such a line.
pub(crate) fn needs_escape(line: &str) -> bool {
    known_heading(line).is_some()
        || is_empty_token(line.trim())
        || line.strip_prefix('\\').is_some_and(needs_escape)
}

/// The writer's side: a leading backslash on every line that needs it (Markdown renders `\#` as `#`).
pub(crate) fn escape_text(text: &str) -> String {
    let lines: Vec<String> = text
        .split('\n')
        .map(|l| {
            if needs_escape(l) {
                format!("\\{l}")
            } else {
                l.to_string()
            }
        })
        .collect();
    lines.join("\n")
}

/// The reader's side: remove exactly the backslash the writer added.
pub(crate) fn unescape_line(line: &str) -> &str {
    match line.strip_prefix('\\') {
        Some(rest) if needs_escape(rest) => rest,
        _ => line,
    }
}

/// The document's first line: `# Handoff · step X · generation N · 152.0K/200K · 2026-11-29 13:40`.
/// Line breaks and control characters in `step` or `time` become spaces so the header stays one line.
pub(crate) fn header_line(
    step: &str,
    generation: u32,
    used: u64,
    window: u64,
    time: &str,
) -> String {
    format!(
        "# Handoff · step {} · generation {generation} · {}/{} · {}",
        one_line(step),
        fmt_tokens(used),
        fmt_window(window),
        one_line(time)
    )
}

fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The fields of a header line, or `None` when `line` is not one. The step is everything between
/// `step ` and the last three ` · ` separators, so a step name may itself contain ` · `; the time is
/// everything after the last separator.
pub(crate) fn parse_header(line: &str) -> Option<(String, u32, u64, u64, String)> {
    let t = line.trim();
    let rest = t.strip_prefix('#')?.trim_start_matches('#').trim_start();
    let rest = strip_prefix_ci(rest, "handoff")?.trim_start();
    let rest = rest.strip_prefix('·')?.trim_start();
    let rest = strip_prefix_ci(rest, "step")?;
    let rest = rest.strip_prefix(' ').unwrap_or(rest);
    let (rest, time) = rest.rsplit_once(" · ")?;
    let (rest, ratio) = rest.rsplit_once(" · ")?;
    let (step, generation) = match rest.rsplit_once(" · ") {
        Some(split) => split,
        // An empty step: `step · generation 1` after trimming.
        None => ("", rest.trim_start().strip_prefix('·')?),
    };
    let generation = strip_prefix_ci(generation.trim(), "generation")?
        .trim()
        .parse()
        .ok()?;
    let (used, window) = ratio.trim().split_once('/')?;
    Some((
        step.to_string(),
        generation,
        parse_count(used.trim())?,
        parse_count(window.trim())?,
        time.trim().to_string(),
    ))
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// The inverse of `fmt_tokens` / `fmt_window`: `152.0K` → 152,000, `1.2M` → 1,200,000, `200K`,
/// `950`. Exact decimal arithmetic, no floats.
pub(crate) fn parse_count(s: &str) -> Option<u64> {
    let (num, mult) = match s.char_indices().last()? {
        (i, 'K' | 'k') => (&s[..i], 1_000u128),
        (i, 'M' | 'm') => (&s[..i], 1_000_000u128),
        _ => (s, 1u128),
    };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) || frac.len() > 6 {
        return None;
    }
    let int: u128 = int.parse().ok()?;
    let mut value = int.checked_mul(mult)?;
    if !frac.is_empty() {
        let scale = 10u128.pow(frac.len() as u32);
        let frac: u128 = frac.parse().ok()?;
        value = value.checked_add(frac.checked_mul(mult)? / scale)?;
    }
    u64::try_from(value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heading_forms() {
        let table: &[(&str, Option<(Section, &str)>)] = &[
            ("## Doing", Some((Section::Doing, ""))),
            ("# doing", Some((Section::Doing, ""))),
            ("###### NEXT", Some((Section::Next, ""))),
            ("####### Next", None),
            ("##Next", None),
            ("## 1. Doing", Some((Section::Doing, ""))),
            ("## 3) Dead-ends", Some((Section::Deadends, ""))),
            ("## Deadends ##", Some((Section::Deadends, ""))),
            ("## Dead end", Some((Section::Deadends, ""))),
            ("## Next steps", Some((Section::Next, ""))),
            ("## Next step: run make", Some((Section::Next, "run make"))),
            (
                "## Doing (what is being done right now)",
                Some((Section::Doing, "")),
            ),
            (
                "## Doing — adding a shim",
                Some((Section::Doing, "adding a shim")),
            ),
            ("## Scene - Makefile", Some((Section::Scene, "Makefile"))),
            ("## Files", Some((Section::Scene, ""))),
            ("## Touched", Some((Section::Touched, ""))),
            ("Files this generation:", None),
            ("## **Decided**", Some((Section::Decided, ""))),
            ("**Doing**", Some((Section::Doing, ""))),
            ("**Doing:**", Some((Section::Doing, ""))),
            ("**Next**: run make", Some((Section::Next, "run make"))),
            ("__Scene__", Some((Section::Scene, ""))),
            ("Doing:", Some((Section::Doing, ""))),
            ("  2. dead ends:  ", Some((Section::Deadends, ""))),
            ("Doing: something", None),
            ("Doing", None),
            ("## Nextgen parser", None),
            ("## Next to the door", None),
            ("## Notes", None),
            ("**Bold** prose", None),
            ("# Handoff · step x · generation 1 · 1.0K/2K · t", None),
            ("\\## Doing", None),
            ("", None),
        ];
        for (line, want) in table {
            assert_eq!(known_heading(line), *want, "line {line:?}");
        }
    }

    #[test]
    fn escape_is_reversible_and_minimal() {
        for line in [
            "## Doing",
            "(empty)",
            "None",
            "\\## Doing",
            "\\\\(empty)",
            "Next:",
            "**Scene**",
        ] {
            assert!(needs_escape(line), "{line:?}");
            let escaped = escape_text(line);
            assert_eq!(escaped, format!("\\{line}"));
            assert_eq!(unescape_line(&escaped), line);
        }
        for line in [
            "plain text",
            "\\n is a newline",
            "## Notes",
            "- Next: later",
        ] {
            assert!(!needs_escape(line), "{line:?}");
            assert_eq!(escape_text(line), line);
            assert_eq!(unescape_line(line), line);
        }
    }

    #[test]
    fn header_round_trip() {
        let line = header_line("fix-macos-build", 2, 152_000, 200_000, "2026-11-29 13:40");
        assert_eq!(
            line,
            "# Handoff · step fix-macos-build · generation 2 · 152.0K/200K · 2026-11-29 13:40"
        );
        assert_eq!(
            parse_header(&line),
            Some((
                "fix-macos-build".into(),
                2,
                152_000,
                200_000,
                "2026-11-29 13:40".into()
            ))
        );
        let odd = header_line("a · b", 0, 950, 8_200, "noon");
        assert_eq!(
            parse_header(&odd),
            Some(("a · b".into(), 0, 950, 8_200, "noon".into()))
        );
        let empty_step = header_line("", 1, 1_000_000, 1_000_000, "t");
        assert_eq!(
            parse_header(&empty_step),
            Some((String::new(), 1, 1_000_000, 1_000_000, "t".into()))
        );
        assert_eq!(parse_header("# Handoff notes"), None);
        assert_eq!(parse_header("## Doing"), None);
        assert_eq!(
            parse_header("# Handoff · step x · generation two · 1K/2K · t"),
            None
        );
    }

    #[test]
    fn counts() {
        assert_eq!(parse_count("152.0K"), Some(152_000));
        assert_eq!(parse_count("152.3K"), Some(152_300));
        assert_eq!(parse_count("1.2M"), Some(1_200_000));
        assert_eq!(parse_count("200K"), Some(200_000));
        assert_eq!(parse_count("950"), Some(950));
        assert_eq!(parse_count("K"), None);
        assert_eq!(parse_count("1.2.3K"), None);
        assert_eq!(parse_count("-5"), None);
        assert_eq!(parse_count("99999999999999999999M"), None);
    }
}
