//! What undoing several turns in a row (a rewind's code part) would run into, found before any
//! of them is undone, so the user can be asked once and nothing is half done.
//!
//! Going from the newest turn back: a path the turn's own calls changed is expected as the turn
//! left it. For the newest turn touching a path that is the file on disk; for an older one it is
//! what the newer turn started from (the newer one's undo puts that back), so a difference there
//! is a change someone made between the two turns. A file someone else changed while a turn ran
//! is asked about too.

use std::collections::BTreeMap;

use super::Checkpoints;
use super::attribution::Scope;
use super::error::CheckpointError;
use super::path::RelPath;
use super::restore::{self, Conflict, ConflictKind};
use super::tree::{self, Node};
use super::undo_stack::TurnCheckpoint;

impl Checkpoints {
    /// The conflicts undoing `turns` (newest first) would meet, sorted by path, one per path.
    pub fn undo_conflicts(
        &self,
        turns: &[TurnCheckpoint],
    ) -> Result<Vec<Conflict>, CheckpointError> {
        let objects = &self.inner.objects;
        let ws = &self.inner.rules.workspace;
        // Path → what the newer turns' undos leave there.
        let mut left: BTreeMap<RelPath, Option<Node>> = BTreeMap::new();
        let mut found: BTreeMap<RelPath, ConflictKind> = BTreeMap::new();
        for turn in turns {
            let scope = Scope::of(turn, &turn.mixed);
            let deltas = tree::diff(objects, Some(&turn.after.0), Some(&turn.before.0))?;
            for d in deltas.into_iter().filter(|d| scope.holds(&d.path)) {
                let conflict = match left.get(&d.path) {
                    Some(expected) if !same(*expected, d.before) => Some(ConflictKind::Changed),
                    Some(_) => None,
                    None => restore::current_matches(ws, &d.path, d.before, d.after)
                        .err()
                        .filter(|_| {
                            restore::current_matches(ws, &d.path, d.after, d.after).is_err()
                        }),
                };
                let conflict = conflict.or_else(|| {
                    turn.mixed
                        .contains(&d.path)
                        .then_some(ConflictKind::ChangedDuringTurn)
                });
                if let Some(kind) = conflict {
                    found.entry(d.path.clone()).or_insert(kind);
                }
                left.insert(d.path, d.after);
            }
        }
        Ok(found
            .into_iter()
            .map(|(path, kind)| Conflict { path, kind })
            .collect())
    }
}

/// Two entries that a restore treats alike (directories by kind only: their listings differ
/// whenever anything in them does).
fn same(a: Option<Node>, b: Option<Node>) -> bool {
    match (a, b) {
        (Some(Node::Dir(_)), Some(Node::Dir(_))) => true,
        (a, b) => a == b,
    }
}
