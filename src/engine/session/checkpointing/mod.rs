//! Checkpoints around turns and their calls.
//!
//! - Before each call of a turn that may change the workspace (an edit, a write, `bash`, an MCP
//!   tool or a subagent), a checkpoint, and another just after it (after its `PostToolUse` hooks,
//!   so what a formatter hook changes is the call's). The first opens the turn's
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
//! on without checkpoints. `/undo` and `/redo` are in `undo_redo.rs`, the code half of `/rewind`
//! in `rewind.rs`.

use std::collections::BTreeSet;

use super::outbox::Outbox;
use super::params::Places;
use super::step_ledger::StepLedger;
use crate::engine::checkpoint::{
    CallSpan, CheckpointError, Checkpoints, Closed, KEEP_DAYS, Options, PendingTurn, RelPath,
    SkipReason, Snapshot, SnapshotId,
};
use crate::engine::fsutil::now_unix;
use crate::engine::ledger::{CheckpointKind, CheckpointRecord, now_stamp};
use crate::engine::policy::CheckpointPolicy;
use crate::engine::protocol::{Event, TurnId};
use crate::engine::tools::names;

mod rewind;
mod undo_redo;

/// How many paths a notice names before it only counts the rest.
const NAMED: usize = 5;
/// How many skipped paths one ledger record names.
const RECORDED: usize = 20;

/// The checkpoint store of this engine and what the running turn's checkpoints could not hold.
/// Each operation is given the step's ledger (its undo stack and checkpoint list, written at
/// once) and the generation it runs in.
#[derive(Debug)]
pub(super) struct Checkpointing {
    store: Store,
    /// Already named in a notice this turn.
    skipped: BTreeSet<RelPath>,
    /// The workspace, the workbench, the data directory, and whether checkpoints are on.
    places: Places,
    out: Outbox,
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
pub(super) fn may_change_workspace(tool: &str) -> bool {
    names::changes_files(tool) || tool == names::TASK || tool.starts_with("mcp__")
}

impl Checkpointing {
    /// Checkpoints of `places`' workspace (the store opens on first use), said through `out`.
    pub(super) fn new(places: Places, out: Outbox) -> Checkpointing {
        Checkpointing {
            store: Store::Closed,
            skipped: BTreeSet::new(),
            places,
            out,
        }
    }

    /// The store, opened on first use; None (with the reason from [`Checkpointing::off_reason`])
    /// when there is none. `ledger`: its run directory is never checkpointed.
    fn store(&mut self, ledger: &StepLedger) -> Option<Checkpoints> {
        match &self.store {
            Store::Open(s, _) => return Some(s.clone()),
            Store::Unavailable(_) => return None,
            Store::Closed => {}
        }
        if self.places.checkpoints == CheckpointPolicy::Off {
            self.store = Store::Unavailable("checkpoints are off (--no-checkpoints)".into());
            return None;
        }
        let mut options = Options {
            watch: true,
            keeper: self.places.checkpoints == CheckpointPolicy::On,
            ..Options::default()
        };
        if let Some(bench) = &self.places.workbench {
            options.excluded.push(bench.clone());
        }
        // flower-tui's own data (ledgers, transcripts, the store) when it lies in the workspace:
        // an undo must never put the engine's records back.
        for own in [&self.places.data_dir, &ledger.run_dir.root] {
            options
                .excluded
                .push(std::fs::canonicalize(own).unwrap_or_else(|_| own.clone()));
        }
        match Checkpoints::open(&self.places.data_dir, &self.places.workspace, options) {
            Ok(s) => {
                self.store = Store::Open(s.clone(), Cleanup::Due);
                Some(s)
            }
            Err(e) => {
                self.stop(format!(
                    "{e}: no checkpoints this session (/undo cannot help)"
                ));
                None
            }
        }
    }

    /// Why there is no store (None when there is one or it was not needed yet).
    fn off_reason(&self) -> Option<&str> {
        match &self.store {
            Store::Unavailable(why) => Some(why),
            _ => None,
        }
    }

    /// No more checkpoints this session: said once, with `why`.
    fn stop(&mut self, why: String) {
        self.out.emit(Event::Warning {
            message: why.clone(),
        });
        self.store = Store::Unavailable(why);
    }

    /// Take a checkpoint on the blocking pool; a failure is said (the turn goes on).
    async fn take(&mut self, ledger: &mut StepLedger, label: String) -> Option<Snapshot> {
        let store = self.store(ledger)?;
        match store.in_background(move |s| s.snapshot(&label)).await {
            Ok(snap) => {
                self.clean_up_once(ledger, &store);
                self.name_skipped(&snap);
                Some(snap)
            }
            Err(e @ CheckpointError::TooManyFiles { .. }) => {
                self.stop(format!(
                    "{e}; checkpoints are off for this session, so /undo cannot help \
                     (`--no-checkpoints` or `no_checkpoints = true` skips the walk)"
                ));
                None
            }
            Err(e) => {
                self.out.emit(Event::Warning {
                    message: format!("checkpoint not taken: {e}; /undo will not cover this turn"),
                });
                None
            }
        }
    }

