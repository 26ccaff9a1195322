//! The step this process works on, as the ledger keeps it: the run's manifest and which of its
//! steps is ours (none before the first message names it), the run directory it is written to,
//! the step's memory while it waits for the step to start, this process's claim on the step's
//! name, and the replace generation and compaction count the step has reached; the step's name
//! made from its first task; the user's messages a rewind goes back to; what `/cost` shows.
//! A ledger that cannot be written is said, and the session goes on. The step's memory (pins,
//! focus, the `todo` plan) is in `memory.rs`.

use std::io;
use std::path::PathBuf;

use super::outbox::Outbox;
use crate::engine::fsutil::now_unix;
use crate::engine::handoff::workbench_locks::StepClaim;
use crate::engine::ledger::{
    GenerationStart, Manifest, PromptRecord, RewindPoint, RunDir, StepFigures, StepRecord,
    TranscriptLine, now_stamp, push_prompt, save_step,
};
use crate::engine::protocol::{CostRow, Event};
use crate::engine::replace::ReplaceGeneration;
use crate::engine::step_memory::StepMemory;
use crate::engine::types::{Message, Role};

mod memory;

/// Characters of a task the ledger keeps.
const TASK_CHARS: usize = crate::engine::handoff::document::TASK_EXCERPT_CHARS;

/// Where a user's message goes: the generation, its session, the message's index in that
/// session's history, and the front end's number of the turn that sent it.
pub(super) struct PromptAt<'a> {
    pub(super) generation: u32,
    pub(super) session_id: &'a str,
    pub(super) index: usize,
    pub(super) sent_as: u64,
}

/// The step's record in the run's ledger, and what goes with it.
pub(super) struct StepLedger {
    manifest: Manifest,
    /// Index of the current step in the manifest; None until the first task names it.
    step: Option<usize>,
    /// Where the ledger and the transcripts are written (`/resume` moves to another run).
    pub(super) run_dir: RunDir,
    /// Pins (and focus) given before the first message named the step: they move into its
    /// record when it starts ([`StepLedger::memory`] reads the record's from then on).
    unborn: StepMemory,
    /// This process's claim on the step name in the workspace.
    pub(super) claim: Option<StepClaim>,
    /// What the model sees was replaced this many times (handoffs and compactions).
    pub(super) replace: ReplaceGeneration,
    /// Compactions so far (head protection only until the first).
    pub(super) compactions: u32,
    out: Outbox,
}

