//! The run's ledger, `manifest.json`: one record per step (its generations, handoffs,
//! compactions, subagents, settings changes, cost and the step memory), what a frozen handoff
//! awaiting its review holds, and saving the whole file atomically with keys masked.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::checkpoints::CheckpointRecord;
use super::prompts::{PromptRecord, RewindRecord};
use crate::engine::checkpoint::UndoStack;
use crate::engine::fsutil::{atomic_write, now_unix, rfc3339};
use crate::engine::step_memory::StepMemory;
use crate::engine::types::{Block, Message};

/// One generation of a step: one session from its start to its handoff (or to the end).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GenerationRecord {
    pub generation: u32,
    pub session_id: String,
    pub cost_usd: f64,
    pub num_turns: u32,
    /// The last main-thread ctx of this generation.
    pub context: u64,
    /// How the generation's session began (None in ledgers written before this was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<GenerationStart>,
}

/// How a generation's session began.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GenerationStart {
    /// The step's first session.
    First,
    /// A successor after a handoff.
    Handoff,
    /// `/new`: a fresh session with no handoff.
    New,
}

impl GenerationRecord {
    /// How it began; for an older ledger, guessed from the number (1 first, later a handoff).
    pub fn start(&self) -> GenerationStart {
        self.start.unwrap_or(if self.generation <= 1 {
            GenerationStart::First
        } else {
            GenerationStart::Handoff
        })
    }

    /// `gen 1`, `gen 2 · handoff`, `gen 3 · /new`: what `/cost` shows for the row.
    pub fn label(&self) -> String {
        match self.start() {
            GenerationStart::First => format!("gen {}", self.generation),
            GenerationStart::Handoff => format!("gen {} · handoff", self.generation),
            GenerationStart::New => format!("gen {} · /new", self.generation),
        }
    }
}

/// One handoff (or compaction) that replaced what the model sees.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HandoffRecord {
    /// The frozen file, or None with `--no-workbench`.
    pub path: Option<PathBuf>,
    pub degraded: bool,
    /// Why it was degraded, or what triggered it (`auto`, `manual`, `overflow`).
    pub reason: String,
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
    /// The live file, once written: in the workbench, or in the run directory when the workbench
    /// could not hold it (None with `--no-workbench` or when neither write succeeded).
    pub path: Option<PathBuf>,
    /// The freeze is done (the file written, or its write failed and `path` is None): from here on
    /// the file, with the user's edits, is the document. Before, the freeze may not have happened
    /// and is repeated from `markdown`.
    pub written: bool,
    /// The document as frozen (masked): what the successor reads if the file is gone.
    pub markdown: String,
    pub degraded: bool,
    /// As in [`HandoffRecord::reason`].
    pub reason: String,
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

/// The ledger of one step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    pub name: String,
    /// The step's original task (the first user message).
    pub task: String,
    /// Always the latest successor: `--continue` attaches here.
    pub session_id: String,
    /// Failed tries only; a handoff does not count.
    pub attempts: u32,
    /// Session ids ended by handoff, in order.
    pub retired: Vec<String>,
    /// The last main-thread ctx.
    pub context: u64,
    pub window: u64,
    pub generations: u32,
    /// Cumulative across retries and handoffs.
    pub cost_usd: f64,
    pub num_turns: u32,
    pub per_generation: Vec<GenerationRecord>,
    pub errors: Vec<String>,
    pub handoffs: Vec<HandoffRecord>,
    /// Compactions (`--no-handoff`): the replace generation advanced without a new session.
    #[serde(default)]
    pub compactions: u32,
    /// Files the tools wrote or edited, for a degraded handoff's scene.
    #[serde(default)]
    pub touched: Vec<String>,
    /// The process that claimed this step's name in a shared run directory before its first
    /// session (`--run-dir` with a new `--step`); cleared when the step starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_by: Option<u32>,
    /// A handoff frozen and not yet turned over (its review is open or was interrupted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frozen: Option<FrozenHandoff>,
    /// The pins, the plan and the standing focus, carried into every successor's briefing.
    #[serde(default, skip_serializing_if = "StepMemory::is_empty")]
    pub memory: StepMemory,
    /// `/model` and `/effort` changes, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<SettingChange>,
    /// The subagents (`task` calls) of the step, in the order they ended; their cost is in
    /// `cost_usd` and in their parent's generation too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subagents: Vec<SubagentRecord>,
    /// The turns that changed files, undoable and redoable; kept here so `/undo` reaches back
    /// across handoffs into earlier generations and across `--continue`.
    #[serde(default, skip_serializing_if = "UndoStack::is_empty")]
    pub undo: UndoStack,
    /// Every checkpoint of the step, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checkpoints: Vec<CheckpointRecord>,
    /// The user's messages, oldest first (what `/rewind` offers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<PromptRecord>,
    /// The rewinds made, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rewinds: Vec<RewindRecord>,
}

