//! The YAML frontmatter of a Markdown file (custom commands, `SKILL.md`): the block between a
//! first line `---` and the next line `---`, read as the small part of YAML these files use, so no
//! YAML library is needed.
//!
//! Read: `key: value` lines at the left margin, with plain, `'single'` and `"double"` quoted
//! values (a plain value may continue on more indented lines), `|` and `>` block scalars (with
//! `-`/`+` chomping), `[a, b]` flow lists, `- item` block lists, and one level of nested
//! `key: value` lines (`metadata:`). Numbers and booleans stay text. `#` comments and blank lines
//! are skipped. A file without a first line `---` has no frontmatter; anything else this reader
//! does not understand is a [`FrontmatterError`] naming the line, never a guess.

use std::collections::BTreeMap;

/// One value of the frontmatter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Text(String),
    List(Vec<String>),
    Map(BTreeMap<String, String>),
}

/// A file's frontmatter: its keys in order of name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Frontmatter {
    values: BTreeMap<String, Value>,
}

impl Frontmatter {
    /// The value of `key`, whatever its shape.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.values.get(key)
    }

    /// The text of `key`; `None` when it is missing, empty or not text.
    pub fn text(&self, key: &str) -> Option<&str> {
        match self.values.get(key) {
            Some(Value::Text(t)) if !t.trim().is_empty() => Some(t.trim()),
            _ => None,
        }
    }

    /// Whether the file had no frontmatter keys at all.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// What is wrong with a frontmatter; lines are counted from 1, the opening `---` being line 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontmatterError {
    #[error("the frontmatter opened by `---` on line 1 is never closed by a `---` line")]
    Unclosed,
    #[error("frontmatter line {line}: expected `key: value`")]
    NotKeyValue { line: usize },
    #[error("frontmatter line {line}: `{key}` is given twice")]
    Duplicate { line: usize, key: String },
    #[error("frontmatter line {line}: the quoted value is never closed")]
    UnclosedQuote { line: usize },
    #[error("frontmatter line {line}: the list `[…]` is never closed")]
    UnclosedList { line: usize },
    #[error("frontmatter line {line}: unexpected indentation")]
    Indented { line: usize },
}

/// Split `text` into its frontmatter and the body after it. Text that does not start with a
/// `---` line is all body.
pub(crate) fn split(text: &str) -> Result<(Frontmatter, &str), FrontmatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(first_end) = text.find('\n') else {
        return Ok((Frontmatter::default(), text));
    };
    if text.get(..first_end).map(str::trim_end) != Some("---") {
        return Ok((Frontmatter::default(), text));
    }
    let rest = text.get(first_end + 1..).unwrap_or("");
    let mut offset = 0;
    let mut lines = Vec::new();
    for raw in rest.split_inclusive('\n') {
        let line = raw.trim_end_matches(['\n', '\r']);
        if line.trim_end() == "---" {
            let body = rest.get(offset + raw.len()..).unwrap_or("");
            return Ok((parse_lines(&lines)?, body));
        }
        lines.push(line);
        offset += raw.len();
    }
    Err(FrontmatterError::Unclosed)
}

/// A line of the block: its number in the file, indentation and text without it.
struct Line<'a> {
    number: usize,
    indent: usize,
    text: &'a str,
}

fn parse_lines(raw: &[&str]) -> Result<Frontmatter, FrontmatterError> {
    let lines: Vec<Line<'_>> = raw
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let text = l.trim_start();
            Line {
                number: i + 2,
                indent: l.len() - text.len(),
                text: text.trim_end(),
            }
        })
        .collect();
    let mut values = BTreeMap::new();
    let mut i = 0;
    while let Some(line) = lines.get(i) {
        i += 1;
        if line.text.is_empty() || line.text.starts_with('#') {
            continue;
        }
        if line.indent > 0 {
            return Err(FrontmatterError::Indented { line: line.number });
        }
        let (key, rest) = key_value(line)?;
        // The lines that belong to this key: more indented ones (and blank lines among them).
        let start = i;
        while lines
            .get(i)
            .is_some_and(|l| l.text.is_empty() || l.indent > 0)
        {
            i += 1;
        }
        let nested = lines.get(start..i).unwrap_or_default();
        let value = value_of(line.number, rest, nested)?;
        if values.insert(key.to_string(), value).is_some() {
            return Err(FrontmatterError::Duplicate {
                line: line.number,
                key: key.to_string(),
            });
        }
    }
    Ok(Frontmatter { values })
}

/// `key: rest` of a line.
fn key_value<'a>(line: &Line<'a>) -> Result<(&'a str, &'a str), FrontmatterError> {
    let bad = FrontmatterError::NotKeyValue { line: line.number };
    let colon = line.text.find(':').ok_or(bad.clone())?;
    let key = line.text.get(..colon).unwrap_or("").trim();
    let rest = line.text.get(colon + 1..).unwrap_or("");
    let key_ok = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !key_ok || !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return Err(bad);
    }
    Ok((key, rest.trim()))
}