impl StepLedger {
    /// The ledger of `manifest` in `run_dir`, at `step`; the replace generation and compaction
    /// count are seeded from the step's record (never lower). A failure to write it is said
    /// through `out`.
    pub(super) fn new(
        manifest: Manifest,
        step: Option<usize>,
        run_dir: RunDir,
        claim: Option<StepClaim>,
        out: Outbox,
    ) -> StepLedger {
        let mut ledger = StepLedger {
            manifest,
            step,
            run_dir,
            unborn: StepMemory::default(),
            claim,
            replace: ReplaceGeneration::default(),
            compactions: 0,
            out,
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

    /// Write this process's step (others may share the run directory), durably; a failure is
    /// said (the session goes on).
    pub(super) fn save(&self) {
        self.save_step(true);
    }

    /// [`StepLedger::save`] without the fsyncs, for a record a synced save repeats before long
    /// (a session opened for the turn about to run).
    pub(super) fn save_for_now(&self) {
        self.save_step(false);
    }

    fn save_step(&self, sync: bool) {
        let path = self.run_dir.manifest_path();
        if let Err(e) = save_step(&self.manifest, self.step, &path, sync) {
            self.out.emit(Event::Warning {
                message: format!("could not write the ledger: {e}"),
            });
        }
    }

    /// [`StepLedger::save`], once the step exists (nothing to save before).
    pub(super) fn save_if_any(&self) {
        if self.has_step() {
            self.save();
        }
    }

    /// Write the whole manifest without the fsyncs: safe against a kill, not a power cut.
    pub(super) fn save_unsynced(&self) -> io::Result<()> {
        self.manifest.save_unsynced(&self.run_dir.manifest_path())
    }

    /// Where session `id`'s transcript is.
    pub(super) fn transcript_path(&self, id: &str) -> PathBuf {
        self.run_dir.transcript_path(id)
    }

    /// Remember a path a call wrote (its `path` input), for a degraded handoff's scene.
    pub(super) fn note_touched(&mut self, input: &serde_json::Value) {
        if let Some(path) = input.get("path").and_then(serde_json::Value::as_str) {
            let path = path.to_string();
            self.record(|rec| {
                if !rec.touched.contains(&path) {
                    rec.touched.push(path);
                }
            });
        }
    }

    /// The replace generation advances: what the model sees was replaced (a handoff or a
    /// compaction) and the replacement is persisted. The one place it advances.
    pub(super) fn commit_replacement(&mut self) -> u64 {
        self.replace.advance()
    }

    /// Start the step named `name` on its first `task`, in a window of `window` tokens: its
    /// record takes the memory given before it and the slot this process claimed in a joined
    /// run directory (a record without a session), else a new one.
    pub(super) fn start_step(&mut self, name: String, task: &str, window: u64) {
        let rec = StepRecord {
            name,
            task: task_excerpt(task),
            figures: StepFigures {
                window,
                ..Default::default()
            },
            memory: std::mem::take(&mut self.unborn),
            ..Default::default()
        };
        // The name this process claimed in a joined run directory (a record without a session;
        // the workspace's step claim may have renamed it since, `<step>-2`).
        let me = std::process::id();
        let steps = &mut self.manifest.steps;
        let claimed = steps.iter().position(|s| {
            s.session_id.is_empty() && (s.name == rec.name || s.claimed_by == Some(me))
        });
        match claimed.and_then(|i| steps.get_mut(i).map(|slot| (i, slot))) {
            Some((i, slot)) => {
                *slot = rec;
                self.step = Some(i);
            }
            None => {
                self.step = Some(steps.len());
                steps.push(rec);
            }
        }
    }

    /// Record a message the user sent in `generation`'s session `session_id`, where it will be
    /// the `index`th message of the history, before it joins it.
    pub(super) fn note_prompt(&mut self, at: PromptAt<'_>, text: &str, typed: Option<&str>) {
        let Some(rec) = self.rec() else { return };
        let prompt = PromptRecord {
            time: now_stamp(),
            at: now_unix().0,
            generation: at.generation,
            session_id: at.session_id.to_string(),
            turn: u64::from(rec.figures.num_turns) + 1,
            index: at.index,
            text: text.to_string(),
            typed: typed.map(str::to_string),
            sent_as: Some(at.sent_as),
        };
        self.record(|r| push_prompt(&mut r.history.prompts, prompt));
    }

    /// The user's message that started the step's turn `turn`.
    pub(super) fn prompt_of(&self, turn: u64) -> Option<PromptRecord> {
        self.rec()
            .and_then(|r| r.history.prompts.iter().find(|p| p.turn == turn).cloned())
    }

    /// The briefing generation `generation` of the step started with: the first message of its
    /// transcript, the handoff document as it was read then (the live document file has been
    /// overwritten by later handoffs since). None for generation 1, one started by `/new`, or a
    /// transcript that cannot be read.
    pub(super) fn briefing_of(&self, generation: u32) -> Option<Message> {
        let path = self
            .rec()?
            .per_generation
            .iter()
            .find(|g| g.generation == generation)
            .filter(|g| g.start() == GenerationStart::Handoff)
            .map(|g| self.run_dir.transcript_path(&g.session_id))?;
        let text = std::fs::read_to_string(path).ok()?;
        text.lines()
            .filter_map(|l| serde_json::from_str::<TranscriptLine>(l).ok())
            .find_map(|l| match l {
                TranscriptLine::Message { message } if message.role == Role::User => Some(message),
                _ => None,
            })
    }

    /// The `/rewind` picker's list: the step's user messages, newest first, with the files each
    /// turn changed, whether it belongs to `session` (the current one) and whether its turn is
    /// undone now.
    pub(super) fn rewind_points(&self, session: &str) -> Event {
        let Some(rec) = self.rec() else {
            return Event::RewindPoints { points: Vec::new() };
        };
        let undo = &rec.history.undo;
        let points = rec
            .history
            .prompts
            .iter()
            .rev()
            .map(|p| RewindPoint {
                turn: p.turn,
                generation: p.generation,
                at: p.at,
                text: p.shown().to_string(),
                sent_as: p.sent_as,
                files: undo
                    .undoable()
                    .chain(undo.redoable())
                    .filter(|t| t.turn == p.turn)
                    .flat_map(|t| t.files.iter().map(|f| f.path.to_string()))
                    .collect(),
                current: p.session_id == session,
                undone: undo.redoable().any(|t| t.turn == p.turn)
                    && !undo.undoable().any(|t| t.turn == p.turn),
            })
            .collect();
        Event::RewindPoints { points }
    }

    /// `/cost`: the step's generations as the ledger has them (earlier processes included);
    /// `current`: the session running now.
    pub(super) fn cost_event(&self, current: &str) -> Event {
        let (step, rows, subagents, total_usd, num_turns, web_searches) = match self.rec() {
            None => (String::new(), Vec::new(), Vec::new(), 0.0, 0, 0),
            Some(rec) => (
                rec.name.clone(),
                rec.per_generation
                    .iter()
                    .map(|g| CostRow {
                        generation: g.generation,
                        start: g.start(),
                        label: g.label(),
                        session_id: g.session_id.clone(),
                        cost_usd: g.cost_usd,
                        num_turns: g.num_turns,
                        context: g.context,
                        current: g.session_id == current,
                        subagents_usd: rec
                            .subagents
                            .iter()
                            .filter(|s| s.parent_session == g.session_id)
                            .map(|s| s.cost_usd)
                            .sum(),
                    })
                    .collect(),
                rec.subagents.clone(),
                rec.figures.cost_usd,
                rec.figures.num_turns,
                rec.figures.web_searches,
            ),
        };
        Event::Cost {
            step,
            rows,
            subagents,
            total_usd,
            num_turns,
            web_searches,
        }
    }
}

/// A task as the ledger keeps it: its first [`TASK_CHARS`] characters, and `…` when cut (the
/// ledger is rewritten after every change; a 10 MB task must not be).
fn task_excerpt(task: &str) -> String {
    match task.char_indices().nth(TASK_CHARS) {
        Some((byte, _)) => format!("{}…", task.get(..byte).unwrap_or_default()),
        None => task.to_string(),
    }
}

/// A step name from a task: its first words, lower-case, `-` separated.
pub(super) fn step_name_from_task(task: &str) -> String {
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
    fn the_ledger_keeps_the_head_of_a_task() {
        assert_eq!(task_excerpt("short"), "short");
        let long = "é".repeat(TASK_CHARS + 5);
        let kept = task_excerpt(&long);
        assert_eq!(kept.chars().count(), TASK_CHARS + 1);
        assert!(kept.ends_with("é…"));
        let exact = "a".repeat(TASK_CHARS);
        assert_eq!(task_excerpt(&exact), exact);
    }

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
