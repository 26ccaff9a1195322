//! The working mode in the session: what each mode offers the model and what runs unasked, and
//! plan mode's document. Normal mode offers every tool; accept-edits approves file edits inside
//! the workspace without asking (commands and outside paths are asked for as ever); plan mode
//! offers only the tools that change nothing — `bash` only where the read-only sandbox confines
//! it, no MCP tool (a server's own read-only hint is not trusted to hold) — plus `present_plan`,
//! and refuses any other call with a tool error. The presented plan becomes a new file
//! `<workbench>/notes/plan-<step>.md` (numbered, never over an earlier plan), the turn ends, and
//! the user implements it here (the file, read back, is the next message) or in a fresh session
//! (the file, read back and checked like a handoff document, is the successor's briefing, with a
//! handoff record in the ledger).

use std::path::PathBuf;

use serde_json::Value;

use super::Engine;
use super::conversation::Request;
use super::lifecycle::BlockingStage;
use crate::engine::error::Error;
use crate::engine::fsutil::{numbered_names, write_new};
use crate::engine::handoff::echo::{self, Part};
use crate::engine::handoff::lock::safe_step_name;
use crate::engine::handoff::store::{self, ReadBack};
use crate::engine::ledger::{FrozenFile, FrozenHandoff, HandoffCause, HandoffReason, now_stamp};
use crate::engine::policy::Mode;
use crate::engine::protocol::{DocumentSource, Event, Origin, PlanChoice, TurnId, TurnKind};
use crate::engine::tools::present_plan::{self, PLAN_MODE_PROMPT};
use crate::engine::tools::sandbox::{self, SandboxMode, SandboxPolicy, Support};
use crate::engine::tools::{ToolOutput, names};
use crate::engine::types::ToolSpec;

/// How many numbered plan files one step may have (`plan-<step>.md` … `plan-<step>-999.md`).
const MAX_PLANS: u32 = 999;

/// The mode in force and the plans presented in this run.
#[derive(Debug, Default)]
pub(super) struct Planning {
    pub(super) mode: Mode,
    /// The latest plan presented, which `Op::ImplementPlan` carries out.
    latest: Option<Presented>,
    /// The running turn presented a plan: it ends after this message's tool calls.
    ends_turn: bool,
}

impl Planning {
    /// Starting in `mode`.
    pub(super) fn new(mode: Mode) -> Planning {
        Planning {
            mode,
            ..Planning::default()
        }
    }

    /// Whether the running turn presented its plan (and so ends now); resets it.
    pub(super) fn take_ends_turn(&mut self) -> bool {
        std::mem::take(&mut self.ends_turn)
    }
}

/// A plan on disk, and the words its writer was given (what the echo check reads it against).
#[derive(Debug, Clone)]
struct Presented {
    path: PathBuf,
    /// The plan-mode prompt and the user's request it answered.
    prompt: String,
    /// The text written (to tell whether the user edited it).
    written: String,
}

impl Engine {
    /// `Op::SetMode`: from the next request on (a call made meanwhile is judged by the new mode).
    pub(crate) fn set_mode(&mut self, mode: Mode) {
        let changed = self.planning.mode != mode;
        self.planning.mode = mode;
        if changed {
            self.note_setting();
        }
        self.emit(Event::Mode { mode });
    }

    /// The tools a request offers in the mode in force, from every tool there is.
    pub(super) fn tools_for_mode(&self, specs: Vec<ToolSpec>) -> Vec<ToolSpec> {
        if self.planning.mode != Mode::Plan {
            return specs;
        }
        let bash = self.plan_bash();
        let mut specs: Vec<ToolSpec> = specs
            .into_iter()
            .filter(|t| {
                names::CHANGE_NOTHING.contains(&t.name.as_str()) || (bash && t.name == names::BASH)
            })
            .collect();
        specs.push(present_plan::spec());
        specs
    }

    /// The system prompt of a main request: plan mode says it plans.
    pub(super) fn system_for_mode(&self) -> String {
        match self.planning.mode {
            Mode::Plan => format!("{}\n\n{PLAN_MODE_PROMPT}", self.s.system_prompt),
            Mode::Normal | Mode::AcceptEdits => self.s.system_prompt.clone(),
        }
    }

