//! Asking about a call: whether it may run — judged first by the session's approvals in the
//! mode in force (a path outside the workspace, an MCP tool, a command the sandbox does not
//! confine need the user unless something covers them), then, where only the user can decide,
//! asked with the change itself shown (a call that cannot apply fails at once, unasked) — and
//! whether a command the sandbox stopped may run once outside it. Also what a subagent may call
//! under the same approvals.

use serde_json::Value;

use super::Engine;
use super::approval_state::{ApprovalState, Call, Decision, Hooked, Judgement, ToolKind};
use super::fetch_approval::FetchCheck;
use super::user_hooks;
use crate::engine::protocol::{Approval, Event};
use crate::engine::secrets;
use crate::engine::skills::SkillCatalog;
use crate::engine::subagent::ChildTools;
use crate::engine::tools::{self, ToolCtx, ToolOutput, names};

impl Engine {
    /// What a subagent may call under the approvals in force: `bash` where the parent would run
    /// a command unasked, which includes every command the sandbox confines.
    pub(in crate::engine::session) fn child_tools(&self) -> ChildTools {
        self.approvals.child_tools(&self.planning)
    }

    /// Whether a call of `name` may run (`outside`: its path leaves the workspace; `hooked`: what
    /// its `PreToolUse` hooks said): judged by the session's approvals in the mode in force, and
    /// where only the user can decide, asked. A web page on a private address counts as outside
    /// (`fetch_approval.rs`): its host's name is resolved only once the call would be made.
    pub(in crate::engine::session) async fn approve(
        &mut self,
        id: &str,
        name: &str,
        input: &Value,
        hooked: Hooked,
        outside: bool,
    ) -> Decision {
        let mut fetch = match FetchCheck::before_asking(name, input, &self.run.tools.web) {
            Ok(fetch) => fetch,
            Err(e) => return Decision::Fail(ToolOutput::from(e)),
        };
        // An MCP server's tool (and whether its server can run it), or another, which asks for
        // approval when it is known, the call needs it, and it reads neither this run's spill
        // files, its stored images, nor a loaded skill's folder.
        let tool = if self.run.is_mcp(name) {
            let unavailable = self.run.mcp.as_ref().and_then(|m| m.unavailable(name));
            ToolKind::Mcp { unavailable }
        } else {
            let workspace = &self.run.places.workspace;
            let asks = tools::is_known(name)
                && tools::needs_approval(name, input, workspace)
                && !tools::reads_spill(name, input, workspace, Some(&self.spill_dir()))
                && !self.reads_run_images(name, input)
                && !reads_skill(name, input, workspace, &self.run.extensions.skills);
            ToolKind::Builtin { asks }
        };
        let mut call = Call {
            name,
            input,
            hooked,
            outside: outside || fetch.as_ref().is_some_and(FetchCheck::is_private),
            tool,
        };
        let mut judgement = self.approvals.judge(&self.planning, &call);
        if let (Judgement::Allow, Some(f)) = (&judgement, fetch.as_mut())
            && f.needs_lookup()
        {
            // It would run unasked: its host's name is resolved now, as the fetch would.
            let lookup = FetchCheck::lookup(input, &self.run.tools.web);
            let Some(found) = self.abortable(lookup).await else {
                return Decision::Abort;
            };
            f.looked_up(found);
            if f.is_private() {
                call.outside = true;
                judgement = self.approvals.judge(&self.planning, &call);
            }
        }
        match judgement {
            Judgement::Allow => return Decision::Allow,
            Judgement::Deny(why) => {
                return Decision::Deny(fetch.and_then(|f| f.denial()).unwrap_or(why));
            }
            Judgement::Fail(out) => return Decision::Fail(out),
            Judgement::Ask => {}
        }
        // The prompt shows the change itself, read off the engine's thread; a call that cannot
        // apply fails now, unasked. A preview that fails unexpectedly asks without it.
        let diff = if names::writes_files(name) {
            let ctx = self.tool_ctx(false);
            let (name, input) = (name.to_string(), input.clone());
            let task = tokio::task::spawn_blocking(move || tools::preview(&name, &input, &ctx));
            match self.abortable(task).await {
                None => return Decision::Abort,
                Some(Ok(Ok(diff))) => diff,
                Some(Ok(Err(e))) => return Decision::Fail(ToolOutput::from(e)),
                Some(Err(_)) => None,
            }
        } else {
            None
        };
        let (mut question, always) = ApprovalState::question(id, &call, diff);
        if let Some(f) = &fetch {
            f.warn(&mut question);
        }
        self.emit_logged(question);
        user_hooks::notify(
            self,
            format!("flower-tui needs your permission to use {name}"),
        );
        let answer = self.answer(id).await;
        let decision = self.approvals.answered(name, answer, always);
        let Some(mut f) = fetch else {
            return decision;
        };
        if !matches!(decision, Decision::Allow) || !f.needs_lookup() {
            return f.decided(decision);
        }
        // Approved: its host's name is resolved now. A private address is asked about once
        // more, with the warning, for this call only.
        let lookup = FetchCheck::lookup(input, &self.run.tools.web);
        let Some(found) = self.abortable(lookup).await else {
            return Decision::Abort;
        };
        f.looked_up(found);
        if !f.is_private() {
            return decision;
        }
        call.outside = true;
        let (mut question, _) = ApprovalState::question(id, &call, None);
        f.warn(&mut question);
        self.emit_logged(question);
        let answer = self.answer(id).await;
        f.decided(self.approvals.answered(name, answer, None))
    }

