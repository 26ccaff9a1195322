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

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::engine::fsutil::{numbered_names, write_new};
use crate::engine::handoff::echo::{self, Part};
use crate::engine::handoff::store::{self, ReadBack};
use crate::engine::handoff::workbench_locks::safe_step_name;
use crate::engine::policy::Mode;
use crate::engine::tools::present_plan::{self, PLAN_MODE_PROMPT};
use crate::engine::tools::sandbox::{self, SandboxMode, SandboxPolicy, Support};
use crate::engine::tools::{ToolOutput, names};
use crate::engine::types::ToolSpec;

/// How many numbered plan files one step may have (`plan-<step>.md` … `plan-<step>-999.md`).
const MAX_PLANS: u32 = 999;

/// The mode in force, the sandbox it gives `bash`, and the plans presented in this run.
#[derive(Debug)]
pub(super) struct Planning {
    mode: Mode,
    /// The sandbox configured for `bash` (plan mode narrows it to read-only).
    sandbox: SandboxPolicy,
    /// The latest plan presented, which `Op::ImplementPlan` carries out.
    latest: Option<Presented>,
    /// The running turn presented a plan: it ends after this message's tool calls.
    ends_turn: bool,
}

/// A plan on disk, and the words its writer was given (what the echo check reads it against).
#[derive(Debug, Clone)]
pub(super) struct Presented {
    path: PathBuf,
    /// The plan-mode prompt and the user's request it answered.
    prompt: String,
    /// The text written (to tell whether the user edited it).
    written: String,
}

impl Presented {
    /// Where the plan is.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// The plan as the model wrote it.
    pub(super) fn written(&self) -> &str {
        &self.written
    }
}

/// Where a presented plan is written: `<base>/notes/plan-<step>.md`.
#[derive(Debug, Clone, Copy)]
pub(super) struct PlanPlace<'a> {
    /// The workbench, or the run directory with `--no-workbench`.
    pub(super) base: &'a Path,
    pub(super) step: &'a str,
}

impl Planning {
    /// Starting in `mode`, `bash` confined by `sandbox` outside plan mode.
    pub(super) fn new(mode: Mode, sandbox: SandboxPolicy) -> Planning {
        Planning {
            mode,
            sandbox,
            latest: None,
            ends_turn: false,
        }
    }

    pub(super) fn mode(&self) -> Mode {
        self.mode
    }

    /// From the next request on (a call made meanwhile is judged by the new mode). Whether the
    /// mode changed.
    pub(super) fn set_mode(&mut self, mode: Mode) -> bool {
        let changed = self.mode != mode;
        self.mode = mode;
        changed
    }

    /// Whether the running turn presented its plan (and so ends now); resets it.
    pub(super) fn take_ends_turn(&mut self) -> bool {
        std::mem::take(&mut self.ends_turn)
    }

    /// The tools a request offers in the mode in force, from every tool there is.
    pub(super) fn tools_for_mode(&self, specs: Vec<ToolSpec>) -> Vec<ToolSpec> {
        if self.mode != Mode::Plan {
            return specs;
        }
        let bash = plan_bash();
        let mut specs: Vec<ToolSpec> = specs
            .into_iter()
            .filter(|t| {
                names::CHANGE_NOTHING.contains(&t.name.as_str()) || (bash && t.name == names::BASH)
            })
            .collect();
        specs.push(present_plan::spec());
        specs
    }

    /// The system prompt of a main request on a session prompted with `base`: plan mode says
    /// it plans.
    pub(super) fn system_for_mode(&self, base: &str) -> String {
        match self.mode {
            Mode::Plan => format!("{base}\n\n{PLAN_MODE_PROMPT}"),
            Mode::Normal | Mode::AcceptEdits => base.to_string(),
        }
    }

    /// Why plan mode refuses a call of `name`, if it does: anything that is not one of the tools
    /// that change nothing (checked when the call comes, so a switch to plan mode during a turn
    /// stops the writes of the reply already on its way).
    pub(super) fn refusal(&self, name: &str) -> Option<String> {
        if self.mode != Mode::Plan
            || names::CHANGE_NOTHING.contains(&name)
            || (name == names::BASH && plan_bash())
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
        match self.mode {
            Mode::Plan => {
                SandboxPolicy::new(SandboxMode::ReadOnly).with_network(self.sandbox.network)
            }
            Mode::Normal | Mode::AcceptEdits => self.sandbox.clone(),
        }
    }

