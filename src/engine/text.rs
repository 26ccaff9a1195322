//! Small text helpers shared across the engine (a leaf: it imports nothing of the engine):
//! truncation by characters, one-line summaries, binary sniffing, line numbering, sizes, terminal
//! escape cleaning, edit distance and the words errors use for a JSON value's kind.

/// How many leading bytes are checked for a NUL byte to call a file binary.
pub(crate) const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// Whether these leading bytes of a file look binary (a NUL byte).
pub(crate) fn looks_binary(head: &[u8]) -> bool {
    head.iter().take(BINARY_SNIFF_BYTES).any(|&b| b == 0)
}

/// The first `n` characters of `s` (never splitting a character) and whether anything was cut.
pub(crate) fn head_chars(s: &str, n: usize) -> (String, bool) {
    match s.char_indices().nth(n) {
        Some((byte, _)) => (s[..byte].to_string(), true),
        None => (s.to_string(), false),
    }
}

/// At most `max` characters of `s`, with `…` when something was cut.
pub(crate) fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some((idx, _)) => format!("{}…", &s[..idx]),
    }
}

/// `s` on one line (control characters become spaces), at most `max` characters.
pub(crate) fn one_line(s: &str, max: usize) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    truncate_chars(flat.trim(), max)
}

/// One numbered line, `cat -n` style: the number right-aligned in six columns, a tab, the text.
pub(crate) fn numbered(n: usize, line: &str) -> String {
    format!("{n:>6}\t{line}\n")
}

/// A size for people: `512 B`, `1.5 KiB`, `3.2 MiB`.
pub(crate) fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut units = UNITS.iter().peekable();
    let mut unit = "KiB";
    while let Some(u) = units.next() {
        unit = u;
        if value < 1024.0 || units.peek().is_none() {
            break;
        }
        value /= 1024.0;
    }
    format!("{value:.1} {unit}")
}

/// Removes terminal escape sequences (colours, cursor moves, titles) and resolves carriage returns
/// the way a terminal shows them (a progress bar keeps only its last state).
pub(crate) fn clean_terminal_output(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        skip_escape(&mut chars);
    }
    if !out.contains('\r') {
        return out;
    }
    let mut resolved = String::with_capacity(out.len());
    for (i, line) in out.split('\n').enumerate() {
        if i > 0 {
            resolved.push('\n');
        }
        let line = line.trim_end_matches('\r');
        resolved.push_str(line.rsplit('\r').next().unwrap_or(line));
    }
    resolved
}

/// Consumes the rest of a terminal escape sequence whose ESC was just read: a CSI (`ESC [`
/// parameters, then one final byte in `@..=~`), an OSC (`ESC ]` up to BEL or `ESC \`), or a
/// two-character escape (`ESC c`, `ESC =`, ...). Shared with the TUI's text sanitising.
pub(crate) fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.peek() {
        Some('[') => {
            chars.next();
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
        Some(']') => {
            chars.next();
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' {
                    chars.next_if_eq(&'\\');
                    break;
                }
            }
        }
        Some(_) => {
            chars.next();
        }
        None => {}
    }
}

/// Similarity of two strings in `0.0..=1.0` (Sørensen–Dice over character bigrams).
pub(crate) fn similarity(a: &str, b: &str) -> f64 {
    fn bigrams(s: &str) -> Vec<(char, char)> {
        let chars: Vec<char> = s.chars().collect();
        let mut v: Vec<(char, char)> = chars
            .iter()
            .copied()
            .zip(chars.iter().copied().skip(1))
            .collect();
        v.sort_unstable();
        v
    }
    if a == b {
        return 1.0;
    }
    let (x, y) = (bigrams(a), bigrams(b));
    if x.is_empty() || y.is_empty() {
        return 0.0;
    }
    let (mut xs, mut ys, mut common) = (x.iter().peekable(), y.iter().peekable(), 0usize);
    while let (Some(p), Some(q)) = (xs.peek(), ys.peek()) {
        match p.cmp(q) {
            std::cmp::Ordering::Equal => {
                common += 1;
                xs.next();
                ys.next();
            }
            std::cmp::Ordering::Less => {
                xs.next();
            }
            std::cmp::Ordering::Greater => {
                ys.next();
            }
        }
    }
    2.0 * common as f64 / (x.len() + y.len()) as f64
}

/// Levenshtein distance of two short strings (for "did you mean" suggestions).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = Vec::with_capacity(b.len() + 1);
        cur.push(i + 1);
        let mut left = i + 1;
        for (cb, pair) in b.iter().zip(prev.windows(2)) {
            let (diag, up) = match pair {
                [d, u] => (*d, *u),
                _ => (0, 0),
            };
            let cost = usize::from(ca != *cb);
            left = (diag + cost).min(up + 1).min(left + 1);
            cur.push(left);
        }
        prev = cur;
    }
    prev.last().copied().unwrap_or(0)
}

/// A JSON value's kind, as errors name it, with `object` the words for an object (`a table` in a
/// config, `an object` in a tool call or a settings file).
pub(crate) fn value_kind(v: &serde_json::Value, object: &'static str) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => object,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_chars_is_char_safe() {
        assert_eq!(head_chars("añb", 2), ("añ".to_string(), true));
        assert_eq!(head_chars("ab", 2), ("ab".to_string(), false));
        assert_eq!(head_chars("", 5), (String::new(), false));
    }

    #[test]
    fn truncation_and_one_line() {
        assert_eq!(truncate_chars("héllo", 3), "hél…");
        assert_eq!(truncate_chars("abc", 3), "abc");
        assert_eq!(one_line("  a\nb\tc ", 10), "a b c");
    }

    #[test]
    fn sizes() {
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(5 * 1024 * 1024), "5.0 MiB");
        assert_eq!(human_size(1024 * 1024 * 1024), "1.0 GiB");
        assert!(human_size(u64::MAX).ends_with(" TiB"));
    }

    #[test]
    fn terminal_output_is_cleaned() {
        assert_eq!(
            clean_terminal_output("\u{1b}[1;31merror\u{1b}[0m: x"),
            "error: x"
        );
        assert_eq!(
            clean_terminal_output("\u{1b}]0;title\u{7}ok\r\n10%\r50%\r100%\ndone"),
            "ok\n100%\ndone"
        );
    }

    #[test]
    fn an_escape_is_skipped_to_its_end_and_no_further() {
        let rest = |s: &str| {
            let mut chars = s.chars().peekable();
            skip_escape(&mut chars);
            chars.collect::<String>()
        };
        assert_eq!(rest("[1;31mred"), "red");
        assert_eq!(rest("]0;title\u{7}after"), "after");
        assert_eq!(rest("]8;;url\u{1b}\\after"), "after");
        assert_eq!(rest("]8;;url\u{1b}after"), "after");
        assert_eq!(rest("cafter"), "after");
        assert_eq!(rest("[12"), "");
        assert_eq!(rest(""), "");
    }

    #[test]
    fn similarity_and_distance() {
        assert_eq!(similarity("abc", "abc"), 1.0);
        assert!(similarity("let x = 1;", "let x = 2;") > 0.7);
        assert!(similarity("let x = 1;", "fn main() {}") < 0.3);
        assert_eq!(edit_distance("main.rs", "mian.rs"), 2);
        assert_eq!(edit_distance("", "ab"), 2);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("ab", ""), 2);
    }

    #[test]
    fn binary_sniff() {
        assert!(looks_binary(b"ab\0c"));
        assert!(!looks_binary("ünïcode".as_bytes()));
    }
}
