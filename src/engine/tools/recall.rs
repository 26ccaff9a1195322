//! `recall`: search the transcripts of the step's retired generations, and, while
//! old tool output is masked in the requests, the current generation's own. Reads the JSONL
//! transcripts from disk (`<run>/sessions/<id>.jsonl`), skipping torn or unreadable lines; every
//! text block, tool call and tool result is one numbered *message* of its generation. A search
//! returns the matching messages with their generation, role, tool and the lines around each
//! hit, ten a page; `message` reads one whole, page by page like `read_file`; `call` reads the
//! result of one tool call (by its id, as a masked output's stub names it) the same way.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use regex::{Regex, RegexBuilder};
use serde_json::Value;

use super::args::Args;
use super::{ToolError, ToolOutput, ToolResult};
use crate::engine::ledger::TranscriptLine;
use crate::engine::text::{numbered, one_line, truncate_chars};
use crate::engine::types::{Block, Role};

/// The tool's name.
pub(crate) const NAME: &str = super::names::RECALL;
/// Matches shown per page.
pub(crate) const PAGE_MATCHES: usize = 10;
/// Lines a match shows at most (its hits and a line either side).
const SNIPPET_LINES: usize = 9;
/// A shown line is cut to this many characters (around the hit on a hit line).
const LINE_CHARS: usize = 200;
/// Lines one page of a whole message holds unless `limit` says otherwise.
pub(crate) const READ_LIMIT: usize = 200;
/// The most lines one page of a whole message may hold.
const READ_LIMIT_MAX: usize = 2_000;
/// A line of a whole message is cut to this many characters.
const READ_LINE_CHARS: usize = 2_000;
/// One page of a whole message never exceeds this many characters.
const READ_PAGE_CHARS: usize = 50_000;

mod spec;

use spec::generations;
pub(crate) use spec::{spec, spec_with_own, summary};

/// One retired generation's transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub generation: u32,
    pub path: PathBuf,
}

/// What a numbered message is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum What {
    User,
    /// A successor's first message: its handoff briefing.
    Briefing,
    Assistant,
    /// A tool call: the tool's one-line summary.
    Call(String),
    /// A tool's result: its call's summary, and the call's id.
    Result {
        call: String,
        is_error: bool,
        id: String,
    },
}

/// One numbered message of a generation.
#[derive(Debug, Clone)]
struct Entry {
    generation: u32,
    number: usize,
    what: What,
    text: String,
}

impl Entry {
    fn header(&self) -> String {
        let what = match &self.what {
            What::User => "user".to_string(),
            What::Briefing => "user · the handoff briefing".to_string(),
            What::Assistant => "assistant".to_string(),
            What::Call(s) => format!("tool call · {s}"),
            What::Result { call, is_error, .. } => {
                let err = if *is_error { " (error)" } else { "" };
                format!("tool result{err} · {call}")
            }
        };
        format!(
            "[generation {} · message {} · {what}]",
            self.generation, self.number
        )
    }
}

/// What reading the transcripts found.
#[derive(Debug, Default)]
struct Loaded {
    entries: Vec<Entry>,
    /// Notes on what could not be read.
    notes: Vec<String>,
}

