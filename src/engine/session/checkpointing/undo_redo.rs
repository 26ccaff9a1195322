//! `/undo` and `/redo`: restore the newest turn of that side of the step's undo stack. Files
//! changed since the turn (or by someone else while it ran) stop it first with
//! [`OnConflict::Stop`], and the front end asks; the answer comes back as the same op with
//! `Overwrite` (the current files are kept in a backup checkpoint first) or `KeepUsers`. A
//! restore that ran moves the turn to the other side of the stack and is a line of the step's
//! checkpoint list.

use std::collections::BTreeSet;

use super::{Checkpointing, Noted, note};
use crate::engine::checkpoint::{OnConflict, RestoreReport, UndoAction};
use crate::engine::ledger::CheckpointKind;
use crate::engine::session::step_ledger::StepLedger;

impl Checkpointing {
    /// `/undo` or `/redo` in `generation`: restore the newest turn of that side of the stack;
    /// what happened, for the front end.
    pub(in crate::engine::session) async fn restore(
        &mut self,
        ledger: &mut StepLedger,
        generation: u32,
        action: UndoAction,
        on_conflict: OnConflict,
    ) -> RestoreReport {
        let turn = ledger.rec().and_then(|r| match action {
            UndoAction::Undo => r.history.undo.next_undo().cloned(),
            UndoAction::Redo => r.history.undo.next_redo().cloned(),
        });
        let Some(turn) = turn else {
            return RestoreReport::Nothing { action };
        };
        let Some(store) = self.store(ledger) else {
            return RestoreReport::Failed {
                action,
                message: self
                    .off_reason()
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
                let at = Noted::new(generation, turn.turn, CheckpointKind::Backup);
                note(ledger, at, Some(*b), &[], &BTreeSet::new());
            }
            let kind = match action {
                UndoAction::Undo => CheckpointKind::Undo,
                UndoAction::Redo => CheckpointKind::Redo,
            };
            let names: Vec<String> = files.iter().map(|f| f.path.to_string()).collect();
            note(
                ledger,
                Noted::new(generation, turn.turn, kind),
                None,
                &names,
                &BTreeSet::new(),
            );
            ledger.record(|rec| {
                // The engine is the stack's only writer and nothing ran in between.
                let _ = match action {
                    UndoAction::Undo => rec.history.undo.commit_undo(&turn),
                    UndoAction::Redo => rec.history.undo.commit_redo(&turn),
                };
            });
            ledger.save();
        }
        report
    }
}
