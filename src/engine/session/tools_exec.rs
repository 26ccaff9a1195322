//! Running the tool calls of one assistant message: approvals, execution, spill, results.

use std::collections::HashSet;

use serde_json::Value;

use super::Engine;
use super::hook_ops::ToolGate;
use super::request::Stop;
use crate::engine::approvals::{self, AllowRule};
use crate::engine::diff::FileDiff;
use crate::engine::images::ImageStore;
use crate::engine::policy::ApprovalPolicy;
use crate::engine::protocol::{Approval, Event, Op, TurnId};
use crate::engine::secrets;
use crate::engine::subagent::TASK_TOOL;
use crate::engine::tools::{self, CommandExit, ToolCtx, ToolOutput, names};
use crate::engine::types::{Block, Message, Role};

/// What the `PreToolUse` hooks said about a call's approval.
#[derive(Debug, Clone, Copy, Default)]
struct Hooked {
    /// Run it without asking (a path outside the workspace is still asked for).
    allow: bool,
    /// Ask even where a grant or `--yes` would allow it.
    ask: bool,
}

/// The answer to one approval request.
enum Decision {
    Allow,
    /// Allowed by the user for this call although its web page is on a private address.
    AllowPrivate,
    Deny(String),
    /// The call cannot apply (its preview failed): this is its result, nobody was asked.
    Fail(ToolOutput),
    Abort,
}

impl Engine {
    pub(crate) fn tool_ctx(&self, allow_outside: bool) -> ToolCtx {
        ToolCtx {
            workspace: self.run.places.workspace.clone(),
            spill_dir: Some(self.spill_dir()),
            session_id: self.s.id.clone(),
            bash_timeout: self.run.tools.bash_timeout,
            allow_outside,
            sandbox: self.bash_sandbox(),
            images: self
                .run
                .provider
                .client
                .takes_images(&self.settings.model)
                .then(|| ImageStore::in_run(&self.ledger.run_dir.root)),
            web: self.run.tools.web.clone(),
        }
    }

    /// Run every tool call of `msg` and append one user message with all their results.
    /// Returns false when the user aborted (every call still gets a result). The `task` calls
    /// run together, at the place of the first of them (`tasks.rs`); the others one by one. A
    /// call of a tool the request did not offer (`offered`) fails, naming the ones it did.
    pub(crate) async fn run_tools(&mut self, msg: &Message, offered: &[String]) -> bool {
        let calls: Vec<(String, String, Value)> = msg
            .tool_uses()
            .map(|(id, name, input)| (id.to_string(), name.to_string(), input.clone()))
            .collect();
        let read = read_from_text(msg);
        let mut results: Vec<Option<Block>> = vec![None; calls.len()];
        // Images a call returned follow the results, each naming its call.
        let mut images: Vec<Block> = Vec::new();
        let mut aborted = false;
        for (i, (id, name, input)) in calls.iter().enumerate() {
            if results.get(i).is_some_and(Option::is_some) {
                continue;
            }
            if aborted || self.inbox.shutdown {
                set(&mut results, i, not_run(id));
                continue;
            }
            if name == TASK_TOOL {
                let batch: Vec<(String, Value)> = calls
                    .iter()
                    .skip(i)
                    .filter(|(_, n, _)| n == TASK_TOOL)
                    .map(|(id, _, input)| (id.clone(), input.clone()))
                    .collect();
                for (id, input) in &batch {
                    self.emit_logged(tool_call_event(
                        self.turn_id(),
                        id,
                        TASK_TOOL,
                        input,
                        read.contains(id),
                    ));
                }
                self.checkpoint_before_call(TASK_TOOL).await;
                let (done, stopped) = self.task_calls(batch).await;
                self.checkpoint_after_call().await;
                aborted |= stopped;
                for (id, block) in done {
                    let slot = calls
                        .iter()
                        .enumerate()
                        .skip(i)
                        .position(|(j, (c, _, _))| {
                            *c == id && results.get(j).is_some_and(Option::is_none)
                        })
                        .map(|p| p + i);
                    if let Some(j) = slot {
                        set(&mut results, j, block);
                    }
                }
                continue;
            }
            let from_text = read.contains(id);
            let (out, stopped) = if let Some(why) = self.plan_refusal(name) {
                self.emit_logged(tool_call_event(self.turn_id(), id, name, input, from_text));
                (ToolOutput::error(why), false)
            } else if offered.iter().any(|o| o == name) {
                self.run_call(id, name, input, from_text).await
            } else {
                self.emit_logged(tool_call_event(self.turn_id(), id, name, input, from_text));
                // A tool of a server that died is not offered: say which server and why.
                let why = self
                    .run
                    .mcp
                    .as_ref()
                    .filter(|_| self.is_mcp(name))
                    .and_then(|m| m.unavailable(name))
                    .unwrap_or_else(|| tools::unknown_tool_among(name, offered));
                (ToolOutput::error(why), false)
            };
            aborted |= stopped;
            let mut out = out;
            images.extend(
                std::mem::take(&mut out.images)
                    .into_iter()
                    .map(|image| Block::Image {
                        image,
                        tool_use_id: Some(id.clone()),
                    }),
            );
            let block = self.deliver(id, name, out);
            set(&mut results, i, block);
        }
        let results: Vec<Block> = results
            .into_iter()
            .zip(&calls)
            .map(|(block, (id, _, _))| block.unwrap_or_else(|| not_run(id)))
            .chain(images)
            .collect();
        self.push_message(Message {
            role: Role::User,
            content: results,
        });
        self.emit_usage_estimate();
        !aborted
    }

