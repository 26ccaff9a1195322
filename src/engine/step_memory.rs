//! What a step remembers across its generations without the model having to carry it: the
//! user's pins, the model's plan (the `todo` tool's list) and the standing
//! focus. The engine keeps them in the ledger (`StepRecord.memory`) and writes them into every
//! successor's briefing itself ([`carried_block`]), so a degraded or rescued document loses none
//! of them.
//!
//! Pure: no I/O. The session layer (`session/step_ledger/memory.rs`) applies the ops, saves the ledger and
//! sends the events.

use serde::{Deserialize, Serialize};

use super::secrets::redact;

/// The most characters one pin may hold.
pub(crate) const PIN_MAX_CHARS: usize = 1_000;
/// The most characters the step's pins may hold together (every successor reads them all).
pub(crate) const PINS_MAX_CHARS: usize = 8_000;
/// The most characters the standing focus may hold.
pub(crate) const FOCUS_MAX_CHARS: usize = 1_000;
/// The most items the plan may hold.
pub(crate) const TODO_MAX_ITEMS: usize = 50;
/// The most characters one plan item may hold.
pub(crate) const TODO_ITEM_MAX_CHARS: usize = 500;

/// Where a pin came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PinSource {
    /// `/pin TEXT`.
    Command,
    /// A `## Pinned` section the user typed into the handoff document during its review.
    Editor,
}

/// One pinned line, verbatim (secrets masked).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pin {
    pub text: String,
    pub source: PinSource,
    /// When it was pinned (RFC 3339).
    pub time: String,
}

/// Where a plan item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Done,
}

impl TodoStatus {
    /// The word in the briefing and the tool's answer: `pending`, `in progress`, `done`.
    pub fn label(self) -> &'static str {
        match self {
            TodoStatus::Pending => "pending",
            TodoStatus::InProgress => "in progress",
            TodoStatus::Done => "done",
        }
    }

    /// Lenient parsing of what a model sends: `pending`, `in_progress` (`in progress`,
    /// `in-progress`, `active`, `doing`), `done` (`completed`, `complete`).
    pub fn parse(s: &str) -> Option<TodoStatus> {
        let norm: String = s
            .trim()
            .chars()
            .map(|c| match c {
                '-' | ' ' => '_',
                c => c.to_ascii_lowercase(),
            })
            .collect();
        match norm.as_str() {
            "pending" | "todo" | "not_started" => Some(TodoStatus::Pending),
            "in_progress" | "active" | "doing" | "started" => Some(TodoStatus::InProgress),
            "done" | "completed" | "complete" | "finished" => Some(TodoStatus::Done),
            _ => None,
        }
    }
}

/// One item of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoItem {
    pub text: String,
    pub status: TodoStatus,
}

/// The step's memory.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepMemory {
    /// The user's pins, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pins: Vec<Pin>,
    /// The plan as the `todo` tool last wrote it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub todo: Vec<TodoItem>,
    /// `/focus TEXT`: appended to every later handoff prompt of the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<String>,
}

/// Why a `/pin`, `/pins rm` or `/focus` changed nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryRefusal {
    /// `/pin` with no text.
    EmptyPin,
    /// One pin over [`PIN_MAX_CHARS`].
    PinTooLong,
    /// The pins together would pass [`PINS_MAX_CHARS`].
    PinsFull,
    /// The same text is pinned already.
    AlreadyPinned,
    /// `/pins rm N` with no pin N.
    NoSuchPin,
    /// A focus over [`FOCUS_MAX_CHARS`].
    FocusTooLong,
}

/// A refusal and the sentence that explains it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Refused {
    pub reason: MemoryRefusal,
    pub message: String,
}

/// Which pins `/pins rm` removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinRef {
    /// Pin number `n` as `/pins` lists them (from 1).
    Number(usize),
    /// Every pin (`/pins clear`).
    All,
}

