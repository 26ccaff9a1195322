//! Runs, sessions and settings: `/cost`, `/resume` (and `--continue`'s replay), `/model`,
//! `/effort`.

use super::step_ledger::StepLedger;
use super::{Engine, Resume};
use crate::engine::approvals::Allowances;
use crate::engine::context;
use crate::engine::error::{Error, ResumeError};
use crate::engine::learned_windows::LearnedWindows;
use crate::engine::ledger::run_list;
use crate::engine::ledger::{SettingChange, now_stamp};
use crate::engine::protocol::{CostRow, Event, Origin};
use crate::engine::types::{Effort, Role};

impl Engine {
    /// `/cost`: the step's generations as the ledger has them (earlier processes included).
    pub(crate) fn cost_event(&self) -> Event {
        let current = &self.s.id;
        let (step, rows, subagents, total_usd, num_turns, web_searches) = match self.ledger.rec() {
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
                        current: g.session_id == *current,
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

    /// `--continue` in the TUI: show the conversation so far (text as cells, tool calls as a line).
    fn replay_history(&self) {
        use crate::engine::types::Block;
        for (i, m) in self.s.messages.iter().enumerate() {
            match m.role {
                Role::User => {
                    // What the user typed: the `@path` attachments stay out of the replay.
                    let text: String = m
                        .content
                        .iter()
                        .filter_map(|b| match b {
                            Block::Text { text }
                                if !text.starts_with(crate::engine::mentions::ATTACHMENT_OPEN) =>
                            {
                                Some(text.as_str())
                            }
                            _ => None,
                        })
                        .collect();
                    if !text.trim().is_empty() {
                        // A successor's first message is its briefing; a summary is compaction's.
                        let engine = (i == 0 && self.s.parent.is_some())
                            || text.starts_with(crate::engine::compact::SUMMARY_PREFIX);
                        self.emit(Event::UserMessage {
                            turn: None,
                            origin: if engine { Origin::Engine } else { Origin::User },
                            text,
                        });
                    }
                }
                Role::Assistant => {
                    let text = m.text();
                    if !text.trim().is_empty() {
                        self.emit(Event::AssistantDone {
                            turn: None,
                            text,
                            interrupted: false,
                        });
                    }
                    let tools: Vec<&str> = m
                        .content
                        .iter()
                        .filter_map(|b| match b {
                            Block::ToolUse { name, .. } => Some(name.as_str()),
                            _ => None,
                        })
                        .collect();
                    if !tools.is_empty() {
                        self.emit(Event::Notice {
                            message: format!("(earlier tool calls: {})", tools.join(", ")),
                        });
                    }
                }
            }
        }
    }

    /// `/resume` and `--resume`: the runs of this workspace, newest first.
    pub(crate) fn sessions_event(&self) -> Event {
        Event::Sessions {
            current_run: self.ledger.run_dir.run_id.clone(),
            sessions: run_list::list(&self.run.places.data_dir, &self.run.places.workspace),
        }
    }

    /// What `--continue`, `--resume` and `/resume` say once attached: the session, its prompt,
    /// the conversation so far (for a front end that shows it), where the gauge stands.
    pub(crate) fn announce_resumed(&mut self) {
        self.ensure_workbench();
        let prompt = self.prepare_prompt();
        self.s.system_prompt = prompt.text.clone();
        self.emit(Event::Resumed {
            run_id: self.ledger.run_dir.run_id.clone(),
            session_id: self.s.id.clone(),
            generation: self.s.generation,
            messages: self.s.messages.len(),
            latest_handoff: self
                .ledger
                .rec()
                .and_then(|r| r.handoffs.last()?.path.clone()),
        });
        self.emit(self.session_started());
        self.emit_prompt(prompt);
        if self.run.front_end.can_ask() {
            self.replay_history();
        }
        let s = &self.s;
        self.emit(Event::Notice {
            message: format!(
                "continuing session {} (generation {}, {} messages)",
                s.id,
                s.generation,
                s.messages.len()
            ),
        });
        self.emit_usage_estimate();
        self.emit_memory();
        self.s.briefed =
            crate::engine::handoff::briefing::briefed_with(&self.s.messages, &self.s.parent);
    }

    /// `Op::Resume`: leave this run for another run of the workspace, at its latest successor.
    pub(crate) async fn resume_run(&mut self, run_id: &str) {
        match self.try_resume(run_id) {
            Ok(()) => {
                self.announce_resumed();
                self.close_cut_short_turn().await;
                self.reopen_frozen().await;
            }
            Err(e) => {
                self.emit(Event::Error {
                    kind: e.kind(),
                    message: e.message(),
                });
            }
        }
    }

    fn try_resume(&mut self, run_id: &str) -> Result<(), Error> {
        let run = run_list::find(
            &self.run.places.data_dir,
            &self.run.places.workspace,
            run_id,
        )?;
        if run.root == self.ledger.run_dir.root {
            return Err(ResumeError::SameRun { id: run.run_id }.into());
        }
        let resume = Resume::at(run);
        // Torn transcript lines are said once the switch is done.
        let mut warnings = Vec::new();
        let resumed =
            Self::resume_state(&resume, None, &self.run.prompt.system_prompt, &mut warnings)?;
        // The step name of that run, unless another live process works on it.
        let rec = resumed.step.and_then(|i| resumed.manifest.steps.get(i));
        let claim = Self::claim_resumed(self.run.places.workbench.as_deref(), rec)?;
        // The switch happens: a background handoff belongs to the session being left (its frozen
        // record to this run's step).
        self.drop_background("/resume switched to another run");
        self.save_manifest_if_any();
        self.session_left_hooks(crate::engine::hooks::EndReason::Other);
        let left = std::mem::replace(
            &mut self.ledger,
            StepLedger::new(resumed.manifest, resumed.step, resume.run_dir, claim),
        );
        if !left.has_step() {
            // This run recorded nothing: leave no empty run directory behind.
            let _ = std::fs::remove_dir(left.run_dir.root.join("sessions"));
            let _ = std::fs::remove_dir(&left.run_dir.root);
        }
        self.s = resumed.session;
        // `SessionStart` runs before the resumed session's next request.
        self.hooks.start = Some(crate::engine::hooks::StartSource::Resume);
        self.counters.overflow_retries = 0;
        self.approvals.granted = Allowances::default();
        for message in warnings {
            self.emit(Event::Warning { message });
        }
        Ok(())
    }

    /// `/model NAME`: the next request goes to `model`; the window follows it unless `--window`
    /// pinned it (or the demo's is in force). The ledger notes the change.
    pub(crate) fn set_model(&mut self, model: &str) {
        let model = model.trim();
        if model.is_empty() {
            return self.emit(self.model_event());
        }
        self.settings.model = model.to_string();
        if !self.settings.window_source.is_pinned() && !self.run.provider.demo {
            let learned = LearnedWindows::in_data_dir(&self.run.places.data_dir).get(model);
            let (window, source) = context::effective_window(None, learned, model);
            self.settings.thresholds = self.thresholds_for(window);
            self.settings.window_source = source;
        }
        // Token estimates follow the model.
        self.counters.tokens =
            crate::engine::tokens::Estimator::load(&self.run.places.data_dir, model);
        self.note_setting();
        self.emit(self.model_event());
        self.emit_usage_estimate();
    }

    /// `/effort LEVEL|off`: extended thinking / reasoning effort from the next request on.
    pub(crate) fn set_effort(&mut self, effort: Option<Effort>) {
        self.settings.effort = effort;
        self.note_setting();
        self.emit(self.model_event());
    }

    /// The model, effort and window in force.
    pub(crate) fn model_event(&self) -> Event {
        Event::Model {
            model: self.settings.model.clone(),
            effort: self.settings.effort,
            thresholds: self.settings.thresholds,
            window_source: self.settings.window_source,
        }
    }

    /// Record a model, effort or mode change in the step's ledger.
    pub(super) fn note_setting(&mut self) {
        let change = SettingChange {
            time: now_stamp(),
            generation: self.s.generation,
            model: self.settings.model.clone(),
            effort: self.settings.effort,
            window: self.settings.thresholds.window,
            mode: self.planning.mode,
        };
        let window = self.settings.thresholds.window;
        self.ledger.record(|rec| {
            rec.settings.push(change);
            rec.figures.window = window;
        });
        self.save_manifest_if_any();
    }
}