    /// One call (not a `task`): asked for when it needs approval, then run. True in the second
    /// place when the user stopped the turn meanwhile.
    /// `from_text`: the model wrote the call as text (said with the call).
    pub(super) async fn run_call(
        &mut self,
        id: &str,
        name: &str,
        input: &Value,
        from_text: bool,
    ) -> (ToolOutput, bool) {
        self.emit_logged(tool_call_event(self.turn_id(), id, name, input, from_text));
        // Also a custom command's `!` lines, and before any hook may allow it: plan mode
        // changes nothing, whoever asks.
        if let Some(why) = self.plan_refusal(name) {
            return (ToolOutput::error(why), false);
        }
        let (hooked, context) = match self.pre_tool_hooks(id, name, input).await {
            ToolGate::Go {
                allow,
                ask,
                context,
            } => (Hooked { allow, ask }, context),
            ToolGate::Blocked(reason) => return (ToolOutput::error(reason), false),
            ToolGate::Aborted => {
                return (
                    ToolOutput::error("not run: the user interrupted the turn"),
                    true,
                );
            }
        };
        let (mut out, stopped) = self.approved_call(id, name, input, hooked).await;
        if let Some(context) = context {
            out.content.push_str(&format!("\n\n{context}"));
        }
        (out, stopped)
    }

    /// A call after its `PreToolUse` hooks: approved (or not), run, then its `PostToolUse`
    /// hooks.
    async fn approved_call(
        &mut self,
        id: &str,
        name: &str,
        input: &Value,
        hooked: Hooked,
    ) -> (ToolOutput, bool) {
        match self.approve(id, name, input, hooked).await {
            decision @ (Decision::Allow | Decision::AllowPrivate) => {
                // Only reached for an outside path (or a private web address) when the user
                // approved that very call.
                let outside = matches!(decision, Decision::AllowPrivate)
                    || self.leaves_workspace(name, input);
                self.checkpoint_before_call(name).await;
                let (ran, stopped_asking) = match self.execute(id, name, input, outside).await {
                    Some(out) if out.sandbox.is_some() => {
                        self.offer_unsandboxed(id, input, out).await
                    }
                    other => (other, false),
                };
                self.checkpoint_after_call().await;
                match ran {
                    // A command stopped by Esc keeps its output; the turn ends here.
                    Some(out) => {
                        if !out.is_error && names::writes_files(name) {
                            self.note_touched(input);
                        }
                        let mut out = out;
                        let stopped = stopped_asking
                            || out.exit.as_ref().is_some_and(CommandExit::interrupted);
                        let stopped =
                            stopped || !self.post_tool_hooks(id, name, input, &mut out).await;
                        (out, stopped)
                    }
                    None => (ToolOutput::error("interrupted by the user"), true),
                }
            }
            Decision::Deny(why) => (ToolOutput::error(why), false),
            Decision::Fail(out) => (out, false),
            Decision::Abort => (
                ToolOutput::error("not run: the user interrupted the turn"),
                true,
            ),
        }
    }

    /// A call's result: told to the front end (and the transcript), as the block the model gets.
    pub(crate) fn deliver(&mut self, id: &str, name: &str, mut out: ToolOutput) -> Block {
        self.note_counts(id, out.diff.as_deref());
        self.emit_logged(Event::ToolResult {
            turn: self.turn_id(),
            id: id.to_string(),
            name: name.to_string(),
            output: out.content.clone(),
            is_error: out.is_error,
            spilled: out.spilled.clone(),
            diff: out.diff.take(),
            exit: out.exit.take(),
            sandbox: out.sandbox.take().map(|s| *s),
        });
        Block::ToolResult {
            tool_use_id: id.to_string(),
            content: out.content,
            is_error: out.is_error,
        }
    }

