//! The undo and redo stacks of a step, as data: which turns changed files, between which two
//! checkpoints, and how far the user has walked back. Pure (no I/O) and serialisable, so the
//! ledger keeps it in the step's record and it reaches back across handoffs into earlier
//! generations.
//!
//! - A turn that changed files is recorded with its before and after checkpoints; one that changed
//!   nothing is not (undo skips to the last turn that did something).
//! - Undo takes the newest recorded turn; redo takes the newest undone one. Each is two steps: the
//!   caller looks at the turn ([`UndoStack::next_undo`]), restores the files, and only then moves
//!   it ([`UndoStack::commit_undo`]), naming the turn it restored, so a restore that failed or was
//!   refused leaves the stacks as they were.
//! - A new turn that changes files empties the redo side: what was undone is then history that
//!   the new work replaced (its checkpoints stay in the store).
//! - At most [`MAX_TURNS`] turns are kept; the oldest go first.
//! - The running turn is in the stack from its first checkpoint on ([`UndoStack::pending`]), with
//!   the checkpoints around each of its workspace-changing calls, so a process killed mid-turn
//!   leaves it there: the next start closes it with the workspace as it finds it.

use serde::{Deserialize, Serialize};

use super::SnapshotId;
use super::changes::FileChange;
use super::path::RelPath;

/// How many turns the undo side keeps.
pub const MAX_TURNS: usize = 500;

/// A turn that changed files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnCheckpoint {
    /// The generation (session) the turn ran in.
    pub generation: u32,
    /// The turn's number in its step (the engine counts them across processes).
    pub turn: u64,
    /// When the turn ended, seconds since the epoch.
    pub at: u64,
    pub before: SnapshotId,
    pub after: SnapshotId,
    /// What the turn changed (never empty in a stack): only what its own calls changed.
    pub files: Vec<FileChange>,
    /// Directories the turn's own calls created or removed (an undo or redo touches only these
    /// and `files`). None for a turn recorded before calls were told apart: all that differs
    /// between `before` and `after` is the turn's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirs: Option<Vec<RelPath>>,
    /// Files of `files` that someone else changed too while the turn ran (between its calls): an
    /// undo never writes over them without asking.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mixed: Vec<RelPath>,
}

/// One workspace-changing call of a running turn: the checkpoints just before and just after it
/// (`after` is None while it runs, or when the process ended during it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallSpan {
    pub before: SnapshotId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<SnapshotId>,
}

/// A turn that has taken its first checkpoint and not yet ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingTurn {
    pub generation: u32,
    pub turn: u64,
    /// Its workspace-changing calls so far, in order (never empty).
    pub calls: Vec<CallSpan>,
}

impl PendingTurn {
    /// The turn's first checkpoint.
    pub fn before(&self) -> Option<SnapshotId> {
        self.calls.first().map(|c| c.before)
    }
}

impl TurnCheckpoint {
    fn same_turn(&self, other: &TurnCheckpoint) -> bool {
        self.generation == other.generation
            && self.turn == other.turn
            && self.before == other.before
            && self.after == other.after
    }
}

/// What [`UndoStack::record`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// The turn is now the newest undoable one; `dropped_redo` undone turns were forgotten.
    Added { dropped_redo: usize },
    /// It changed no file: nothing recorded, the redo side kept.
    NothingChanged,
}

/// The turn a commit named is not the one on top of that stack (another undo or a new turn came
/// in between): nothing moved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("that turn is no longer the next one to {0}")]
pub struct NotOnTop(pub &'static str);

/// The undo and redo sides of one step.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UndoStack {
    /// Oldest first; the last is undone next.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    done: Vec<TurnCheckpoint>,
    /// Oldest undo first; the last is redone next.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    undone: Vec<TurnCheckpoint>,
    /// The turn running (or cut short by the end of its process), not yet on either side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<PendingTurn>,
}

impl UndoStack {
    pub fn is_empty(&self) -> bool {
        self.done.is_empty() && self.undone.is_empty() && self.pending.is_none()
    }

