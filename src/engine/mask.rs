//! Observation masking: in the main thread's requests, the output of tool calls older than a
//! recent window is replaced by a one-line stub that names the call, says how large the output
//! was and how to get it back. The session's history and its transcript keep everything; only
//! what a request sends is masked.
//!
//! The prompt cache reads the longest prefix a request shares with an earlier one, so masking
//! moves in large steps. Messages before the *boundary* have their tool results masked, the rest
//! are sent as they are. The boundary only moves forward, and only when masking everything older
//! than the recent window would free at least [`MaskSettings::step_percent`] of the context
//! window; between two steps every request's prefix is the previous request's prefix. The newest
//! message is never masked (the model has not read it yet), and a result shorter than a stub is
//! left as it is.
//!
//! Images are masked the same way: an old image becomes a line naming it and where it is stored
//! (in its call's result when a tool returned it), and an old web search's results (the
//! provider's server tool) become the list of pages it found.
//!
//! Pure: sizes come from the caller, as tokens of a message.

use std::collections::HashMap;

use serde_json::Value;

use crate::engine::types::{Block, Message};

/// A result shorter than this many characters is never masked (a stub would not be shorter).
pub(crate) const MIN_MASKED_CHARS: usize = 600;
/// Arguments shown in a stub, at most (characters).
const STUB_ARGS_CHARS: usize = 160;
/// What an old image's stub says instead of the image.
const IMAGE_MASKED: &str = "masked to save context; read_file its stored path to see it again";
/// The input of a call the history does not hold.
static NO_INPUT: Value = Value::Null;

/// `mask_tool_results = on|off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskMode {
    On,
    Off,
}

/// How the main thread's requests are masked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaskSettings {
    pub mode: MaskMode,
    /// The newest messages within this many tokens are never masked.
    pub recent_tokens: u64,
    /// The boundary moves only when that frees at least this share of the context window, in
    /// percent.
    pub step_percent: u8,
}

/// The defaults: the newest ~4,000 tokens stay, a step frees 6 % of the window. Measured beside
/// other settings with `benches/token_economy.py`: a smaller recent window costs less and
/// repeats less of each request's prefix; smaller steps the same, more so. 6 % is the largest
/// step at which the 40-read session costs at most 0.4× Claude Code's and the smallest at
/// which the mixed session still repeats 90 % of its prefixes (5 %: 89.6 %; 7 %: 0.404×).
impl Default for MaskSettings {
    fn default() -> Self {
        MaskSettings {
            mode: MaskMode::On,
            recent_tokens: 4_000,
            step_percent: 6,
        }
    }
}

impl MaskSettings {
    /// Masking switched off.
    pub const OFF: MaskSettings = MaskSettings {
        mode: MaskMode::Off,
        recent_tokens: 0,
        step_percent: 0,
    };

    /// The tokens a step must free in a window of `window` tokens (at least one).
    pub fn step_tokens(&self, window: u64) -> u64 {
        (window.saturating_mul(u64::from(self.step_percent)) / 100).max(1)
    }
}

/// A request's messages, masked.
#[derive(Debug, Clone, PartialEq)]
pub struct Masked {
    pub messages: Vec<Message>,
    /// Messages before this index have their tool results masked.
    pub boundary: usize,
    /// The boundary moved for this request (its prefix differs from the previous request's).
    pub stepped: bool,
    /// Tool results replaced by stubs.
    pub stubbed: usize,
    /// Tokens the stubs save, in the caller's units.
    pub saved_tokens: u64,
}

/// The messages a request sends: `messages` with the tool results before the boundary masked.
/// `previous` is the boundary of the session's last request (0 for its first; a boundary past
/// the end, from a history that was replaced, starts again at 0). `window` is the context
/// window, `size` measures a message in tokens.
pub fn mask(
    messages: &[Message],
    settings: &MaskSettings,
    window: u64,
    previous: usize,
    size: impl Fn(&Message) -> u64,
) -> Masked {
    if settings.mode == MaskMode::Off {
        return apply(messages, 0, size);
    }
    let mut boundary = if previous > messages.len() {
        0
    } else {
        previous
    };
    let calls = calls(messages);
    // The recent window: the newest messages within `recent_tokens`, the newest always.
    let mut candidate = messages.len();
    let mut recent = 0u64;
    while let Some(m) = candidate.checked_sub(1).and_then(|i| messages.get(i)) {
        let t = size(m);
        if recent.saturating_add(t) > settings.recent_tokens {
            break;
        }
        recent += t;
        candidate -= 1;
    }
    let candidate = candidate.min(messages.len().saturating_sub(1));
    let mut stepped = false;
    if candidate > boundary {
        let freed: u64 = messages
            .get(boundary..candidate)
            .unwrap_or_default()
            .iter()
            .map(|m| size(m).saturating_sub(size(&masked(m, &calls).0)))
            .sum();
        if freed >= settings.step_tokens(window) {
            boundary = candidate;
            stepped = true;
        }
    }
    Masked {
        stepped,
        ..apply(messages, boundary, size)
    }
}