/// `1048576` → `1,048,576`.
pub(crate) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl StepMemory {
    /// Nothing remembered.
    pub fn is_empty(&self) -> bool {
        self.pins.is_empty() && self.todo.is_empty() && self.focus.is_none()
    }

    /// The pins' texts, oldest first.
    pub fn pin_texts(&self) -> Vec<String> {
        self.pins.iter().map(|p| p.text.clone()).collect()
    }

    /// The plan has items not done yet.
    pub fn has_open_items(&self) -> bool {
        self.todo.iter().any(|i| i.status != TodoStatus::Done)
    }

    /// Pin `text` (its ends trimmed, secrets masked, otherwise verbatim). Refused when empty, too
    /// long, already pinned, or when the pins would hold too much together.
    pub fn add_pin(&mut self, text: &str, source: PinSource, time: &str) -> Result<(), Refused> {
        let text = redact(text.trim()).into_owned();
        let chars = text.chars().count();
        if chars == 0 {
            return Err(Refused {
                reason: MemoryRefusal::EmptyPin,
                message: "Nothing to pin: /pin TEXT pins a line for the rest of the step".into(),
            });
        }
        if chars > PIN_MAX_CHARS {
            return Err(Refused {
                reason: MemoryRefusal::PinTooLong,
                message: format!(
                    "Not pinned: a pin holds at most {} characters and this one has {}. Every \
                     successor reads each pin verbatim, so keep it to a line; put longer material \
                     in a file and pin its path.",
                    thousands(PIN_MAX_CHARS),
                    thousands(chars)
                ),
            });
        }
        if let Some(i) = self.pins.iter().position(|p| p.text == text) {
            return Err(Refused {
                reason: MemoryRefusal::AlreadyPinned,
                message: format!("Already pinned (#{})", i + 1),
            });
        }
        let used: usize = self.pins.iter().map(|p| p.text.chars().count()).sum();
        if used + chars > PINS_MAX_CHARS {
            return Err(Refused {
                reason: MemoryRefusal::PinsFull,
                message: format!(
                    "Not pinned: the step's pins would hold {} characters, over the {} they may \
                     hold together; unpin some first (/pins lists them, /pins rm N unpins one).",
                    thousands(used + chars),
                    thousands(PINS_MAX_CHARS)
                ),
            });
        }
        self.pins.push(Pin {
            text,
            source,
            time: time.to_string(),
        });
        Ok(())
    }

    /// Unpin; returns the texts removed.
    pub fn unpin(&mut self, which: PinRef) -> Result<Vec<String>, Refused> {
        match which {
            PinRef::All => Ok(std::mem::take(&mut self.pins)
                .into_iter()
                .map(|p| p.text)
                .collect()),
            PinRef::Number(n) if n >= 1 && n <= self.pins.len() => {
                Ok(vec![self.pins.remove(n - 1).text])
            }
            PinRef::Number(n) => Err(Refused {
                reason: MemoryRefusal::NoSuchPin,
                message: match self.pins.len() {
                    0 => format!("No pin #{n}: nothing is pinned"),
                    1 => format!("No pin #{n}: there is 1 pin (/pins lists it)"),
                    k => format!("No pin #{n}: there are {k} pins (/pins lists them)"),
                },
            }),
        }
    }

    /// Set the standing focus (trimmed, secrets masked), or clear it with `None` or blank text.
    pub fn set_focus(&mut self, text: Option<&str>) -> Result<(), Refused> {
        let text = text
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| redact(t).into_owned());
        if let Some(t) = &text {
            let chars = t.chars().count();
            if chars > FOCUS_MAX_CHARS {
                return Err(Refused {
                    reason: MemoryRefusal::FocusTooLong,
                    message: format!(
                        "Focus not set: it holds at most {} characters and this one has {}",
                        thousands(FOCUS_MAX_CHARS),
                        thousands(chars)
                    ),
                });
            }
        }
        self.focus = text;
        Ok(())
    }
}

/// One plan item as a list line: `- [in progress] fix the lexer`.
pub(crate) fn todo_line(item: &TodoItem) -> String {
    list_item(&format!("[{}] {}", item.status.label(), item.text))
}

/// A Markdown list item; the lines after the first are indented so they stay part of it.
fn list_item(text: &str) -> String {
    let mut out = String::from("- ");
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push_str("\n  ");
        }
        out.push_str(line);
    }
    out
}

/// How many items of each status: `2 done, 1 in progress, 2 pending`.
pub(crate) fn todo_counts(items: &[TodoItem]) -> String {
    let n = |s: TodoStatus| items.iter().filter(|i| i.status == s).count();
    format!(
        "{} done, {} in progress, {} pending",
        n(TodoStatus::Done),
        n(TodoStatus::InProgress),
        n(TodoStatus::Pending)
    )
}

