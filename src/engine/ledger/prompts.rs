//! The user's messages of a step as its ledger records them, for `/rewind`: when each was sent,
//! in which generation and session, the step's turn it started, where it sits in that session's
//! history, its text, and the command the user typed when the text is its expansion; and the
//! rewinds made to them.

use serde::{Deserialize, Serialize};

/// At most this many characters of a message are kept (the picker shows one line; a message
/// put back in the input box longer than this is cut here).
pub const MAX_PROMPT_CHARS: usize = 20_000;
/// At most this many messages are kept per step (the oldest go first).
pub const MAX_PROMPTS: usize = 1_000;

/// One message the user sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptRecord {
    pub time: String,
    /// Seconds since the epoch (what the picker sorts and shows).
    pub at: u64,
    pub generation: u32,
    pub session_id: String,
    /// The step's turn it started (counted across processes and generations, from 1).
    pub turn: u64,
    /// How many messages the session's history held before it.
    pub index: usize,
    pub text: String,
    /// What the user typed when `text` is its expansion (`/review 42`): what the picker shows
    /// and a rewind puts back in the input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typed: Option<String>,
    /// The number the front end gave the turn that sent it, when this process sent it (never
    /// written: an earlier process's numbers are not this one's).
    #[serde(skip)]
    pub sent_as: Option<u64>,
}

impl PromptRecord {
    /// What the user sees of it: the command typed, else the text.
    pub fn shown(&self) -> &str {
        self.typed.as_deref().unwrap_or(&self.text)
    }
}

/// A `/rewind` that ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewindRecord {
    pub time: String,
    /// The turn rewound to (its message and everything after it are undone).
    pub turn: u64,
    /// The generation of that message and the one the rewind happened in.
    pub to_generation: u32,
    pub from_generation: u32,
    /// The conversation went back (else only the code).
    pub conversation: bool,
    /// Files put back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
}

/// Keep `rec`, dropping the oldest past [`MAX_PROMPTS`].
pub fn push(list: &mut Vec<PromptRecord>, mut rec: PromptRecord) {
    for text in std::iter::once(&mut rec.text).chain(rec.typed.as_mut()) {
        if text.chars().count() > MAX_PROMPT_CHARS {
            *text = text.chars().take(MAX_PROMPT_CHARS).collect();
        }
    }
    list.push(rec);
    if list.len() > MAX_PROMPTS {
        let excess = list.len() - MAX_PROMPTS;
        list.drain(..excess);
    }
}

/// What `/rewind` rewinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RewindMode {
    /// The files and the conversation.
    Both,
    /// The conversation only: the files stay as they are.
    Conversation,
    /// The files only: the conversation goes on.
    Code,
}

impl RewindMode {
    pub fn code(self) -> bool {
        matches!(self, RewindMode::Both | RewindMode::Code)
    }

    pub fn conversation(self) -> bool {
        matches!(self, RewindMode::Both | RewindMode::Conversation)
    }
}

/// One message the `/rewind` picker offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewindPoint {
    pub turn: u64,
    pub generation: u32,
    /// Seconds since the epoch.
    pub at: u64,
    /// What the user sent, as they typed it (`/review 42`, not its expansion).
    pub text: String,
    /// The files its turn changed (none when it changed none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// It belongs to the session running now (else rewinding its conversation starts a successor
    /// from its generation's handoff document).
    pub current: bool,
    /// Its turn's files were undone (they are on the redo side now).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub undone: bool,
    /// The number the front end gave the turn that sent it, when this process sent it (the
    /// front end finds its cells by it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_as: Option<u64>,
}