/// Read the messages of every source, oldest first. Torn or unreadable lines are skipped and
/// counted; a missing transcript is noted.
fn load(sources: &[Source], cancel: &AtomicBool) -> Result<Loaded, ToolError> {
    let mut out = Loaded::default();
    for src in sources {
        let file = match File::open(&src.path) {
            Ok(f) => f,
            Err(e) => {
                out.notes.push(format!(
                    "generation {}'s transcript cannot be read ({}: {e})",
                    src.generation,
                    src.path.display()
                ));
                continue;
            }
        };
        let mut reader = BufReader::new(file);
        let mut buf = Vec::new();
        let mut torn = 0usize;
        let mut number = 0usize;
        let mut calls: Vec<(String, String)> = Vec::new();
        let mut first_message = true;
        let mut successor = false;
        loop {
            if cancel.load(Ordering::Relaxed) {
                return Err(ToolError("`recall` was interrupted".into()));
            }
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    out.notes.push(format!(
                        "generation {}'s transcript stopped reading early ({e})",
                        src.generation
                    ));
                    break;
                }
            }
            if buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let message = match serde_json::from_slice::<TranscriptLine>(&buf) {
                Ok(TranscriptLine::Header(h)) => {
                    successor = h.parent_session.is_some();
                    continue;
                }
                Ok(TranscriptLine::Message { message }) => message,
                // Replaced histories repeat messages already read; events are not messages.
                Ok(TranscriptLine::Replaced { .. } | TranscriptLine::Event { .. }) => continue,
                Err(_) => {
                    torn += 1;
                    continue;
                }
            };
            let briefing = first_message && successor && message.role == Role::User;
            first_message = false;
            for block in message.content {
                let (what, text) = match block {
                    Block::Text { text } if text.trim().is_empty() => continue,
                    Block::Text { text } => match message.role {
                        Role::User if briefing => (What::Briefing, text),
                        Role::User => (What::User, text),
                        Role::Assistant => (What::Assistant, text),
                    },
                    Block::Thinking { .. }
                    | Block::Image { .. }
                    | Block::ServerToolUse { .. }
                    | Block::WebSearchToolResult { .. } => continue,
                    Block::ToolUse {
                        id, name, input, ..
                    } => {
                        let summary = super::summary(&name, &input);
                        calls.push((id, summary.clone()));
                        let text = serde_json::to_string_pretty(&input)
                            .unwrap_or_else(|_| input.to_string());
                        (What::Call(summary), text)
                    }
                    Block::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                    } => {
                        let call = calls
                            .iter()
                            .rev()
                            .find(|(id, _)| *id == tool_use_id)
                            .map(|(_, s)| s.clone())
                            .unwrap_or_else(|| format!("call {tool_use_id}"));
                        (
                            What::Result {
                                call,
                                is_error,
                                id: tool_use_id,
                            },
                            content,
                        )
                    }
                };
                number += 1;
                out.entries.push(Entry {
                    generation: src.generation,
                    number,
                    what,
                    text,
                });
            }
        }
        if torn > 0 {
            out.notes.push(format!(
                "generation {}'s transcript has {torn} unreadable line{} (skipped)",
                src.generation,
                if torn == 1 { "" } else { "s" }
            ));
        }
    }
    Ok(out)
}

/// What a search looks for.
enum Matcher {
    /// Every word, any case.
    Words(Vec<Regex>),
    Regex(Regex),
}

impl Matcher {
    fn new(query: &str, regex: bool) -> Result<Matcher, ToolError> {
        if regex {
            return RegexBuilder::new(query)
                .size_limit(10 * 1024 * 1024)
                .build()
                .map(Matcher::Regex)
                .map_err(|e| {
                    ToolError(format!(
                        "`recall`: `{}` is not a valid regular expression: {e}\nFix the pattern, \
                         or send `\"regex\": false` to search for the words.",
                        one_line(query, 200)
                    ))
                });
        }
        let words: Result<Vec<Regex>, _> = query
            .split_whitespace()
            .map(|w| {
                RegexBuilder::new(&regex::escape(w))
                    .case_insensitive(true)
                    .build()
            })
            .collect();
        let words =
            words.map_err(|e| ToolError(format!("`recall`: cannot search for that: {e}")))?;
        if words.is_empty() {
            return Err(ToolError(
                "`recall` needs a `query` (words, or a regex with `\"regex\": true`), or \
                 `generation` and `message` to read one message whole."
                    .into(),
            ));
        }
        Ok(Matcher::Words(words))
    }

    fn matches(&self, text: &str) -> bool {
        match self {
            Matcher::Words(words) => words.iter().all(|w| w.is_match(text)),
            Matcher::Regex(r) => r.is_match(text),
        }
    }

    /// The byte offset of the first hit in `line`.
    fn hit(&self, line: &str) -> Option<usize> {
        match self {
            Matcher::Words(words) => words
                .iter()
                .filter_map(|w| w.find(line).map(|m| m.start()))
                .min(),
            Matcher::Regex(r) => r.find(line).map(|m| m.start()),
        }
    }

    fn describe(&self, query: &str) -> String {
        match self {
            Matcher::Words(_) => format!("the words \"{}\"", one_line(query, 100)),
            Matcher::Regex(_) => format!("/{}/", one_line(query, 100)),
        }
    }
}

/// At most [`LINE_CHARS`] characters of `line` around the byte offset `at`.
fn around(line: &str, at: usize) -> String {
    let total = line.chars().count();
    if total <= LINE_CHARS {
        return line.to_string();
    }
    let hit_char = line.get(..at).map_or(0, |s| s.chars().count());
    let start = hit_char.saturating_sub(LINE_CHARS / 3);
    let start = start.min(total.saturating_sub(LINE_CHARS));
    let body: String = line.chars().skip(start).take(LINE_CHARS).collect();
    let head = if start > 0 { "…" } else { "" };
    let tail = if start + LINE_CHARS < total {
        "…"
    } else {
        ""
    };
    format!("{head}{body}{tail}")
}