    /// Every checkpoint the stacks name (what a clean-up of the store must keep), with the time
    /// of its turn (None: the turn is still open).
    pub fn named(&self) -> impl Iterator<Item = (SnapshotId, Option<u64>)> + '_ {
        let ended = self
            .done
            .iter()
            .chain(&self.undone)
            .flat_map(|t| [(t.before, Some(t.at)), (t.after, Some(t.at))]);
        let open = self
            .pending
            .iter()
            .flat_map(|p| &p.calls)
            .flat_map(|c| std::iter::once(c.before).chain(c.after))
            .map(|id| (id, None));
        ended.chain(open)
    }

    /// Record a finished turn.
    pub fn record(&mut self, turn: TurnCheckpoint) -> Recorded {
        if turn.files.is_empty() {
            return Recorded::NothingChanged;
        }
        let dropped_redo = self.undone.len();
        self.undone.clear();
        self.done.push(turn);
        if self.done.len() > MAX_TURNS {
            let excess = self.done.len() - MAX_TURNS;
            self.done.drain(..excess);
        }
        Recorded::Added { dropped_redo }
    }

    /// The turn an undo would restore (from its `after` back to its `before`).
    pub fn next_undo(&self) -> Option<&TurnCheckpoint> {
        self.done.last()
    }

    /// The turn a redo would re-apply (from its `before` to its `after`).
    pub fn next_redo(&self) -> Option<&TurnCheckpoint> {
        self.undone.last()
    }

    /// `turn` was undone: move it to the redo side.
    pub fn commit_undo(&mut self, turn: &TurnCheckpoint) -> Result<(), NotOnTop> {
        match self.done.last() {
            Some(top) if top.same_turn(turn) => {
                if let Some(t) = self.done.pop() {
                    self.undone.push(t);
                }
                Ok(())
            }
            _ => Err(NotOnTop("undo")),
        }
    }

    /// `turn` was redone: move it back to the undo side.
    pub fn commit_redo(&mut self, turn: &TurnCheckpoint) -> Result<(), NotOnTop> {
        match self.undone.last() {
            Some(top) if top.same_turn(turn) => {
                if let Some(t) = self.undone.pop() {
                    self.done.push(t);
                }
                Ok(())
            }
            _ => Err(NotOnTop("redo")),
        }
    }

    /// Forget the turns that ended before `since` (seconds since the epoch): the store no longer
    /// keeps their checkpoints.
    pub fn forget_before(&mut self, since: u64) {
        self.done.retain(|t| t.at >= since);
        self.undone.retain(|t| t.at >= since);
    }

    /// The undoable turns, newest first.
    pub fn undoable(&self) -> impl Iterator<Item = &TurnCheckpoint> {
        self.done.iter().rev()
    }

    /// The redoable turns, newest undo first.
    pub fn redoable(&self) -> impl Iterator<Item = &TurnCheckpoint> {
        self.undone.iter().rev()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::checkpoint::ObjectId;
    use crate::engine::checkpoint::changes::ChangeKind;

    fn id(n: u64) -> SnapshotId {
        SnapshotId(ObjectId::of(&n.to_le_bytes()))
    }

    fn turn(generation: u32, n: u64, files: usize) -> TurnCheckpoint {
        TurnCheckpoint {
            generation,
            turn: n,
            at: 1_800_000_000 + n,
            before: id(n * 2),
            after: id(n * 2 + 1),
            dirs: None,
            mixed: Vec::new(),
            files: (0..files)
                .map(|i| FileChange {
                    path: RelPath::parse(&format!("f{i}.rs")).unwrap(),
                    kind: ChangeKind::Modified,
                    lines: None,
                })
                .collect(),
        }
    }

    #[test]
    fn undo_walks_back_across_generations_and_redo_comes_back() {
        let mut s = UndoStack::default();
        assert!(s.is_empty() && s.next_undo().is_none() && s.next_redo().is_none());
        assert_eq!(s.record(turn(1, 1, 1)), Recorded::Added { dropped_redo: 0 });
        assert_eq!(s.record(turn(1, 2, 0)), Recorded::NothingChanged);
        s.record(turn(2, 1, 2));
        let newest = s.next_undo().unwrap().clone();
        assert_eq!((newest.generation, newest.turn), (2, 1));
        s.commit_undo(&newest).unwrap();
        let older = s.next_undo().unwrap().clone();
        assert_eq!(
            (older.generation, older.turn),
            (1, 1),
            "into the earlier generation"
        );
        s.commit_undo(&older).unwrap();
        assert!(s.next_undo().is_none());
        // Redo re-applies the last undone first.
        let redo = s.next_redo().unwrap().clone();
        assert_eq!(redo, older);
        s.commit_redo(&redo).unwrap();
        assert_eq!(s.next_redo(), Some(&newest));
        assert_eq!(
            s.redoable().map(|t| t.turn).collect::<Vec<_>>(),
            [1],
            "one left to redo"
        );
        // A commit that names another turn moves nothing.
        assert_eq!(s.commit_undo(&newest), Err(NotOnTop("undo")));
        assert_eq!(s.commit_redo(&older), Err(NotOnTop("redo")));
        // A new turn that changed files forgets the redo side; one that changed none does not.
        assert_eq!(s.record(turn(2, 2, 0)), Recorded::NothingChanged);
        assert!(s.next_redo().is_some());
        assert_eq!(s.record(turn(2, 3, 1)), Recorded::Added { dropped_redo: 1 });
        assert!(s.next_redo().is_none());
        assert_eq!(s.undoable().map(|t| t.turn).collect::<Vec<_>>(), [3, 1]);
    }

    #[test]
    fn the_stacks_serialise_and_keep_at_most_the_newest_turns() {
        let mut s = UndoStack::default();
        assert_eq!(serde_json::to_string(&s).unwrap(), "{}");
        for n in 0..(MAX_TURNS as u64 + 5) {
            s.record(turn(1, n, 1));
        }
        assert_eq!(s.undoable().count(), MAX_TURNS);
        assert_eq!(s.undoable().last().map(|t| t.turn), Some(5));
        let top = s.next_undo().unwrap().clone();
        s.commit_undo(&top).unwrap();
        let json = serde_json::to_string(&s).unwrap();
        let back: UndoStack = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
        assert!(json.contains("\"before\":\"") && json.contains("\"kind\":\"modified\""));
    }
}