    /// Why plan mode refuses a call of `name`, if it does: anything that is not one of the tools
    /// that change nothing (checked when the call comes, so a switch to plan mode during a turn
    /// stops the writes of the reply already on its way).
    pub(super) fn plan_refusal(&self, name: &str) -> Option<String> {
        if self.planning.mode != Mode::Plan
            || names::CHANGE_NOTHING.contains(&name)
            || (name == names::BASH && self.plan_bash())
        {
            return None;
        }
        let what = if name == names::BASH {
            "this machine has no sandbox to run commands read-only, so `bash` is not available"
        } else {
            "only tools that change nothing run while planning"
        };
        Some(format!(
            "refused: plan mode changes nothing; `{name}` is not available ({what}). Read what \
             you need, then present the plan with `{}`; the user decides when it is carried out.",
            names::PRESENT_PLAN
        ))
    }

    /// The sandbox of `bash` in the mode in force: read-only in plan mode (with the network as
    /// configured), else as configured.
    pub(super) fn bash_sandbox(&self) -> SandboxPolicy {
        match self.planning.mode {
            Mode::Plan => SandboxPolicy::new(SandboxMode::ReadOnly)
                .with_network(self.run.tools.sandbox.network),
            Mode::Normal | Mode::AcceptEdits => self.run.tools.sandbox.clone(),
        }
    }

    /// Whether plan mode offers `bash`: only where the kernel confines it read-only.
    fn plan_bash(&self) -> bool {
        sandbox::confines(
            &SandboxPolicy::new(SandboxMode::ReadOnly),
            &Support::current(),
        )
    }

    /// Accept-edits mode approves this call without asking: a file edit (outside paths are asked
    /// for all the same, by the caller).
    pub(super) fn mode_approves(&self, name: &str) -> bool {
        self.planning.mode == Mode::AcceptEdits && names::writes_files(name)
    }

    /// The `present_plan` call: checked, written to a new plan file, shown to the front end;
    /// the turn ends after it.
    pub(super) fn present_plan(&mut self, input: &Value) -> ToolOutput {
        let plan = match present_plan::parse_call(input) {
            Ok(plan) => crate::engine::secrets::redact(&plan).into_owned(),
            Err(e) => return ToolOutput::from(e),
        };
        let prompt = format!(
            "{PLAN_MODE_PROMPT}\n{}",
            self.s.request.in_flight().join("\n")
        );
        if let Err(restated) = echo::check(&[&prompt], &[plan_part(&plan)]) {
            return ToolOutput::error(format!(
                "refused: the plan mostly restates its instructions and the request ({}); write \
                 the plan itself: what to change, where, in which order, how to verify.",
                restated.detail()
            ));
        }
        let path = match self.write_plan_file(&plan) {
            Ok(path) => path,
            Err(e) => {
                return ToolOutput::error(format!("could not save the plan: {e}"));
            }
        };
        self.planning.latest = Some(Presented {
            path: path.clone(),
            prompt,
            written: plan.clone(),
        });
        self.planning.ends_turn = true;
        self.emit_logged(Event::Plan {
            turn: self.turn_id(),
            path: path.clone(),
            markdown: plan,
        });
        ToolOutput::ok(format!(
            "The plan is saved as {} and shown to the user, who edits it and chooses to implement \
             it here, in a fresh session, or to keep planning. Your turn ends here.",
            path.display()
        ))
    }

    /// A new file for the plan: `<workbench>/notes/plan-<step>.md`, numbered after earlier plans
    /// of the step (`-2`, `-3`, …); in the run directory with `--no-workbench`.
    fn write_plan_file(&self, plan: &str) -> std::io::Result<PathBuf> {
        let base = self
            .run
            .places
            .workbench
            .clone()
            .unwrap_or_else(|| self.ledger.run_dir.root.clone());
        let step = safe_step_name(&self.ledger.step_name());
        let names = numbered_names(&format!("plan-{step}"), "md", MAX_PLANS);
        write_new(&base.join("notes"), names, plan.as_bytes()).map(|f| f.path)
    }

