//! Checkpoints around turns, and `/undo` and `/redo`.
//!
//! - Before the first call of a turn that may change the workspace (an edit, a write, `bash`, an
//!   MCP tool or a subagent), a checkpoint; when the turn ends, another: if the two differ, the
//!   turn goes onto the step's undo stack (`StepRecord::undo`, so it reaches back across
//!   handoffs and `--continue`). A turn that ran no such call takes none.
//! - Every handoff takes a checkpoint of the workspace as the retired generation left it.
//! - Each checkpoint, and each undo or redo that ran, is a line of `StepRecord::checkpoints`.
//! - Files a checkpoint could not hold (over a cap, unreadable) are named in a notice, once per
//!   turn: an undo leaves them as they are.
//! - `Op::Restore` restores the newest turn of that side of the stack; files the user changed
//!   since the turn stop it first (`OnConflict::Stop`), and the front end decides.
//!
//! The store is opened on first use; when it cannot be, one warning says so and the session goes
//! on without checkpoints.

use std::collections::BTreeSet;

use super::Engine;
use crate::engine::checkpoint::{
    Checkpoints, OnConflict, Options, RelPath, RestoreReport, SkipReason, Snapshot, SnapshotId,
    TurnCheckpoint, UndoAction,
};
use crate::engine::fsutil::now_unix;
use crate::engine::ledger::{CheckpointKind, CheckpointRecord, now_stamp};
use crate::engine::protocol::Event;
use crate::engine::tools::names;

/// The checkpoint store of this engine and the running turn's first checkpoint.
#[derive(Debug, Default)]
pub(crate) struct Checkpointing {
    store: Store,
    before: Option<Before>,
}

#[derive(Debug, Default)]
enum Store {
    #[default]
    Closed,
    Open(Checkpoints),
    /// It could not be opened (said once).
    Unavailable,
}

/// The running turn's checkpoint before its first workspace-changing call.
#[derive(Debug)]
struct Before {
    id: SnapshotId,
    generation: u32,
    turn: u64,
    /// What it could not hold (already named in a notice).
    skipped: BTreeSet<RelPath>,
}

/// Whether a call of `tool` may change the workspace.
pub(crate) fn may_change_workspace(tool: &str) -> bool {
    names::changes_files(tool) || tool == names::TASK || tool.starts_with("mcp__")
}

impl Engine {
    pub(super) fn checkpoint_store(&mut self) -> Option<Checkpoints> {
        match &self.checkpoints.store {
            Store::Open(s) => return Some(s.clone()),
            Store::Unavailable => return None,
            Store::Closed => {}
        }
        let mut options = Options::default();
        if let Some(bench) = &self.run.places.workbench {
            options.excluded.push(bench.clone());
        }
        // flower-tui's own data (ledgers, transcripts, the store) when it lies in the workspace:
        // an undo must never put the engine's records back.
        for own in [&self.run.places.data_dir, &self.ledger.run_dir.root] {
            options
                .excluded
                .push(std::fs::canonicalize(own).unwrap_or_else(|_| own.clone()));
        }
        match Checkpoints::open(
            &self.run.places.data_dir,
            &self.run.places.workspace,
            options,
        ) {
            Ok(s) => {
                self.checkpoints.store = Store::Open(s.clone());
                Some(s)
            }
            Err(e) => {
                self.checkpoints.store = Store::Unavailable;
                self.emit(Event::Warning {
                    message: format!("{e}: no checkpoints this session (/undo cannot help)"),
                });
                None
            }
        }
    }

    /// Take a checkpoint on the blocking pool; a failure is said (the turn goes on).
    async fn take_checkpoint(&mut self, label: String) -> Option<Snapshot> {
        let store = self.checkpoint_store()?;
        match store.in_background(move |s| s.snapshot(&label)).await {
            Ok(snap) => Some(snap),
            Err(e) => {
                self.emit(Event::Warning {
                    message: format!("checkpoint not taken: {e}; /undo will not cover this turn"),
                });
                None
            }
        }
    }

    /// Before a call of `tool`: the turn's first checkpoint, if the call may change the
    /// workspace and the turn has none yet.
    pub(crate) async fn checkpoint_before_call(&mut self, tool: &str) {
        let Some(turn) = self.turn else { return };
        if !may_change_workspace(tool) || self.checkpoints.before.is_some() {
            return;
        }
        // The step's turn number (counted across processes and generations).
        let number = self
            .ledger
            .rec()
            .map_or(turn.id.0, |r| u64::from(r.num_turns) + 1);
        let Some(snap) = self.take_checkpoint(format!("turn {number} before")).await else {
            return;
        };
        let skipped = self.name_skipped(&snap, &BTreeSet::new());
        let generation = self.s.generation;
        self.note_checkpoint(
            number,
            CheckpointKind::Before,
            Some(snap.id),
            Vec::new(),
            &skipped,
        );
        self.checkpoints.before = Some(Before {
            id: snap.id,
            generation,
            turn: number,
            skipped,
        });
    }

