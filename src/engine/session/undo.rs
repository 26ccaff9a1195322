//! Checkpoints around turns and their calls.
//!
//! - Before each call of a turn that may change the workspace (an edit, a write, `bash`, an MCP
//!   tool or a subagent), a checkpoint, and another just after it. The first opens the turn's
//!   entry in the step's undo stack (`UndoStack::pending`), written to the ledger at once, so a
//!   process killed mid-turn leaves it there; each call's two checkpoints join it.
//! - When the turn ends, one more, and the entry is closed: the turn's files are what its own
//!   calls changed (for `bash`, whatever differs across the command); a file someone else changed
//!   while it ran and no call touched is not the turn's (named in a notice, never undone); a file
//!   both changed is asked about before an undo writes over it. A turn that changed files goes
//!   onto the undo side; a turn that ran no such call takes no checkpoint.
//! - `--continue` or `/resume` to a run whose turn was cut short (its process killed) closes that
//!   turn with the workspace as found then, so `/undo` puts back its files as they were before.
//! - Every handoff takes a checkpoint of the workspace as the retired generation left it.
//! - Each checkpoint, and each undo or redo that ran, is a line of `StepRecord::checkpoints`.
//! - Files a checkpoint could not hold (over a cap, unreadable) are named in a notice, once per
//!   turn, the first few by name and the rest counted: an undo leaves them as they are.
//! - After the first checkpoint of a start, the store is cleaned in the background (at most once
//!   a day): what the ledgers of this workspace name for turns of the last `KEEP_DAYS` days is
//!   kept, the rest deleted; older turns leave this step's undo stack. A ledger that cannot be
//!   read stops the clean-up (it may name checkpoints).
//! - With checkpoints off (`--no-checkpoints`), or a workspace too large for one walk, none of
//!   this: `/undo` says why.
//!
//! The store is opened on first use; when it cannot be, one warning says so and the session goes
//! on without checkpoints.

use std::collections::BTreeSet;

use super::Engine;
use crate::engine::checkpoint::{
    CallSpan, CheckpointError, Checkpoints, Closed, KEEP_DAYS, Options, PendingTurn, RelPath,
    SkipReason, Snapshot, SnapshotId,
};
use crate::engine::fsutil::now_unix;
use crate::engine::ledger::{CheckpointKind, CheckpointRecord, now_stamp};
use crate::engine::policy::CheckpointPolicy;
use crate::engine::protocol::Event;
use crate::engine::tools::names;

/// How many paths a notice names before it only counts the rest.
const NAMED: usize = 5;
/// How many skipped paths one ledger record names.
const RECORDED: usize = 20;

/// The checkpoint store of this engine and what the running turn's checkpoints could not hold.
#[derive(Debug, Default)]
pub(crate) struct Checkpointing {
    store: Store,
    /// Already named in a notice this turn.
    skipped: BTreeSet<RelPath>,
}

