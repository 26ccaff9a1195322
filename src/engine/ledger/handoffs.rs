//! What the ledger keeps of a step's handoffs: the record of each one turned over, the frozen
//! handoff whose review is open (or was cut off), where a background handoff cut the history,
//! what the retired session held, which path produced the document and why the handoff happened.
//! Older ledgers load: the keys these records had before they were typed stay readable.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::types::{Block, Message};

/// One handoff (or compaction) that replaced what the model sees.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HandoffRecord {
    /// The frozen file, or None with `--no-workbench`.
    pub path: Option<PathBuf>,
    pub degraded: bool,
    /// What set it off and, for a rescued or degraded document, what failed first.
    #[serde(flatten)]
    pub reason: HandoffReason,
    pub ctx_at_cut: u64,
    pub time: String,
    /// The session retired by this handoff and the generation that replaced it.
    pub retired_session: String,
    pub generation: u32,
    /// The sections of the document the successor read (parsed from the file as it was).
    #[serde(default)]
    pub sections: Vec<String>,
    /// The user changed the file during the review.
    #[serde(default)]
    pub edited: bool,
    /// Which path produced the document: written, rescued or degraded.
    #[serde(default)]
    pub source: DocumentSource,
    /// Messages after the cut that the successor's briefing records (a background handoff's).
    #[serde(default)]
    pub tail: usize,
    /// What the retired session held when it was retired, and where its transcript is.
    #[serde(default)]
    pub held: Held,
}

/// Where a background handoff's document was cut: the history's first `messages`
/// messages, the last of them holding `blocks` blocks then (a user message may grow after the cut
/// when later text joins it). The successor's briefing records everything after it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cut {
    pub messages: usize,
    pub blocks: usize,
}

impl Cut {
    /// The cut at the end of `messages`.
    pub fn at_end(messages: &[Message]) -> Cut {
        Cut {
            messages: messages.len(),
            blocks: messages.last().map_or(0, |m| m.content.len()),
        }
    }

    /// The history before the cut and after it: the part of a message that grew after the cut
    /// starts the tail. None when the history no longer holds the cut (it was replaced).
    pub fn split(self, messages: &[Message]) -> Option<(Vec<Message>, Vec<Message>)> {
        if self.messages == 0 {
            return Some((Vec::new(), messages.to_vec()));
        }
        let last = messages.get(self.messages - 1)?;
        if last.content.len() < self.blocks {
            return None;
        }
        let mut before: Vec<Message> = messages.iter().take(self.messages - 1).cloned().collect();
        before.push(Message {
            role: last.role,
            content: last.content.iter().take(self.blocks).cloned().collect(),
        });
        let mut after = Vec::new();
        let grown: Vec<Block> = last.content.iter().skip(self.blocks).cloned().collect();
        if !grown.is_empty() {
            after.push(Message {
                role: last.role,
                content: grown,
            });
        }
        after.extend(messages.iter().skip(self.messages).cloned());
        Some((before, after))
    }
}

/// What a retired generation held: shown on the chat's generation divider
/// and kept with its handoff in the ledger.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Held {
    /// Messages in its history.
    pub messages: usize,
    /// Tool calls in its history.
    pub tool_calls: usize,
    /// Its context when it was retired (the last response's ctx plus what was appended since).
    pub tokens: u64,
    /// Its transcript (`<run>/sessions/<id>.jsonl`), which `recall` searches.
    pub transcript: Option<PathBuf>,
}

