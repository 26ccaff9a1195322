//! Running the tool calls of one assistant message: approvals, execution, spill, the language
//! servers' diagnostics of what a call changed, results.

use std::collections::HashSet;
use std::path::PathBuf;

use serde_json::Value;

use super::Engine;
use super::approval_state::{Decision, Hooked};
use super::language_servers;
use super::planning::PlanPlace;
use super::user_hooks::ToolGate;
use crate::engine::images::ImageStore;
use crate::engine::mask::MaskMode;
use crate::engine::protocol::{Event, ExitReason, TurnId};
use crate::engine::secrets;
use crate::engine::subagent::TASK_TOOL;
use crate::engine::tools::recall::{self, Source};
use crate::engine::tools::{self, CommandExit, ToolCtx, ToolOutput, names, todo};
use crate::engine::types::{Block, Message, Role, ToolSpec};

impl Engine {
    /// What a tool call runs with; `allow_outside`: the user approved this very call's path
    /// outside the workspace.
    pub(in crate::engine::session) fn tool_ctx(&self, allow_outside: bool) -> ToolCtx {
        ToolCtx {
            workspace: self.run.places.workspace.clone(),
            spill_dir: Some(self.spill_dir()),
            session_id: self.conversation.id.clone(),
            bash_timeout: self.run.tools.bash_timeout,
            allow_outside,
            sandbox: self.planning.bash_sandbox(),
            files: self.run.tools.files.clone(),
            // None: the model in use takes no images (read_file says so instead).
            images: self
                .takes_images()
                .then(|| ImageStore::in_run(&self.ledger.run_dir.root)),
            web: self.run.tools.web.clone(),
            denied: self.run.denied.clone(),
        }
    }

    /// The built-in tools, the step's own (`todo`, and `recall` for a successor or while old
    /// tool output is masked), `task`, the tools of every ready MCP server (a server that
    /// became ready since the last request is offered from this one on), then `diagnostics`
    /// while a language server's program is found, as the mode allows.
    pub(in crate::engine::session) fn tool_specs(&self) -> Vec<ToolSpec> {
        let mut specs = crate::engine::tools::specs();
        specs.extend(self.ledger.step_tool_specs(self.own_transcript()));
        specs.extend(crate::engine::jobs::specs());
        let child_tools = self.child_tools();
        specs.push(crate::engine::subagent::spec(child_tools));
        if !self.run.extensions.skills.is_empty() {
            specs.push(crate::engine::skills::SkillCatalog::tool_spec());
        }
        if let Some(mcp) = &self.run.mcp {
            specs.extend(mcp.tool_specs());
        }
        specs.extend(self.run.lsp.tool_spec());
        let mut specs = self.planning.tools_for_mode(specs);
        if self.run.prompt.style.is_lean() {
            crate::engine::tools::lean_descriptions::compact(&mut specs);
        }
        specs
    }

    /// This generation's transcript while old tool output is masked (`recall` searches it then:
    /// a masked output is found there); None otherwise or before the first session.
    pub(in crate::engine::session) fn own_transcript(&self) -> Option<Source> {
        (self.run.masking.mode == MaskMode::On && !self.conversation.id.is_empty()).then(|| {
            Source {
                generation: self.conversation.generation,
                path: self.ledger.transcript_path(&self.conversation.id),
            }
        })
    }

    /// The characters every session starts with: its system prompt (before the first session:
    /// the base prompt and the project instructions it will get) and the tool specs.
    pub(in crate::engine::session) fn floor_chars(&self) -> usize {
        let tools = serde_json::to_string(&self.tool_specs()).map_or(0, |t| t.len());
        let prompt = if self.conversation.id.is_empty() {
            self.run.prompt.system_prompt.len()
                + crate::engine::instructions::load(
                    &self.run.prompt.instructions,
                    &self.run.places.workspace,
                )
                .block
                .len()
        } else {
            self.conversation.system_prompt.len()
        };
        prompt + tools
    }

    /// The system prompt of a main request: the session's, and plan mode says it plans.
    pub(in crate::engine::session) fn system_prompt(&self) -> String {
        self.planning
            .system_for_mode(&self.conversation.system_prompt)
    }

    /// Whether a call reads this run's stored images (`<run>/images/`, where a handoff's
    /// `## Touched` sends a successor): never asked for, like the run's spill files.
    pub(in crate::engine::session) fn reads_run_images(&self, name: &str, input: &Value) -> bool {
        let images = ImageStore::in_run(&self.ledger.run_dir.root);
        tools::reads_spill(name, input, &self.run.places.workspace, Some(images.dir()))
    }