    /// Remember a written path for a degraded handoff's scene.
    fn note_touched(&mut self, input: &Value) {
        if let Some(path) = input.get("path").and_then(Value::as_str) {
            let path = path.to_string();
            self.ledger.record(|rec| {
                if !rec.touched.contains(&path) {
                    rec.touched.push(path);
                }
            });
        }
    }

    /// Whether a call leaves the workspace; `read_file` of this run's own spill files (in the run
    /// directory with `--no-workbench`) does not.
    fn leaves_workspace(&self, name: &str, input: &Value) -> bool {
        tools::leaves_workspace(
            name,
            input,
            &self.run.places.workspace,
            Some(&self.spill_dir()),
        ) && !self.reads_run_file(name, input)
    }

    /// `read_file` of this run's spill files or stored images (a handoff names those).
    fn reads_run_file(&self, name: &str, input: &Value) -> bool {
        let images = ImageStore::in_run(&self.ledger.run_dir.root);
        [self.spill_dir().as_path(), images.dir()]
            .iter()
            .any(|dir| tools::reads_spill(name, input, &self.run.places.workspace, Some(dir)))
    }

    /// A read-only tool's call whose path lies in a loaded skill's folder: the skill tool sends
    /// the model there, so it reads without asking, even outside the workspace.
    fn reads_skill(&self, name: &str, input: &Value) -> bool {
        names::reads_only(name)
            && input
                .get("path")
                .and_then(Value::as_str)
                .filter(|raw| !raw.trim().is_empty())
                .is_some_and(|raw| {
                    let path = tools::paths::resolve(&self.run.places.workspace, raw);
                    self.run.extensions.skills.holds(&path)
                })
    }

    /// Whether `name` is a tool of one of the MCP servers.
    fn is_mcp(&self, name: &str) -> bool {
        self.run.mcp.is_some() && crate::engine::mcp::McpManager::is_mcp_tool(name)
    }

    /// Whether `name` may run: unasked where nothing needs the user (or a `PreToolUse` hook
    /// allowed it), else asked (also where a hook asked for the question).
    async fn approve(&mut self, id: &str, name: &str, input: &Value, hooked: Hooked) -> Decision {
        // Every MCP tool needs approval: flower-tui cannot know what a server's tool does. A tool
        // whose server is gone fails at once: there is nothing to approve.
        let needs = if self.is_mcp(name) {
            if let Some(why) = self.run.mcp.as_ref().and_then(|m| m.unavailable(name)) {
                return Decision::Fail(ToolOutput::error(why));
            }
            true
        } else {
            hooked.ask
                || tools::is_known(name)
                    && !self.sandbox_covers(name)
                    && tools::needs_approval(name, input, &self.run.places.workspace)
                    && !self.reads_run_file(name, input)
                    && !self.reads_skill(name, input)
        };
        if !needs {
            return Decision::Allow;
        }
        // A path outside the workspace, or a web page on a private address, is approved call by
        // call: neither --yes nor "always" covers it.
        let Some(private) = self.private_fetch(name, input).await else {
            return Decision::Abort;
        };
        let outside = self.leaves_workspace(name, input) || private.is_some();
        let auto = match self.run.tools.approvals {
            ApprovalPolicy::Auto => true,
            ApprovalPolicy::AskOnce => self.approvals.asked_once,
            ApprovalPolicy::Ask => false,
        };
        let covered =
            auto || self.mode_approves(name) || self.approvals.granted.covers(name, input);
        if !outside && (hooked.allow || (!hooked.ask && covered)) {
            return Decision::Allow;
        }
        let can_ask = self.run.front_end.can_ask();
        if let (Some(why), false) = (&private, can_ask) {
            return Decision::Deny(format!(
                "denied: {why}; only the user can approve that, call by call (or list the host \
                 in `[web] allow_private_hosts`), and this headless run cannot ask."
            ));
        }
        if outside && !can_ask {
            return Decision::Deny(format!(
                "denied: `{name}` would leave the workspace ({}); only the user can approve that, \
                 call by call, and this headless run cannot ask.",
                tools::summary(name, input)
            ));
        }
        if !can_ask {
            return Decision::Deny(format!(
                "denied: `{name}` needs the user's approval and this is a headless run without --yes. \
                 Continue without it or explain what you need."
            ));
        }
        // The prompt shows the change itself; a call that cannot apply fails now, unasked.
        let diff = match self.preview(name, input).await {
            Ok(diff) => diff,
            Err(Some(e)) => return Decision::Fail(e),
            Err(None) => return Decision::Abort,
        };
        let always = approvals::offer(name, input, outside);
        let mut summary = secrets::redact(&tools::summary(name, input)).into_owned();
        if let Some(why) = &private {
            summary.push_str(&format!(" — ⚠ {why}: approved call by call"));
        }
        self.emit_logged(Event::ApprovalRequest {
            id: id.to_string(),
            name: name.to_string(),
            summary,
            outside_workspace: outside,
            command: (name == names::BASH)
                .then(|| {
                    input
                        .get("command")
                        .and_then(Value::as_str)
                        .map(|c| secrets::redact(c).into_owned())
                })
                .flatten(),
            diff: diff.map(Box::new),
            always: always.clone(),
            unsandboxed: None,
        });
        self.notify_hooks(format!("flower-tui needs your permission to use {name}"));
        let answer = self.answer(id).await;
        if answer.is_some() {
            self.approvals.asked_once = true;
        }
        match answer {
            Some(Approval::Once | Approval::Always) if private.is_some() => Decision::AllowPrivate,
            Some(Approval::Once) => Decision::Allow,
            Some(Approval::Always) => {
                if let Some(offer) = &always {
                    self.approvals.granted.grant(&offer.rules);
                }
                Decision::Allow
            }
            Some(Approval::Deny) => {
                Decision::Deny(format!("denied: the user did not allow this `{name}` call"))
            }
            None => Decision::Abort,
        }
    }