    /// `Op::ImplementPlan`: the latest plan, read back from its file, carried out here or in a
    /// fresh session. The mode goes back to normal first. Nothing to implement (no plan, a file
    /// gone or empty, a plan that restates its prompt) ends the turn unchanged with a notice.
    pub(crate) async fn implement_plan(&mut self, id: TurnId, choice: PlanChoice) {
        let read = match self.planning.latest.clone() {
            None => Err("no plan was presented in this run".to_string()),
            Some(p) => match store::read_back(&p.path) {
                ReadBack::Text(text) => Ok((p, text)),
                ReadBack::Missing => Err(format!("the plan file {} is gone", p.path.display())),
                ReadBack::Empty => Err(format!("the plan file {} is empty", p.path.display())),
                ReadBack::Unreadable(e) => Err(format!("the plan file cannot be read ({e})")),
            },
        };
        let checked = read.and_then(|(p, text)| match echo::check(&[&p.prompt], &[plan_part(&text)]) {
            Ok(()) => Ok((p, text)),
            Err(r) => Err(format!(
                "the plan in {} mostly restates its instructions ({}); edit it into a plan first",
                p.path.display(),
                r.detail()
            )),
        });
        let (presented, text) = match checked {
            Ok(ok) => ok,
            Err(why) => {
                let message = format!("Plan not implemented: {why}.");
                self.turn_ends_at_once(id, TurnKind::Message, Event::Notice { message });
                return;
            }
        };
        self.set_mode(Mode::Normal);
        match choice {
            PlanChoice::Here => self.implement_here(id, &presented, text).await,
            // The file is read back once more under the document lock by the turnover.
            PlanChoice::FreshSession => self.implement_fresh(id, presented).await,
        }
    }

    /// The plan as the next message of this session.
    async fn implement_here(&mut self, id: TurnId, presented: &Presented, text: String) {
        let edited = if text == presented.written {
            ""
        } else {
            " and edited it"
        };
        let message = format!(
            "Implement this plan. I reviewed it{edited}; it is saved as {}.\n\n{text}",
            presented.path.display()
        );
        let task = format!("Implement the plan {}", presented.path.display());
        self.message_turn(id, TurnKind::Message, Origin::Engine, &task, message)
            .await;
    }

    /// A successor briefed with the plan file as its document, recorded in the ledger like a
    /// handoff (the generation turns over, the old session is retired), then the turn goes on in
    /// the successor.
    async fn implement_fresh(&mut self, id: TurnId, presented: Presented) {
        let turn = self.begin_turn(id, TurnKind::Message);
        let done = self.ledger.rec().map_or(0, |r| r.handoffs.len());
        if done >= self.run.handoff.max_generations as usize {
            let reason = self.fail(&Error::HandoffBreaker {
                max: self.run.handoff.max_generations,
                at: self.settings.thresholds.at,
            });
            self.turn = None;
            self.end_turn(turn, reason);
            return;
        }
        let handoff = self.handoff.begin_blocking(BlockingStage::Turnover);
        let frozen = FrozenHandoff {
            file: FrozenFile::OnDisk(presented.path.clone()),
            // As the model wrote it: the record says whether the user edited the file.
            markdown: presented.written.clone(),
            degraded: false,
            reason: HandoffReason::clean(HandoffCause::Plan),
            ctx_at_cut: self.ctx_estimate(),
            time: now_stamp(),
            retired_session: self.s.id.clone(),
            generation: self.s.generation + 1,
            request: Vec::new(),
            pid: std::process::id(),
            unsaved: None,
            source: DocumentSource::Written,
            reduced: false,
            cut: None,
            cause: HandoffCause::Plan,
            focus: None,
        };
        // The plan turn is over: the successor gets the plan alone, no request beside it.
        self.s.request = Request::default();
        self.set_frozen(Some(frozen.clone()), true);
        // `HandoffFrozen` hooks get the plan's path; the successor reads what they leave there.
        self.frozen_hooks(HandoffCause::Plan, &presented.path, frozen.generation)
            .await;
        self.commit_turnover(handoff, frozen);
        self.handoff.end();
        self.s.request = Request::opened(format!(
            "Implement the plan in {}",
            presented.path.display()
        ));
        let reason = self.turn_loop().await;
        self.checkpoint_after_turn().await;
        self.finish_turn(turn, reason);
    }
}

/// The plan as the one part the echo check judges.
fn plan_part(text: &str) -> Part<'_> {
    Part {
        name: "plan",
        text,
        required: true,
    }
}
