//! The user's hooks at the points of a session, in Claude Code's protocol: `SessionStart` before
//! a session's first request (startup, resume, `/new`, a handoff's successor),
//! `UserPromptSubmit` before a user turn (may drop the prompt or add context), `PreToolUse`
//! before a call's approval (may deny it, allow it unasked or force the question),
//! `PostToolUse` after it ran, `Stop` when a turn would end (may keep it going, a few times at
//! most), `SubagentStop` after a `task` reported, `SessionEnd`, `Notification` when an approval
//! waits, `PreHandoff` before a handoff's writing turn (may refuse it or add focus text) and
//! `HandoffFrozen` once the document is on disk and before its review (it may edit the file; the
//! successor reads the file back).
//!
//! Hooks run off the engine task, awaited beside the op channel like every other wait: Esc or
//! shutdown drops the batch, which kills the hooks with their process groups. Each hook that ran
//! is told to the front end (`Event::Hook`); a workspace settings file never approved is asked
//! about once (the TUI) or left unused with a notice (headless).

use serde_json::Value;

use super::Engine;
use crate::engine::hooks::{
    Decision, EndReason, HandoffTrigger, Hook, HookBatch, HookEvent, HookInput, HookNote,
    HookSession, HookSet, HooksQuestion, Outcome, PermissionMode, SettingsFile, StartSource,
    ToolCall, project, tool_response,
};
use crate::engine::ledger::HandoffCause;
use crate::engine::policy::ApprovalPolicy;
use crate::engine::protocol::{Event, ExitReason};
use crate::engine::tools::ToolOutput;
use crate::engine::types::{Block, Message};

/// How many times in one turn `Stop` hooks may keep the turn going; then it ends anyway (a hook
/// that blocks every stop would otherwise loop for ever).
const MAX_STOP_CONTINUES: u32 = 3;

/// The session's hooks: those in force, the settings files waiting for approval, and what is due.
#[derive(Debug, Default)]
pub(super) struct HookState {
    set: HookSet,
    /// Settings files never approved (this version), with the hooks they would add.
    pending: Vec<(SettingsFile, Vec<Hook>)>,
    /// Notices about the configuration, given once the front end listens.
    notices: Vec<String>,
    /// `SessionStart` is due before the current session's next request.
    pub(super) start: Option<StartSource>,
    /// How many times `Stop` hooks kept this turn going.
    pub(super) stop_continues: u32,
}

impl HookState {
    pub(super) fn new(params: super::HookParams, resumed: bool) -> HookState {
        HookState {
            set: HookSet::new(params.hooks),
            pending: params.pending,
            notices: params.notices,
            start: resumed.then_some(StartSource::Resume),
            stop_continues: 0,
        }
    }
}

/// Whether a prompt or a handoff goes on after its hooks.
pub(super) enum Gate {
    /// Go on, with this text (context for the model, or the handoff's focus).
    Go(Option<String>),
    /// A hook blocked it; the reason is for the user.
    Blocked(String),
    /// Esc or shutdown while the hooks ran.
    Aborted,
}

/// What `PreToolUse` hooks decided about a call.
pub(super) enum ToolGate {
    /// Go on to the approval: `allow` skips it, `ask` forces it; `context` goes with the result.
    Go {
        allow: bool,
        ask: bool,
        context: Option<String>,
    },
    /// Denied: the reason is the call's result.
    Blocked(String),
    Aborted,
}

/// Whether a turn ends after its `Stop` hooks.
pub(super) enum StopGate {
    End,
    /// A hook refused the end: its reason was given to the model; send another request.
    Continue,
    Aborted,
}

impl Engine {
    fn hook_session(&self) -> HookSession {
        HookSession {
            session_id: self.s.id.clone(),
            transcript_path: self.ledger.transcript_path(&self.s.id),
            workspace: self.run.places.workspace.clone(),
            permission_mode: match self.run.tools.approvals {
                ApprovalPolicy::Auto => PermissionMode::BypassPermissions,
                ApprovalPolicy::Ask | ApprovalPolicy::AskOnce => PermissionMode::Default,
            },
        }
    }

    /// Once the front end listens: the configuration's notices, and the question about each
    /// settings file never approved (headless cannot ask: those hooks stay unused).
    pub(super) fn announce_hooks(&mut self) {
        for message in std::mem::take(&mut self.hooks.notices) {
            self.emit(Event::Notice { message });
        }
        if self.run.front_end.can_ask() {
            for (file, hooks) in &self.hooks.pending {
                self.emit(Event::HooksApproval(HooksQuestion::new(file, hooks)));
            }
        } else {
            for (file, _) in std::mem::take(&mut self.hooks.pending) {
                self.emit(Event::Notice {
                    message: project::headless_notice(&file),
                });
            }
        }
    }

