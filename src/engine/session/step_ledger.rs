//! The step this process works on, as the ledger keeps it: the run's manifest and which of its
//! steps is ours (none before the first message names it), the run directory it is written to,
//! the step's memory while it waits for the step to start, this process's claim on the step's
//! name, and the replace generation and compaction count the step has reached; the step's name
//! made from its first task.

use std::io;
use std::path::PathBuf;

use crate::engine::handoff::lock::StepClaim;
use crate::engine::ledger::{Manifest, RunDir, StepRecord, save_step};
use crate::engine::replace::ReplaceGeneration;
use crate::engine::step_memory::StepMemory;

/// The step's record in the run's ledger, and what goes with it.
pub(super) struct StepLedger {
    pub(super) manifest: Manifest,
    /// Index of the current step in the manifest; None until the first task names it.
    pub(super) step: Option<usize>,
    /// Where the ledger and the transcripts are written (`/resume` moves to another run).
    pub(super) run_dir: RunDir,
    /// Pins (and focus) given before the first message named the step: they move into its
    /// record when it starts ([`StepLedger::memory`] reads the record's from then on).
    pub(super) unborn: StepMemory,
    /// This process's claim on the step name in the workspace.
    pub(super) claim: Option<StepClaim>,
    /// What the model sees was replaced this many times (handoffs and compactions).
    pub(super) replace: ReplaceGeneration,
    /// Compactions so far (head protection only until the first).
    pub(super) compactions: u32,
}

impl StepLedger {
    /// The ledger of `manifest` in `run_dir`, at `step`; the replace generation and compaction
    /// count are seeded from the step's record (never lower).
    pub(super) fn new(
        manifest: Manifest,
        step: Option<usize>,
        run_dir: RunDir,
        claim: Option<StepClaim>,
    ) -> StepLedger {
        let mut ledger = StepLedger {
            manifest,
            step,
            run_dir,
            unborn: StepMemory::default(),
            claim,
            replace: ReplaceGeneration::default(),
            compactions: 0,
        };
        ledger.seed_replace();
        ledger
    }

    /// The replace generation and compaction count the step's record implies (`--continue`
    /// seeds them from the ledger, never lower).
    pub(super) fn seed_replace(&mut self) {
        let (replace, compactions) = match self.rec() {
            Some(rec) => (
                ReplaceGeneration::starting_at(rec.handoffs.len() as u64 + rec.compactions as u64),
                rec.compactions,
            ),
            None => (ReplaceGeneration::default(), 0),
        };
        self.replace = replace;
        self.compactions = compactions;
    }

    /// The current step's record; None before the first task names the step.
    pub(super) fn rec(&self) -> Option<&StepRecord> {
        self.step.and_then(|i| self.manifest.steps.get(i))
    }

    fn rec_mut(&mut self) -> Option<&mut StepRecord> {
        self.step.and_then(|i| self.manifest.steps.get_mut(i))
    }

    /// Change the current step's record (nothing to record before the first task).
    pub(super) fn record(&mut self, f: impl FnOnce(&mut StepRecord)) {
        if let Some(rec) = self.rec_mut() {
            f(rec);
        }
    }

    pub(super) fn has_step(&self) -> bool {
        self.rec().is_some()
    }

    /// The current step's name (empty before the first task).
    pub(super) fn step_name(&self) -> String {
        self.rec().map(|r| r.name.clone()).unwrap_or_default()
    }

    /// The step's memory: its record's, or the one kept for the step the first message starts.
    pub(super) fn memory(&self) -> &StepMemory {
        match self.rec() {
            Some(rec) => &rec.memory,
            None => &self.unborn,
        }
    }

    pub(super) fn memory_mut(&mut self) -> &mut StepMemory {
        match self.step.and_then(|i| self.manifest.steps.get_mut(i)) {
            Some(rec) => &mut rec.memory,
            None => &mut self.unborn,
        }
    }

    /// Write this process's step (others may share the run directory), durably.
    pub(super) fn save(&self) -> io::Result<()> {
        save_step(&self.manifest, self.step, &self.run_dir.manifest_path())
    }

    /// Write the whole manifest without the fsyncs: safe against a kill, not a power cut.
    pub(super) fn save_unsynced(&self) -> io::Result<()> {
        self.manifest.save_unsynced(&self.run_dir.manifest_path())
    }

    /// Where session `id`'s transcript is.
    pub(super) fn transcript_path(&self, id: &str) -> PathBuf {
        self.run_dir.transcript_path(id)
    }
}

/// A step name from a task: its first words, lower-case, `-` separated.
pub(crate) fn step_name_from_task(task: &str) -> String {
    let mut out = String::new();
    for word in task.split_whitespace() {
        let w: String = word
            .chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect();
        if w.is_empty() {
            continue;
        }
        if out.len() + w.len() + 1 > 40 {
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&w);
        if out.len() >= 24 {
            break;
        }
    }
    if out.is_empty() { "task".into() } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_names() {
        assert_eq!(
            step_name_from_task("Fix the macOS build!"),
            "fix-the-macos-build"
        );
        assert_eq!(step_name_from_task("   "), "task");
        assert!(step_name_from_task(&"word ".repeat(50)).len() <= 40);
    }
}
