//! What an undo or a redo did, as front ends and the headless JSON lines read it: the turn it
//! restored and the files it put back, the files it found changed by the user since the turn
//! (nothing is written over them without asking), or why there was nothing to do.

use serde::{Deserialize, Serialize};

use super::changes::FileChange;
use super::path::RelPath;
use super::undo_stack::TurnCheckpoint;
use super::{Restore, Restored, SnapshotId};

/// Which way a restore goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UndoAction {
    /// A turn's files back to their state before it.
    Undo,
    /// An undone turn's files to their state after it again.
    Redo,
}

impl UndoAction {
    /// `undo` or `redo`.
    pub fn as_str(self) -> &'static str {
        match self {
            UndoAction::Undo => "undo",
            UndoAction::Redo => "redo",
        }
    }
}

/// The turn a restore was about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnRef {
    pub generation: u32,
    pub turn: u64,
    /// When the turn ended, seconds since the epoch.
    pub at: u64,
}

impl From<&TurnCheckpoint> for TurnRef {
    fn from(t: &TurnCheckpoint) -> TurnRef {
        TurnRef {
            generation: t.generation,
            turn: t.turn,
            at: t.at,
        }
    }
}

/// The answer to an undo or a redo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum RestoreReport {
    /// The files were restored (all but those listed as kept, untouched or failed).
    Restored {
        action: UndoAction,
        of: TurnRef,
        /// What was put back, from the state before the restore to the state after it.
        files: Vec<FileChange>,
        /// Changed by the user since the turn and left as they are (the user said skip).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        kept: Vec<RelPath>,
        /// Changed by the user since the turn and written over (the user said overwrite); their
        /// content is in `backup`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        overwritten: Vec<RelPath>,
        /// Left as they are because a checkpoint could not hold their content (over a cap).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        untouched: Vec<RelPath>,
        /// Could not be written or removed, with the reason.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        failed: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        backup: Option<SnapshotId>,
    },
    /// Files the turn changed were changed again since (by the user): nothing was restored. The
    /// front end asks (overwrite or skip them) and sends the op again with the answer.
    Conflict {
        action: UndoAction,
        of: TurnRef,
        files: Vec<RelPath>,
    },
    /// No turn to undo (or redo).
    Nothing { action: UndoAction },
    /// The store could not be used; nothing was changed unless `Restored` came before.
    Failed { action: UndoAction, message: String },
}

impl RestoreReport {
    /// The report of a restore of `turn` that ran.
    pub fn of(action: UndoAction, turn: &TurnCheckpoint, restore: Restore) -> RestoreReport {
        let of = TurnRef::from(turn);
        match restore {
            Restore::Stopped { conflicts } => RestoreReport::Conflict {
                action,
                of,
                files: conflicts.into_iter().map(|c| c.path).collect(),
            },
            Restore::Done(Restored {
                changed,
                kept,
                overwritten,
                backup,
                untouched,
                failed,
            }) => RestoreReport::Restored {
                action,
                of,
                files: changed,
                kept: kept.into_iter().map(|c| c.path).collect(),
                overwritten: overwritten.into_iter().map(|c| c.path).collect(),
                untouched: untouched.into_iter().map(|(p, _)| p).collect(),
                failed: failed
                    .into_iter()
                    .map(|f| format!("{}: {}", f.path, f.error))
                    .collect(),
                backup,
            },
        }
    }

    /// Whether the turn moved to the other stack (it did unless conflicts stopped it or it
    /// failed).
    pub fn moved(&self) -> bool {
        matches!(self, RestoreReport::Restored { .. })
    }

    /// One line for a person: what was restored, or why not.
    pub fn summary(&self) -> String {
        match self {
            RestoreReport::Restored {
                action,
                of,
                files,
                kept,
                failed,
                ..
            } => {
                let mut s = format!(
                    "{}: {} file{} of turn {} (generation {}) restored",
                    action.as_str(),
                    files.len(),
                    if files.len() == 1 { "" } else { "s" },
                    of.turn,
                    of.generation
                );
                for f in files {
                    s.push_str(&format!("\n  {} {}", change_word(f), f.path));
                }
                for p in kept {
                    s.push_str(&format!("\n  kept as you changed it: {p}"));
                }
                for f in failed {
                    s.push_str(&format!("\n  failed: {f}"));
                }
                s
            }
            RestoreReport::Conflict {
                action, of, files, ..
            } => format!(
                "{}: nothing restored: {} changed since turn {} (generation {}): {}",
                action.as_str(),
                if files.len() == 1 {
                    "1 file was"
                } else {
                    "files were"
                },
                of.turn,
                of.generation,
                files
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            RestoreReport::Nothing { action } => format!(
                "{}: no turn that changed files to {}",
                action.as_str(),
                action.as_str()
            ),
            RestoreReport::Failed { action, message } => {
                format!("{} failed: {message}", action.as_str())
            }
        }
    }
}

/// How a restore changed a file, in a word.
fn change_word(f: &FileChange) -> &'static str {
    use super::changes::ChangeKind;
    match f.kind {
        ChangeKind::Created => "created",
        ChangeKind::Modified => "modified",
        ChangeKind::Deleted => "removed",
        ChangeKind::ModeChanged => "mode",
    }
}
