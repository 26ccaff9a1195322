//! `edit_file`: exact string replacement, unique unless `replace_all`.

use std::fs;
use std::io;

use serde_json::json;

use super::args::Args;
use super::write_file::write_text;
use super::{ToolCtx, ToolError, ToolOutput, ToolResult, paths};
use crate::engine::diff::{DiffLimits, FileDiff};
use crate::engine::text::{looks_binary, numbered, similarity, truncate_chars};
use crate::engine::types::ToolSpec;

/// Lines of context shown around an edit.
const CONTEXT_LINES: usize = 3;
/// At most this many edited regions are shown after a `replace_all`.
const MAX_SNIPPETS: usize = 3;
/// At most this many lines of one region are shown.
const MAX_SNIPPET_LINES: usize = 40;
/// At most this many matches are listed when `old_string` is not unique.
const MAX_LISTED: usize = 20;

pub(super) fn spec() -> ToolSpec {
    ToolSpec {
        name: super::names::EDIT_FILE.into(),
        description: "Replace an exact string in a file. `old_string` must match the file \
                      exactly, including whitespace and indentation (copy it from read_file's \
                      output without the line-number prefix), and must occur exactly once unless \
                      `replace_all` is true: include enough surrounding lines to make it unique. \
                      A missing or ambiguous match is an error that shows the candidate lines. \
                      The result shows the edited region with line numbers."
            .into(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to edit, relative to the workspace (or absolute)."},
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "The text to put in its place (must differ from old_string)."},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence instead of exactly one. Default false."}
            },
            "required": ["path", "old_string", "new_string"],
            "additionalProperties": false
        }),
    }
}

/// An edit worked out but not yet written.
struct EditPlan {
    path: std::path::PathBuf,
    shown: String,
    meta: fs::Metadata,
    before: String,
    after: String,
    /// Where each replacement begins in `after`.
    new_starts: Vec<usize>,
    /// The replacement text (in the file's line endings).
    new: String,
}

/// Check the call and compute the edited text; nothing is written.
fn plan(args: &Args, ctx: &ToolCtx) -> Result<EditPlan, ToolError> {
    let raw = args.str("path")?;
    let old = args.str("old_string")?;
    let new = args.str("new_string")?;
    let replace_all = args.opt_bool("replace_all")?.unwrap_or(false);
    let path = paths::check_write(ctx, raw)?;
    let shown = paths::display(&ctx.workspace, &path);
    if old.is_empty() {
        return Err(
            "`old_string` is empty. To create a file or replace all of it, use write_file.".into(),
        );
    }
    if old == new {
        return Err(
            "`old_string` and `new_string` are identical, so there is nothing to change.".into(),
        );
    }
    let meta = match fs::metadata(&path) {
        Ok(m) if m.is_dir() => {
            return Err(format!("{shown} is a directory, not a file.").into());
        }
        Ok(m) if !m.is_file() => {
            return Err(
                format!("{shown} is not a regular file (a device, socket or pipe).").into(),
            );
        }
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(format!(
                "{} To create a new file, use write_file.",
                paths::not_found(&ctx.workspace, &path, "File")
            )
            .into());
        }
        Err(e) => return Err(format!("Cannot read {shown}: {e}").into()),
    };
    // The front end's text (an editor's unsaved buffer) when it offers one, else the disk's.
    let bytes = match ctx.files.read(&path) {
        Some(text) => text.map(String::into_bytes),
        None => fs::read(&path),
    }
    .map_err(|e| format!("Cannot read {shown}: {e}"))?;
    if looks_binary(&bytes) {
        return Err(format!(
            "{shown} is a binary file ({} bytes); edit_file only edits text.",
            bytes.len()
        )
        .into());
    }
    let content = String::from_utf8(bytes)
        .map_err(|_| format!("{shown} is not valid UTF-8; edit_file only edits UTF-8 text."))?;

    let (old, new) = pick_line_endings(&content, old, new);
    let starts: Vec<usize> = content
        .match_indices(old.as_str())
        .map(|(i, _)| i)
        .collect();
    if starts.is_empty() {
        return Err(no_match_message(&shown, &content, &old).into());
    }
    if starts.len() > 1 && !replace_all {
        return Err(many_matches_message(&shown, &content, &starts).into());
    }
    let (after, new_starts) = replace_at(&content, &starts, &old, &new);
    Ok(EditPlan {
        path,
        shown,
        meta,
        before: content,
        after,
        new_starts,
        new,
    })
}

/// The diff the call would make, for the approval prompt.
pub(super) fn preview(args: &Args, ctx: &ToolCtx) -> Result<FileDiff, ToolError> {
    let p = plan(args, ctx)?;
    Ok(FileDiff::new(
        &p.shown,
        Some(&p.before),
        &p.after,
        DiffLimits::PREVIEW,
    ))
}