    /// The user's answer about a settings file: recorded for this workspace and version of the
    /// file (asked again when it changes); approved hooks run from now on.
    pub(crate) fn decide_hooks(&mut self, sha256: &str, approve: bool) {
        use crate::engine::mcp::{ApprovalStore, Decision as Stored};
        let Some(at) = self
            .hooks
            .pending
            .iter()
            .position(|(f, _)| f.sha256 == sha256)
        else {
            return;
        };
        let (file, hooks) = self.hooks.pending.remove(at);
        let store = ApprovalStore::new(&self.run.places.data_dir);
        let decision = if approve {
            Stored::Approved
        } else {
            Stored::Denied
        };
        if let Err(e) = project::record(&store, &self.run.places.workspace, &file, decision) {
            self.emit(Event::Warning {
                message: format!(
                    "could not record the decision about {} in {}: {e} (you will be asked again)",
                    file.path.display(),
                    store.path().display()
                ),
            });
        }
        let message = if approve {
            let mut all = self.hooks.set.hooks().to_vec();
            let n = hooks.len();
            all.extend(hooks);
            self.hooks.set = HookSet::new(all);
            format!(
                "{} approved for this workspace: its {n} hook(s) run from now on",
                file.path.display()
            )
        } else {
            format!(
                "{} declined: its hooks do not run (asked again when the file changes)",
                file.path.display()
            )
        };
        self.emit_logged(Event::Notice { message });
    }

    /// Run the hooks for `input` beside the op channel. None: Esc or shutdown killed them.
    async fn run_hooks(&mut self, input: HookInput) -> Option<Outcome> {
        if !self.hooks.set.has(input.event()) {
            return Some(Outcome::default());
        }
        let batch = self.hooks.set.run(&input, &self.hook_session());
        if batch.is_empty() {
            return Some(Outcome::default());
        }
        let outcome = self.abortable(batch).await?;
        self.report_hooks(&outcome);
        Some(outcome)
    }

    /// Each hook that ran, and the notices of their outcome, to the front end.
    fn report_hooks(&mut self, outcome: &Outcome) {
        for report in &outcome.reports {
            self.emit_logged(Event::Hook(HookNote::from_report(report)));
        }
        for message in &outcome.notices {
            self.emit_logged(Event::Notice {
                message: message.clone(),
            });
        }
    }

    /// Start the hooks for `input` and go on without waiting (an approval prompt must not wait
    /// for a notification); what they did is told when they finish.
    fn spawn_hooks(&self, input: HookInput) {
        if !self.hooks.set.has(input.event()) {
            return;
        }
        let batch = self.hooks.set.run(&input, &self.hook_session());
        if batch.is_empty() {
            return;
        }
        let events = self.run.events.clone();
        tokio::spawn(async move { tell(&events, batch.await) });
    }

    /// `SessionStart`, when due for the current session: its context goes to the model.
    /// False: the user stopped the turn meanwhile.
    pub(super) async fn session_start_hooks(&mut self) -> bool {
        let Some(source) = self.hooks.start.take() else {
            return true;
        };
        let Some(outcome) = self.run_hooks(HookInput::SessionStart { source }).await else {
            return false;
        };
        if let Some(text) = outcome.context_text() {
            self.push_message(Message::user(context_for(HookEvent::SessionStart, &text)));
        }
        true
    }

    /// The hooks as a turn opens: `SessionStart` when due, then `UserPromptSubmit` on the
    /// user's `prompt`. None: the turn was ended here (blocked, said to the user; or stopped);
    /// else the context to send with the prompt.
    pub(super) async fn opening_hooks(
        &mut self,
        turn: super::ActiveTurn,
        prompt: Option<&str>,
    ) -> Option<Option<String>> {
        self.hooks.stop_continues = 0;
        let gate = if !self.session_start_hooks().await {
            Gate::Aborted
        } else if let Some(prompt) = prompt {
            self.prompt_hooks(prompt).await
        } else {
            Gate::Go(None)
        };
        let reason = match gate {
            Gate::Go(context) => return Some(context),
            Gate::Blocked(reason) => {
                self.emit_logged(Event::Notice {
                    message: format!("prompt blocked by a UserPromptSubmit hook: {reason}"),
                });
                ExitReason::Unchanged
            }
            Gate::Aborted => ExitReason::Interrupted,
        };
        self.turn = None;
        self.end_turn(turn, reason);
        None
    }