    /// `out` is the result of a command the sandbox stopped: ask whether it may run once outside
    /// the sandbox, and if so run it again unconfined. The sandboxed result stands when nobody
    /// can be asked, when the user says no, or when the turn is stopped during the question (true
    /// in the second place). None: the engine shut down during the rerun. Plan mode never runs a
    /// command outside its read-only sandbox.
    pub(in crate::engine::session) async fn offer_unsandboxed(
        &mut self,
        id: &str,
        input: &Value,
        out: ToolOutput,
    ) -> (Option<ToolOutput>, bool) {
        let (Some(stopped), Some(command)) = (
            out.sandbox.as_ref(),
            input.get("command").and_then(Value::as_str),
        ) else {
            return (Some(out), false);
        };
        if !self.approvals.can_ask() || !self.planning.may_leave_sandbox() {
            return (Some(out), false);
        }
        let reason = stopped.message.clone();
        self.emit_logged(Event::ApprovalRequest {
            id: id.to_string(),
            name: names::BASH.into(),
            summary: secrets::redact(&tools::summary(names::BASH, input)).into_owned(),
            outside_workspace: false,
            command: Some(secrets::redact(command).into_owned()),
            diff: None,
            always: None,
            unsandboxed: Some(secrets::redact(&reason).into_owned()),
        });
        let mut out = out;
        match self.answer(id).await {
            Some(Approval::Once | Approval::Always) => {}
            Some(Approval::Deny) => {
                out.content
                    .push_str("\n[the user chose not to run this command outside the sandbox]");
                return (Some(out), false);
            }
            None => return (Some(out), true),
        }
        let ctx = ToolCtx {
            sandbox: tools::sandbox::SandboxPolicy::off(),
            ..self.tool_ctx(false)
        };
        let Some(mut rerun) = self.run_bash(id, input, &ctx).await else {
            return (None, true);
        };
        rerun.content = format!(
            "[the sandbox stopped this command; the user allowed it to run once outside the \
             sandbox, and this is that run's result]\n{}",
            rerun.content
        );
        let rerun = tools::for_model(names::BASH, rerun, &ctx, &mut self.conversation.spiller);
        (Some(rerun), false)
    }
}

/// A read-only tool's call whose path lies in a loaded skill's folder: the skill tool sends the
/// model there, so it reads without asking, even outside the workspace.
fn reads_skill(
    name: &str,
    input: &Value,
    workspace: &std::path::Path,
    skills: &SkillCatalog,
) -> bool {
    names::reads_only(name)
        && input
            .get("path")
            .and_then(Value::as_str)
            .filter(|raw| !raw.trim().is_empty())
            .is_some_and(|raw| skills.holds(&tools::paths::resolve(workspace, raw)))
}