    /// Why a `web_fetch` call must be approved call by call (its host resolves to a private
    /// address no `[web] allow_private_hosts` entry lists); `Some(None)` for any other call, None
    /// when the user aborted while the name resolved.
    async fn private_fetch(&mut self, name: &str, input: &Value) -> Option<Option<String>> {
        if name != names::WEB_FETCH {
            return Some(None);
        }
        let access = self.run.tools.web.clone();
        let input = input.clone();
        self.abortable(async move { tools::web_fetch::private_reason(&input, &access).await })
            .await
    }

    /// The user's answer to the approval request `id`; None when the turn was stopped meanwhile.
    pub(super) async fn answer(&mut self, id: &str) -> Option<Approval> {
        loop {
            let op = tokio::select! {
                op = self.inbox.ops.recv() => op,
                Some(w) = self.handoff.results.recv() => {
                    // A background handoff's document arrived while the user decides.
                    self.on_background(w);
                    continue;
                }
            };
            match op {
                Some(Op::Approval { id: got, decision }) if got == id => return Some(decision),
                // An answer to another request: stale.
                Some(Op::Approval { .. }) => {}
                other => {
                    if self.triage(other).is_some() {
                        return None;
                    }
                }
            }
        }
    }

    /// The diff a file tool would make, read off the engine's thread. `Err(Some)`: the call would
    /// fail (its error goes to the model); `Err(None)`: the user aborted meanwhile.
    async fn preview(
        &mut self,
        name: &str,
        input: &Value,
    ) -> Result<Option<FileDiff>, Option<ToolOutput>> {
        if !names::writes_files(name) {
            return Ok(None);
        }
        let ctx = self.tool_ctx(false);
        let (name, input) = (name.to_string(), input.clone());
        let task = tokio::task::spawn_blocking(move || tools::preview(&name, &input, &ctx));
        match self.abortable(task).await {
            None => Err(None),
            Some(Ok(Ok(diff))) => Ok(diff),
            Some(Ok(Err(e))) => Err(Some(ToolOutput::from(e))),
            // The preview itself failed unexpectedly: ask without it.
            Some(Err(_)) => Ok(None),
        }
    }

    /// `/permissions` and its revocations: the policy and the grants in force.
    pub(crate) fn permissions_event(&self) -> Event {
        Event::Permissions {
            policy: self.run.tools.approvals,
            allowances: self.approvals.granted.list(),
            sandbox: self.sandbox_line(),
        }
    }

    /// `Op::Revoke`: one grant, or all of them.
    pub(crate) fn revoke(&mut self, rule: Option<AllowRule>) {
        let message = match rule {
            None => match self.approvals.granted.clear() {
                0 => "no \"always\" approvals to revoke".to_string(),
                n => format!("revoked {n} \"always\" approval(s)"),
            },
            Some(rule) if self.approvals.granted.revoke(&rule) => format!("revoked: {rule}"),
            Some(rule) => format!("not granted, nothing to revoke: {rule}"),
        };
        self.emit(Event::Notice { message });
        self.emit(self.permissions_event());
    }