/// The part of a successor's first message the engine writes itself: the pins, the plan and
/// the standing focus, verbatim. None when the step remembers nothing.
pub(crate) fn carried_block(memory: &StepMemory) -> Option<String> {
    if memory.is_empty() {
        return None;
    }
    let mut out = String::from(
        "The harness carries the following from generation to generation itself, verbatim; your \
         predecessor did not write it. Under Pinned: lines the user pinned for the whole step; \
         they hold until the user unpins them. Under Plan: your plan as the todo tool last wrote \
         it; keep it current with the todo tool. Under Focus: what the user wants every handoff \
         of this step to keep in view.\n",
    );
    if !memory.pins.is_empty() {
        out.push_str("\n## Pinned\n");
        for pin in &memory.pins {
            out.push_str(&list_item(&pin.text));
            out.push('\n');
        }
    }
    if !memory.todo.is_empty() {
        out.push_str("\n## Plan\n");
        for item in &memory.todo {
            out.push_str(&todo_line(item));
            out.push('\n');
        }
    }
    if let Some(focus) = &memory.focus {
        out.push_str("\n## Focus\n");
        out.push_str(focus);
        out.push('\n');
    }
    Some(out)
}

/// Whether `line` opens a `Pinned` section: `## Pinned`, `**Pinned**`, `Pinned:` (any case).
fn opens_pinned(line: &str) -> bool {
    let t = line.trim();
    let t = t.trim_start_matches('#').trim();
    let t = t.trim_matches('*').trim().trim_end_matches(':').trim();
    let t = t.trim_matches('*').trim();
    let heading = line.trim_start().starts_with('#')
        || line.trim().starts_with("**")
        || line.trim().ends_with(':');
    heading && t.eq_ignore_ascii_case("pinned")
}

/// Whether `line` is a Markdown heading (it ends a `Pinned` section).
fn is_heading(line: &str) -> bool {
    let t = line.trim_start();
    let hashes = t.chars().take_while(|c| *c == '#').count();
    (1..=6).contains(&hashes) && t.chars().nth(hashes).is_none_or(char::is_whitespace)
}

/// A list marker at the start of `line` removed: `- `, `* `, `+ `, `1. `, `1) `.
fn strip_marker(line: &str) -> &str {
    for m in ["- ", "* ", "+ "] {
        if let Some(rest) = line.strip_prefix(m) {
            return rest;
        }
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits > 0
        && let Some(rest) = line.get(digits..)
        && let Some(rest) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") "))
    {
        return rest;
    }
    line
}

/// The items of every `Pinned` section in `text`: each non-blank line is one, its list marker
/// removed; an indented line after an item continues it. Up to the next heading.
pub(crate) fn pinned_in(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut inside = false;
    let mut open = false;
    for line in text.lines() {
        if opens_pinned(line) {
            inside = true;
            open = false;
            continue;
        }
        if !inside {
            continue;
        }
        if is_heading(line) {
            inside = false;
            continue;
        }
        if line.trim().is_empty() {
            open = false;
            continue;
        }
        let indented = line.starts_with(' ') || line.starts_with('\t');
        match out.last_mut() {
            Some(last) if open && indented && strip_marker(line.trim()) == line.trim() => {
                last.push('\n');
                last.push_str(line.trim());
            }
            _ => {
                let item = strip_marker(line.trim()).trim();
                let lower = item.to_ascii_lowercase();
                if item.is_empty() || matches!(lower.as_str(), "(empty)" | "(none)" | "none") {
                    open = false;
                    continue;
                }
                out.push(item.to_string());
                open = true;
            }
        }
    }
    out
}

/// The pins the user typed into a handoff file during its review: the items of its `Pinned`
/// sections that the frozen document did not hold (a section the model copied into its document
/// adds nothing; each line counts as often as it appears).
pub(crate) fn typed_pins(file: &str, frozen: &str) -> Vec<String> {
    let mut before = pinned_in(frozen);
    let mut out = Vec::new();
    for item in pinned_in(file) {
        match before.iter().position(|b| *b == item) {
            Some(i) => {
                before.swap_remove(i);
            }
            None => out.push(item),
        }
    }
    out
}

#[cfg(test)]
#[path = "step_memory_tests.rs"]
mod tests;
