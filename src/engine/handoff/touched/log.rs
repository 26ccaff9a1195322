//! Reading the tool log: each call with its result, in order, applied to the facts. Results are
//! read as the tools write them: `read_file`'s numbered lines and its continuation note,
//! `write_file`'s `Created`/`Overwrote … (N bytes, M lines).`, `edit_file`'s `replaced N
//! occurrences`, and the bracketed status line that ends every `bash` result.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use super::shapes;
use super::{Check, CommandRuns, Exit, Fate, LineCounts, ToolLog, Touched};
use crate::engine::diff::{DiffLimits, FileDiff};
use crate::engine::types::{Block, Message};

/// A command longer than this is cut (characters, on one line).
pub(super) const COMMAND_CHARS: usize = 120;

/// One call and its result.
struct Call<'a> {
    id: &'a str,
    input: &'a Value,
    result: &'a str,
}

/// Apply every successful call of the log to `t`, in order.
pub(super) fn replay(t: &mut Touched, log: &ToolLog) {
    let results = results(log.messages);
    let mut runs = 0usize;
    for m in log.messages {
        for (id, name, input) in m.tool_uses() {
            // A call without a result (cut by a crash) or that failed changed nothing we know.
            let Some(&(result, is_error)) = results.get(id) else {
                continue;
            };
            let call = Call { id, input, result };
            let undone = log.undone.iter().any(|u| u == id);
            match name {
                "bash" => {
                    if let Some(exit) = exit_of(result) {
                        runs += 1;
                        // An undone command ran, but what it did to files is gone.
                        let exit_for_files = if undone { None } else { Some(exit) };
                        command(t, &call, exit, exit_for_files, runs, log.workspace);
                    }
                }
                _ if is_error => {}
                "edit_file" | "write_file" if undone => {}
                "read_file" => read(t, &call, log.workspace),
                "edit_file" => edit(t, &call, log.counts, log.workspace),
                "write_file" => write(t, &call, log.counts, log.workspace),
                _ => {}
            }
        }
    }
}

/// Every tool result by its call id.
fn results(messages: &[Message]) -> HashMap<&str, (&str, bool)> {
    let mut out = HashMap::new();
    for m in messages {
        for b in &m.content {
            if let Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } = b
            {
                out.insert(tool_use_id.as_str(), (content.as_str(), *is_error));
            }
        }
    }
    out
}

/// The call's `path`, as the workspace shows it.
fn path_of(call: &Call, workspace: Option<&Path>) -> Option<String> {
    call.input
        .get("path")
        .and_then(Value::as_str)
        .map(|p| normalise(p, workspace))
        .filter(|p| !p.is_empty())
}