    /// Where spill files go: `<workbench>/spill`, or the run directory's `spill/` with
    /// `--no-workbench` (outside the workspace, private to the user, and readable by
    /// `read_file`).
    pub(in crate::engine::session) fn spill_dir(&self) -> PathBuf {
        match &self.run.places.workbench {
            Some(w) => w.join("spill"),
            None => self.ledger.run_dir.root.join("spill"),
        }
    }

    /// Run every tool call of `msg` and append one user message with all their results.
    /// What ends the turn after them: the user aborted (every call still gets a result), or a
    /// plan was presented. The `task` calls run together, at the place of the first of them
    /// (`task_calls.rs`); the others one by one. A call of a tool the request did not offer
    /// (`offered`) fails, naming the ones it did.
    pub(in crate::engine::session) async fn run_tools(
        &mut self,
        msg: &Message,
        offered: &[String],
    ) -> Option<ExitReason> {
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
            if aborted || self.shutting_down() {
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
                    let call =
                        tool_call_event(self.turn_id(), id, TASK_TOOL, input, read.contains(id));
                    self.emit_logged(call);
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
            let (out, stopped) = if let Some(why) = self.planning.refusal(name) {
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
                    .filter(|_| self.run.is_mcp(name))
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
        if aborted {
            return Some(ExitReason::Interrupted);
        }
        self.planning
            .take_ends_turn()
            .then_some(ExitReason::Completed)
    }

    /// One call (not a `task`): asked for when it needs approval, then run. True in the second
    /// place when the user stopped the turn meanwhile.
    /// `from_text`: the model wrote the call as text (said with the call).
    pub(in crate::engine::session) async fn run_call(
        &mut self,
        id: &str,
        name: &str,
        input: &Value,
        from_text: bool,
    ) -> (ToolOutput, bool) {
        self.emit_logged(tool_call_event(self.turn_id(), id, name, input, from_text));
        // Also a custom command's `!` lines, and before any hook may allow it: plan mode
        // changes nothing, whoever asks.
        if let Some(why) = self.planning.refusal(name) {
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

    /// A call after its `PreToolUse` hooks: approved (or not), then it and its `PostToolUse`
    /// hooks run between its two checkpoints, and the language servers say what the files it
    /// changed hold now.
    async fn approved_call(
        &mut self,
        id: &str,
        name: &str,
        input: &Value,
        hooked: Hooked,
    ) -> (ToolOutput, bool) {
        // Whether it leaves the workspace; `read_file` of this run's own spill files (in the run
        // directory with `--no-workbench`) or of its stored images (a handoff names them) does
        // not.
        let outside = tools::leaves_workspace(
            name,
            input,
            &self.run.places.workspace,
            Some(&self.spill_dir()),
        ) && !self.reads_run_images(name, input);
        match self.approve(id, name, input, hooked, outside).await {
            decision @ (Decision::Allow | Decision::AllowPrivate) => {
                // Only reached for an outside path (or a web page on a private address) when
                // the user approved that very call.
                let outside = outside || matches!(decision, Decision::AllowPrivate);
                let watch = self.run.lsp.watch(name, input);
                self.checkpoint_before_call(name).await;
                let (ran, stopped_asking) = match self.execute(id, name, input, outside).await {
                    Some(out) if out.sandbox.is_some() => {
                        self.offer_unsandboxed(id, input, out).await
                    }
                    other => (other, false),
                };
                let done = match ran {
                    // A command stopped by Esc keeps its output; the turn ends here.
                    Some(mut out) => {
                        if !out.is_error && names::writes_files(name) {
                            // Remembered for a degraded handoff's scene.
                            self.ledger.note_touched(input);
                        }
                        let stopped = stopped_asking
                            || out.exit.as_deref().is_some_and(CommandExit::interrupted);
                        let stopped =
                            stopped || !self.post_tool_hooks(id, name, input, &mut out).await;
                        (out, stopped)
                    }
                    None => (ToolOutput::error("interrupted by the user"), true),
                };
                // After the `PostToolUse` hooks: what they change (a formatter) is the call's,
                // so an undo of the turn puts it back with the call, without a false conflict,
                // and the servers see the file as the hooks left it.
                let span = self.checkpoint_after_call().await;
                let (mut out, mut stopped) = done;
                // A write or edit that failed changed nothing.
                let failed_write = out.is_error && names::writes_files(name);
                if let Some(watch) = watch.filter(|_| !stopped && !failed_write) {
                    // Told to the front end (and the transcript), appended to the result for
                    // the model; the user may stop the turn meanwhile.
                    let compare = self.run.lsp.after_call(watch, span);
                    match self.abortable(compare).await {
                        Some(report) => {
                            let turn = self.turn_id();
                            if let Some(ev) = language_servers::told(report, turn, id, &mut out) {
                                self.emit_logged(ev);
                            }
                        }
                        None => stopped = true,
                    }
                }
                (out, stopped)
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
    pub(in crate::engine::session) fn deliver(
        &mut self,
        id: &str,
        name: &str,
        mut out: ToolOutput,
    ) -> Block {
        // The turn whose undo entry is open: the call's changes are undone with it.
        let turn = self
            .ledger
            .rec()
            .and_then(|r| r.history.undo.pending.as_ref())
            .map(|p| p.turn);
        self.conversation
            .call_counts
            .note(&self.conversation.id, id, turn, out.diff.as_deref());
        self.emit_logged(Event::ToolResult {
            turn: self.turn_id(),
            id: id.to_string(),
            name: name.to_string(),
            output: out.content.clone(),
            is_error: out.is_error,
            spilled: out.spilled.clone(),
            diff: out.diff.take(),
            exit: out.exit.take().map(|e| *e),
            sandbox: out.sandbox.take().map(|s| *s),
        });
        let content = match out.appendix.take() {
            Some(more) => format!("{}\n\n{more}", out.content),
            None => out.content,
        };
        Block::ToolResult {
            tool_use_id: id.to_string(),
            content,
            is_error: out.is_error,
        }
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
        let out = match (&self.run.mcp, self.run.is_mcp(name)) {
            (Some(mcp), true) => {
                let mcp = mcp.clone();
                self.abortable(async move { mcp.call(name, input).await })
                    .await?
            }
            _ if name == todo::NAME => self.ledger.write_todo(input),
            _ if name == recall::NAME => {
                // Asked for in a first generation (not offered there), it says there is nothing
                // to search.
                let sources = self.ledger.recall_sources(self.own_transcript());
                self.abortable(recall::run_call(input, sources)).await?
            }
            _ if name == names::PRESENT_PLAN => self.present_plan(input),
            _ if self.run.lsp.runs(name) => {
                let ask = self.run.lsp.diagnostics(input);
                self.abortable(ask).await?
            }
            _ if name == names::BASH && crate::engine::jobs::is_background(input) => {
                let (jobs, at) = (std::sync::Arc::clone(&self.run.jobs), ctx.clone());
                let start = async move { jobs.run_start(input, &at).await };
                self.abortable(start).await?
            }
            _ if name == names::BASH => self.run_bash(id, input, &ctx).await?,
            _ if name == names::JOB_OUTPUT || name == names::JOB_STOP => {
                let jobs = std::sync::Arc::clone(&self.run.jobs);
                let call = async move { jobs.run_tool(name, input).await };
                self.abortable(call)
                    .await?
                    .unwrap_or_else(|| ToolOutput::error(tools::unknown_tool_among(name, &[name])))
            }
            _ if name == names::SKILL => {
                let (skills, input) = (self.run.extensions.skills.clone(), input.clone());
                let read = tokio::task::spawn_blocking(move || skills.run(&input));
                self.abortable(read).await?.unwrap_or_else(|e| {
                    ToolOutput::error(format!("the skill could not be read: {e}"))
                })
            }
            _ => self.abortable(tools::run(name, input, &ctx)).await?,
        };
        Some(tools::for_model(
            name,
            out,
            &ctx,
            &mut self.conversation.spiller,
        ))
    }

    /// The `present_plan` call: the plan, checked and written to a new file in the workbench
    /// (the run directory with `--no-workbench`), shown to the front end; the turn ends after it.
    fn present_plan(&mut self, input: &Value) -> ToolOutput {
        let base = self
            .run
            .places
            .workbench
            .clone()
            .unwrap_or_else(|| self.ledger.run_dir.root.clone());
        let step = self.ledger.step_name();
        let place = PlanPlace {
            base: &base,
            step: &step,
        };
        let request = self.conversation.request.in_flight();
        match self.planning.present(input, &request, place) {
            Ok((out, plan)) => {
                self.emit_logged(Event::Plan {
                    turn: self.turn_id(),
                    path: plan.path().to_path_buf(),
                    markdown: plan.written().to_string(),
                });
                out
            }
            Err(out) => *out,
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
const FROM_TEXT_MARK: &str = " · read from text";

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
pub(super) fn tool_call_event(
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