fn value_of(number: usize, rest: &str, nested: &[Line<'_>]) -> Result<Value, FrontmatterError> {
    let content: Vec<&Line<'_>> = nested.iter().filter(|l| !l.text.is_empty()).collect();
    if let Some(style) = rest.strip_prefix(['|', '>']) {
        let folded = rest.starts_with('>');
        return Ok(Value::Text(block_scalar(folded, style.trim(), nested)));
    }
    if rest.starts_with('[') {
        let joined = std::iter::once(rest)
            .chain(content.iter().map(|l| l.text))
            .collect::<Vec<_>>()
            .join(" ");
        return flow_list(number, &joined).map(Value::List);
    }
    if !rest.is_empty() && !rest.starts_with('#') {
        let text = std::iter::once(rest)
            .chain(content.iter().map(|l| l.text))
            .collect::<Vec<_>>()
            .join(" ");
        return scalar(number, &text).map(Value::Text);
    }
    match content.first() {
        None => Ok(Value::Text(String::new())),
        Some(first) if first.text.starts_with("- ") || first.text == "-" => content
            .iter()
            .map(|l| match l.text.strip_prefix('-') {
                Some(item) => scalar(l.number, item.trim()),
                None => Err(FrontmatterError::NotKeyValue { line: l.number }),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Value::List),
        Some(_) => {
            let mut map = BTreeMap::new();
            for l in &content {
                if l.text.starts_with('#') {
                    continue;
                }
                let (k, v) = key_value(l)?;
                if map.insert(k.to_string(), scalar(l.number, v)?).is_some() {
                    return Err(FrontmatterError::Duplicate {
                        line: l.number,
                        key: k.to_string(),
                    });
                }
            }
            Ok(Value::Map(map))
        }
    }
}

/// A `|` (literal) or `>` (folded) block; `style` holds the chomping indicator.
fn block_scalar(folded: bool, style: &str, nested: &[Line<'_>]) -> String {
    let indent = nested
        .iter()
        .filter(|l| !l.text.is_empty())
        .map(|l| l.indent)
        .min()
        .unwrap_or(0);
    let mut body = String::new();
    let mut blanks = 0usize;
    let mut previous_indented = false;
    let mut first = true;
    for l in nested {
        if l.text.is_empty() {
            blanks += 1;
            continue;
        }
        let extra = l.indent.saturating_sub(indent);
        if !first {
            let joins = folded && blanks == 0 && extra == 0 && !previous_indented;
            if joins {
                body.push(' ');
            } else if folded && extra == 0 && !previous_indented {
                // Folded: n blank lines between two lines are n line breaks.
                body.push_str(&"\n".repeat(blanks));
            } else {
                body.push_str(&"\n".repeat(blanks + 1));
            }
        }
        body.push_str(&" ".repeat(extra));
        body.push_str(l.text);
        blanks = 0;
        previous_indented = extra > 0;
        first = false;
    }
    if style.contains('-') || body.is_empty() {
        body
    } else if style.contains('+') {
        format!("{body}\n{}", "\n".repeat(blanks))
    } else {
        format!("{body}\n")
    }
}

/// A plain or quoted scalar, comments after a plain one removed.
fn scalar(number: usize, text: &str) -> Result<String, FrontmatterError> {
    let text = text.trim();
    let unclosed = FrontmatterError::UnclosedQuote { line: number };
    if let Some(inner) = text.strip_prefix('\'') {
        let end = closing_single(inner).ok_or(unclosed)?;
        return Ok(inner.get(..end).unwrap_or("").replace("''", "'"));
    }
    if let Some(inner) = text.strip_prefix('"') {
        return double_quoted(inner).ok_or(unclosed);
    }
    let plain = match text.find(" #") {
        Some(at) => text.get(..at).unwrap_or(text),
        None => text,
    };
    Ok(plain.trim_end().to_string())
}

/// Where the closing `'` is (a doubled `''` is a quote inside).
fn closing_single(inner: &str) -> Option<usize> {
    let mut chars = inner.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\'' {
            if chars.peek().is_some_and(|&(_, n)| n == '\'') {
                chars.next();
                continue;
            }
            return Some(i);
        }
    }
    None
}

/// The text of a `"…"` value (after its opening quote), escapes read; `None` when unclosed.
fn double_quoted(inner: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'u' => {
                    let hex: String = chars.by_ref().take(4).collect();
                    out.push(
                        u32::from_str_radix(&hex, 16)
                            .ok()
                            .and_then(char::from_u32)
                            .unwrap_or('\u{fffd}'),
                    );
                }
                other => out.push(other),
            },
            other => out.push(other),
        }
    }
    None
}

/// `[a, "b c", 'd']`.
fn flow_list(number: usize, text: &str) -> Result<Vec<String>, FrontmatterError> {
    let unclosed = FrontmatterError::UnclosedList { line: number };
    let inner = text
        .trim()
        .strip_prefix('[')
        .and_then(|t| t.trim_end().strip_suffix(']'))
        .ok_or(unclosed)?;
    let mut items = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for c in inner.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                current.push(c);
            }
            (Some(_), c) => current.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                current.push(c);
            }
            (None, ',') => {
                items.push(scalar(number, &current)?);
                current.clear();
            }
            (None, c) => current.push(c),
        }
    }
    if quote.is_some() {
        return Err(FrontmatterError::UnclosedQuote { line: number });
    }
    if !current.trim().is_empty() {
        items.push(scalar(number, &current)?);
    }
    Ok(items.into_iter().filter(|s| !s.is_empty()).collect())
}

/// A list of names written as a YAML list or as one text separated by commas or spaces (outside
/// parentheses, so `Bash(git add:*)` stays one item): the shapes `allowed-tools` takes.
pub fn names(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::List(items)) => items.clone(),
        Some(Value::Text(text)) => {
            let mut out = Vec::new();
            let mut current = String::new();
            let mut depth = 0usize;
            for c in text.chars() {
                match c {
                    '(' => depth += 1,
                    ')' => depth = depth.saturating_sub(1),
                    _ => {}
                }
                if depth == 0 && (c == ',' || c.is_whitespace()) {
                    if !current.is_empty() {
                        out.push(std::mem::take(&mut current));
                    }
                } else {
                    current.push(c);
                }
            }
            if !current.is_empty() {
                out.push(current);
            }
            out
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
#[path = "frontmatter_tests.rs"]
mod tests;