/// `./src/a.rs` → `src/a.rs`; an absolute path under the workspace → relative to it.
pub(super) fn normalise(path: &str, workspace: Option<&Path>) -> String {
    let p = path.trim();
    let p = match workspace.and_then(|w| Path::new(p).strip_prefix(w).ok()) {
        Some(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
        _ => p.to_string(),
    };
    let mut s = p.as_str();
    while let Some(rest) = s.strip_prefix("./") {
        s = rest.trim_start_matches('/');
    }
    s.trim_end_matches('/').to_string()
}

fn read(t: &mut Touched, call: &Call, workspace: Option<&Path>) {
    let Some(path) = path_of(call, workspace) else {
        return;
    };
    let shown = lines_shown(call.result);
    let f = t.file(path);
    if let Some((first, last, total)) = shown {
        add_range(&mut f.read, (first, last));
        if total.is_some() {
            f.total = total;
        }
    } else if call.result.trim_end().ends_with("is empty.)") {
        f.total = Some(0);
    }
}

/// The first and last line numbers of a `read_file` page, and the file's length when the page
/// says it (`showing lines 1-200 of 900`) or shows the file to its end from line 1.
fn lines_shown(result: &str) -> Option<(u64, u64, Option<u64>)> {
    let number = |line: &str| -> Option<u64> {
        let (n, _) = line.split_once('\t')?;
        n.trim_start().parse().ok()
    };
    let first = result.lines().find_map(number)?;
    let last = result.lines().rev().find_map(number)?;
    let total = match continuation_total(result) {
        Some(total) => Some(total),
        None if first == 1 => Some(last),
        None => None,
    };
    Some((first, last.max(first), total))
}

/// `… showing lines 1-200 of 900; continue with offset=201.)` → 900.
fn continuation_total(result: &str) -> Option<u64> {
    let tail = result.lines().rev().find(|l| !l.trim().is_empty())?;
    let at = tail.find("showing lines ")?;
    let rest = tail.get(at..)?;
    let (_, after) = rest.split_once(" of ")?;
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Insert `r` into sorted, merged ranges (touching ranges merge).
pub(super) fn add_range(ranges: &mut Vec<(u64, u64)>, r: (u64, u64)) {
    ranges.push(r);
    ranges.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for &(a, b) in ranges.iter() {
        match merged.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    *ranges = merged;
}

fn edit(t: &mut Touched, call: &Call, counts: &HashMap<String, LineCounts>, ws: Option<&Path>) {
    let Some(path) = path_of(call, ws) else {
        return;
    };
    let counted = counts
        .get(call.id)
        .copied()
        .or_else(|| edit_counts(call.input, call.result));
    let f = t.file(path);
    f.fate = match &f.fate {
        Fate::Created => Fate::Created,
        _ => Fate::Edited,
    };
    f.changes += 1;
    match counted {
        Some(c) => f.counts.add(c),
        None => f.uncounted += 1,
    }
}

/// An edit's line counts from its own input: the diff of `old_string` and `new_string`, times
/// the occurrences its result says were replaced.
fn edit_counts(input: &Value, result: &str) -> Option<LineCounts> {
    let old = input.get("old_string").and_then(Value::as_str)?;
    let new = input.get("new_string").and_then(Value::as_str)?;
    let d = FileDiff::new("", Some(old), new, DiffLimits::RESULT);
    let times = result
        .split_once(": replaced ")
        .and_then(|(_, r)| r.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(1);
    Some(LineCounts {
        added: (d.added as u64).saturating_mul(times),
        removed: (d.removed as u64).saturating_mul(times),
    })
}

fn write(t: &mut Touched, call: &Call, counts: &HashMap<String, LineCounts>, ws: Option<&Path>) {
    let Some(path) = path_of(call, ws) else {
        return;
    };
    let created = call.result.starts_with("Created ");
    // `(12 bytes, 3 lines).`
    let lines = call
        .result
        .rsplit_once(" bytes, ")
        .and_then(|(_, r)| r.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok());
    let counted = counts.get(call.id).copied().or(match (created, lines) {
        (true, Some(n)) => Some(LineCounts {
            added: n,
            removed: 0,
        }),
        _ => None,
    });
    let f = t.file(path);
    f.fate = match (&f.fate, created) {
        (Fate::Created | Fate::Transient, _) => Fate::Created,
        // Made again after it was deleted or moved away: changed, not new.
        (Fate::Deleted { .. } | Fate::Moved { .. }, true) => Fate::Edited,
        (_, true) => Fate::Created,
        (_, false) => Fate::Edited,
    };
    f.changes += 1;
    match counted {
        Some(c) => f.counts.add(c),
        None => f.uncounted += 1,
    }
    if lines.is_some() {
        f.total = lines;
    }
}

/// How a `bash` result says its command ended; None when it never started (denied, not run,
/// bad arguments).
pub(super) fn exit_of(result: &str) -> Option<Exit> {
    for line in result.lines().rev().take(4) {
        let l = line.trim();
        let Some(inner) = l.strip_prefix('[') else {
            continue;
        };
        if let Some(rest) = inner.strip_prefix("exit code ") {
            let code: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '-')
                .collect();
            return code.parse().ok().map(Exit::Code);
        }
        if let Some(rest) = inner.strip_prefix("killed by signal ") {
            let sig: String = rest.chars().take_while(char::is_ascii_digit).collect();
            return sig.parse().ok().map(Exit::Signal);
        }
        if inner.starts_with("timed out after") {
            return Some(Exit::TimedOut);
        }
        if inner.starts_with("interrupted after") {
            return Some(Exit::Interrupted);
        }
        if inner.starts_with("exit status unknown") {
            return Some(Exit::Unknown);
        }
    }
    None
}

/// One run of a command; `for_files`: its exit when what it did to files stands (None: undone).
fn command(
    t: &mut Touched,
    call: &Call,
    exit: Exit,
    for_files: Option<Exit>,
    at: usize,
    ws: Option<&Path>,
) {
    let raw = call
        .input
        .get("command")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let line = one_line(raw);
    match t.commands.iter_mut().find(|c| c.command == line) {
        Some(c) => {
            c.runs += 1;
            c.failed += u32::from(exit.failed());
            c.last = exit;
            c.last_at = at;
        }
        None => t.commands.push(CommandRuns {
            command: line.clone(),
            runs: 1,
            failed: u32::from(exit.failed()),
            last: exit,
            last_at: at,
        }),
    }
    if let Some(kind) = shapes::check_kind(raw) {
        t.check = Some(Check {
            command: line,
            kind,
            exit,
            line: shapes::telling_line(call.result),
        });
    }
    if for_files != Some(Exit::Code(0)) {
        return;
    }
    if let Some(paths) = shapes::removed(raw) {
        for p in paths {
            let f = t.file(normalise(&p, ws));
            f.fate = match f.fate {
                Fate::Created | Fate::Transient => Fate::Transient,
                _ => Fate::Deleted { lines: f.total },
            };
        }
    } else if let Some((from, to)) = shapes::moved(raw) {
        let to = normalise(&to, ws);
        let f = t.file(normalise(&from, ws));
        f.fate = Fate::Moved { to };
    }
}

/// A command on one line: its first line (` …` when there are more), cut to [`COMMAND_CHARS`].
fn one_line(command: &str) -> String {
    let trimmed = command.trim();
    let first = trimmed.lines().next().unwrap_or_default();
    let mut line = crate::engine::text::one_line(first, COMMAND_CHARS);
    if trimmed.lines().nth(1).is_some() {
        line.push_str(" …");
    }
    line
}
