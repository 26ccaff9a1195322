//! A custom command's body for one call: `$ARGUMENTS` is what the user typed after the command's
//! name, `$1`…`$9` its words, split as a shell splits them (quotes group words and are removed, a
//! backslash escapes the next character; an unclosed quote falls back to splitting on whitespace).
//! Missing words are empty. Where the body names no argument, the arguments are appended as
//! `ARGUMENTS: …`, so nothing the user typed is lost. Unlike Claude Code (which drops shell
//! operators, globs and `#…` from the words), every word stays: `/fix #123` gives `$1` = `#123`.
//!
//! After that, each `` !`command` `` (at the start of a line or after whitespace) is a command to
//! run. They are not run here: the caller runs them (as bash tool calls, under approval and the
//! sandbox) and puts their outputs in with [`Expansion::fill`]. `@path` mentions stay in the
//! text for the engine's mention code.

use std::ops::Range;

/// The words of `args`, split as a shell splits them.
pub fn split_arguments(args: &str) -> Vec<String> {
    shell_words(args).unwrap_or_else(|| args.split_whitespace().map(str::to_string).collect())
}

/// `None` when a quote is never closed.
fn shell_words(args: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = args.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            c @ ('"' | '\\' | '$' | '`') => word.push(c),
                            c => {
                                word.push('\\');
                                word.push(c);
                            }
                        },
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(next) = chars.next() {
                    word.push(next);
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// `body` with `$ARGUMENTS` and `$1`…`$9` replaced from `args`; the arguments appended when the
/// body names none of them (and there are some).
pub fn substitute_arguments(body: &str, args: &str) -> String {
    let args = args.trim();
    let words = split_arguments(args);
    let mut out = String::with_capacity(body.len() + args.len());
    let mut named = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(rest.get(..at).unwrap_or(""));
        let after = rest.get(at + 1..).unwrap_or("");
        if let Some(tail) = after.strip_prefix("ARGUMENTS")
            && !tail.starts_with(is_word_char)
        {
            out.push_str(args);
            named = true;
            rest = tail;
            continue;
        }
        let mut digits = after.chars();
        if let Some(n) = digits
            .next()
            .and_then(|d| d.to_digit(10))
            .filter(|n| *n >= 1)
            && !digits.as_str().starts_with(is_word_char)
        {
            let index = usize::try_from(n - 1).unwrap_or(usize::MAX);
            out.push_str(words.get(index).map_or("", String::as_str));
            named = true;
            rest = digits.as_str();
            continue;
        }
        out.push('$');
        rest = after;
    }
    out.push_str(rest);
    if !named && !args.is_empty() {
        out.push_str("\n\nARGUMENTS: ");
        out.push_str(args);
    }
    out
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// A command's text for one call, with the `` !`command` `` places still to fill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expansion {
    text: String,
    calls: Vec<ShellCall>,
}

/// One `` !`command` `` of an expanded body.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ShellCall {
    command: String,
    /// Where `` !`…` `` is in the text.
    span: Range<usize>,
}

/// [`Expansion::fill`] was given another number of outputs than there are commands.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{expected} command outputs were expected, {got} were given")]
pub struct FillError {
    pub expected: usize,
    pub got: usize,
}

impl Expansion {
    /// Expand `body` for `args`.
    pub fn new(body: &str, args: &str) -> Expansion {
        let text = substitute_arguments(body, args);
        let calls = shell_calls(&text);
        Expansion { text, calls }
    }

    /// The text as expanded, `` !`command` `` places as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The commands to run, in order.
    pub fn commands(&self) -> Vec<&str> {
        self.calls.iter().map(|c| c.command.as_str()).collect()
    }

    /// The text with each `` !`command` `` replaced by its output (one per [`Self::commands`], in
    /// order; a trailing newline is dropped).
    pub fn fill(self, outputs: &[String]) -> Result<String, FillError> {
        if outputs.len() != self.calls.len() {
            return Err(FillError {
                expected: self.calls.len(),
                got: outputs.len(),
            });
        }
        let mut out = String::with_capacity(self.text.len());
        let mut from = 0;
        for (call, output) in self.calls.iter().zip(outputs) {
            out.push_str(self.text.get(from..call.span.start).unwrap_or(""));
            out.push_str(output.trim_end_matches(['\n', '\r']));
            from = call.span.end;
        }
        out.push_str(self.text.get(from..).unwrap_or(""));
        Ok(out)
    }
}

/// Every `` !`command` `` that starts a line or follows whitespace, the command on one line.
fn shell_calls(text: &str) -> Vec<ShellCall> {
    let mut calls = Vec::new();
    let mut search = 0;
    while let Some(found) = text.get(search..).and_then(|t| t.find("!`")) {
        let start = search + found;
        search = start + 2;
        let starts_word = text
            .get(..start)
            .and_then(|before| before.chars().next_back())
            .is_none_or(char::is_whitespace);
        if !starts_word {
            continue;
        }
        let Some(rest) = text.get(start + 2..) else {
            break;
        };
        let Some(len) = rest.find(['`', '\n']) else {
            break;
        };
        let command = rest.get(..len).unwrap_or("");
        if !rest.get(len..).is_some_and(|r| r.starts_with('`')) || command.trim().is_empty() {
            continue;
        }
        let end = start + 2 + len + 1;
        calls.push(ShellCall {
            command: command.trim().to_string(),
            span: start..end,
        });
        search = end;
    }
    calls
}
