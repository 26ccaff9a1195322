//! The code half of `/rewind`: the turns from the chosen one on are undone, newest first, as
//! `/undo` would. Files changed since those turns (or by someone else while they ran) are looked
//! for first, across all of them: with `OnConflict::Stop` any such file stops the rewind before
//! anything changes, and the front end asks; the answer comes back as the same rewind with
//! `KeepUsers` (they are left as they are and named) or `Overwrite` (their content is kept in a
//! backup checkpoint first). The undone turns go to the redo side: `/redo` brings them back one
//! by one.

use std::collections::BTreeSet;

use super::{Checkpointing, Noted, note};
use crate::engine::checkpoint::{OnConflict, Restore};
use crate::engine::ledger::CheckpointKind;
use crate::engine::protocol::Event;
use crate::engine::session::step_ledger::StepLedger;

/// What a rewind of the code changed: the files it put back, and the files it left as the
/// user had them (both sorted, each named once), and the turns it undid.
#[derive(Debug, Default)]
pub(in crate::engine::session) struct Rewound {
    pub(in crate::engine::session) files: Vec<String>,
    pub(in crate::engine::session) kept: Vec<String>,
    /// The turns undone, newest first.
    pub(in crate::engine::session) turns: Vec<u64>,
}

impl Checkpointing {
    /// The files undoing every turn from `turn` on would write over (changed since, or by
    /// someone else while a turn ran). A store that cannot tell is said, and counts as none:
    /// the walk itself then stops at the first turn it cannot undo.
    pub(in crate::engine::session) async fn rewind_conflicts(
        &mut self,
        ledger: &StepLedger,
        turn: u64,
    ) -> Vec<String> {
        let turns: Vec<_> = ledger
            .rec()
            .map(|r| {
                r.history
                    .undo
                    .undoable()
                    .take_while(|t| t.turn >= turn)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        if turns.is_empty() {
            return Vec::new();
        }
        let Some(store) = self.store(ledger) else {
            return Vec::new();
        };
        match store.in_background(move |s| s.undo_conflicts(&turns)).await {
            Ok(found) => found.into_iter().map(|c| c.path.to_string()).collect(),
            Err(e) => {
                self.out.emit(Event::Warning {
                    message: format!("/rewind: the files cannot be compared: {e}"),
                });
                Vec::new()
            }
        }
    }

    /// Undo, newest first, every turn from `turn` on (in `generation`); files changed since are
    /// `on_conflict`'s (a `Stop` that meets one, found after the check, keeps them).
    pub(in crate::engine::session) async fn rewind(
        &mut self,
        ledger: &mut StepLedger,
        generation: u32,
        turn: u64,
        on_conflict: OnConflict,
    ) -> Rewound {
        let on_conflict = match on_conflict {
            OnConflict::Stop => OnConflict::KeepUsers,
            other => other,
        };
        let mut done = Rewound::default();
        loop {
            let next = ledger
                .rec()
                .and_then(|r| r.history.undo.next_undo().cloned())
                .filter(|t| t.turn >= turn);
            let Some(t) = next else { break };
            let Some(store) = self.store(ledger) else {
                break;
            };
            let undo = t.clone();
            match store
                .in_background(move |s| s.undo(&undo, on_conflict))
                .await
            {
                Ok(Restore::Done(restored)) => {
                    let changed = restored.changed.iter().map(|f| f.path.to_string());
                    done.files.extend(changed);
                    done.kept
                        .extend(restored.kept.iter().map(|c| c.path.to_string()));
                    if let Some(b) = restored.backup {
                        let at = Noted::new(generation, t.turn, CheckpointKind::Backup);
                        note(ledger, at, Some(b), &[], &BTreeSet::new());
                    }
                    ledger.record(|r| {
                        let _ = r.history.undo.commit_undo(&t);
                    });
                    done.turns.push(t.turn);
                }
                // KeepUsers never stops; a store that fails ends the walk.
                Ok(Restore::Stopped { .. }) => break,
                Err(e) => {
                    self.out.emit(Event::Warning {
                        message: format!("/rewind: turn {} not undone: {e}", t.turn),
                    });
                    break;
                }
            }
        }
        done.files.sort();
        done.files.dedup();
        done.kept.sort();
        done.kept.dedup();
        done
    }
}
