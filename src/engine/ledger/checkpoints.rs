//! The checkpoints of a step as its ledger records them: when each was taken, in which
//! generation and turn, why (before a turn, after it, at a handoff, before an overwriting
//! restore, or an undo or redo that ran), the checkpoint's id in the workspace's store, and the
//! files changed. The store (`engine::checkpoint`) holds the contents; this is the index a person
//! or a later session reads.

use serde::{Deserialize, Serialize};

use crate::engine::checkpoint::SnapshotId;

/// Why a checkpoint was taken (or, for an undo or redo, which restore ran).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointKind {
    /// Before the first call of a turn that may change the workspace.
    Before,
    /// At the end of such a turn: its end state.
    After,
    /// When a handoff retired a generation.
    Handoff,
    /// The user's own changes, kept before an undo or redo wrote over them.
    Backup,
    /// An undo ran: the workspace is at `id` again (the turn's before state, but for kept files).
    Undo,
    /// A redo ran: the turn's after state.
    Redo,
}

/// One checkpoint of a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointRecord {
    pub time: String,
    pub generation: u32,
    /// The step's turn (counted across processes and generations; for an undo or redo: the turn
    /// it restored).
    pub turn: u64,
    pub kind: CheckpointKind,
    /// The checkpoint in the workspace's store (None for an undo or redo: it took none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<SnapshotId>,
    /// Files changed: by the turn (after), since the last checkpoint (handoff), or put back (undo,
    /// redo). Empty for a before checkpoint.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Files the checkpoint could not hold (over a cap, unreadable), named so they are never
    /// silently lost.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// How many more it could not hold than `skipped` names (the list is capped).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more_skipped: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// At most this many checkpoint records are kept per step (the oldest go first).
pub const MAX_RECORDS: usize = 2_000;

/// Add `rec` to `list`, dropping the oldest past [`MAX_RECORDS`].
pub fn push(list: &mut Vec<CheckpointRecord>, rec: CheckpointRecord) {
    list.push(rec);
    if list.len() > MAX_RECORDS {
        let excess = list.len() - MAX_RECORDS;
        list.drain(..excess);
    }
}
