//! The per-turn tool-result budget: results too large for the context are written to a
//! spill file and replaced by a preview that says how to read the rest with `read_file`.

use std::io;
use std::path::{Path, PathBuf};

use crate::engine::fsutil::write_new;

use super::paths::{self, default_spill_dir};
use super::{ToolCtx, ToolOutput};

/// A single result longer than this many characters is spilled.
pub(crate) const SPILL_SINGLE_LIMIT: usize = 100_000;
/// A result that takes the turn's running total over this many characters is spilled.
pub(crate) const SPILL_TURN_LIMIT: usize = 200_000;
/// Characters of a spilled result shown to the model: the first [`PREVIEW_HEAD_CHARS`] and the
/// last `SPILL_PREVIEW_CHARS - PREVIEW_HEAD_CHARS` (where a command's errors and exit code are).
pub(crate) const SPILL_PREVIEW_CHARS: usize = 1_500;
const PREVIEW_HEAD_CHARS: usize = 1_000;
/// Spill file numbers tried past the last one used before giving up.
const MAX_SPILL_NAMES: u64 = 100_000;

/// Tracks one session's turn total and numbers its spill files.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Spiller {
    turn_total: usize,
    counter: u64,
}

impl Spiller {
    /// A spiller at the start of a session.
    pub fn new() -> Self {
        Self::default()
    }

    /// A new user turn: the running total starts again from zero (file numbers go on).
    pub fn start_turn(&mut self) {
        self.turn_total = 0;
    }

    /// Characters of tool results the model has been given this turn.
    #[cfg(test)]
    pub fn turn_total(&self) -> usize {
        self.turn_total
    }

    /// Applies the budget to one result. `read_file` and `recall` results are never spilled
    /// (they page), but they count toward the turn's total. When the spill file cannot be written, the result is
    /// cut to the preview and says why.
    pub fn apply(&mut self, tool: &str, out: ToolOutput, ctx: &ToolCtx) -> ToolOutput {
        let len = out.content.chars().count();
        let fits = len <= SPILL_SINGLE_LIMIT && self.turn_total + len <= SPILL_TURN_LIMIT;
        if matches!(tool, super::names::READ_FILE | super::names::RECALL) || fits {
            self.turn_total += len;
            return out;
        }
        let reason = if len > SPILL_SINGLE_LIMIT {
            format!("over the {SPILL_SINGLE_LIMIT}-character limit for one result")
        } else {
            format!("it would take this turn's tool results over {SPILL_TURN_LIMIT} characters")
        };
        let dir = ctx.spill_dir.clone().unwrap_or_else(default_spill_dir);
        let spilled = self.write(&dir, &ctx.session_id, &out.content);
        let content = match &spilled {
            Ok(path) => notice(
                &out.content,
                len,
                &reason,
                Ok(&paths::display(&ctx.workspace, path)),
            ),
            Err(e) => notice(&out.content, len, &reason, Err(e)),
        };
        self.turn_total += content.chars().count();
        ToolOutput {
            content,
            is_error: out.is_error,
            spilled: spilled.ok(),
            diff: out.diff,
            exit: out.exit,
            sandbox: out.sandbox,
            appendix: out.appendix,
            images: out.images,
        }
    }

    /// Writes `content` to the next free `<dir>/<session>-<n>.txt`; never overwrites a file.
    fn write(&mut self, dir: &Path, session: &str, content: &str) -> io::Result<PathBuf> {
        let session = safe_file_stem(session);
        let from = self.counter;
        let names = (1..=MAX_SPILL_NAMES).map(|k| format!("{session}-{}.txt", from + k));
        let file = write_new(dir, names, content.as_bytes())?;
        // The numbers go on after the one taken (names skipped were another writer's).
        self.counter = from + file.index as u64 + 1;
        Ok(file.path)
    }
}

/// The session id as a file-name stem (no separators or control characters).
fn safe_file_stem(session: &str) -> String {
    let s: String = session
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_start_matches('.');
    if s.is_empty() {
        "session".into()
    } else {
        s.to_owned()
    }
}

/// What the model sees instead of a spilled result.
fn notice(full: &str, len: usize, reason: &str, saved: Result<&str, &io::Error>) -> String {
    let lines = full.lines().count();
    let preview = preview(full, len);
    match saved {
        Ok(path) => format!(
            "[This result is {len} characters ({lines} lines), {reason}, so it was saved in full \
             to {path}. Read it with read_file, e.g. {{\"path\": {}, \"offset\": 1, \
             \"limit\": 200}}, and continue with a higher offset; or grep it. A preview of \
             {SPILL_PREVIEW_CHARS} characters (its start and end) follows.]\n{preview}",
            serde_json::Value::from(path)
        ),
        Err(e) => format!(
            "[This result is {len} characters ({lines} lines), {reason}, and it could not be \
             saved to a spill file ({e}), so only a preview of {SPILL_PREVIEW_CHARS} characters \
             (its start and end) is shown. Run a narrower command to see the rest.]\n{preview}"
        ),
    }
}

/// The first [`PREVIEW_HEAD_CHARS`] and the last characters of `full`, [`SPILL_PREVIEW_CHARS`]
/// in all, with a marker for what lies between. `len` is `full`'s length in characters.
pub fn preview(full: &str, len: usize) -> String {
    if len <= SPILL_PREVIEW_CHARS {
        return full.to_owned();
    }
    let tail_chars = SPILL_PREVIEW_CHARS - PREVIEW_HEAD_CHARS;
    let head_end = full
        .char_indices()
        .nth(PREVIEW_HEAD_CHARS)
        .map_or(full.len(), |(i, _)| i);
    let tail_start = full
        .char_indices()
        .nth(len - tail_chars)
        .map_or(full.len(), |(i, _)| i);
    format!(
        "{}\n[... {} characters not shown: read them from the spill file ...]\n{}",
        &full[..head_end],
        len - SPILL_PREVIEW_CHARS,
        &full[tail_start..]
    )
}

#[cfg(test)]
mod tests;