#[derive(Debug, Default)]
enum Store {
    #[default]
    Closed,
    /// Opened; the flag says whether this start has asked for a clean-up yet.
    Open(Checkpoints, Cleanup),
    /// It could not be opened or used (said once); the words say why.
    Unavailable(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cleanup {
    Due,
    Started,
}

/// Whether a call of `tool` may change the workspace.
pub(crate) fn may_change_workspace(tool: &str) -> bool {
    names::changes_files(tool) || tool == names::TASK || tool.starts_with("mcp__")
}

impl Engine {
    /// The store, opened on first use; None (with the reason from [`Engine::checkpoints_off`])
    /// when there is none.
    pub(super) fn checkpoint_store(&mut self) -> Option<Checkpoints> {
        match &self.checkpoints.store {
            Store::Open(s, _) => return Some(s.clone()),
            Store::Unavailable(_) => return None,
            Store::Closed => {}
        }
        if self.run.places.checkpoints == CheckpointPolicy::Off {
            self.checkpoints.store =
                Store::Unavailable("checkpoints are off (--no-checkpoints)".into());
            return None;
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
                self.checkpoints.store = Store::Open(s.clone(), Cleanup::Due);
                Some(s)
            }
            Err(e) => {
                self.stop_checkpoints(format!(
                    "{e}: no checkpoints this session (/undo cannot help)"
                ));
                None
            }
        }
    }

    /// Why there is no store (None when there is one or it was not needed yet).
    pub(super) fn checkpoints_off(&self) -> Option<&str> {
        match &self.checkpoints.store {
            Store::Unavailable(why) => Some(why),
            _ => None,
        }
    }

    /// No more checkpoints this session: said once, with `why`.
    fn stop_checkpoints(&mut self, why: String) {
        self.emit(Event::Warning {
            message: why.clone(),
        });
        self.checkpoints.store = Store::Unavailable(why);
    }

    /// Take a checkpoint on the blocking pool; a failure is said (the turn goes on).
    async fn take_checkpoint(&mut self, label: String) -> Option<Snapshot> {
        let store = self.checkpoint_store()?;
        match store.in_background(move |s| s.snapshot(&label)).await {
            Ok(snap) => {
                self.clean_up_once(&store);
                self.name_skipped(&snap);
                Some(snap)
            }
            Err(e @ CheckpointError::TooManyFiles { .. }) => {
                self.stop_checkpoints(format!(
                    "{e}; checkpoints are off for this session, so /undo cannot help \
                     (`--no-checkpoints` or `no_checkpoints = true` skips the walk)"
                ));
                None
            }
            Err(e) => {
                self.emit(Event::Warning {
                    message: format!("checkpoint not taken: {e}; /undo will not cover this turn"),
                });
                None
            }
        }
    }

    /// The step's number of the running turn (counted across processes and generations).
    fn step_turn(&self) -> Option<u64> {
        let turn = self.turn.as_ref()?;
        Some(
            self.ledger
                .rec()
                .map_or(turn.id.0, |r| u64::from(r.figures.num_turns) + 1),
        )
    }

    /// Before a call of `tool` that may change the workspace: a checkpoint, opening the turn's
    /// undo entry (in the ledger at once) or adding the call to it.
    pub(crate) async fn checkpoint_before_call(&mut self, tool: &str) {
        let Some(number) = self.step_turn() else {
            return;
        };
        if !may_change_workspace(tool) {
            return;
        }
        let Some(snap) = self
            .take_checkpoint(format!("turn {number} before a call"))
            .await
        else {
            return;
        };
        // An entry left open by an earlier turn (its end checkpoint failed) ends here.
        let stale = self.open_undo_entry().filter(|p| p.turn != number);
        if let Some(stale) = stale {
            self.close_pending(stale, snap.id).await;
        }
        let opens = self
            .ledger
            .rec()
            .is_some_and(|r| r.history.undo.pending.is_none());
        if opens {
            let skipped = self.checkpoints.skipped.clone();
            self.note_checkpoint(number, CheckpointKind::Before, Some(snap.id), &[], &skipped);
        }
        let generation = self.s.generation;
        let span = CallSpan {
            before: snap.id,
            after: None,
        };
        self.ledger.record(|r| match &mut r.history.undo.pending {
            Some(p) => p.calls.push(span),
            None => {
                r.history.undo.pending = Some(PendingTurn {
                    generation,
                    turn: number,
                    calls: vec![span],
                });
            }
        });
        // A kill from here on still leaves the entry for the next start to close.
        self.save_manifest();
    }

    /// After a call that took a checkpoint before it: its end state; the call's two checkpoints
    /// when both were taken.
    pub(crate) async fn checkpoint_after_call(&mut self) -> Option<CallSpan> {
        let (number, before) = self
            .ledger
            .rec()
            .and_then(|r| r.history.undo.pending.as_ref())
            .and_then(|p| Some((p.turn, p.calls.last().filter(|c| c.after.is_none())?.before)))?;
        let snap = self
            .take_checkpoint(format!("turn {number} after a call"))
            .await?;
        self.ledger.record(|r| {
            if let Some(call) = r
                .history
                .undo
                .pending
                .as_mut()
                .and_then(|p| p.calls.last_mut())
            {
                call.after = Some(snap.id);
            }
        });
        Some(CallSpan {
            before,
            after: Some(snap.id),
        })
    }

    /// The step's undo entry still open (a turn that took its first checkpoint and has not
    /// closed), as recorded in the ledger.
    fn open_undo_entry(&self) -> Option<PendingTurn> {
        self.ledger
            .rec()
            .and_then(|r| r.history.undo.pending.clone())
    }

    /// At the end of a turn that took checkpoints: its end state; the turn goes onto the undo
    /// stack when its own calls changed files.
    pub(crate) async fn checkpoint_after_turn(&mut self) {
        let Some(pending) = self.open_undo_entry() else {
            return;
        };
        let label = format!("turn {} after", pending.turn);
        if let Some(snap) = self.take_checkpoint(label).await {
            self.close_pending(pending, snap.id).await;
        }
        self.checkpoints.skipped.clear();
    }

    /// At `--continue` or `/resume`: a turn cut short by the end of its process (its entry is
    /// still open) is closed with the workspace as it is now.
    pub(crate) async fn close_cut_short_turn(&mut self) {
        let Some(pending) = self.open_undo_entry() else {
            return;
        };
        let label = format!("turn {} closed at a later start", pending.turn);
        let Some(snap) = self.take_checkpoint(label).await else {
            return;
        };
        let number = pending.turn;
        self.close_pending(pending, snap.id).await;
        self.checkpoints.skipped.clear();
        let on_top = self.ledger.rec().and_then(|r| {
            let top = r.history.undo.next_undo()?;
            (top.turn == number && top.after == snap.id).then_some(top.files.len())
        });
        self.ledger.record(|r| {
            // The cut turn counts: the next one gets the next number.
            if u64::from(r.figures.num_turns) < number {
                r.figures.num_turns = u32::try_from(number).unwrap_or(r.figures.num_turns);
            }
        });
        self.save_manifest();
        if let Some(n) = on_top {
            let files = if n == 1 { "file" } else { "files" };
            self.emit(Event::Notice {
                message: format!(
                    "turn {number} was cut short when its process ended; /undo puts back the \
                     {n} {files} it changed"
                ),
            });
        }
    }

    /// Close `pending` at `end`: onto the undo stack when its own calls changed files.
    async fn close_pending(&mut self, pending: PendingTurn, end: SnapshotId) {
        let Some(store) = self.checkpoint_store() else {
            return;
        };
        let p = pending.clone();
        let closed = store
            .in_background(move |s| s.close_turn(&p, end, now_unix().0))
            .await;
        self.ledger.record(|r| {
            if r.history.undo.pending.as_ref() == Some(&pending) {
                r.history.undo.pending = None;
            }
        });
        let Closed { turn, others } = match closed {
            Ok(Some(closed)) => closed,
            Ok(None) => return,
            Err(e) => {
                return self.emit(Event::Warning {
                    message: format!("the turn's changes cannot be listed: {e}"),
                });
            }
        };
        if !others.is_empty() {
            self.emit(Event::Notice {
                message: format!(
                    "changed while turn {} ran, but not by it, so /undo leaves {}",
                    turn.turn,
                    named_list(&others.iter().map(ToString::to_string).collect::<Vec<_>>())
                ),
            });
        }
        let names: Vec<String> = turn.files.iter().map(|f| f.path.to_string()).collect();
        let skipped = self.checkpoints.skipped.clone();
        self.note_checkpoint(
            turn.turn,
            CheckpointKind::After,
            Some(end),
            &names,
            &skipped,
        );
        self.ledger.record(|rec| {
            rec.history.undo.record(turn);
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
            r.history
                .checkpoints
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
            Ok::<_, CheckpointError>((snap, files))
        };
        let taken = match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
            Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(take),
            _ => take(),
        };
        match taken {
            Ok((snap, files)) => {
                let turn = self
                    .ledger
                    .rec()
                    .map_or(0, |r| u64::from(r.figures.num_turns) + 1);
                self.name_skipped(&snap);
                let skipped: BTreeSet<RelPath> = snap
                    .skipped
                    .iter()
                    .filter(|s| s.reason != SkipReason::Special)
                    .map(|s| s.path.clone())
                    .collect();
                let files: Vec<String> = files.iter().map(|f| f.path.to_string()).collect();
                self.note_checkpoint(
                    turn,
                    CheckpointKind::Handoff,
                    Some(snap.id),
                    &files,
                    &skipped,
                );
            }
            Err(e) => self.emit(Event::Warning {
                message: format!("checkpoint at the handoff not taken: {e}"),
            }),
        }
    }

    /// Name what `snap` could not hold, but for what this turn named already.
    fn name_skipped(&mut self, snap: &Snapshot) {
        // Sockets and fifos hold no content to lose: not worth a notice.
        let new: Vec<String> = snap
            .skipped
            .iter()
            .filter(|s| s.reason != SkipReason::Special)
            .filter(|s| self.checkpoints.skipped.insert(s.path.clone()))
            .map(|s| format!("{} ({} bytes, {})", s.path, s.size, skip_words(s.reason)))
            .collect();
        if !new.is_empty() {
            self.emit(Event::Notice {
                message: skipped_notice(&new),
            });
        }
    }

    /// One line of the step's checkpoint list.
    pub(super) fn note_checkpoint(
        &mut self,
        turn: u64,
        kind: CheckpointKind,
        id: Option<SnapshotId>,
        files: &[String],
        skipped: &BTreeSet<RelPath>,
    ) {
        let rec = CheckpointRecord {
            time: now_stamp(),
            generation: self.s.generation,
            turn,
            kind,
            id,
            files: files.to_vec(),
            skipped: skipped
                .iter()
                .take(RECORDED)
                .map(ToString::to_string)
                .collect(),
            more_skipped: skipped.len().saturating_sub(RECORDED),
        };
        self.ledger
            .record(|r| crate::engine::ledger::push_checkpoint(&mut r.history.checkpoints, rec));
    }

    /// The first checkpoint of a start asks for a clean-up of the store, in the background:
    /// the turns of this step older than the kept days leave its undo stack, and the store
    /// deletes what no ledger of the workspace still names.
    fn clean_up_once(&mut self, store: &Checkpoints) {
        let Store::Open(_, cleanup @ Cleanup::Due) = &mut self.checkpoints.store else {
            return;
        };
        *cleanup = Cleanup::Started;
        let since = now_unix().0.saturating_sub(KEEP_DAYS * 24 * 3600);
        self.ledger.record(|r| r.history.undo.forget_before(since));
        self.save_manifest();
        let (store, data_dir) = (store.clone(), self.run.places.data_dir.clone());
        let workspace = self.run.places.workspace.clone();
        tokio::task::spawn_blocking(move || {
            let keep = match crate::engine::ledger::kept_checkpoints(&data_dir, &workspace, since) {
                Ok(keep) => keep,
                Err(path) => {
                    return tracing::warn!(
                        "checkpoint clean-up skipped: the ledger {} cannot be read",
                        path.display()
                    );
                }
            };
            match store.prune(&keep, false) {
                Ok(Some(p)) => tracing::info!(
                    "checkpoint clean-up: {} objects ({} bytes) deleted, {} kept",
                    p.deleted,
                    p.bytes,
                    p.kept
                ),
                Ok(None) => {}
                Err(e) => tracing::warn!("checkpoint clean-up: {e}"),
            }
        });
    }
}

/// `a, b, c` for up to [`NAMED`] items, then `and N more`.
fn named_list(items: &[String]) -> String {
    let mut text = items
        .iter()
        .take(NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > NAMED {
        text.push_str(&format!(" and {} more", items.len() - NAMED));
    }
    text
}

/// The notice naming files a checkpoint could not hold (the first few; the rest counted).
fn skipped_notice(files: &[String]) -> String {
    let (which, verb) = if files.len() == 1 {
        ("this file", "it is")
    } else {
        ("these files", "they are")
    };
    format!(
        "not in the checkpoint, so /undo leaves {which} as {verb}: {}",
        named_list(files)
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

    #[test]
    fn the_skipped_notice_names_the_first_few_and_counts_the_rest() {
        let many: Vec<String> = (0..100_000).map(|n| format!("f{n}")).collect();
        let notice = skipped_notice(&many);
        assert_eq!(
            notice,
            "not in the checkpoint, so /undo leaves these files as they are: \
             f0, f1, f2, f3, f4 and 99995 more"
        );
    }
}