/// One subagent: the child session a `task` call started, linked to its transcript.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SubagentRecord {
    /// The child's own session; its transcript is `sessions/<session_id>.jsonl`.
    pub session_id: String,
    /// The main-thread session whose `task` call started it.
    pub parent_session: String,
    /// The id of that `task` call.
    pub call_id: String,
    pub description: String,
    pub model: String,
    pub started: String,
    /// How it ended (`completed`, `context_full`, `overflow`, `interrupted`, …).
    pub outcome: String,
    /// Its responses' usage, summed.
    pub usage: crate::engine::types::Usage,
    /// Its last context reading (its own window; never the main thread's).
    pub context: u64,
    pub cost_usd: f64,
    pub tool_calls: u32,
    pub elapsed_ms: u64,
    /// The transcript, relative to the run directory.
    pub transcript: PathBuf,
}

/// A model or effort change during a step (`/model`, `/effort`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingChange {
    pub time: String,
    /// The generation it happened in.
    pub generation: u32,
    /// The model and effort in force from then on, and the window that follows from them.
    pub model: String,
    pub effort: Option<crate::engine::types::Effort>,
    pub window: u64,
}

impl StepRecord {
    /// The generation record of the current session, created when missing.
    #[expect(
        clippy::indexing_slicing,
        reason = "idx comes from position() over this vector or from the push just before it"
    )]
    pub fn current_generation(&mut self) -> &mut GenerationRecord {
        let idx = match self
            .per_generation
            .iter()
            .position(|g| g.session_id == self.session_id)
        {
            Some(i) => i,
            None => {
                self.per_generation.push(GenerationRecord {
                    generation: self.generations.max(1),
                    session_id: self.session_id.clone(),
                    ..Default::default()
                });
                self.per_generation.len() - 1
            }
        };
        &mut self.per_generation[idx]
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub run_id: String,
    pub created: String,
    pub workspace: PathBuf,
    pub provider: String,
    pub model: String,
    pub steps: Vec<StepRecord>,
}

impl Manifest {
    /// Read a ledger; every error names the file.
    pub fn load(path: &Path) -> io::Result<Manifest> {
        let text = fs::read_to_string(path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        serde_json::from_str(&text).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {e}", path.display()),
            )
        })
    }

    /// Rewrite atomically (temp file, fsync, rename).
    pub fn save(&self, path: &Path) -> io::Result<()> {
        let json = serde_json::to_string_pretty(self).map_err(io::Error::other)?;
        // Tasks, errors and reasons may quote a key: the ledger holds it masked.
        atomic_write(path, crate::engine::secrets::redact(&json).as_bytes())
    }

    /// Rewrite atomically without the fsyncs (`fsutil::atomic_write_unsynced`): a kill never
    /// loses it, a power cut may.
    pub fn save_unsynced(&self, path: &Path) -> io::Result<()> {
        let json = serde_json::to_vec_pretty(self).map_err(io::Error::other)?;
        crate::engine::fsutil::atomic_write_unsynced(path, &json)
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

/// Why a handoff happened: the writing prompt and the successor's briefing say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandoffCause {
    /// The context reached the handoff line (`ctx >= at`): nearly full.
    #[default]
    Pressure,
    /// A request did not fit the context window.
    Overflow,
    /// The user asked for it (`/handoff [focus]`), however full the context was.
    Manual,
}

/// Now, as the ledger writes it.
pub fn now_stamp() -> String {
    rfc3339(now_unix().0)
}