/// The lines of `text` around its hits, numbered; and whether that is the whole message.
fn snippet(text: &str, m: &Matcher) -> (String, bool) {
    let lines: Vec<&str> = text.lines().collect();
    let hits: Vec<(usize, usize)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| m.hit(l).map(|at| (i, at)))
        .collect();
    // A match across lines (a regex with `\n`): show its start.
    let hits = if hits.is_empty() { vec![(0, 0)] } else { hits };
    let mut shown: Vec<usize> = Vec::new();
    for (i, _) in &hits {
        for j in i.saturating_sub(1)..=(i + 1).min(lines.len().saturating_sub(1)) {
            if !shown.contains(&j) && shown.len() < SNIPPET_LINES {
                shown.push(j);
            }
        }
        if shown.len() >= SNIPPET_LINES {
            break;
        }
    }
    shown.sort_unstable();
    let mut out = String::new();
    let mut cut = shown.len() < lines.len();
    let mut prev: Option<usize> = None;
    for i in shown {
        if prev.is_some_and(|p| p + 1 < i) {
            out.push_str("   …\n");
        }
        prev = Some(i);
        let line = lines.get(i).copied().unwrap_or_default();
        let hit = hits.iter().find(|(h, _)| *h == i).map(|(_, at)| *at);
        let shown_line = match hit {
            Some(at) => around(line, at),
            None => truncate_chars(line, LINE_CHARS),
        };
        cut |= shown_line != line;
        out.push_str(&numbered(i + 1, &shown_line));
    }
    (out, !cut)
}

/// Run a call on tokio's blocking pool (it reads files); dropping the future stops the search.
pub async fn run_call(input: &Value, sources: Vec<Source>) -> ToolOutput {
    let map = match super::arguments(NAME, input) {
        Ok(map) => map.clone(),
        Err(e) => return ToolOutput::from(e),
    };
    let cancel = super::CancelOnDrop(Arc::new(AtomicBool::new(false)));
    let flag = Arc::clone(&cancel.0);
    let task = tokio::task::spawn_blocking(move || {
        run(&Args::new(NAME, &map), &sources, &flag).unwrap_or_else(ToolOutput::from)
    });
    let out = match task.await {
        Ok(out) => out,
        Err(e) => ToolOutput::error(format!("`recall` failed unexpectedly: {e}")),
    };
    drop(cancel);
    out
}