    /// At the end of a turn that took a first checkpoint: its end state; the turn goes onto the
    /// undo stack when it changed files.
    pub(crate) async fn checkpoint_after_turn(&mut self) {
        let Some(before) = self.checkpoints.before.take() else {
            return;
        };
        let Some(snap) = self
            .take_checkpoint(format!("turn {} after", before.turn))
            .await
        else {
            return;
        };
        let skipped = self.name_skipped(&snap, &before.skipped);
        let Some(store) = self.checkpoint_store() else {
            return;
        };
        let (from, to) = (before.id, snap.id);
        let files = match store.in_background(move |s| s.changes(&from, &to)).await {
            Ok(files) => files,
            Err(e) => {
                self.emit(Event::Warning {
                    message: format!("the turn's changes cannot be listed: {e}"),
                });
                return;
            }
        };
        let names = files.iter().map(|f| f.path.to_string()).collect();
        self.note_checkpoint(
            before.turn,
            CheckpointKind::After,
            Some(snap.id),
            names,
            &skipped,
        );
        let turn = TurnCheckpoint {
            generation: before.generation,
            turn: before.turn,
            at: now_unix().0,
            before: before.id,
            after: snap.id,
            files,
        };
        self.ledger.record(|rec| {
            rec.undo.record(turn);
        });
    }

    /// A handoff retires the current generation: a checkpoint of the workspace as it left it,
    /// with the files changed since the step's last checkpoint. Runs on the engine's own thread
    /// (the turnover is not async); on a multi-threaded runtime the thread is handed over to the
    /// runtime's other tasks meanwhile.
    pub(crate) fn checkpoint_at_handoff(&mut self) {
        let Some(store) = self.checkpoint_store() else {
            return;
        };
        let label = format!("handoff of generation {}", self.s.generation);
        let last = self.ledger.rec().and_then(|r| {
            r.checkpoints
                .iter()
                .rev()
                .filter(|c| c.kind != CheckpointKind::Backup)
                .find_map(|c| c.id)
        });
        let take = || {
            let snap = store.snapshot(&label)?;
            let files = match last {
                Some(from) => store.changes(&from, &snap.id)?,
                None => Vec::new(),
            };
            Ok::<_, crate::engine::checkpoint::CheckpointError>((snap, files))
        };
        let taken = match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
            Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(take),
            _ => take(),
        };
        match taken {
            Ok((snap, files)) => {
                let turn = self.ledger.rec().map_or(0, |r| u64::from(r.num_turns) + 1);
                let skipped = self.name_skipped(&snap, &BTreeSet::new());
                let files = files.iter().map(|f| f.path.to_string()).collect();
                self.note_checkpoint(
                    turn,
                    CheckpointKind::Handoff,
                    Some(snap.id),
                    files,
                    &skipped,
                );
            }
            Err(e) => self.emit(Event::Warning {
                message: format!("checkpoint at the handoff not taken: {e}"),
            }),
        }
    }

    /// Name what `snap` could not hold, but for what `known` named already. Returns all of it.
    fn name_skipped(&mut self, snap: &Snapshot, known: &BTreeSet<RelPath>) -> BTreeSet<RelPath> {
        // Sockets and fifos hold no content to lose: not worth a notice.
        let lost = || {
            snap.skipped
                .iter()
                .filter(|s| s.reason != SkipReason::Special)
        };
        let all: BTreeSet<RelPath> = lost().map(|s| s.path.clone()).collect();
        let new: Vec<String> = lost()
            .filter(|s| !known.contains(&s.path))
            .map(|s| format!("{} ({} bytes, {})", s.path, s.size, skip_words(s.reason)))
            .collect();
        if !new.is_empty() {
            self.emit(Event::Notice {
                message: skipped_notice(&new),
            });
        }
        all
    }

    /// One line of the step's checkpoint list.
    fn note_checkpoint(
        &mut self,
        turn: u64,
        kind: CheckpointKind,
        id: Option<SnapshotId>,
        files: Vec<String>,
        skipped: &BTreeSet<RelPath>,
    ) {
        let rec = CheckpointRecord {
            time: now_stamp(),
            generation: self.s.generation,
            turn,
            kind,
            id,
            files,
            skipped: skipped.iter().map(ToString::to_string).collect(),
        };
        self.ledger
            .record(|r| crate::engine::ledger::push_checkpoint(&mut r.checkpoints, rec));
    }

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
                message: "the checkpoint store cannot be used".into(),
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
                    Vec::new(),
                    &BTreeSet::new(),
                );
            }
            let kind = match action {
                UndoAction::Undo => CheckpointKind::Undo,
                UndoAction::Redo => CheckpointKind::Redo,
            };
            let names = files.iter().map(|f| f.path.to_string()).collect();
            self.note_checkpoint(turn.turn, kind, None, names, &BTreeSet::new());
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

/// The notice naming files a checkpoint could not hold.
fn skipped_notice(files: &[String]) -> String {
    let (which, verb) = if files.len() == 1 {
        ("this file", "it is")
    } else {
        ("these files", "they are")
    };
    format!(
        "not in the checkpoint, so /undo leaves {which} as {verb}: {}",
        files.join(", ")
    )
}

fn skip_words(reason: SkipReason) -> &'static str {
    match reason {
        SkipReason::OverFileCap => "over the size cap of one file",
        SkipReason::OverCheckpointCap => "past the size cap of one checkpoint",
        SkipReason::Unreadable => "not readable",
        SkipReason::Special => "not a file",
    }
}

#[cfg(test)]
mod tests {
    use super::skipped_notice;

    #[test]
    fn the_skipped_notice_agrees_in_number() {
        assert_eq!(
            skipped_notice(&["big.dat (12 bytes, over the size cap of one file)".into()]),
            "not in the checkpoint, so /undo leaves this file as it is: \
             big.dat (12 bytes, over the size cap of one file)"
        );
        assert_eq!(
            skipped_notice(&["a".into(), "b".into()]),
            "not in the checkpoint, so /undo leaves these files as they are: a, b"
        );
    }
}