pub(super) fn run(args: &Args, ctx: &ToolCtx) -> ToolResult {
    let p = plan(args, ctx)?;
    let shown = &p.shown;
    write_text(ctx, &p.path, &p.after, Some(&p.meta))
        .map_err(|e| format!("Cannot write {shown}: {e}"))?;

    let count = p.new_starts.len();
    let noun = if count == 1 {
        "occurrence"
    } else {
        "occurrences"
    };
    let mut out = format!("Edited {shown}: replaced {count} {noun}.\n");
    for (i, &start) in p.new_starts.iter().take(MAX_SNIPPETS).enumerate() {
        if i > 0 {
            out.push_str("    ...\n");
        }
        out.push_str(&snippet(&p.after, start, p.new.len()));
    }
    if count > MAX_SNIPPETS {
        out.push_str(&format!("    ... and {} more.\n", count - MAX_SNIPPETS));
    }
    let diff = FileDiff::new(shown, Some(&p.before), &p.after, DiffLimits::RESULT);
    Ok(ToolOutput::ok(out).with_diff(Some(diff)))
}

/// When the file uses CRLF line endings and the model sent LF, match and write CRLF.
fn pick_line_endings(content: &str, old: &str, new: &str) -> (String, String) {
    let crlf = |s: &str| s.replace("\r\n", "\n").replace('\n', "\r\n");
    if old.contains('\n')
        && !old.contains("\r\n")
        && !content.contains(old)
        && content.contains("\r\n")
        && content.contains(&crlf(old))
    {
        return (crlf(old), crlf(new));
    }
    (old.to_owned(), new.to_owned())
}

/// Replaces `old` at each of `starts`; returns the new text and where each replacement begins in it.
fn replace_at(content: &str, starts: &[usize], old: &str, new: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(content.len() + starts.len() * new.len());
    let mut new_starts = Vec::with_capacity(starts.len());
    let mut last = 0;
    for &s in starts {
        out.push_str(&content[last..s]);
        new_starts.push(out.len());
        out.push_str(new);
        last = s + old.len();
    }
    out.push_str(&content[last..]);
    (out, new_starts)
}

/// 1-based line number of byte offset `at`.
fn line_of(content: &str, at: usize) -> usize {
    content.bytes().take(at).filter(|&b| b == b'\n').count() + 1
}

/// The lines around `[start, start + len)` of `content`, numbered.
fn snippet(content: &str, start: usize, len: usize) -> String {
    let first = line_of(content, start);
    let end = (start + len).min(content.len());
    let last_of_edit = line_of(content, end.saturating_sub(usize::from(len > 0)).max(start));
    let from = first.saturating_sub(CONTEXT_LINES).max(1);
    let to = last_of_edit + CONTEXT_LINES;
    let lines: Vec<&str> = content.lines().collect();
    let mut out = String::new();
    for (shown, n) in (from..=to.min(lines.len())).enumerate() {
        if shown == MAX_SNIPPET_LINES {
            out.push_str(&format!("    ... (to line {})\n", to.min(lines.len())));
            break;
        }
        let text = n.checked_sub(1).and_then(|i| lines.get(i)).copied();
        out.push_str(&numbered(n, &truncate_chars(text.unwrap_or(""), 300)));
    }
    if lines.is_empty() {
        out.push_str("(the file is now empty)\n");
    }
    out
}

fn many_matches_message(shown: &str, content: &str, starts: &[usize]) -> String {
    let lines: Vec<&str> = content.lines().collect();
    let numbers: Vec<usize> = starts.iter().map(|&s| line_of(content, s)).collect();
    let mut msg = format!(
        "`old_string` occurs {} times in {shown}, so the edit is ambiguous. Include more \
         surrounding lines to make it unique, or set replace_all to true to replace every \
         occurrence. The matches start at:\n",
        starts.len()
    );
    for &n in numbers.iter().take(MAX_LISTED) {
        let text = lines.get(n - 1).copied().unwrap_or("");
        msg.push_str(&numbered(n, &truncate_chars(text, 200)));
    }
    if numbers.len() > MAX_LISTED {
        msg.push_str(&format!(
            "    ... and {} more.\n",
            numbers.len() - MAX_LISTED
        ));
    }
    msg
}

