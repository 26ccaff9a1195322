//! The section as Markdown: a line saying where it comes from, this generation's files and
//! commands, the last test or build, earlier generations in brief, and the errors still open.
//! Every list is capped and the whole is cut at [`MAX_CHARS`] (the open errors are kept: what
//! comes before them is cut first); the same facts always give the same text.

use std::fmt::Write as _;

use super::carry::{Category, Earlier, Item, OPEN_ERRORS_HEAD};
use super::{CommandRuns, Fate, FileFacts, LineCounts, Touched};
use crate::engine::lsp::OpenProblems;

/// The section never exceeds this many characters.
pub const MAX_CHARS: usize = 6_000;
/// File lines shown for this generation (changed files first; the rest are counted).
const MAX_FILES: usize = 50;
/// Commands shown (failing ones first, then the most recent).
const MAX_COMMANDS: usize = 12;
/// Paths shown per category of earlier generations.
const MAX_EARLIER: usize = 30;
/// Read ranges shown for one file.
const MAX_RANGES: usize = 6;
/// Images listed.
const MAX_IMAGES: usize = 10;

/// A code span that survives backticks inside.
pub(super) fn code(s: &str) -> String {
    if s.contains('`') {
        format!("`` {s} ``")
    } else {
        format!("`{s}`")
    }
}

pub(super) fn section(t: &Touched) -> String {
    let mut out = format!(
        "From the tool log of generation {}, written by flower-tui (not by the model); edit it \
         like any section.\n",
        t.generation
    );
    files(&mut out, t);
    images(&mut out, t);
    commands(&mut out, t);
    if let Some(c) = &t.check {
        let _ = write!(out, "Last test or build: {} → {}", code(&c.command), c.exit);
        if let Some(line) = &c.line {
            let _ = write!(out, ": {line}");
        }
        out.push('\n');
    }
    earlier(&mut out, &t.earlier);
    let open = t.open.as_ref().map(open_errors).unwrap_or_default();
    let mut text = cap(out, MAX_CHARS.saturating_sub(open.chars().count()));
    text.push_str(&open);
    text
}

/// Open errors listed at most.
const MAX_OPEN_ERRORS: usize = 15;