    /// Before a call of `tool` that may change the workspace, in the running `turn` of
    /// `generation`: a checkpoint, opening the turn's undo entry (in the ledger at once) or
    /// adding the call to it. Nothing while no turn runs.
    pub(super) async fn before_call(
        &mut self,
        ledger: &mut StepLedger,
        generation: u32,
        turn: Option<TurnId>,
        tool: &str,
    ) {
        let Some(number) = step_turn(ledger, turn) else {
            return;
        };
        if !may_change_workspace(tool) {
            return;
        }
        let Some(snap) = self
            .take(ledger, format!("turn {number} before a call"))
            .await
        else {
            return;
        };
        // An entry left open by an earlier turn (its end checkpoint failed) ends here.
        let stale = open_entry(ledger).filter(|p| p.turn != number);
        if let Some(stale) = stale {
            self.close_pending(ledger, generation, stale, snap.id).await;
        }
        let opens = ledger
            .rec()
            .is_some_and(|r| r.history.undo.pending.is_none());
        if opens {
            let at = Noted::new(generation, number, CheckpointKind::Before);
            note(ledger, at, Some(snap.id), &[], &self.skipped);
        }
        let span = CallSpan {
            before: snap.id,
            after: None,
        };
        ledger.record(|r| match &mut r.history.undo.pending {
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
        ledger.save();
    }

    /// After a call that took a checkpoint before it: its end state; the call's two checkpoints,
    /// with their store, when both were taken.
    pub(super) async fn after_call(
        &mut self,
        ledger: &mut StepLedger,
    ) -> Option<(Checkpoints, SnapshotId, SnapshotId)> {
        let (number, before) = ledger
            .rec()
            .and_then(|r| r.history.undo.pending.as_ref())
            .and_then(|p| Some((p.turn, p.calls.last().filter(|c| c.after.is_none())?.before)))?;
        let snap = self
            .take(ledger, format!("turn {number} after a call"))
            .await?;
        ledger.record(|r| {
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
        Some((self.store(ledger)?, before, snap.id))
    }

    /// At the end of a turn that took checkpoints: its end state; the turn goes onto the undo
    /// stack when its own calls changed files.
    pub(super) async fn after_turn(&mut self, ledger: &mut StepLedger, generation: u32) {
        let Some(pending) = open_entry(ledger) else {
            return;
        };
        let label = format!("turn {} after", pending.turn);
        if let Some(snap) = self.take(ledger, label).await {
            self.close_pending(ledger, generation, pending, snap.id)
                .await;
        }
        self.skipped.clear();
    }

    /// At `--continue` or `/resume`: a turn cut short by the end of its process (its entry is
    /// still open) is closed with the workspace as it is now.
    pub(super) async fn close_cut_short(&mut self, ledger: &mut StepLedger, generation: u32) {
        let Some(pending) = open_entry(ledger) else {
            return;
        };
        let label = format!("turn {} closed at a later start", pending.turn);
        let Some(snap) = self.take(ledger, label).await else {
            return;
        };
        let number = pending.turn;
        self.close_pending(ledger, generation, pending, snap.id)
            .await;
        self.skipped.clear();
        let on_top = ledger.rec().and_then(|r| {
            let top = r.history.undo.next_undo()?;
            (top.turn == number && top.after == snap.id).then_some(top.files.len())
        });
        ledger.record(|r| {
            // The cut turn counts: the next one gets the next number.
            if u64::from(r.figures.num_turns) < number {
                r.figures.num_turns = u32::try_from(number).unwrap_or(r.figures.num_turns);
            }
        });
        ledger.save();
        if let Some(n) = on_top {
            let files = if n == 1 { "file" } else { "files" };
            self.out.emit(Event::Notice {
                message: format!(
                    "turn {number} was cut short when its process ended; /undo puts back the \
                     {n} {files} it changed"
                ),
            });
        }
    }

    /// Close `pending` at `end`: onto the undo stack when its own calls changed files.
    async fn close_pending(
        &mut self,
        ledger: &mut StepLedger,
        generation: u32,
        pending: PendingTurn,
        end: SnapshotId,
    ) {
        let Some(store) = self.store(ledger) else {
            return;
        };
        let p = pending.clone();
        let closed = store
            .in_background(move |s| s.close_turn(&p, end, now_unix().0))
            .await;
        ledger.record(|r| {
            if r.history.undo.pending.as_ref() == Some(&pending) {
                r.history.undo.pending = None;
            }
        });
        let Closed { turn, others } = match closed {
            Ok(Some(closed)) => closed,
            Ok(None) => return,
            Err(e) => {
                return self.out.emit(Event::Warning {
                    message: format!("the turn's changes cannot be listed: {e}"),
                });
            }
        };
        if !others.is_empty() {
            self.out.emit(Event::Notice {
                message: format!(
                    "changed while turn {} ran, but not by it, so /undo leaves {}",
                    turn.turn,
                    named_list(&others.iter().map(ToString::to_string).collect::<Vec<_>>())
                ),
            });
        }
        let names: Vec<String> = turn.files.iter().map(|f| f.path.to_string()).collect();
        let at = Noted::new(generation, turn.turn, CheckpointKind::After);
        note(ledger, at, Some(end), &names, &self.skipped);
        ledger.record(|rec| {
            rec.history.undo.record(turn);
        });
    }

    /// A handoff retires `generation`: a checkpoint of the workspace as it left it, with the
    /// files changed since the step's last checkpoint. Runs on the engine's own thread (the
    /// turnover is not async); on a multi-threaded runtime the thread is handed over to the
    /// runtime's other tasks meanwhile.
    pub(super) fn at_handoff(&mut self, ledger: &mut StepLedger, generation: u32) {
        let Some(store) = self.store(ledger) else {
            return;
        };
        let label = format!("handoff of generation {generation}");
        let last = ledger.rec().and_then(|r| {
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
                let turn = ledger
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
                let at = Noted::new(generation, turn, CheckpointKind::Handoff);
                note(ledger, at, Some(snap.id), &files, &skipped);
            }
            Err(e) => self.out.emit(Event::Warning {
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
            .filter(|s| self.skipped.insert(s.path.clone()))
            .map(|s| format!("{} ({} bytes, {})", s.path, s.size, skip_words(s.reason)))
            .collect();
        if !new.is_empty() {
            self.out.emit(Event::Notice {
                message: skipped_notice(&new),
            });
        }
    }

    /// The first checkpoint of a start asks for a clean-up of the store, in the background:
    /// the turns of this step older than the kept days leave its undo stack, and the store
    /// deletes what no ledger of the workspace still names.
    fn clean_up_once(&mut self, ledger: &mut StepLedger, store: &Checkpoints) {
        let Store::Open(_, cleanup @ Cleanup::Due) = &mut self.store else {
            return;
        };
        *cleanup = Cleanup::Started;
        let since = now_unix().0.saturating_sub(KEEP_DAYS * 24 * 3600);
        ledger.record(|r| r.history.undo.forget_before(since));
        ledger.save();
        let (store, data_dir) = (store.clone(), self.places.data_dir.clone());
        let workspace = self.places.workspace.clone();
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

/// The step's number of the running `turn` (counted across processes and generations); None
/// while no turn runs.
fn step_turn(ledger: &StepLedger, turn: Option<TurnId>) -> Option<u64> {
    let turn = turn?;
    Some(
        ledger
            .rec()
            .map_or(turn.0, |r| u64::from(r.figures.num_turns) + 1),
    )
}

/// The step's undo entry still open (a turn that took its first checkpoint and has not
/// closed), as recorded in the ledger.
fn open_entry(ledger: &StepLedger) -> Option<PendingTurn> {
    ledger.rec().and_then(|r| r.history.undo.pending.clone())
}

/// Where a line of the checkpoint list belongs: its generation, the step's turn and its kind.
#[derive(Debug, Clone, Copy)]
struct Noted {
    generation: u32,
    turn: u64,
    kind: CheckpointKind,
}

impl Noted {
    fn new(generation: u32, turn: u64, kind: CheckpointKind) -> Noted {
        Noted {
            generation,
            turn,
            kind,
        }
    }
}

/// One line of the step's checkpoint list.
fn note(
    ledger: &mut StepLedger,
    at: Noted,
    id: Option<SnapshotId>,
    files: &[String],
    skipped: &BTreeSet<RelPath>,
) {
    let rec = CheckpointRecord {
        time: now_stamp(),
        generation: at.generation,
        turn: at.turn,
        kind: at.kind,
        id,
        files: files.to_vec(),
        skipped: skipped
            .iter()
            .take(RECORDED)
            .map(ToString::to_string)
            .collect(),
        more_skipped: skipped.len().saturating_sub(RECORDED),
    };
    ledger.record(|r| crate::engine::ledger::push_checkpoint(&mut r.history.checkpoints, rec));
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