    /// `UserPromptSubmit` on the user's `prompt`: blocked (the prompt is dropped, the reason is
    /// the user's), or the context to send with it.
    async fn prompt_hooks(&mut self, prompt: &str) -> Gate {
        let input = HookInput::UserPromptSubmit {
            prompt: prompt.to_string(),
        };
        let Some(outcome) = self.run_hooks(input).await else {
            return Gate::Aborted;
        };
        if let Some(reason) = outcome
            .block_reason()
            .map(str::to_string)
            .or_else(|| outcome.stop.clone())
        {
            return Gate::Blocked(reason);
        }
        Gate::Go(
            outcome
                .context_text()
                .map(|t| context_for(HookEvent::UserPromptSubmit, &t)),
        )
    }

    /// `PreToolUse` on one call, before its approval.
    pub(super) async fn pre_tool_hooks(&mut self, id: &str, name: &str, input: &Value) -> ToolGate {
        let call = tool_call(id, name, input);
        let Some(outcome) = self.run_hooks(HookInput::PreToolUse { call }).await else {
            return ToolGate::Aborted;
        };
        let context = outcome
            .context_text()
            .map(|t| context_for(HookEvent::PreToolUse, &t));
        match outcome.decision {
            Decision::Block { reason } => {
                ToolGate::Blocked(format!("denied by a PreToolUse hook: {reason}"))
            }
            _ if outcome.stop.is_some() => ToolGate::Blocked(format!(
                "stopped by a PreToolUse hook: {}",
                outcome.stop.unwrap_or_default()
            )),
            Decision::Allow { .. } => ToolGate::Go {
                allow: true,
                ask: false,
                context,
            },
            Decision::Ask { .. } => ToolGate::Go {
                allow: false,
                ask: true,
                context,
            },
            Decision::None => ToolGate::Go {
                allow: false,
                ask: false,
                context,
            },
        }
    }

    /// `PostToolUse` on a call that ran: a block's reason and any context go to the model with
    /// the result. False: the user stopped the turn meanwhile.
    pub(super) async fn post_tool_hooks(
        &mut self,
        id: &str,
        name: &str,
        input: &Value,
        out: &mut ToolOutput,
    ) -> bool {
        if !self.hooks.set.has(HookEvent::PostToolUse) {
            return true;
        }
        let input = HookInput::PostToolUse {
            call: tool_call(id, name, input),
            response: tool_response(name, out),
        };
        let Some(outcome) = self.run_hooks(input).await else {
            return false;
        };
        if let Some(reason) = outcome.block_reason() {
            out.content
                .push_str(&format!("\n\n[PostToolUse hook] {reason}"));
        }
        if let Some(text) = outcome.context_text() {
            out.content.push_str(&format!(
                "\n\n{}",
                context_for(HookEvent::PostToolUse, &text)
            ));
        }
        true
    }

    /// `Stop` when the model ended its turn: a block gives its reason to the model and the turn
    /// goes on, at most [`MAX_STOP_CONTINUES`] times a turn.
    pub(super) async fn stop_hooks(&mut self) -> StopGate {
        let input = HookInput::Stop {
            stop_hook_active: self.hooks.stop_continues > 0,
        };
        let Some(outcome) = self.run_hooks(input).await else {
            return StopGate::Aborted;
        };
        let Some(reason) = outcome.block_reason() else {
            return StopGate::End;
        };
        if outcome.stop.is_some() {
            return StopGate::End;
        }
        if self.hooks.stop_continues >= MAX_STOP_CONTINUES {
            self.emit_logged(Event::Notice {
                message: format!(
                    "a Stop hook kept the turn going {MAX_STOP_CONTINUES} times: the turn ends \
                     now (its last reason: {})",
                    crate::engine::text::one_line(reason, 200)
                ),
            });
            return StopGate::End;
        }
        self.hooks.stop_continues += 1;
        self.push_message(Message::user(format!("[Stop hook] {reason}")));
        StopGate::Continue
    }

