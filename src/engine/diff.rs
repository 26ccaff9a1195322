//! Unified diffs of a file change, structured for front ends: hunks with a few lines of context,
//! every line with its old and new number and its kind, so a UI colours it without diffing again.
//!
//! `edit_file` and `write_file` attach one to their result, and the approval request carries one as
//! its preview. Long diffs keep their first hunks up to a line budget and count the rest
//! ([`FileDiff::hidden_hunks`], [`FileDiff::hidden_lines`]); a new file is its first lines as added.
//! The lines come from the `similar` crate (patience diff, which anchors on unique lines as `git
//! diff --patience` does and reads well for code; with a deadline so a pathological pair of files
//! cannot stall a tool call).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde::Serialize;
use similar::{Algorithm, DiffOp};

/// How much of a change a diff keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffLimits {
    /// Unchanged lines shown around each change.
    pub context: usize,
    /// Lines (of every kind) kept in the hunks; the hunks past this budget are counted, not kept.
    pub max_lines: usize,
    /// A longer line is cut to this many characters (with `…`).
    pub max_line_chars: usize,
}

impl DiffLimits {
    /// A tool result's diff (the chat cell).
    pub const RESULT: DiffLimits = DiffLimits {
        context: 3,
        max_lines: 400,
        max_line_chars: 500,
    };
    /// An approval preview: the whole change, as far as a person can read it.
    pub const PREVIEW: DiffLimits = DiffLimits {
        context: 3,
        max_lines: 5_000,
        max_line_chars: 2_000,
    };
}

/// Past this size (either side) no diff is computed: the counts of lines are given instead.
pub(crate) const MAX_DIFF_BYTES: usize = 8 * 1024 * 1024;
/// The diff gives up refining after this long and reports a coarser (still correct) diff.
const DIFF_TIMEOUT: Duration = Duration::from_millis(200);

/// What happened to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileChange {
    /// The file did not exist: every line is added.
    Created,
    /// An existing text file changed.
    Modified,
}

/// The kind of one diff line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LineKind {
    /// Unchanged (shown for context): both numbers are set.
    Context,
    /// Only in the new file: `new` is set.
    Added,
    /// Only in the old file: `old` is set.
    Removed,
}

/// One line of a hunk. Numbers are 1-based.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffLine {
    pub kind: LineKind,
    pub old: Option<u32>,
    pub new: Option<u32>,
    /// The line without its line ending (cut at [`DiffLimits::max_line_chars`]).
    pub text: String,
}

/// A run of changes with its context, like a `@@ -old_start,old_lines +new_start,new_lines @@` hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hunk {
    pub old_start: u32,
    pub old_lines: u32,
    pub new_start: u32,
    pub new_lines: u32,
    pub lines: Vec<DiffLine>,
}

/// A file change as a unified diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    /// The path as the tool shows it (relative to the workspace when inside it).
    pub path: String,
    pub change: FileChange,
    /// Lines added and removed by the whole change (the hidden ones too).
    pub added: usize,
    pub removed: usize,
    /// The hunks kept, in file order.
    pub hunks: Vec<Hunk>,
    /// Hunks of the change left out (the line budget was spent).
    pub hidden_hunks: usize,
    /// Lines left out: those of the hidden hunks, and of a cut hunk or a new file past the budget.
    pub hidden_lines: usize,
    /// The files were too large to diff: only the counts of lines are given (`added` = the new
    /// file's lines, `removed` = the old file's).
    pub too_large: bool,
}

impl FileDiff {
    /// The diff of `old` (None: the file is new) against `new`, kept within `limits`.
    pub fn new(path: &str, old: Option<&str>, new: &str, limits: DiffLimits) -> FileDiff {
        match old {
            None => created(path, new, limits),
            Some(old) => modified(path, old, new, limits),
        }
    }

    /// `+3 -1`, the counts a collapsed view shows.
    pub fn stat(&self) -> String {
        format!("+{} -{}", self.added, self.removed)
    }

    /// Whether the change changes nothing.
    pub fn is_empty(&self) -> bool {
        self.added == 0 && self.removed == 0
    }

