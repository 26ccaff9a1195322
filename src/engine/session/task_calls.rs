//! The `task` calls of one reply: their subagents run together, at most [`MAX_CONCURRENT`] at
//! once, while the engine keeps answering ops; Esc (or shutdown) aborts them with the turn. The
//! children report on a channel of their own ([`SubagentEvent`]); this file turns each report
//! into the front ends' `Event`, in the order it was sent and before the call's result. Each child's report is its call's result, through the main thread's tool-result
//! budget; its cost goes to the session, the step and the generation, its record (linking its
//! transcript) into the ledger. Nothing of a child counts in the main gauge: only its report is
//! appended to the main thread's history. Like every other call, a `task` call passes its
//! `PreToolUse` hooks first (a block is its result, the child never starts) and its
//! `PostToolUse` hooks after its report (and after `SubagentStop`).

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde_json::Value;
use tokio::sync::mpsc;

use super::Engine;
use super::user_hooks::{self, ToolGate};
use crate::engine::context::{self, Thresholds};
use crate::engine::learned_windows::LearnedWindows;
use crate::engine::protocol::Event;
use crate::engine::subagent::{
    self, Child, ChildEnv, ChildHeader, Finished, MAX_CONCURRENT, SubagentEvent, TASK_TOOL,
    TaskInput,
};
use crate::engine::tools::{self, ToolOutput};
use crate::engine::types::Block;

