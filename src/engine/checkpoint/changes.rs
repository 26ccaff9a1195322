//! What changed between two checkpoints, file by file, as a person (and the ledger) reads it:
//! created, modified, deleted, or only its permission bits changed, with the lines added and
//! removed for text files. Directories are not listed (a restore still creates and removes them).

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use similar::{Algorithm, DiffTag};

use super::error::CheckpointError;
use super::object::Objects;
use super::path::RelPath;
use super::tree::{Delta, Node};

/// Files larger than this (either side) get no line counts.
const MAX_COUNTED_BYTES: u64 = 2 * 1024 * 1024;
/// Counting the lines of one pair of files gives up refining after this long (the counts stay
/// correct, only less minimal).
const COUNT_TIMEOUT: Duration = Duration::from_millis(100);

/// One file (or symbolic link) that differs between two checkpoints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    pub path: RelPath,
    pub kind: ChangeKind,
    /// Lines added and removed; None for binary, link, unstored or very large files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<LineCounts>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Created,
    Modified,
    Deleted,
    /// Same bytes, other permission bits (e.g. `chmod +x`).
    ModeChanged,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineCounts {
    pub added: u64,
    pub removed: u64,
}

/// The file-level changes in `deltas` (sorted by path, as the deltas are).
pub(crate) fn file_changes(
    objects: &Objects,
    deltas: &[Delta],
) -> Result<Vec<FileChange>, CheckpointError> {
    let counted = |n: &Option<Node>| match n {
        Some(Node::File { id, size, .. }) if *size <= MAX_COUNTED_BYTES => Some(*id),
        _ => None,
    };
    objects.prefetch(
        deltas
            .iter()
            .flat_map(|d| [counted(&d.before), counted(&d.after)])
            .flatten(),
    );
    let mut out = Vec::new();
    for delta in deltas {
        let Some(kind) = kind_of(delta) else {
            continue;
        };
        let lines = match kind {
            ChangeKind::ModeChanged => Some(LineCounts {
                added: 0,
                removed: 0,
            }),
            _ => line_counts(objects, leaf(delta.before), leaf(delta.after))?,
        };
        out.push(FileChange {
            path: delta.path.clone(),
            kind,
            lines,
        });
    }
    Ok(out)
}

/// The files `deltas` change and how, without counting lines (sorted by path).
pub(crate) fn file_kinds(deltas: &[Delta]) -> Vec<(RelPath, ChangeKind)> {
    deltas
        .iter()
        .filter_map(|d| Some((d.path.clone(), kind_of(d)?)))
        .collect()
}

/// How a delta changes a file; None when it is about directories only.
fn kind_of(delta: &Delta) -> Option<ChangeKind> {
    Some(match (leaf(delta.before), leaf(delta.after)) {
        (None, None) => return None,
        (None, Some(_)) => ChangeKind::Created,
        (Some(_), None) => ChangeKind::Deleted,
        (Some(Node::File { id: a, .. }), Some(Node::File { id: b, .. })) if a == b => {
            ChangeKind::ModeChanged
        }
        (Some(_), Some(_)) => ChangeKind::Modified,
    })
}

/// A node that is a file-like entry (not a directory).
fn leaf(node: Option<Node>) -> Option<Node> {
    node.filter(|n| !n.is_dir())
}

/// The text of one side: Some("") for an absent side, None when it is not countable text.
fn text_of(objects: &Objects, node: Option<Node>) -> Result<Option<String>, CheckpointError> {
    match node {
        None => Ok(Some(String::new())),
        Some(Node::File { id, size, .. }) if size <= MAX_COUNTED_BYTES => {
            let bytes = objects.get(&id)?;
            if bytes.contains(&0) {
                return Ok(None);
            }
            Ok(String::from_utf8(bytes).ok())
        }
        Some(_) => Ok(None),
    }
}

fn line_counts(
    objects: &Objects,
    before: Option<Node>,
    after: Option<Node>,
) -> Result<Option<LineCounts>, CheckpointError> {
    let (Some(old), Some(new)) = (text_of(objects, before)?, text_of(objects, after)?) else {
        return Ok(None);
    };
    Ok(Some(count_lines(&old, &new)))
}

/// Lines added and removed from `old` to `new`.
pub(crate) fn count_lines(old: &str, new: &str) -> LineCounts {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let deadline = Instant::now().checked_add(COUNT_TIMEOUT);
    let ops = similar::capture_diff_slices_deadline(Algorithm::Patience, &a, &b, deadline);
    let mut counts = LineCounts {
        added: 0,
        removed: 0,
    };
    for op in ops {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => {}
            DiffTag::Delete => counts.removed += old_range.len() as u64,
            DiffTag::Insert => counts.added += new_range.len() as u64,
            DiffTag::Replace => {
                counts.removed += old_range.len() as u64;
                counts.added += new_range.len() as u64;
            }
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_lines_like_a_unified_diff() {
        let c = count_lines("a\nb\nc\n", "a\nB\nc\nd\n");
        assert_eq!((c.added, c.removed), (2, 1));
        let c = count_lines("", "one\ntwo");
        assert_eq!((c.added, c.removed), (2, 0));
        let c = count_lines("x\n", "x\n");
        assert_eq!((c.added, c.removed), (0, 0));
        // An append to a last line without its newline changes that line.
        let c = count_lines("log", "log\nmore\n");
        assert_eq!((c.added, c.removed), (2, 1));
    }
}
