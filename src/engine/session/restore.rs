//! `/undo` and `/redo`: restore the newest turn of that side of the step's undo stack. Files
//! changed since the turn (or by someone else while it ran) stop it first with
//! [`OnConflict::Stop`], and the front end asks; the answer comes back as the same op with
//! `Overwrite` (the current files are kept in a backup checkpoint first) or `KeepUsers`. A
//! restore that ran moves the turn to the other side of the stack and is a line of the step's
//! checkpoint list.

use std::collections::BTreeSet;

use super::Engine;
use crate::engine::checkpoint::{OnConflict, RestoreReport, UndoAction};
use crate::engine::ledger::CheckpointKind;
use crate::engine::protocol::Event;

impl Engine {
    /// `/undo` or `/redo`: restore the newest turn of that side of the stack.
    pub(crate) async fn restore_op(&mut self, action: UndoAction, on_conflict: OnConflict) {
        let report = self.restore_turn(action, on_conflict).await;
        self.emit_logged(Event::Restore(report));
    }

    async fn restore_turn(&mut self, action: UndoAction, on_conflict: OnConflict) -> RestoreReport {
        let turn = self.ledger.rec().and_then(|r| match action {
            UndoAction::Undo => r.undo.next_undo().cloned(),
            UndoAction::Redo => r.undo.next_redo().cloned(),
        });
        let Some(turn) = turn else {
            return RestoreReport::Nothing { action };
        };
        let Some(store) = self.checkpoint_store() else {
            return RestoreReport::Failed {
                action,
                message: self
                    .checkpoints_off()
                    .unwrap_or("the checkpoint store cannot be used")
                    .to_string(),
            };
        };
        let t = turn.clone();
        let ran = store
            .in_background(move |s| match action {
                UndoAction::Undo => s.undo(&t, on_conflict),
                UndoAction::Redo => s.redo(&t, on_conflict),
            })
            .await;
        let report = match ran {
            Ok(restore) => RestoreReport::of(action, &turn, restore),
            Err(e) => {
                return RestoreReport::Failed {
                    action,
                    message: e.to_string(),
                };
            }
        };
        if let RestoreReport::Restored { files, backup, .. } = &report {
            if let Some(b) = backup {
                self.note_checkpoint(
                    turn.turn,
                    CheckpointKind::Backup,
                    Some(*b),
                    &[],
                    &BTreeSet::new(),
                );
            }
            let kind = match action {
                UndoAction::Undo => CheckpointKind::Undo,
                UndoAction::Redo => CheckpointKind::Redo,
            };
            let names: Vec<String> = files.iter().map(|f| f.path.to_string()).collect();
            self.note_checkpoint(turn.turn, kind, None, &names, &BTreeSet::new());
            self.ledger.record(|rec| {
                // The engine is the stack's only writer and nothing ran in between.
                let _ = match action {
                    UndoAction::Undo => rec.undo.commit_undo(&turn),
                    UndoAction::Redo => rec.undo.commit_redo(&turn),
                };
            });
            self.save_manifest();
        }
        report
    }
}
