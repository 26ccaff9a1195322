//! Oversized user input (a 10 MB paste, say): a message too large for one message or for a
//! fresh session below the handoff line is saved to `<spill dir>/input-<n>.txt`; the model gets a
//! preview plus the path and how to read the rest, and the user is told. The request in flight
//! that a successor carries is held to the same line: a message that no longer fits (the window
//! was learned smaller after it was admitted) is spilled the same way.

use std::path::{Path, PathBuf};

use super::counters::Counters;
use super::outbox::Outbox;
use crate::engine::context::Thresholds;
use crate::engine::fsutil::write_new;
use crate::engine::protocol::Event;
use crate::engine::tools::{self, SPILL_PREVIEW_CHARS};
use crate::engine::types::{Block, Message};

/// A user message longer than this many characters is spilled.
const INPUT_SPILL_LIMIT: usize = 100_000;
/// Input spill file numbers tried before giving up.
const MAX_INPUT_NAMES: usize = 100_000;
/// Tokens kept for the note that introduces the request in the successor's briefing.
const REQUEST_NOTE_TOKENS: u64 = 200;

/// Why a message is spilled, in words for the model and the user.
fn spill_reason(chars: usize, tokens_over_line: bool) -> String {
    if chars > INPUT_SPILL_LIMIT {
        format!("over the {INPUT_SPILL_LIMIT}-character limit for one message")
    } else if tokens_over_line {
        "too large to fit below the handoff line even in a fresh session".to_string()
    } else {
        String::new()
    }
}

/// What a user message is measured against and where it goes when it is too large.
pub(super) struct InputRoom<'a> {
    /// Where spill files go (`<workbench>/spill`, or the run directory's `spill/`).
    pub(super) dir: PathBuf,
    /// The workspace, for the path the model is told.
    pub(super) workspace: &'a Path,
    /// The handoff line and the window in force.
    pub(super) thresholds: Thresholds,
    /// Tokens a fresh session starts with before any message: system prompt and tool list.
    pub(super) floor: u64,
    /// The model's calibrated token ratio (it estimates bytes: requests are measured in them).
    pub(super) counters: &'a Counters,
    /// Where the user hears about a spill.
    pub(super) out: Outbox,
}

impl InputRoom<'_> {
    /// The message as the model gets it: `text` itself, or — when it is too large — a notice
    /// with a preview and the path of the file that holds all of it (the user hears about it).
    pub(super) fn admit(&self, text: String) -> String {
        let chars = text.chars().count();
        // The ratio is learned in bytes (what requests are measured in): a character outside
        // ASCII is two to four of them.
        let over_line = self.counters.estimate(text.len()) + self.floor >= self.thresholds.at;
        if chars <= INPUT_SPILL_LIMIT && !over_line {
            return text;
        }
        let reason = spill_reason(chars, over_line);
        self.spill(&text, &reason)
    }

    /// The request in flight as the successor gets it after `before` (the rest of its first
    /// message): when it all would not fit below the handoff line of a fresh session (a window
    /// learned smaller since the request was admitted), its largest messages are spilled like
    /// an oversized input until it fits. Returns whether any message was spilled.
    pub(super) fn fit(&self, request: &mut [String], before: &Message) -> bool {
        // Sizes in bytes, the unit the token ratio is learned in.
        let text_bytes = |m: &Message| -> usize {
            m.content
                .iter()
                .map(|b| match b {
                    Block::Text { text } => text.len(),
                    _ => 0,
                })
                .sum()
        };
        let estimate = |bytes: usize| self.counters.estimate(bytes);
        let floor = self.floor + estimate(text_bytes(before)) + REQUEST_NOTE_TOKENS;
        let mut sizes: Vec<(usize, u64)> = request
            .iter()
            .map(|m| estimate(m.len()))
            .enumerate()
            .collect();
        let mut total = floor + sizes.iter().map(|(_, t)| t).sum::<u64>();
        if total < self.thresholds.at {
            return false;
        }
        sizes.sort_by_key(|s| std::cmp::Reverse(s.1));
        let mut spilled = false;
        for (i, tokens) in sizes {
            if total < self.thresholds.at {
                break;
            }
            let Some(message) = request.get_mut(i) else {
                continue;
            };
            let reason = format!(
                "too large for the successor: the window is now {} tokens and its briefing \
                 leaves too little room below the handoff line",
                self.thresholds.window
            );
            let reference = self.spill(message, &reason);
            total = total - tokens + estimate(reference.len());
            *message = reference;
            spilled = true;
        }
        spilled
    }

    /// Save `text` in full to a new file in the spill directory; what the model gets instead: a
    /// notice with the path and a preview (or only the preview when the file cannot be written).
    fn spill(&self, text: &str, reason: &str) -> String {
        let chars = text.chars().count();
        let dir = &self.dir;
        let names = (1..=MAX_INPUT_NAMES).map(|n| format!("input-{n}.txt"));
        let lines = text.lines().count();
        let preview = tools::spill_preview(text, chars);
        match write_new(dir, names, text.as_bytes()) {
            Ok(file) => {
                let shown = tools::paths::display(self.workspace, &file.path);
                self.out.emit(Event::Notice {
                    message: format!(
                        "your message is {chars} characters, {reason}: saved in full to {}; the \
                         model gets its first and last {SPILL_PREVIEW_CHARS} characters and reads \
                         the rest from the file",
                        file.path.display()
                    ),
                });
                format!(
                    "[The user's message is {chars} characters ({lines} lines), {reason}, so it \
                     was saved in full to {shown}. Read it with read_file, e.g. {{\"path\": {}, \
                     \"offset\": 1, \"limit\": 200}}, and continue with a higher offset; or grep \
                     it. A preview of {SPILL_PREVIEW_CHARS} characters (its start and end) \
                     follows.]\n{preview}",
                    serde_json::Value::from(shown.as_str())
                )
            }
            Err(e) => {
                self.out.emit(Event::Warning {
                    message: format!(
                        "your message is {chars} characters, {reason}, and it could not be saved \
                         in {} ({e}): the model gets only its first and last \
                         {SPILL_PREVIEW_CHARS} characters",
                        dir.display()
                    ),
                });
                format!(
                    "[The user's message is {chars} characters ({lines} lines), {reason}, and it \
                     could not be saved to a file ({e}), so only a preview of \
                     {SPILL_PREVIEW_CHARS} characters (its start and end) is shown. Ask the user \
                     for the part you need.]\n{preview}"
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_name_the_limit_that_was_crossed() {
        assert!(spill_reason(INPUT_SPILL_LIMIT + 1, false).contains("100000-character"));
        assert!(spill_reason(10, true).contains("handoff line"));
    }
}