impl Engine {
    /// What the children of a batch share, taken from the session now; they report on `events`.
    fn child_env(&self, events: mpsc::UnboundedSender<SubagentEvent>) -> ChildEnv {
        // What a subagent may call: `bash` where the parent would run a command unasked.
        let tools = self.child_tools();
        let model = self
            .run
            .tools
            .subagent
            .model
            .clone()
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| self.settings.model.clone());
        // Its own window: the main thread's for the same model, else that model's own.
        let thresholds = if model == self.settings.model {
            self.settings.thresholds
        } else {
            let learned = LearnedWindows::in_data_dir(&self.run.places.data_dir).get(&model);
            let (window, _) = context::effective_window(None, learned, &model);
            Thresholds::new(window, self.settings.thresholds.headroom)
        };
        let session_context = crate::engine::sysprompt::session_context(
            &self.conversation.system_prompt,
            &self.run.prompt.system_prompt,
        );
        ChildEnv {
            provider: self.run.provider.client.clone(),
            system: subagent::system_prompt(&self.run.places.workspace, tools, session_context),
            model,
            thresholds,
            max_iterations: self.run.tools.subagent.max_iterations.max(1),
            max_tokens: context::output_cap(thresholds.window, self.run.provider.max_tokens),
            effort: self.settings.effort,
            retry: self.run.provider.retry,
            tools,
            jobs: self.run.tools.jobs,
            tool_ctx: self.tool_ctx(false),
            run_dir: self.ledger.run_dir.clone(),
            header: ChildHeader {
                parent_session: self.conversation.id.clone(),
                generation: self.conversation.generation,
                step: self.ledger.step_name(),
                provider: self.run.provider.client.name().to_string(),
                workspace: self.run.places.workspace.clone(),
            },
            events,
        }
    }

    /// The `task` calls `batch` (call id, input) with their hooks: `PreToolUse` before (a call
    /// it blocks is not run; its context goes with the report), the children together, then
    /// `SubagentStop` and `PostToolUse` on each report. Each call's result, and whether the turn
    /// was stopped.
    pub(in crate::engine::session) async fn task_calls(
        &mut self,
        batch: Vec<(String, Value)>,
    ) -> (Vec<(String, Block)>, bool) {
        let mut results = Vec::with_capacity(batch.len());
        let mut run = Vec::with_capacity(batch.len());
        let mut contexts = Vec::new();
        let mut stopped = false;
        for (id, input) in batch {
            if stopped {
                let out = ToolOutput::error("not run: the user interrupted the turn");
                results.push((id.clone(), self.deliver(&id, TASK_TOOL, out)));
                continue;
            }
            match self.pre_tool_hooks(&id, TASK_TOOL, &input).await {
                ToolGate::Go { context, .. } => {
                    if let Some(c) = context {
                        contexts.push((id.clone(), c));
                    }
                    run.push((id, input));
                }
                ToolGate::Blocked(reason) => {
                    let block = self.deliver(&id, TASK_TOOL, ToolOutput::error(reason));
                    results.push((id, block));
                }
                ToolGate::Aborted => {
                    stopped = true;
                    let out = ToolOutput::error("not run: the user interrupted the turn");
                    results.push((id.clone(), self.deliver(&id, TASK_TOOL, out)));
                }
            }
        }
        if stopped {
            for (id, _) in run {
                let out = ToolOutput::error("not run: the user interrupted the turn");
                results.push((id.clone(), self.deliver(&id, TASK_TOOL, out)));
            }
            return (results, true);
        }
        let inputs = run.clone();
        let (done, mut stopped) = self.run_tasks(run).await;
        for (id, mut block) in done {
            if !stopped {
                stopped |= !user_hooks::subagent_stop(self, &id, &mut block).await;
            }
            let input = inputs.iter().find(|(i, _)| *i == id).map(|(_, v)| v);
            // `PostToolUse` on the call's report (already its result block).
            if let (
                false,
                Some(input),
                Block::ToolResult {
                    content, is_error, ..
                },
            ) = (stopped, input, &mut block)
            {
                let taken = std::mem::take(content);
                let mut out = if *is_error {
                    ToolOutput::error(taken)
                } else {
                    ToolOutput::ok(taken)
                };
                stopped |= !self.post_tool_hooks(&id, TASK_TOOL, input, &mut out).await;
                *content = out.content;
            }
            if let (Some((_, c)), Block::ToolResult { content, .. }) =
                (contexts.iter().find(|(i, _)| *i == id), &mut block)
            {
                content.push_str(&format!("\n\n{c}"));
            }
            results.push((id, block));
        }
        (results, stopped)
    }

    /// Run the `task` calls `batch` (call id, input) together. Returns each call's result, by
    /// call id, and whether the turn was stopped (every call still gets its result).
    async fn run_tasks(&mut self, batch: Vec<(String, Value)>) -> (Vec<(String, Block)>, bool) {
        let (events, mut reports) = mpsc::unbounded_channel();
        let env = self.child_env(events);
        let mut results = Vec::with_capacity(batch.len());
        let mut children = Vec::with_capacity(batch.len());
        for (id, input) in batch {
            match TaskInput::parse(&input) {
                Ok(task) => children.push(Child::new(&id, task, &env)),
                Err(e) => {
                    let block = self.deliver(&id, TASK_TOOL, ToolOutput::from(e));
                    results.push((id, block));
                }
            }
        }
        let mut booked = std::collections::HashSet::new();
        let stopped = {
            let mut waiting = children.iter_mut();
            let mut running = FuturesUnordered::new();
            for child in waiting.by_ref().take(MAX_CONCURRENT) {
                running.push(run_child(child, &env));
            }
            loop {
                let next = async {
                    tokio::select! {
                        biased;
                        Some(report) = reports.recv() => Next::Report(report),
                        done = running.next() => Next::Done(done.map(Box::new)),
                    }
                };
                match self.abortable(next).await {
                    Some(Next::Report(report)) => forward(&self.run.events, report),
                    Some(Next::Done(Some(done))) => {
                        forward_all(&self.run.events, &mut reports);
                        booked.insert(done.call_id.clone());
                        results.push(self.book(*done));
                        if let Some(child) = waiting.next() {
                            running.push(run_child(child, &env));
                        }
                    }
                    Some(Next::Done(None)) => break false,
                    // Esc or shutdown: the children still running are dropped here.
                    None => break true,
                }
            }
        };
        forward_all(&self.run.events, &mut reports);
        for child in children.iter_mut() {
            if !booked.contains(child.call_id()) {
                child.interrupt();
                forward_all(&self.run.events, &mut reports);
                results.push(self.book(child.finished()));
            }
        }
        (results, stopped)
    }

    /// A child is over: its cost and record into the ledger, its report to the model.
    fn book(&mut self, done: Finished) -> (String, Block) {
        if let Some(rec) = done.record {
            self.add_cost(rec.cost_usd);
            self.ledger.record(|step| step.subagents.push(rec));
            self.ledger.save();
        }
        let ctx = self.tool_ctx(false);
        let out = tools::for_model(TASK_TOOL, done.output, &ctx, &mut self.conversation.spiller);
        let block = self.deliver(&done.call_id, TASK_TOOL, out);
        (done.call_id, block)
    }
}

/// A child's report, to the front ends.
fn forward(events: &mpsc::UnboundedSender<Event>, report: SubagentEvent) {
    let event = match report {
        SubagentEvent::Phase(phase) => Event::Subagent(phase),
        SubagentEvent::Warning { message } => Event::Warning { message },
    };
    let _ = events.send(event);
}

/// Every report sent so far, to the front ends (before a call's result goes out).
fn forward_all(
    events: &mpsc::UnboundedSender<Event>,
    reports: &mut mpsc::UnboundedReceiver<SubagentEvent>,
) {
    while let Ok(report) = reports.try_recv() {
        forward(events, report);
    }
}

/// What the batch's wait yields: a child's report, or a child that is over (None: all are).
enum Next {
    Report(SubagentEvent),
    Done(Option<Box<Finished>>),
}

/// Run one child and hand back what the parent needs of it.
async fn run_child(child: &mut Child, env: &ChildEnv) -> Finished {
    child.run(env).await;
    child.finished()
}
