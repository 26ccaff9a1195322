//! Telling a turn's own changes from everyone else's.
//!
//! A turn takes a checkpoint just before and just after each of its workspace-changing calls
//! ([`PendingTurn`]). What differs across a call is the call's (for `bash`, whatever the command
//! did); what differs between one call's end and the next call's start, or after the last call,
//! was changed by someone else while the turn ran (the user in an editor, another process). When
//! the turn ends:
//! - its files are those its own calls changed and that still differ from the turn's start;
//! - a file someone else changed and no call touched is not the turn's: an undo leaves it alone;
//! - a file both changed is the turn's but *mixed*: an undo asks before writing over it, since
//!   part of what it would put back is someone else's work.
//!
//! A call whose end state was never taken (the process died during it) ends where the next call
//! starts, or where the turn is closed: everything in between counts as the call's.

use std::collections::BTreeSet;

use super::changes::{self, FileChange};
use super::error::CheckpointError;
use super::path::RelPath;
use super::restore::{Conflict, ConflictKind};
use super::tree::{self, Delta};
use super::undo_stack::{PendingTurn, TurnCheckpoint};
use super::{Checkpoints, SnapshotId};

/// Which paths a restore may touch, and which of those it must ask about even when they are as
/// the restore expects.
#[derive(Debug, Default)]
pub(crate) struct Scope<'a> {
    /// None: every path that differs.
    only: Option<BTreeSet<RelPath>>,
    ask: &'a [RelPath],
}

impl<'a> Scope<'a> {
    /// The paths of `turn`'s own calls (all of them for a turn recorded before calls were told
    /// apart); `ask`: the ones to ask about.
    pub(crate) fn of(turn: &TurnCheckpoint, ask: &'a [RelPath]) -> Scope<'a> {
        let only = turn.dirs.as_ref().map(|dirs| {
            dirs.iter()
                .cloned()
                .chain(turn.files.iter().map(|f| f.path.clone()))
                .collect()
        });
        Scope { only, ask }
    }

    pub(crate) fn holds(&self, path: &RelPath) -> bool {
        self.only.as_ref().is_none_or(|only| only.contains(path))
    }

    /// Add a conflict for each path still to restore that must be asked about.
    pub(crate) fn add_asked(&self, deltas: &[Delta], conflicts: &mut Vec<Conflict>) {
        for d in deltas {
            if self.ask.contains(&d.path) && !conflicts.iter().any(|c| c.path == d.path) {
                conflicts.push(Conflict {
                    path: d.path.clone(),
                    kind: ConflictKind::ChangedDuringTurn,
                });
            }
        }
        conflicts.sort_by(|a, b| a.path.cmp(&b.path));
    }
}

/// A turn closed: what goes onto the undo stack, and what changed during it that was not its.
#[derive(Debug)]
pub struct Closed {
    pub turn: TurnCheckpoint,
    /// Files someone else changed while the turn ran, which none of its calls touched.
    pub others: Vec<RelPath>,
}

impl Checkpoints {
    /// Close `pending` at `end`, the workspace's state when the turn ended (or when a later start
    /// found it cut short); `at`: that time, seconds since the epoch. None when it has no call.
    pub fn close_turn(
        &self,
        pending: &PendingTurn,
        end: SnapshotId,
        at: u64,
    ) -> Result<Option<Closed>, CheckpointError> {
        let Some(first) = pending.before() else {
            return Ok(None);
        };
        let objects = &self.inner.objects;
        let paths = |a: &SnapshotId, b: &SnapshotId, into: &mut BTreeSet<RelPath>| {
            tree::diff(objects, Some(&a.0), Some(&b.0))
                .map(|deltas| into.extend(deltas.into_iter().map(|d| d.path)))
        };
        let (mut own, mut foreign) = (BTreeSet::new(), BTreeSet::new());
        let calls = &pending.calls;
        for (n, call) in calls.iter().enumerate() {
            let next = calls.get(n + 1).map(|c| c.before);
            let after = call.after.or(next).unwrap_or(end);
            paths(&call.before, &after, &mut own)?;
            paths(&after, &next.unwrap_or(end), &mut foreign)?;
        }
        let mut deltas = tree::diff(objects, Some(&first.0), Some(&end.0))?;
        let others: Vec<RelPath> = deltas
            .iter()
            .filter(|d| !own.contains(&d.path) && !is_dir(d))
            .map(|d| d.path.clone())
            .collect();
        deltas.retain(|d| own.contains(&d.path));
        let files: Vec<FileChange> = changes::file_changes(objects, &deltas)?;
        let dirs = deltas
            .iter()
            .filter(|d| is_dir(d))
            .map(|d| d.path.clone())
            .collect();
        let mixed = files
            .iter()
            .filter(|f| foreign.contains(&f.path))
            .map(|f| f.path.clone())
            .collect();
        Ok(Some(Closed {
            turn: TurnCheckpoint {
                generation: pending.generation,
                turn: pending.turn,
                at,
                before: first,
                after: end,
                files,
                dirs: Some(dirs),
                mixed,
            },
            others,
        }))
    }
}

/// A directory on either side.
fn is_dir(d: &Delta) -> bool {
    d.before.is_some_and(|n| n.is_dir()) || d.after.is_some_and(|n| n.is_dir())
}
