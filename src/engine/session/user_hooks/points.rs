//! The hooks at the points of a session, each one verb over the narrow context the engine lends
//! the part ([`HookCx`]): the batch is built from the part's hooks, awaited beside the op channel
//! (or detached), reported to the front end, and its verdict applied.

use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use super::gates::{
    Gate, StopGate, ToolGate, context_for, handoff_gate, pre_handoff_input, prompt_gate, tool_call,
    tool_gate,
};
use super::state::{Hooks, MAX_STOP_CONTINUES};
use crate::engine::hooks::{
    EndReason, HookBatch, HookEvent, HookInput, HookNote, HookSession, HooksQuestion, Outcome,
    Unapproved, project, tool_response,
};
use crate::engine::permissions::Permissions;
use crate::engine::protocol::{Event, ExitReason};
use crate::engine::session::{ActiveTurn, Places};
use crate::engine::tools::ToolOutput;
use crate::engine::types::{Block, Message};

/// What the hooks part reads and where it writes: its own state, who the hooks run for, the
/// wait beside the op channel, the event sink and the conversation their text goes to.
pub(in crate::engine::session) trait HookCx {
    /// The hooks part.
    fn hooks(&mut self) -> &mut Hooks;
    /// Who the hooks run for: the session, its transcript, the workspace, the permission mode.
    fn hook_session(&self) -> HookSession;
    /// Wait for `batch` while the op channel is listened to: None when Esc or shutdown dropped
    /// it (which kills the hooks with their process groups).
    async fn beside_ops(&mut self, batch: HookBatch) -> Option<Outcome>;
    fn emit(&mut self, ev: Event);
    /// Emit `ev` and record it in the transcript.
    fn emit_logged(&mut self, ev: Event);
    /// Where events go, for hooks that run detached.
    fn events(&self) -> UnboundedSender<Event>;
    /// Add hook text for the model to the conversation.
    fn push_message(&mut self, msg: Message);
    /// A session has started (one that never did has no end to tell).
    fn has_session(&self) -> bool;
    /// The front end can ask the user questions.
    fn can_ask(&self) -> bool;
    /// Where the workspace and the approvals are.
    fn places(&self) -> &Places;
    /// The user approved a workspace's `allow` rules and, when `command_grants`, the
    /// `allowed-tools` of its command files: they apply from now on.
    fn approved(&mut self, allow: Permissions, command_grants: bool);
    /// Record an error of the step in the ledger.
    fn record_error(&mut self, text: String);
    /// The turn `turn` is over (it sent nothing), for `reason`.
    fn close_turn(&mut self, turn: ActiveTurn, reason: ExitReason);
}

/// Each hook that ran, and the notices of their outcome, to the front end.
pub(in crate::engine::session) fn report(cx: &mut impl HookCx, outcome: &Outcome) {
    for report in &outcome.reports {
        cx.emit_logged(Event::Hook(HookNote::from_report(report)));
    }
    for message in &outcome.notices {
        cx.emit_logged(Event::Notice {
            message: message.clone(),
        });
    }
}

/// The batch `input` runs, if any hook matches it (who they run for is asked only then).
pub(in crate::engine::session) fn batch(
    cx: &mut impl HookCx,
    input: &HookInput,
) -> Option<HookBatch> {
    if !cx.hooks().has(input.event()) {
        return None;
    }
    let session = cx.hook_session();
    cx.hooks().batch(input, &session)
}

/// Run the hooks for `input` beside the op channel. None: Esc or shutdown killed them.
async fn run(cx: &mut impl HookCx, input: HookInput) -> Option<Outcome> {
    let Some(batch) = batch(cx, &input) else {
        return Some(Outcome::default());
    };
    let outcome = cx.beside_ops(batch).await?;
    report(cx, &outcome);
    Some(outcome)
}

/// Start the hooks for `input` and go on without waiting (an approval prompt must not wait
/// for a notification); what they did is told when they finish.
fn detach(cx: &mut impl HookCx, input: HookInput) {
    let Some(batch) = batch(cx, &input) else {
        return;
    };
    let events = cx.events();
    tokio::spawn(async move { tell(&events, batch.await) });
}

/// Once the front end listens: the configuration's notices, and the question about each
/// settings file never approved (headless cannot ask: those hooks stay unused).
pub(in crate::engine::session) fn announce(cx: &mut impl HookCx) {
    for message in cx.hooks().take_notices() {
        cx.emit(Event::Notice { message });
    }
    if cx.can_ask() {
        let questions: Vec<Event> = cx
            .hooks()
            .pending()
            .iter()
            .map(|waiting| Event::HooksApproval(HooksQuestion::new(waiting)))
            .collect();
        for ev in questions {
            cx.emit(ev);
        }
    } else {
        for waiting in cx.hooks().take_pending() {
            cx.emit(Event::Notice {
                message: waiting.headless_notice(),
            });
        }
    }
}