    /// Whether a command the sandbox stopped may be offered a run outside it: never in plan
    /// mode, and only when a sandbox is configured at all.
    pub(super) fn may_leave_sandbox(&self) -> bool {
        self.mode != Mode::Plan && self.sandbox.is_on()
    }

    /// Accept-edits mode approves this call without asking: a file edit (outside paths are asked
    /// for all the same, by the caller).
    pub(super) fn approves(&self, name: &str) -> bool {
        self.mode == Mode::AcceptEdits && names::writes_files(name)
    }

    /// The `present_plan` call (answering `request`, the user's messages in flight): checked,
    /// written to a new plan file at `place`; the turn ends after it. The plan, for the front
    /// end, with the call's result.
    pub(super) fn present(
        &mut self,
        input: &Value,
        request: &[String],
        place: PlanPlace<'_>,
    ) -> Result<(ToolOutput, Presented), Box<ToolOutput>> {
        let plan = match present_plan::parse_call(input) {
            Ok(plan) => crate::engine::secrets::redact(&plan).into_owned(),
            Err(e) => return Err(Box::new(ToolOutput::from(e))),
        };
        let prompt = format!("{PLAN_MODE_PROMPT}\n{}", request.join("\n"));
        if let Err(restated) = echo::check(&[&prompt], &[plan_part(&plan)]) {
            return Err(Box::new(ToolOutput::error(format!(
                "refused: the plan mostly restates its instructions and the request ({}); write \
                 the plan itself: what to change, where, in which order, how to verify.",
                restated.detail()
            ))));
        }
        let path = match write_plan_file(&plan, place) {
            Ok(path) => path,
            Err(e) => {
                let why = format!("could not save the plan: {e}");
                return Err(Box::new(ToolOutput::error(why)));
            }
        };
        let presented = Presented {
            path: path.clone(),
            prompt,
            written: plan,
        };
        self.latest = Some(presented.clone());
        self.ends_turn = true;
        let out = ToolOutput::ok(format!(
            "The plan is saved as {} and shown to the user, who edits it and chooses to implement \
             it here, in a fresh session, or to keep planning. Your turn ends here.",
            path.display()
        ));
        Ok((out, presented))
    }

    /// The latest plan, read back from its file, with its text as the user left it; why there
    /// is nothing to implement (no plan, a file gone or empty, a plan that restates its prompt).
    pub(super) fn to_implement(&self) -> Result<(Presented, String), String> {
        let (presented, text) = match self.latest.clone() {
            None => Err("no plan was presented in this run".to_string()),
            Some(p) => match store::read_back(&p.path) {
                ReadBack::Text(text) => Ok((p, text)),
                ReadBack::Missing => Err(format!("the plan file {} is gone", p.path.display())),
                ReadBack::Empty => Err(format!("the plan file {} is empty", p.path.display())),
                ReadBack::Unreadable(e) => Err(format!("the plan file cannot be read ({e})")),
            },
        }?;
        match echo::check(&[&presented.prompt], &[plan_part(&text)]) {
            Ok(()) => Ok((presented, text)),
            Err(r) => Err(format!(
                "the plan in {} mostly restates its instructions ({}); edit it into a plan first",
                presented.path.display(),
                r.detail()
            )),
        }
    }
}

/// The message that carries out `presented` in this session, its file now holding `text`.
pub(super) fn implement_here_message(presented: &Presented, text: &str) -> String {
    let edited = if text == presented.written {
        ""
    } else {
        " and edited it"
    };
    format!(
        "Implement this plan. I reviewed it{edited}; it is saved as {}.\n\n{text}",
        presented.path.display()
    )
}

/// Whether plan mode offers `bash`: only where the kernel confines it read-only.
fn plan_bash() -> bool {
    sandbox::confines(
        &SandboxPolicy::new(SandboxMode::ReadOnly),
        &Support::current(),
    )
}

/// A new file for the plan: `<base>/notes/plan-<step>.md`, numbered after earlier plans of the
/// step (`-2`, `-3`, …).
fn write_plan_file(plan: &str, place: PlanPlace<'_>) -> std::io::Result<PathBuf> {
    let step = safe_step_name(place.step);
    let names = numbered_names(&format!("plan-{step}"), "md", MAX_PLANS);
    write_new(&place.base.join("notes"), names, plan.as_bytes()).map(|f| f.path)
}

/// The plan as the one part the echo check judges.
fn plan_part(text: &str) -> Part<'_> {
    Part {
        name: "plan",
        text,
        required: true,
    }
}