    /// The diff as unified-diff text with line numbers (`-  12 old`, `+  12 new`, `   13 same`),
    /// for logs, tests and plain-text front ends.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for h in &self.hunks {
            out.push_str(&format!(
                "@@ -{},{} +{},{} @@\n",
                h.old_start, h.old_lines, h.new_start, h.new_lines
            ));
            for l in &h.lines {
                let (sign, n) = match l.kind {
                    LineKind::Context => (' ', l.new),
                    LineKind::Added => ('+', l.new),
                    LineKind::Removed => ('-', l.old),
                };
                let n = n.map(|n| n.to_string()).unwrap_or_default();
                out.push_str(&format!("{sign}{n:>5} {}\n", l.text));
            }
        }
        if self.hidden_hunks > 0 || self.hidden_lines > 0 {
            out.push_str(&format!(
                "… {} more lines in {} more hunks\n",
                self.hidden_lines, self.hidden_hunks
            ));
        }
        out
    }
}

/// A line without its ending, cut to `max` characters.
fn line_text(line: &str, max: usize) -> String {
    let line = line.strip_suffix('\n').unwrap_or(line);
    let line = line.strip_suffix('\r').unwrap_or(line);
    match line.char_indices().nth(max) {
        None => line.to_string(),
        Some((cut, _)) => format!("{}…", line.get(..cut).unwrap_or(line)),
    }
}

/// Lines as an editor counts them: a final line without `\n` still counts.
fn count_lines(s: &str) -> usize {
    s.split_inclusive('\n').count()
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn created(path: &str, new: &str, limits: DiffLimits) -> FileDiff {
    let total = count_lines(new);
    if new.len() > MAX_DIFF_BYTES {
        return FileDiff {
            path: path.to_string(),
            change: FileChange::Created,
            added: total,
            removed: 0,
            hunks: Vec::new(),
            hidden_hunks: 0,
            hidden_lines: total,
            too_large: true,
        };
    }
    let lines: Vec<DiffLine> = new
        .split_inclusive('\n')
        .take(limits.max_lines)
        .enumerate()
        .map(|(i, l)| DiffLine {
            kind: LineKind::Added,
            old: None,
            new: Some(to_u32(i + 1)),
            text: line_text(l, limits.max_line_chars),
        })
        .collect();
    let shown = lines.len();
    let hunks = if lines.is_empty() {
        Vec::new()
    } else {
        vec![Hunk {
            old_start: 0,
            old_lines: 0,
            new_start: 1,
            new_lines: to_u32(shown),
            lines,
        }]
    };
    FileDiff {
        path: path.to_string(),
        change: FileChange::Created,
        added: total,
        removed: 0,
        hunks,
        hidden_hunks: 0,
        hidden_lines: total - shown,
        too_large: false,
    }
}

fn modified(path: &str, old: &str, new: &str, limits: DiffLimits) -> FileDiff {
    if old.len() > MAX_DIFF_BYTES || new.len() > MAX_DIFF_BYTES {
        return FileDiff {
            path: path.to_string(),
            change: FileChange::Modified,
            added: count_lines(new),
            removed: count_lines(old),
            hunks: Vec::new(),
            hidden_hunks: 0,
            hidden_lines: 0,
            too_large: true,
        };
    }
    // Lines become small integers first (equal lines, equal ids): the diff then compares
    // integers, not strings, which is what keeps a 5,000-line rewrite within a few milliseconds.
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let mut ids: HashMap<&str, u32> = HashMap::with_capacity(old_lines.len());
    let a = intern(&mut ids, &old_lines);
    let b = intern(&mut ids, &new_lines);
    let deadline = Instant::now().checked_add(DIFF_TIMEOUT);
    let ops = similar::capture_diff_slices_deadline(Algorithm::Patience, &a, &b, deadline);
    let (mut added, mut removed) = (0, 0);
    for op in &ops {
        removed += op_len(op, Side::Old);
        added += op_len(op, Side::New);
    }
    let mut out = FileDiff {
        path: path.to_string(),
        change: FileChange::Modified,
        added,
        removed,
        hunks: Vec::new(),
        hidden_hunks: 0,
        hidden_lines: 0,
        too_large: false,
    };
    let mut budget = limits.max_lines;
    for group in similar::group_diff_ops(ops, limits.context) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        let size: usize = group
            .iter()
            .map(|op| match op {
                DiffOp::Equal { len, .. } => *len,
                _ => op_len(op, Side::Old) + op_len(op, Side::New),
            })
            .sum();
        if budget == 0 {
            out.hidden_hunks += 1;
            out.hidden_lines += size;
            continue;
        }
        let mut lines = Vec::with_capacity(size.min(budget));
        let mut push = |kind: LineKind, o: Option<usize>, n: Option<usize>| {
            if lines.len() == budget {
                return;
            }
            let text = match (kind, o, n) {
                (LineKind::Added, _, Some(n)) => new_lines.get(n),
                (_, Some(o), _) => old_lines.get(o),
                _ => None,
            };
            lines.push(DiffLine {
                kind,
                old: o.map(|i| to_u32(i + 1)),
                new: n.map(|i| to_u32(i + 1)),
                text: line_text(text.copied().unwrap_or(""), limits.max_line_chars),
            });
        };
        for op in &group {
            let (o, n) = (op.old_range(), op.new_range());
            match op {
                DiffOp::Equal { .. } => {
                    for (i, j) in o.zip(n) {
                        push(LineKind::Context, Some(i), Some(j));
                    }
                }
                _ => {
                    // A replacement reads as its old lines, then its new ones.
                    for i in o {
                        push(LineKind::Removed, Some(i), None);
                    }
                    for j in n {
                        push(LineKind::Added, None, Some(j));
                    }
                }
            }
        }
        out.hidden_lines += size - lines.len();
        budget -= lines.len();
        out.hunks.push(Hunk {
            // An empty side starts at the line before it, as `diff -u` writes it.
            old_start: to_u32(old_range.start + usize::from(!old_range.is_empty())),
            old_lines: to_u32(old_range.len()),
            new_start: to_u32(new_range.start + usize::from(!new_range.is_empty())),
            new_lines: to_u32(new_range.len()),
            lines,
        });
    }
    out
}