/// `messages` with the tool results before `boundary` masked, and no step: what a request on
/// the same history as the last one sends (a writing request reads the main thread's cache).
pub(crate) fn apply(
    messages: &[Message],
    boundary: usize,
    size: impl Fn(&Message) -> u64,
) -> Masked {
    let boundary = boundary.min(messages.len().saturating_sub(1));
    if boundary == 0 {
        return Masked {
            messages: messages.to_vec(),
            boundary: 0,
            stepped: false,
            stubbed: 0,
            saved_tokens: 0,
        };
    }
    let calls = calls(messages);
    let mut out = Vec::with_capacity(messages.len());
    let (mut stubbed, mut saved_tokens) = (0, 0u64);
    for (i, m) in messages.iter().enumerate() {
        if i < boundary {
            let (stubs, n) = masked(m, &calls);
            if n > 0 {
                stubbed += n;
                saved_tokens += size(m).saturating_sub(size(&stubs));
            }
            out.push(stubs);
        } else {
            out.push(m.clone());
        }
    }
    Masked {
        messages: out,
        boundary,
        stepped: false,
        stubbed,
        saved_tokens,
    }
}

/// Every tool call by its id: its tool and its input.
fn calls(messages: &[Message]) -> HashMap<&str, (&str, &Value)> {
    messages
        .iter()
        .flat_map(Message::tool_uses)
        .map(|(id, name, input)| (id, (name, input)))
        .collect()
}

/// `m` with its long tool results, its images and its web search results replaced by stubs,
/// and how many were.
fn masked(m: &Message, calls: &HashMap<&str, (&str, &Value)>) -> (Message, usize) {
    let mut n = 0;
    let mut image_notes: Vec<(&str, String)> = Vec::new();
    let mut content: Vec<Block> = Vec::with_capacity(m.content.len());
    for b in &m.content {
        let stub = match b {
            Block::Image {
                image,
                tool_use_id: Some(id),
            } => {
                n += 1;
                image_notes.push((id.as_str(), image.stand_in(IMAGE_MASKED)));
                continue;
            }
            Block::Image { image, .. } => {
                n += 1;
                Block::text(image.stand_in(IMAGE_MASKED))
            }
            Block::ServerToolUse { name, input, .. } => {
                Block::text(format!("[{name} {}]", args(input)))
            }
            Block::WebSearchToolResult { content, .. } => {
                n += 1;
                Block::text(crate::engine::provider::anthropic::search_summary(content))
            }
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } if content.chars().count() >= MIN_MASKED_CHARS => {
                n += 1;
                let (name, input) = calls
                    .get(tool_use_id.as_str())
                    .copied()
                    .unwrap_or(("a tool", &NO_INPUT));
                Block::ToolResult {
                    tool_use_id: tool_use_id.clone(),
                    content: stub(tool_use_id, name, input, content),
                    is_error: *is_error,
                }
            }
            other => other.clone(),
        };
        content.push(stub);
    }
    for (id, note) in image_notes {
        let result = content.iter_mut().find_map(|b| match b {
            Block::ToolResult {
                tool_use_id,
                content,
                ..
            } if tool_use_id == id => Some(content),
            _ => None,
        });
        match result {
            Some(text) => {
                text.push('\n');
                text.push_str(&note);
            }
            None => content.push(Block::text(note)),
        }
    }
    (
        Message {
            role: m.role,
            content,
        },
        n,
    )
}

/// The one line a masked result becomes: the call, the output's size and how it ended, and how
/// to get it back. It depends on the call and its result only, so it never changes.
pub(crate) fn stub(id: &str, name: &str, input: &Value, content: &str) -> String {
    let chars = content.chars().count();
    let lines = content.lines().count();
    let mut s = format!(
        "[output masked to save context: {name} {} returned {chars} characters ({lines} lines)",
        args(input)
    );
    if let Some(status) = status_line(content) {
        s.push_str(", ending ");
        s.push_str(status);
    }
    let recall = format!("recall {{\"call\": {}}}", Value::from(id));
    let back = match spilled_path(content) {
        Some(path) => format!(
            "read_file {{\"path\": {}}} (saved in full there), or {recall}",
            Value::from(path)
        ),
        None if name == "read_file" => {
            format!("{recall}, or read_file again (the file may have changed since)")
        }
        None => recall,
    };
    s.push_str(". Get it back with ");
    s.push_str(&back);
    s.push(']');
    s
}

/// The call's arguments, short: a command or a path as it is, else the JSON cut.
fn args(input: &Value) -> String {
    let cut = |s: &str| -> String {
        let flat: String = s
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        match flat.char_indices().nth(STUB_ARGS_CHARS) {
            Some((at, _)) => format!("{}…", flat.get(..at).unwrap_or_default()),
            None => flat,
        }
    };
    match input {
        Value::Null => String::new(),
        Value::Object(m) if m.is_empty() => String::new(),
        other => cut(&other.to_string()),
    }
}

/// A short bracketed status line a result ends with (`[exit code 101]`).
fn status_line(content: &str) -> Option<&str> {
    content
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .filter(|l| l.starts_with('[') && l.ends_with(']') && l.chars().count() <= 80)
}

/// The spill file a spilled result names (`… saved in full to PATH. Read it …`).
fn spilled_path(content: &str) -> Option<&str> {
    let head = content.lines().next()?;
    let (_, rest) = head.split_once("so it was saved in full to ")?;
    let (path, _) = rest.split_once(". Read it with read_file")?;
    Some(path)
}

#[cfg(test)]
#[path = "mask_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "mask_images_tests.rs"]
mod image_tests;