/// A handoff frozen but not turned over yet: its review is open, or the process died
/// during it (a signal, a closed terminal, `kill -9`). The next start in the workspace reopens the
/// review from this record; the turnover replaces it with a [`HandoffRecord`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FrozenHandoff {
    /// Where the freeze stands: not done yet, done into the live file, or done without one.
    #[serde(flatten)]
    pub file: FrozenFile,
    /// The document as frozen (masked): what the successor reads if the file is gone.
    pub markdown: String,
    pub degraded: bool,
    /// As in [`HandoffRecord::reason`].
    #[serde(flatten)]
    pub reason: HandoffReason,
    pub ctx_at_cut: u64,
    /// When it was frozen.
    pub time: String,
    /// The session the turnover retires and the generation that replaces it.
    pub retired_session: String,
    pub generation: u32,
    /// The user messages of the request in progress at the cut, verbatim, oldest first.
    pub request: Vec<String>,
    /// The process that froze it.
    pub pid: u32,
    /// Unsaved side-editor edits a signal kept beside the file, offered when the review reopens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsaved: Option<PathBuf>,
    /// Which path produced the document.
    #[serde(default)]
    pub source: DocumentSource,
    /// A rescued document was written from a history with parts elided (the briefing says so).
    #[serde(default)]
    pub reduced: bool,
    /// A background handoff's cut: the successor's briefing records the session after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<Cut>,
    /// Why the handoff happened: the successor's briefing says so (also after a reopened review).
    #[serde(default)]
    pub cause: HandoffCause,
    /// The focus the user gave `/handoff` (masked): the successor's briefing names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<String>,
}

/// Where a frozen handoff's file stands. On disk as the two keys it always had, `path` and
/// `written` (an older ledger loads unchanged).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "FileKeys", into = "FileKeys")]
pub enum FrozenFile {
    /// The record is kept, the file not written yet: a process killed now may not have frozen
    /// it, so the freeze is repeated from `markdown`.
    #[default]
    Pending,
    /// Written to the live file, in the workbench or, when the workbench could not hold it, in the
    /// run directory: from here on the file, with the user's edits, is the document.
    OnDisk(PathBuf),
    /// Frozen without a file (`--no-workbench`, or neither write succeeded): the document is
    /// `markdown`.
    InMemory,
}

impl FrozenFile {
    /// The live file, once written.
    pub fn path(&self) -> Option<&Path> {
        match self {
            FrozenFile::OnDisk(p) => Some(p),
            FrozenFile::Pending | FrozenFile::InMemory => None,
        }
    }

    /// The freeze is done (with a file or without one).
    pub fn written(&self) -> bool {
        !matches!(self, FrozenFile::Pending)
    }
}

/// [`FrozenFile`] as the ledger writes it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct FileKeys {
    #[serde(default)]
    path: Option<PathBuf>,
    #[serde(default)]
    written: bool,
}

impl From<FileKeys> for FrozenFile {
    fn from(k: FileKeys) -> Self {
        match (k.written, k.path) {
            (false, _) => FrozenFile::Pending,
            (true, Some(p)) => FrozenFile::OnDisk(p),
            (true, None) => FrozenFile::InMemory,
        }
    }
}

impl From<FrozenFile> for FileKeys {
    fn from(f: FrozenFile) -> Self {
        let written = f.written();
        let path = match f {
            FrozenFile::OnDisk(p) => Some(p),
            FrozenFile::Pending | FrozenFile::InMemory => None,
        };
        FileKeys { path, written }
    }
}

/// Why a handoff happened: the writing prompt and the successor's briefing say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandoffCause {
    /// The context reached the handoff line (`ctx >= at`): nearly full. Older ledgers wrote this
    /// trigger as `auto`.
    #[default]
    #[serde(alias = "auto")]
    Pressure,
    /// A request did not fit the context window.
    Overflow,
    /// The user asked for it (`/handoff [focus]`), however full the context was.
    Manual,
    /// The user chose to implement a reviewed plan in a fresh session: the plan file is the
    /// document.
    Plan,
}

impl HandoffCause {
    /// The word the ledger's reason and the review show: `auto` (the handoff line), `manual`,
    /// `overflow`, `plan`.
    pub fn as_str(self) -> &'static str {
        match self {
            HandoffCause::Pressure => "auto",
            HandoffCause::Manual => "manual",
            HandoffCause::Overflow => "overflow",
            HandoffCause::Plan => "plan",
        }
    }
}

