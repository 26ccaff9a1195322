//! The run's ledger, `manifest.json`: one record per step (its generations, handoffs,
//! compactions, subagents, settings changes, cost and the step memory), what a frozen handoff
//! awaiting its review holds, and saving the whole file atomically with keys masked.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::checkpoints::CheckpointRecord;
use super::handoffs::{FrozenHandoff, HandoffRecord};
use super::prompts::{PromptRecord, RewindRecord};
use crate::engine::checkpoint::UndoStack;
use crate::engine::fsutil::{atomic_write, now_unix, rfc3339};
use crate::engine::step_memory::StepMemory;

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
    pub generations: u32,
    /// The last context reading, the window, the cost and the turns so far.
    #[serde(flatten)]
    pub figures: StepFigures,
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
    /// `/model`, `/effort` and mode changes, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<SettingChange>,
    /// The subagents (`task` calls) of the step, in the order they ended; their cost is in
    /// `cost_usd` and in their parent's generation too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subagents: Vec<SubagentRecord>,
    /// What `/undo`, `/redo` and `/rewind` walk: the undo stack, the checkpoints, the user's
    /// messages and the rewinds made (the same keys as fields of the step's record on disk).
    #[serde(flatten)]
    pub history: StepHistory,
}

/// A step's running figures (the same keys as fields of the step's record on disk).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepFigures {
    /// The last main-thread ctx.
    pub context: u64,
    pub window: u64,
    /// Cumulative across retries and handoffs.
    pub cost_usd: f64,
    pub num_turns: u32,
    /// The provider's web searches (billed per search, in `cost_usd` too).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub web_searches: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The step's workspace and conversation history, kept in its record so `/undo` and `/rewind`
/// reach back across handoffs into earlier generations and across `--continue`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepHistory {
    /// The turns that changed files, undoable and redoable.
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

/// A model, effort or mode change during a step (`/model`, `/effort`, Shift-Tab).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingChange {
    pub time: String,
    /// The generation it happened in.
    pub generation: u32,
    /// The model and effort in force from then on, and the window that follows from them.
    pub model: String,
    pub effort: Option<crate::engine::types::Effort>,
    pub window: u64,
    /// The working mode from then on (`--continue` starts in it).
    #[serde(default, skip_serializing_if = "is_normal")]
    pub mode: crate::engine::policy::Mode,
}

fn is_normal(mode: &crate::engine::policy::Mode) -> bool {
    *mode == crate::engine::policy::Mode::Normal
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
        forget_synced(path);
        let json = serde_json::to_vec_pretty(self).map_err(io::Error::other)?;
        crate::engine::fsutil::atomic_write_unsynced(path, &json)
    }
}

/// A write of `path` without the fsyncs follows: the next save writes (and syncs) whatever it
/// holds.
fn forget_synced(path: &Path) {
    LAST_SYNCED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(path);
}

/// Each ledger file this process wrote with its fsyncs, and a hash of what it last wrote there.
pub(super) static LAST_SYNCED: std::sync::Mutex<BTreeMap<PathBuf, [u8; 32]>> =
    std::sync::Mutex::new(BTreeMap::new());

/// Now, as the ledger writes it.
pub fn now_stamp() -> String {
    rfc3339(now_unix().0)
}