/// Each line's id: equal lines get equal ids.
fn intern<'a>(ids: &mut HashMap<&'a str, u32>, lines: &[&'a str]) -> Vec<u32> {
    lines
        .iter()
        .map(|l| {
            let next = to_u32(ids.len());
            *ids.entry(l).or_insert(next)
        })
        .collect()
}

#[derive(Clone, Copy)]
enum Side {
    Old,
    New,
}

/// Lines an op takes from one side (an equal run counts on neither).
fn op_len(op: &DiffOp, side: Side) -> usize {
    match (op, side) {
        (DiffOp::Equal { .. }, _) => 0,
        (_, Side::Old) => op.old_range().len(),
        (_, Side::New) => op.new_range().len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn one_changed_line_has_context_and_numbers() {
        let old = numbered(10);
        let new = old.replace("line 5\n", "line five\n");
        let d = FileDiff::new("a.txt", Some(&old), &new, DiffLimits::RESULT);
        assert_eq!((d.added, d.removed, d.change), (1, 1, FileChange::Modified));
        assert_eq!(d.hunks.len(), 1);
        assert_eq!(
            d.to_text(),
            "@@ -2,7 +2,7 @@\n     2 line 2\n     3 line 3\n     4 line 4\n-    5 line 5\n+    5 line five\n     6 line 6\n     7 line 7\n     8 line 8\n"
        );
        let h = &d.hunks[0];
        assert_eq!(
            h.lines[3],
            DiffLine {
                kind: LineKind::Removed,
                old: Some(5),
                new: None,
                text: "line 5".into()
            }
        );
        assert_eq!(h.lines[4].new, Some(5));
        assert_eq!((h.lines[0].old, h.lines[0].new), (Some(2), Some(2)));
        assert_eq!(d.stat(), "+1 -1");
    }

    #[test]
    fn inserted_lines_shift_the_new_numbers() {
        let old = numbered(6);
        let new = old.replace("line 3\n", "line 3\nnew a\nnew b\n");
        let d = FileDiff::new("a", Some(&old), &new, DiffLimits::RESULT);
        assert_eq!((d.added, d.removed), (2, 0));
        let h = &d.hunks[0];
        assert_eq!(
            (h.old_start, h.old_lines, h.new_start, h.new_lines),
            (1, 6, 1, 8)
        );
        let last = h.lines.last().unwrap();
        assert_eq!((last.old, last.new), (Some(6), Some(8)));
    }

    #[test]
    fn far_apart_changes_are_separate_hunks_and_long_diffs_count_the_rest() {
        let old = numbered(1000);
        let mut new = old.clone();
        for i in (10..1000).step_by(20) {
            new = new.replace(&format!("line {i}\n"), &format!("LINE {i}\n"));
        }
        let full = FileDiff::new("a", Some(&old), &new, DiffLimits::PREVIEW);
        assert_eq!(full.hunks.len(), 50);
        assert_eq!((full.hidden_hunks, full.hidden_lines), (0, 0));
        let limits = DiffLimits {
            max_lines: 20,
            ..DiffLimits::RESULT
        };
        let cut = FileDiff::new("a", Some(&old), &new, limits);
        // Each hunk is 3 + 2 + 3 lines: two whole, one cut at the budget, the rest counted.
        assert_eq!(cut.hunks.len(), 3);
        assert_eq!(cut.hunks.iter().map(|h| h.lines.len()).sum::<usize>(), 20);
        assert_eq!(cut.hidden_hunks, 47);
        assert_eq!(cut.hidden_lines, 47 * 8 + 4);
        assert_eq!(
            (cut.added, cut.removed),
            (50, 50),
            "counts cover the whole change"
        );
        assert!(
            cut.to_text()
                .ends_with("… 380 more lines in 47 more hunks\n")
        );
    }

    #[test]
    fn a_new_file_is_its_first_lines_added() {
        let d = FileDiff::new("new.rs", None, &numbered(1000), DiffLimits::RESULT);
        assert_eq!(d.change, FileChange::Created);
        assert_eq!((d.added, d.removed), (1000, 0));
        assert_eq!(d.hunks[0].lines.len(), 400);
        assert_eq!(d.hidden_lines, 600);
        assert!(d.hunks[0].lines.iter().all(|l| l.kind == LineKind::Added));
        assert_eq!(d.hunks[0].lines[0].new, Some(1));
        let empty = FileDiff::new("e", None, "", DiffLimits::RESULT);
        assert!(empty.hunks.is_empty() && empty.is_empty());
    }

    #[test]
    fn line_endings_and_long_lines() {
        let d = FileDiff::new("a", Some("a\r\nb\r\n"), "a\r\nc\r\n", DiffLimits::RESULT);
        assert_eq!(d.hunks[0].lines[1].text, "b");
        let long = "x".repeat(600);
        let d = FileDiff::new("a", None, &long, DiffLimits::RESULT);
        let text = &d.hunks[0].lines[0].text;
        assert_eq!(text.chars().count(), 501);
        assert!(text.ends_with('…'));
        // A final line without a newline counts.
        let d = FileDiff::new("a", Some("a\nb"), "a\nb\nc", DiffLimits::RESULT);
        assert_eq!((d.added, d.removed), (2, 1));
        assert!(FileDiff::new("a", Some("same\n"), "same\n", DiffLimits::RESULT).is_empty());
    }

    #[test]
    fn wire_shape() {
        let d = FileDiff::new("a", Some("x\n"), "y\n", DiffLimits::RESULT);
        assert_eq!(
            serde_json::to_string(&d).unwrap(),
            r#"{"path":"a","change":"modified","added":1,"removed":1,"hunks":[{"old_start":1,"old_lines":1,"new_start":1,"new_lines":1,"lines":[{"kind":"removed","old":1,"new":null,"text":"x"},{"kind":"added","old":null,"new":1,"text":"y"}]}],"hidden_hunks":0,"hidden_lines":0,"too_large":false}"#
        );
    }
}