/// Why a handoff happened and how its document came about: the trigger, and for a document
/// rescued from a reduced history or degraded (assembled without the model), what failed first.
/// On disk as `trigger` and `failure`; an older ledger's one `reason` is read into both.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "CauseKeys", into = "CauseKeys")]
pub struct HandoffReason {
    pub trigger: HandoffCause,
    /// What failed before this document: the writing request (then the rescue wrote it, or it
    /// is degraded), or the main-thread request that overflowed.
    pub failure: Option<String>,
}

impl HandoffReason {
    /// A handoff set off by `trigger` whose document was written at the first try.
    pub fn clean(trigger: HandoffCause) -> HandoffReason {
        HandoffReason {
            trigger,
            failure: None,
        }
    }

    /// A handoff set off by `trigger` after `failure`.
    pub fn after(trigger: HandoffCause, failure: impl Into<String>) -> HandoffReason {
        HandoffReason {
            trigger,
            failure: Some(failure.into()),
        }
    }

    /// An older ledger's `reason`: a trigger word, or what failed (after `auto, rescued: ` for
    /// a rescued background document, with `; rescued` after an overflow's).
    fn from_reason(reason: &str) -> HandoffReason {
        let overflow = |r: &str| r.starts_with("context window exceeded");
        match reason {
            "auto" => HandoffReason::clean(HandoffCause::Pressure),
            "manual" => HandoffReason::clean(HandoffCause::Manual),
            "overflow" => HandoffReason::clean(HandoffCause::Overflow),
            r => match r.strip_prefix("auto, rescued: ") {
                Some(why) => HandoffReason::after(HandoffCause::Pressure, why),
                None if overflow(r) => HandoffReason::after(
                    HandoffCause::Overflow,
                    r.strip_suffix("; rescued").unwrap_or(r),
                ),
                None => HandoffReason::after(HandoffCause::Pressure, r),
            },
        }
    }
}

/// `auto`, or `auto: what failed`.
impl HandoffReason {
    /// What failed, or (for a document written at the first try) the trigger's word.
    pub fn failure_or_trigger(&self) -> String {
        match &self.failure {
            Some(why) => why.clone(),
            None => self.trigger.as_str().to_string(),
        }
    }
}

impl fmt::Display for HandoffReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.failure {
            None => f.write_str(self.trigger.as_str()),
            Some(why) => write!(f, "{}: {why}", self.trigger.as_str()),
        }
    }
}

/// [`HandoffReason`] as the ledger writes it, and the `reason` older ledgers wrote instead.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct CauseKeys {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trigger: Option<HandoffCause>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    failure: Option<String>,
    #[serde(default, skip_serializing)]
    reason: Option<String>,
}

impl From<CauseKeys> for HandoffReason {
    fn from(k: CauseKeys) -> Self {
        match (k.trigger, k.reason) {
            (Some(trigger), _) => HandoffReason {
                trigger,
                failure: k.failure,
            },
            (None, Some(reason)) => HandoffReason::from_reason(&reason),
            (None, None) => HandoffReason {
                trigger: HandoffCause::default(),
                failure: k.failure,
            },
        }
    }
}

impl From<HandoffReason> for CauseKeys {
    fn from(c: HandoffReason) -> Self {
        CauseKeys {
            trigger: Some(c.trigger),
            failure: c.failure,
            reason: None,
        }
    }
}

/// Which path produced a handoff document, as the ledger records it: written by the model from
/// the whole history, rescued from a reduced copy, or degraded (assembled without the model).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DocumentSource {
    /// The model wrote it from the whole history.
    #[default]
    Written,
    /// The model wrote it from a reduced copy of the history (old tool results as stubs, maybe
    /// the oldest turns dropped), after a request overflowed or a background writing failed.
    Rescued,
    /// Assembled mechanically: no writing turn produced a document.
    Degraded,
}

impl DocumentSource {
    /// `written`, `rescued` or `degraded`.
    pub fn as_str(self) -> &'static str {
        match self {
            DocumentSource::Written => "written",
            DocumentSource::Rescued => "rescued",
            DocumentSource::Degraded => "degraded",
        }
    }
}

impl fmt::Display for DocumentSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
#[path = "handoffs_tests.rs"]
mod tests;