/// `Errors still open at the cut (language servers, 2 in 1 file):` and one line each.
fn open_errors(open: &OpenProblems) -> String {
    let errors = &open.found;
    if errors.is_empty() {
        return format!(
            "{OPEN_ERRORS_HEAD}: none (language servers checked {}).\n",
            open.files
                .iter()
                .take(MAX_OPEN_ERRORS)
                .map(|f| code(f))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let files: std::collections::BTreeSet<&str> = errors.iter().map(|e| e.path.as_str()).collect();
    let mut out = format!(
        "{OPEN_ERRORS_HEAD} (language servers, {} in {} file{}):\n",
        errors.len(),
        files.len(),
        if files.len() == 1 { "" } else { "s" }
    );
    for e in errors.iter().take(MAX_OPEN_ERRORS) {
        let source = e
            .source
            .as_deref()
            .map(|s| format!(" ({s})"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "- {} {}{source}",
            code(&format!("{}:{}:{}", e.path, e.line, e.col)),
            e.message
        );
    }
    if errors.len() > MAX_OPEN_ERRORS {
        let _ = writeln!(out, "- … and {} more", errors.len() - MAX_OPEN_ERRORS);
    }
    out
}

/// Images shown to the model: each by the path it came from and its stored copy, which
/// `read_file` shows again.
fn images(out: &mut String, t: &Touched) {
    if t.images.is_empty() {
        return;
    }
    out.push_str("Images shown to the model (read_file the stored copy to see one again):\n");
    for (name, source, stored) in t.images.iter().take(MAX_IMAGES) {
        let from = if source.is_empty() || source == name {
            String::new()
        } else {
            format!(" from {}", code(source))
        };
        let _ = writeln!(out, "- {}{from}, stored at {}", code(name), code(stored));
    }
    let rest = t.images.len().saturating_sub(MAX_IMAGES);
    if rest > 0 {
        let _ = writeln!(out, "- … and {rest} more images");
    }
}

/// Where a file's line goes: changed files first, in this order, then files only read.
fn rank(f: &FileFacts) -> u8 {
    match f.fate {
        Fate::Edited => 0,
        Fate::Created => 1,
        Fate::Deleted { .. } => 2,
        Fate::Moved { .. } => 3,
        Fate::Transient => 4,
        Fate::Read => 5,
    }
}

fn files(out: &mut String, t: &Touched) {
    if t.files.is_empty() {
        out.push_str("Files this generation: none touched.\n");
        return;
    }
    out.push_str("Files this generation:\n");
    let mut ordered: Vec<(&String, &FileFacts)> = t.files.iter().collect();
    ordered.sort_by_key(|(_, f)| rank(f));
    let changed = ordered.iter().filter(|(_, f)| f.fate != Fate::Read).count();
    let shown = MAX_FILES.max(changed);
    for (path, f) in ordered.iter().take(shown) {
        let _ = writeln!(out, "- {}: {}", code(path), describe(f));
    }
    let rest = ordered.len().saturating_sub(shown);
    if rest > 0 {
        let _ = writeln!(out, "- … and {rest} more files read");
    }
}

/// `edited +12 -3 in 3 changes; read 1-200 of 240`.
fn describe(f: &FileFacts) -> String {
    let counts = |out: &mut String| {
        if f.changes > f.uncounted {
            let _ = write!(out, " {}", counts_text(f.counts));
        }
        if f.uncounted > 0 {
            let _ = write!(
                out,
                " ({} overwrite{} not counted)",
                f.uncounted,
                if f.uncounted == 1 { "" } else { "s" }
            );
        }
        if f.changes > 1 {
            let _ = write!(out, " in {} changes", f.changes);
        }
    };
    let mut parts: Vec<String> = Vec::new();
    match &f.fate {
        Fate::Read => {}
        Fate::Edited => {
            let mut s = String::from("edited");
            counts(&mut s);
            parts.push(s);
        }
        Fate::Created => {
            let mut s = String::from("created");
            counts(&mut s);
            parts.push(s);
        }
        Fate::Deleted { lines } => parts.push(match lines {
            Some(n) => format!("deleted -{n}"),
            None => "deleted".to_string(),
        }),
        Fate::Transient => parts.push("created and deleted".to_string()),
        Fate::Moved { to } => parts.push(format!("moved to {}", code(to))),
    }
    if !f.read.is_empty() {
        parts.push(reads(f));
    }
    parts.join("; ")
}

/// `read 1-120, 300-340 of 512`, or `read all 240 lines`.
fn reads(f: &FileFacts) -> String {
    if let ([(1, last)], Some(total)) = (f.read.as_slice(), f.total)
        && *last >= total
    {
        return format!("read all {total} lines");
    }
    let mut s = String::from("read ");
    let shown: Vec<String> = f
        .read
        .iter()
        .take(MAX_RANGES)
        .map(|(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    s.push_str(&shown.join(", "));
    if f.read.len() > MAX_RANGES {
        let _ = write!(s, ", … ({} ranges)", f.read.len());
    }
    if let Some(total) = f.total {
        let _ = write!(s, " of {total}");
    }
    s
}

fn commands(out: &mut String, t: &Touched) {
    if t.commands.is_empty() {
        out.push_str("Commands this generation: none run.\n");
        return;
    }
    let runs: u32 = t.commands.iter().map(|c| c.runs).sum();
    let failing = t.commands.iter().filter(|c| c.last.failed()).count();
    let _ = writeln!(
        out,
        "Commands this generation: {runs} run, {failing} failing at their last run; failing \
         first, then the most recent:"
    );
    let mut ordered: Vec<&CommandRuns> = t.commands.iter().collect();
    ordered.sort_by_key(|c| (!c.last.failed(), std::cmp::Reverse(c.last_at)));
    for c in ordered.iter().take(MAX_COMMANDS) {
        let _ = write!(out, "- {} → {}", code(&c.command), c.last);
        if c.runs > 1 {
            let _ = write!(out, " ({} runs", c.runs);
            if c.failed > 0 {
                let _ = write!(out, ", {} failed", c.failed);
            }
            out.push(')');
        }
        out.push('\n');
    }
    let rest = ordered.len().saturating_sub(MAX_COMMANDS);
    if rest > 0 {
        let _ = writeln!(out, "- … and {rest} more commands");
    }
}

fn earlier(out: &mut String, e: &Earlier) {
    if e.is_empty() {
        return;
    }
    match e.generations {
        Some((a, b)) if a != b => {
            let _ = writeln!(out, "Earlier generations {a}–{b}, in brief:");
        }
        Some((a, _)) => {
            let _ = writeln!(out, "Earlier generation {a}, in brief:");
        }
        None => out.push_str("Earlier generations, in brief:\n"),
    }
    for c in Category::ALL {
        let g = e.group(c);
        if g.items.is_empty() && g.more == 0 {
            continue;
        }
        let mut shown: Vec<String> = g.items.iter().take(MAX_EARLIER).map(item).collect();
        let more = g.more + g.items.len().saturating_sub(MAX_EARLIER);
        if more > 0 {
            shown.push(format!("and {more} more"));
        }
        let _ = writeln!(out, "- {}: {}", c.word(), shown.join(", "));
    }
    if let Some(check) = &e.check {
        let _ = writeln!(out, "- last test or build, {check}");
    }
    for note in &e.notes {
        let _ = writeln!(out, "- note: {note}");
    }
}

/// `` `a.rs` (+3 -1) ``, `` `a.rs` (moved to `b.rs`) ``.
fn item(i: &Item) -> String {
    let mut s = code(&i.path);
    if let Some(note) = &i.note {
        let _ = write!(s, " ({note})");
    } else if let Some(c) = i.counts.filter(|c| c.added > 0 || c.removed > 0) {
        let _ = write!(s, " ({})", counts_text(c));
    }
    s
}

/// `+12 -3`; a zero side is left out (`+3`, `-40`), both zero is `+0`.
fn counts_text(c: LineCounts) -> String {
    match (c.added, c.removed) {
        (a, 0) => format!("+{a}"),
        (0, r) => format!("-{r}"),
        (a, r) => format!("+{a} -{r}"),
    }
}

/// The text cut at a line end within `max` characters, with a note when it was cut.
fn cap(text: String, max: usize) -> String {
    if text.chars().count() <= max {
        return text;
    }
    let note = "- … (the rest is cut: this section keeps to 6,000 characters)\n";
    let budget = max.saturating_sub(note.chars().count());
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        if out.chars().count() + line.chars().count() > budget {
            break;
        }
        out.push_str(line);
    }
    out.push_str(note);
    out
}