/// Run a call over `sources` (the step's retired generations, oldest first).
pub(crate) fn run(args: &Args, sources: &[Source], cancel: &AtomicBool) -> ToolResult {
    if sources.is_empty() {
        return Err(ToolError(
            "`recall` has nothing to search: this is the step's first generation.".into(),
        ));
    }
    let generation = args.opt_u64("generation")?;
    let chosen: Vec<Source> = match generation {
        Some(g) => sources
            .iter()
            .filter(|s| u64::from(s.generation) == g)
            .cloned()
            .collect(),
        None => sources.to_vec(),
    };
    if chosen.is_empty() {
        return Err(ToolError(format!(
            "`recall`: there is no earlier generation {} in this step; the transcripts kept are \
             of generations {}.",
            generation.unwrap_or_default(),
            generations(sources)
        )));
    }
    if let Some(call) = args.opt_str("call")? {
        let loaded = load(&chosen, cancel)?;
        let found = loaded
            .entries
            .iter()
            .rev()
            .find(|e| matches!(&e.what, What::Result { id, .. } if id == call));
        return match found {
            Some(entry) => page(args, entry),
            None => Err(ToolError(format!(
                "`recall`: no result of a call `{}` in generation{} {}.",
                one_line(call, 100),
                if chosen.len() == 1 { "" } else { "s" },
                generations(&chosen)
            ))),
        };
    }
    if let Some(message) = args.opt_u64("message")? {
        let [source] = chosen.as_slice() else {
            return Err(ToolError(format!(
                "`recall`: say which generation message {message} is in (`generation`: one of {}).",
                generations(sources)
            )));
        };
        return read_message(args, source, message, cancel);
    }
    let query = args.opt_str("query")?.unwrap_or_default();
    let regex = args.opt_bool("regex")?.unwrap_or(false);
    let matcher = Matcher::new(query, regex)?;
    let page = args.opt_u64("page")?.unwrap_or(1).max(1);
    let loaded = load(&chosen, cancel)?;
    let matching: Vec<&Entry> = loaded
        .entries
        .iter()
        .filter(|e| matcher.matches(&e.text))
        .collect();
    let gens = generations(&chosen);
    let what = matcher.describe(query);
    let mut out = String::new();
    if matching.is_empty() {
        out.push_str(&format!(
            "recall: no message matches {what} in generation{} {gens} ({} messages searched). \
             Try other or fewer words, or a regex (`\"regex\": true`).\n",
            if chosen.len() == 1 { "" } else { "s" },
            loaded.entries.len()
        ));
    } else {
        let pages = matching.len().div_ceil(PAGE_MATCHES);
        let page = usize::try_from(page).unwrap_or(usize::MAX).min(pages);
        let first = (page - 1) * PAGE_MATCHES;
        let shown: Vec<&&Entry> = matching.iter().skip(first).take(PAGE_MATCHES).collect();
        out.push_str(&format!(
            "recall: {} message{} match{} {what} in generation{} {gens}; page {page} of {pages} \
             (matches {}–{}).\n",
            matching.len(),
            if matching.len() == 1 { "" } else { "s" },
            if matching.len() == 1 { "es" } else { "" },
            if chosen.len() == 1 { "" } else { "s" },
            first + 1,
            first + shown.len()
        ));
        for e in shown {
            let (body, whole) = snippet(&e.text, &matcher);
            out.push('\n');
            out.push_str(&e.header());
            out.push('\n');
            out.push_str(&body);
            if !whole {
                out.push_str(&format!(
                    "   (message {} has {} lines: {{\"generation\": {}, \"message\": {}}} reads it whole)\n",
                    e.number,
                    e.text.lines().count(),
                    e.generation,
                    e.number
                ));
            }
        }
        if page < pages {
            out.push_str(&format!(
                "\nMore matches: the same call with `\"page\": {}`.\n",
                page + 1
            ));
        }
    }
    for note in &loaded.notes {
        out.push_str(&format!("Note: {note}.\n"));
    }
    Ok(ToolOutput::ok(out))
}

/// One message whole, numbered, a page at a time.
fn read_message(args: &Args, source: &Source, message: u64, cancel: &AtomicBool) -> ToolResult {
    let loaded = load(std::slice::from_ref(source), cancel)?;
    let count = loaded.entries.len();
    let Some(entry) = loaded
        .entries
        .iter()
        .find(|e| u64::try_from(e.number).is_ok_and(|n| n == message))
    else {
        let mut msg = format!(
            "`recall`: generation {} has no message {message} (it has {count}).",
            source.generation
        );
        for note in &loaded.notes {
            msg.push_str(&format!(" Note: {note}."));
        }
        return Err(ToolError(msg));
    };
    page(args, entry)
}

/// One message whole, numbered, a page at a time (`offset`, `limit`).
fn page(args: &Args, entry: &Entry) -> ToolResult {
    let offset = args.opt_u64("offset")?.unwrap_or(1).max(1);
    let limit = match args.opt_u64("limit")? {
        Some(0) => return Err("`recall`: `limit` must be at least 1.".into()),
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX).min(READ_LIMIT_MAX),
        None => READ_LIMIT,
    };
    let message = entry.number;
    let lines: Vec<&str> = entry.text.lines().collect();
    let total = lines.len();
    let start = usize::try_from(offset).unwrap_or(usize::MAX);
    let mut out = format!("{}\n", entry.header());
    if start > total.max(1) {
        return Err(ToolError(format!(
            "`recall`: message {message} of generation {} has {total} lines; `offset` {start} is past its end.",
            entry.generation
        )));
    }
    let mut last = start.saturating_sub(1);
    for (i, line) in lines.iter().enumerate().skip(start - 1).take(limit) {
        let row = numbered(i + 1, &truncate_chars(line, READ_LINE_CHARS));
        if out.len() + row.len() > READ_PAGE_CHARS && i + 1 > start {
            break;
        }
        out.push_str(&row);
        last = i + 1;
    }
    if last < total {
        out.push_str(&format!(
            "(lines {start}–{last} of {total}; the rest: the same call with `\"offset\": {}`)\n",
            last + 1
        ));
    }
    Ok(ToolOutput::ok(out))
}

#[cfg(test)]
#[path = "recall_tests.rs"]
mod tests;