/// Explains a missing match and shows the lines the model most likely meant.
fn no_match_message(shown: &str, content: &str, old: &str) -> String {
    let mut msg = format!("`old_string` was not found in {shown}.");
    let lines: Vec<&str> = content.lines().collect();
    let wanted: Vec<&str> = old.lines().map(str::trim).collect();
    let first_idx = wanted.iter().position(|l| !l.is_empty());
    let Some(first_idx) = first_idx else {
        msg.push_str(" It contains only whitespace; include some text to match.");
        return msg;
    };
    let wanted_tail: Vec<&str> = wanted.iter().skip(first_idx).copied().collect();
    let wanted_len = wanted_tail
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(1, |i| i + 1);
    let wanted_tail: Vec<&str> = wanted_tail.into_iter().take(wanted_len).collect();
    let Some(&first) = wanted_tail.first() else {
        return msg;
    };
    if wanted_tail
        .iter()
        .all(|l| l.is_empty() || has_line_number_prefix(l))
    {
        msg.push_str(
            " It seems to include read_file's line-number prefixes (a number and a tab); \
             old_string must be the file's text only, without them.",
        );
        return msg;
    }
    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");

    // 1. The same lines with other whitespace (indentation, tabs, trailing spaces).
    let loose: Vec<usize> = lines
        .windows(wanted_len)
        .enumerate()
        .filter(|(_, window)| {
            window
                .iter()
                .zip(&wanted_tail)
                .all(|(l, w)| norm(l) == norm(w))
        })
        .map(|(i, _)| i)
        .take(3)
        .collect();
    if !loose.is_empty() {
        msg.push_str(
            " These lines match when whitespace is ignored; copy their exact indentation and \
             spacing:\n",
        );
        for &i in &loose {
            for (j, line) in lines
                .iter()
                .skip(i)
                .take(wanted_len.min(MAX_SNIPPET_LINES))
                .enumerate()
            {
                msg.push_str(&numbered(i + j + 1, &truncate_chars(line, 300)));
            }
            msg.push_str("    ...\n");
        }
        return msg;
    }

    // 2. Lines containing the first line of old_string.
    let containing: Vec<(usize, &str)> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains(first))
        .map(|(i, l)| (i, *l))
        .collect();
    if !containing.is_empty() {
        msg.push_str(
            " The first line of old_string occurs at these lines, but what follows differs \
             (read the file again to see the current text):\n",
        );
        for &(i, line) in containing.iter().take(5) {
            msg.push_str(&numbered(i + 1, &truncate_chars(line, 300)));
        }
        return msg;
    }

    // 3. Lines resembling the first line of old_string.
    let target = norm(first);
    let mut similar: Vec<(f64, usize)> = lines
        .iter()
        .take(50_000)
        .enumerate()
        .map(|(i, l)| (similarity(&norm(l), &target), i))
        .filter(|(s, _)| *s >= 0.5)
        .collect();
    similar.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    if similar.is_empty() {
        msg.push_str(
            " No similar lines were found; read the file again to see its current content.",
        );
        return msg;
    }
    msg.push_str(
        " The most similar lines to its first line are (read the file again to see the current \
         text):\n",
    );
    let mut best: Vec<usize> = similar.iter().take(3).map(|&(_, i)| i).collect();
    best.sort_unstable();
    for i in best {
        let line = lines.get(i).copied().unwrap_or("");
        msg.push_str(&numbered(i + 1, &truncate_chars(line, 300)));
    }
    msg
}

/// Whether a trimmed line starts like read_file's output: digits, then a tab.
fn has_line_number_prefix(line: &str) -> bool {
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    digits > 0
        && line
            .get(digits..)
            .is_some_and(|rest| rest.starts_with('\t'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_positions() {
        let (s, at) = replace_at("a-b-c", &[1, 3], "-", "+++");
        assert_eq!(s, "a+++b+++c");
        assert_eq!(at, vec![1, 5]);
    }

    #[test]
    fn snippet_shows_context() {
        let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
        let at = text.find("line 5").unwrap();
        let s = snippet(&text, at, "line 5".len());
        assert_eq!(s.lines().next().unwrap(), "     2\tline 2");
        assert_eq!(s.lines().last().unwrap(), "     8\tline 8");
    }

    #[test]
    fn crlf_files_accept_lf_strings() {
        let (o, n) = pick_line_endings("a\r\nb\r\n", "a\nb", "x\ny");
        assert_eq!((o.as_str(), n.as_str()), ("a\r\nb", "x\r\ny"));
        let (o, _) = pick_line_endings("a\nb\n", "a\nb", "x");
        assert_eq!(o, "a\nb");
    }

    #[test]
    fn candidates_by_kind() {
        let content = "fn main() {\n    let x = 1;\n    let y = 2;\n}\n";
        let m = no_match_message("f", content, "let x = 1;\nlet y = 2;");
        assert!(
            m.contains("whitespace is ignored") && m.contains("     2\t    let x = 1;"),
            "{m}"
        );
        let m = no_match_message("f", content, "let x = 1;\nlet z = 3;");
        assert!(
            m.contains("first line of old_string occurs") && m.contains("     2\t"),
            "{m}"
        );
        let m = no_match_message("f", content, "let x = 7;");
        assert!(m.contains("most similar") && m.contains("     2\t"), "{m}");
        let m = no_match_message(
            "f",
            content,
            "     2\t    let x = 1;\n     3\t    let y = 2;",
        );
        assert!(m.contains("line-number prefixes"), "{m}");
        let m = no_match_message("f", content, "zzzz qqqq");
        assert!(m.contains("No similar lines"), "{m}");
    }
}