    /// `SubagentStop` after a `task` call reported: a block's reason goes to the model with the
    /// report. False: the user stopped the turn meanwhile.
    pub(super) async fn subagent_stop_hooks(&mut self, id: &str, block: &mut Block) -> bool {
        if !self.hooks.set.has(HookEvent::SubagentStop) {
            return true;
        }
        let input = HookInput::SubagentStop {
            stop_hook_active: false,
            agent_id: id.to_string(),
        };
        let Some(outcome) = self.run_hooks(input).await else {
            return false;
        };
        if let (Some(reason), Block::ToolResult { content, .. }) = (outcome.block_reason(), block) {
            content.push_str(&format!("\n\n[SubagentStop hook] {reason}"));
        }
        true
    }

    /// `SessionEnd` on the way out (the user quit, or the headless task is done): awaited, as
    /// nothing else runs any more (the hooks' timeouts bound it; the TUI waits a few seconds).
    pub(super) async fn session_end_hooks(&mut self) {
        if self.s.is_none() || !self.hooks.set.has(HookEvent::SessionEnd) {
            return;
        }
        let reason = if self.run.front_end.can_ask() {
            EndReason::Exit
        } else {
            EndReason::Other
        };
        let input = HookInput::SessionEnd { reason };
        let batch: HookBatch = self.hooks.set.run(&input, &self.hook_session());
        let outcome = batch.await;
        self.report_hooks(&outcome);
    }

    /// `SessionEnd` of a session left for another (`/new`, a handoff), beside what follows.
    pub(super) fn session_left_hooks(&self, reason: EndReason) {
        if !self.s.is_none() {
            self.spawn_hooks(HookInput::SessionEnd { reason });
        }
    }

    /// `Notification`: an approval waits for the user.
    pub(super) fn notify_hooks(&self, message: String) {
        self.spawn_hooks(HookInput::Notification { message });
    }

    /// `PreHandoff` before a writing turn (`manual`: `/handoff`, else automatic): refused (the reason is the user's), or the focus to
    /// write with (the given focus and the hooks' text).
    pub(super) async fn pre_handoff_hooks(&mut self, manual: bool, focus: Option<String>) -> Gate {
        let input = HookInput::PreHandoff {
            trigger: if manual {
                HandoffTrigger::Manual
            } else {
                HandoffTrigger::Auto
            },
            focus: focus.clone(),
        };
        let Some(outcome) = self.run_hooks(input).await else {
            return Gate::Aborted;
        };
        if let Some(reason) = outcome
            .block_reason()
            .map(str::to_string)
            .or_else(|| outcome.stop.clone())
        {
            self.ledger.record(|rec| {
                rec.errors
                    .push(format!("handoff refused by a PreHandoff hook: {reason}"))
            });
            return Gate::Blocked(reason);
        }
        Gate::Go(match (focus, outcome.context_text()) {
            (Some(f), Some(more)) => Some(format!("{f}\n{more}")),
            (f, more) => f.or(more),
        })
    }

    /// `HandoffFrozen` with the document's path, before its review: a hook may edit the file
    /// (the review shows and the successor reads what is on disk). Esc kills the hooks and the
    /// handoff goes on.
    pub(super) async fn frozen_hooks(
        &mut self,
        cause: HandoffCause,
        path: &std::path::Path,
        generation: u32,
    ) {
        let input = HookInput::HandoffFrozen {
            trigger: match cause {
                // A plan implemented in a fresh session is the user's choice too.
                HandoffCause::Manual | HandoffCause::Plan => HandoffTrigger::Manual,
                HandoffCause::Pressure | HandoffCause::Overflow => HandoffTrigger::Auto,
            },
            path: path.to_path_buf(),
            step: self.ledger.step_name(),
            generation,
        };
        let _ = self.run_hooks(input).await;
    }
}

/// Tell the front end what detached hooks did (the front end may be gone: nothing to do then).
fn tell(events: &tokio::sync::mpsc::UnboundedSender<Event>, outcome: Outcome) {
    for report in &outcome.reports {
        let _ = events.send(Event::Hook(HookNote::from_report(report)));
    }
    for message in outcome.notices {
        let message = crate::engine::secrets::redact(&message).into_owned();
        let _ = events.send(Event::Notice { message });
    }
}

fn tool_call(id: &str, name: &str, input: &Value) -> ToolCall {
    ToolCall {
        id: id.to_string(),
        name: name.to_string(),
        input: input.clone(),
    }
}

/// Hook text for the model, marked with the event it came from.
fn context_for(event: HookEvent, text: &str) -> String {
    format!("[{event} hook]\n{text}")
}