    /// Run one tool; None when the user aborted it (the future is dropped, a child process dies).
    /// A bash command is stopped instead, so its output so far is its result (marked
    /// interrupted), and its output streams as `ToolOutputDelta` events while it runs.
    async fn execute(
        &mut self,
        id: &str,
        name: &str,
        input: &Value,
        allow_outside: bool,
    ) -> Option<ToolOutput> {
        let ctx = self.tool_ctx(allow_outside);
        let out = match (&self.run.mcp, self.is_mcp(name)) {
            (Some(mcp), true) => {
                let mcp = mcp.clone();
                self.abortable(async move { mcp.call(name, input).await })
                    .await?
            }
            _ if Self::is_step_tool(name) => self.run_step_tool(name, input).await?,
            _ if name == names::PRESENT_PLAN => self.present_plan(input),
            _ if name == names::BASH => self.run_bash(id, input, &ctx).await?,
            _ if name == names::SKILL => {
                let (skills, input) = (self.run.extensions.skills.clone(), input.clone());
                let read = tokio::task::spawn_blocking(move || skills.run(&input));
                self.abortable(read).await?.unwrap_or_else(|e| {
                    ToolOutput::error(format!("the skill could not be read: {e}"))
                })
            }
            _ => self.abortable(tools::run(name, input, &ctx)).await?,
        };
        Some(tools::for_model(name, out, &ctx, &mut self.s.spiller))
    }

    /// bash with live output and a graceful stop: an abort of the turn stops the command and
    /// waits for its partial result; shutdown drops it (the process group dies).
    pub(super) async fn run_bash(
        &mut self,
        id: &str,
        input: &Value,
        ctx: &ToolCtx,
    ) -> Option<ToolOutput> {
        let events = self.run.events.clone();
        let call = id.to_string();
        let mut on_output = move |text: String| {
            let _ = events.send(Event::ToolOutputDelta {
                id: call.clone(),
                text,
            });
        };
        let (stop, interrupt) = tokio::sync::oneshot::channel();
        let mut stop = Some(stop);
        let live = tools::Live {
            on_output: &mut on_output,
            interrupt: Some(interrupt),
        };
        let run = tools::run_live(names::BASH, input, ctx, live);
        tokio::pin!(run);
        loop {
            tokio::select! {
                out = &mut run => return Some(out),
                op = self.inbox.ops.recv(), if stop.is_some() => match self.triage(op) {
                    Some(Stop::Abort) => {
                        if let Some(tx) = stop.take() {
                            let _ = tx.send(());
                        }
                    }
                    Some(Stop::Shutdown) => return None,
                    None => {}
                },
                // A background handoff's document that arrives while the command runs is frozen
                // (and its review opened) now, not when the command ends.
                Some(w) = self.handoff.results.recv() => self.on_background(w),
            }
        }
    }
}

/// The result of a call the turn's end left unrun.
fn not_run(id: &str) -> Block {
    Block::ToolResult {
        tool_use_id: id.to_string(),
        content: "not run: the user interrupted the turn".into(),
        is_error: true,
    }
}

/// Fill slot `i` of the results.
fn set(results: &mut [Option<Block>], i: usize, block: Block) {
    if let Some(slot) = results.get_mut(i) {
        *slot = Some(block);
    }
}

/// What a call the model wrote as text says after its summary, in the chat and the events.
pub(crate) const FROM_TEXT_MARK: &str = " · read from text";

/// The ids of the calls of `msg` the model wrote as text.
fn read_from_text(msg: &Message) -> HashSet<String> {
    msg.content
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse {
                id,
                from_text: true,
                ..
            } => Some(id.clone()),
            _ => None,
        })
        .collect()
}

/// A tool call as the front ends see it: its input and summary with every secret masked (a key
/// the model put into a command is not shown; the call itself runs as the model wrote it); a
/// call read from the model's text says so after its summary.
fn tool_call_event(
    turn: Option<TurnId>,
    id: &str,
    name: &str,
    input: &Value,
    from_text: bool,
) -> Event {
    let mut summary = secrets::redact(&tools::summary(name, input)).into_owned();
    if from_text {
        summary.push_str(FROM_TEXT_MARK);
    }
    Event::ToolCall {
        turn,
        id: id.to_string(),
        name: name.to_string(),
        input: secrets::redact_value(input),
        summary,
        changes_files: tools::names::changes_files(name),
    }
}