/// The user's answer about a settings file: recorded for this workspace and version of the
/// file (asked again when it changes); approved hooks run from now on.
pub(in crate::engine::session) fn decide(cx: &mut impl HookCx, sha256: &str, approve: bool) {
    use crate::engine::mcp::{ApprovalStore, Decision as Stored};
    let Some(waiting) = cx.hooks().answered(sha256) else {
        return;
    };
    let file = &waiting.file;
    let store = ApprovalStore::new(&cx.places().data_dir);
    let decision = if approve {
        Stored::Approved
    } else {
        Stored::Denied
    };
    if let Err(e) = project::record(&store, &cx.places().workspace, file, decision) {
        cx.emit(Event::Warning {
            message: format!(
                "could not record the decision about {} in {}: {e} (you will be asked again)",
                file.path.display(),
                store.path().display()
            ),
        });
    }
    let what = waiting.lines().len();
    let message = if approve {
        let shown = file.path.display().to_string();
        let Unapproved {
            hooks,
            allow,
            command_grants,
            ..
        } = waiting;
        cx.hooks().add(hooks);
        cx.approved(allow, !command_grants.is_empty());
        format!(
            "{shown} approved for this workspace: its {what} hook(s) and rule(s) apply from now on"
        )
    } else {
        format!(
            "{} declined: its {what} hook(s) and rule(s) do not apply (asked again when it changes)",
            file.path.display()
        )
    };
    cx.emit_logged(Event::Notice { message });
}

/// `SessionStart`, when due for the current session: its context goes to the model.
/// False: the user stopped the turn meanwhile.
pub(in crate::engine::session) async fn session_start(cx: &mut impl HookCx) -> bool {
    let Some(source) = cx.hooks().take_start() else {
        return true;
    };
    let Some(outcome) = run(cx, HookInput::SessionStart { source }).await else {
        return false;
    };
    if let Some(text) = outcome.context_text() {
        cx.push_message(Message::user(context_for(HookEvent::SessionStart, &text)));
    }
    true
}

/// The hooks as a turn opens: `SessionStart` when due, then `UserPromptSubmit` on the user's
/// `prompt`. None: the turn was ended here (blocked, said to the user; or stopped); else the
/// context to send with the prompt.
pub(in crate::engine::session) async fn opening(
    cx: &mut impl HookCx,
    turn: ActiveTurn,
    prompt: Option<&str>,
) -> Option<Option<String>> {
    cx.hooks().turn_opened();
    let gate = if !session_start(cx).await {
        Gate::Aborted
    } else if let Some(prompt) = prompt {
        let input = HookInput::UserPromptSubmit {
            prompt: prompt.to_string(),
        };
        run(cx, input)
            .await
            .map_or(Gate::Aborted, |o| prompt_gate(&o))
    } else {
        Gate::Go(None)
    };
    let reason = match gate {
        Gate::Go(context) => return Some(context),
        Gate::Blocked(reason) => {
            cx.emit_logged(Event::Notice {
                message: format!("prompt blocked by a UserPromptSubmit hook: {reason}"),
            });
            ExitReason::Unchanged
        }
        Gate::Aborted => ExitReason::Interrupted,
    };
    cx.close_turn(turn, reason);
    None
}

/// `PreToolUse` on one call, before its approval.
pub(in crate::engine::session) async fn pre_tool(
    cx: &mut impl HookCx,
    id: &str,
    name: &str,
    input: &Value,
) -> ToolGate {
    let call = tool_call(id, name, input);
    match run(cx, HookInput::PreToolUse { call }).await {
        Some(outcome) => tool_gate(outcome),
        None => ToolGate::Aborted,
    }
}

/// `PostToolUse` on a call that ran: a block's reason and any context go to the model with
/// the result. False: the user stopped the turn meanwhile.
pub(in crate::engine::session) async fn post_tool(
    cx: &mut impl HookCx,
    id: &str,
    name: &str,
    input: &Value,
    out: &mut ToolOutput,
) -> bool {
    if !cx.hooks().has(HookEvent::PostToolUse) {
        return true;
    }
    let input = HookInput::PostToolUse {
        call: tool_call(id, name, input),
        response: tool_response(name, out),
    };
    let Some(outcome) = run(cx, input).await else {
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
pub(in crate::engine::session) async fn stop(cx: &mut impl HookCx) -> StopGate {
    let input = HookInput::Stop {
        stop_hook_active: cx.hooks().stop_active(),
    };
    let Some(outcome) = run(cx, input).await else {
        return StopGate::Aborted;
    };
    let Some(reason) = outcome.block_reason() else {
        return StopGate::End;
    };
    if outcome.stop.is_some() {
        return StopGate::End;
    }
    if !cx.hooks().may_continue() {
        cx.emit_logged(Event::Notice {
            message: format!(
                "a Stop hook kept the turn going {MAX_STOP_CONTINUES} times: the turn ends \
                 now (its last reason: {})",
                crate::engine::text::one_line(reason, 200)
            ),
        });
        return StopGate::End;
    }
    cx.push_message(Message::user(format!("[Stop hook] {reason}")));
    StopGate::Continue
}

/// `SubagentStop` after a `task` call reported: a block's reason goes to the model with the
/// report. False: the user stopped the turn meanwhile.
pub(in crate::engine::session) async fn subagent_stop(
    cx: &mut impl HookCx,
    id: &str,
    block: &mut Block,
) -> bool {
    if !cx.hooks().has(HookEvent::SubagentStop) {
        return true;
    }
    let input = HookInput::SubagentStop {
        stop_hook_active: false,
        agent_id: id.to_string(),
    };
    let Some(outcome) = run(cx, input).await else {
        return false;
    };
    if let (Some(reason), Block::ToolResult { content, .. }) = (outcome.block_reason(), block) {
        content.push_str(&format!("\n\n[SubagentStop hook] {reason}"));
    }
    true
}

/// `SessionEnd` on the way out (the user quit, or the headless task is done): awaited, as
/// nothing else runs any more (the hooks' timeouts bound it; the TUI waits a few seconds).
pub(in crate::engine::session) async fn session_end(cx: &mut impl HookCx) {
    if !cx.has_session() || !cx.hooks().has(HookEvent::SessionEnd) {
        return;
    }
    let reason = if cx.can_ask() {
        EndReason::Exit
    } else {
        EndReason::Other
    };
    let Some(batch) = batch(cx, &HookInput::SessionEnd { reason }) else {
        return;
    };
    let outcome = batch.await;
    report(cx, &outcome);
}

/// `SessionEnd` of a session left for another (`/new`, a handoff), beside what follows.
pub(in crate::engine::session) fn session_left(cx: &mut impl HookCx, reason: EndReason) {
    if cx.has_session() {
        detach(cx, HookInput::SessionEnd { reason });
    }
}

/// `Notification`: an approval waits for the user.
pub(in crate::engine::session) fn notify(cx: &mut impl HookCx, message: String) {
    detach(cx, HookInput::Notification { message });
}

/// `PreHandoff` before a writing turn in the main thread (`manual`: `/handoff`, else automatic):
/// refused (the reason is the user's), or the focus to write with (the given focus and the
/// hooks' text).
pub(in crate::engine::session) async fn pre_handoff(
    cx: &mut impl HookCx,
    manual: bool,
    focus: Option<String>,
) -> Gate {
    let Some(outcome) = run(cx, pre_handoff_input(manual, &focus)).await else {
        return Gate::Aborted;
    };
    handoff_verdict(cx, &outcome, focus)
}

/// What `PreHandoff` hooks decided: refused (recorded in the ledger), or the focus to write
/// with (the given `focus` and the hooks' text).
pub(in crate::engine::session) fn handoff_verdict(
    cx: &mut impl HookCx,
    outcome: &Outcome,
    focus: Option<String>,
) -> Gate {
    match handoff_gate(outcome, focus) {
        Ok(focus) => Gate::Go(focus),
        Err(reason) => {
            cx.record_error(format!("handoff refused by a PreHandoff hook: {reason}"));
            Gate::Blocked(reason)
        }
    }
}

/// Run the hooks for `input` in the main thread, beside the op channel (`HandoffFrozen`: Esc
/// kills them and the handoff goes on).
pub(in crate::engine::session) async fn run_for_handoff(cx: &mut impl HookCx, input: HookInput) {
    let _ = run(cx, input).await;
}

/// Tell the front end what detached hooks did (the front end may be gone: nothing to do then).
fn tell(events: &UnboundedSender<Event>, outcome: Outcome) {
    for report in &outcome.reports {
        let _ = events.send(Event::Hook(HookNote::from_report(report)));
    }
    for message in outcome.notices {
        let message = crate::engine::secrets::redact(&message).into_owned();
        let _ = events.send(Event::Notice { message });
    }
}
