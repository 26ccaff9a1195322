//! One subagent's session: a small loop of requests and tool calls on a history of its own, with
//! the main thread's plumbing — `stream_with_retry` for every request (retries, the replay of a
//! broken stream, the idle timeout), `tools::run` and `tools::for_model` for every call (masking,
//! the tool-result budget and spill), a transcript under the run like any session's.
//!
//! What it does not share with the main thread: its context (counted against its own window,
//! never in the main gauge), its iteration budget, and its end. It stops when it answers without
//! tools (that answer is its report); at its handoff line or at the end of its budget it is
//! asked for its report in one last request without tools; when the provider says its context
//! overflowed, or a request fails for good, or the user stops it, flower-tui writes the report
//! from what it read and ran.
//!
//! Cancel-safe: the engine aborts a child by dropping the future of [`Child::run`]; the child
//! then answers the calls it had started (in its history and transcript) and says it ended, in
//! [`Child::interrupt`], which its `Drop` runs too.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio::sync::mpsc;

use super::report::{self, CallNote, EarlyStop};
use super::{
    ChildTools, SubagentEvent, SubagentOutcome, SubagentPhase, TaskInput, TranscriptEvent,
};
use crate::engine::context::{self, Thresholds};
use crate::engine::fsutil::new_id;
use crate::engine::jobs::{JobLimits, Jobs};
use crate::engine::ledger::{
    RunDir, SessionHeader, SubagentOf, SubagentRecord, Transcript, TranscriptLine, now_stamp,
};
use crate::engine::provider::retry::{RetryPolicy, StreamNotice, stream_with_retry};
use crate::engine::provider::{ErrorKind as ProviderErrorKind, Provider, ProviderError};
use crate::engine::tools::{self, Spiller, ToolCtx, ToolOutput};
use crate::engine::types::{
    Block, Delta, Effort, Message, ModelRequest, ModelResponse, Role, ToolChoice, Usage,
    append_message,
};

/// Characters of a tool result shown in its `tool_result` phase.
const RESULT_PREVIEW: usize = 400;
/// At its task's end, how long its jobs have between `SIGTERM` and `SIGKILL` at most.
const JOBS_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// What the children of one batch share: the parent's provider, model and plumbing.
pub struct ChildEnv {
    pub provider: Arc<dyn Provider>,
    pub model: String,
    /// The child's whole system prompt ([`super::system_prompt`]).
    pub system: String,
    /// The child's own window and handoff line.
    pub thresholds: Thresholds,
    pub max_iterations: u32,
    pub max_tokens: u32,
    pub effort: Option<Effort>,
    pub retry: RetryPolicy,
    pub tools: ChildTools,
    /// The limits of its own background jobs (the parent's).
    pub jobs: JobLimits,
    /// The workspace, spill folder and bash timeout (each child's session id names its spills).
    pub tool_ctx: ToolCtx,
    pub run_dir: RunDir,
    pub header: ChildHeader,
    /// Where its phases go: the parent session forwards them to the front ends.
    pub events: mpsc::UnboundedSender<SubagentEvent>,
}

/// What every child's transcript header takes from the parent.
#[derive(Debug, Clone)]
pub struct ChildHeader {
    pub parent_session: String,
    pub generation: u32,
    pub step: String,
    pub provider: String,
    pub workspace: PathBuf,
}

/// A child that is over (or never started), for the parent: the `task` call's result, and the
/// ledger's record of the child (None when it never started).
#[derive(Debug, Clone)]
pub struct Finished {
    pub call_id: String,
    pub output: ToolOutput,
    pub record: Option<SubagentRecord>,
}

/// How the loop ended, before the report is put together.
struct Ending {
    outcome: SubagentOutcome,
    /// The child's last reply (its report, when it wrote one).
    reply: Option<String>,
    /// What went wrong, for a mechanical report.
    detail: Option<String>,
}

impl Ending {
    fn failed(e: &ProviderError) -> Ending {
        let outcome = if e.kind == ProviderErrorKind::ContextWindowExceeded {
            SubagentOutcome::Overflow
        } else {
            SubagentOutcome::Error(e.kind.into())
        };
        Ending {
            outcome,
            reply: None,
            detail: Some(e.message.clone()),
        }
    }
}

/// One subagent.
pub struct Child {
    call_id: String,
    task: TaskInput,
    model: String,
    parent_session: String,
    events: mpsc::UnboundedSender<SubagentEvent>,
    session_id: String,
    /// When it started (None: it has not, it waits for a free place).
    started: Option<(Instant, String)>,
    messages: Vec<Message>,
    transcript: Transcript,
    spiller: Spiller,
    /// The last context its provider reported, and what was appended since (estimated).
    ctx: u64,
    appended_chars: usize,
    usage: Usage,
    cost_usd: f64,
    calls: Vec<CallNote>,
    /// Results of the calls of its last reply so far (an interrupt keeps them).
    pending: Vec<Block>,
    last_text: String,
    iterations: u32,
    /// How it ended and the report the parent gets; None while it runs.
    result: Option<(SubagentOutcome, String)>,
    elapsed_ms: u64,
    /// Its background jobs: they end with its task (stopped at its end, killed when it is
    /// dropped).
    jobs: Option<Jobs>,
    /// The jobs still running when its task ended, stopped then (for the report).
    stopped_jobs: Vec<String>,
}

impl Child {
    /// A child for the `task` call `call_id`; nothing starts until [`Child::run`].
    pub fn new(call_id: &str, task: TaskInput, env: &ChildEnv) -> Child {
        Child {
            call_id: call_id.to_string(),
            task,
            model: env.model.clone(),
            parent_session: env.header.parent_session.clone(),
            events: env.events.clone(),
            session_id: new_id(),
            started: None,
            messages: Vec::new(),
            transcript: Transcript::disabled(),
            spiller: Spiller::new(),
            ctx: 0,
            appended_chars: 0,
            usage: Usage::default(),
            cost_usd: 0.0,
            calls: Vec::new(),
            pending: Vec::new(),
            last_text: String::new(),
            iterations: 0,
            result: None,
            elapsed_ms: 0,
            jobs: None,
            stopped_jobs: Vec::new(),
        }
    }

    /// The `task` call it answers.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// Run the child to its end. Dropping the future aborts it (see [`Child::interrupt`]).
    pub async fn run(&mut self, env: &ChildEnv) {
        self.open(env);
        let ending = self.work(env).await;
        self.stop_jobs(env).await;
        self.close(ending);
    }

    /// Its task ended: every job it left running is stopped (`SIGTERM`, then `SIGKILL`).
    async fn stop_jobs(&mut self, env: &ChildEnv) {
        let Some(jobs) = &self.jobs else { return };
        self.stopped_jobs = jobs
            .list(0)
            .iter()
            .filter(|j| j.state.is_running())
            .map(|j| crate::engine::jobs::named(j.id, &j.command))
            .collect();
        jobs.stop_all(env.jobs.grace.min(JOBS_GRACE)).await;
    }

    /// Stop a child that has not ended: answer the calls it had started, record the end. A child
    /// that never started stays so (its `task` call is answered "not run").
    pub fn interrupt(&mut self) {
        if self.started.is_none() || self.result.is_some() {
            return;
        }
        let unanswered: Vec<String> = match self.messages.last() {
            Some(last) if last.role == Role::Assistant => {
                let done: HashSet<&str> = self
                    .pending
                    .iter()
                    .filter_map(|b| match b {
                        Block::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
                        _ => None,
                    })
                    .collect();
                last.tool_uses()
                    .map(|(id, _, _)| id)
                    .filter(|id| !done.contains(id))
                    .map(str::to_string)
                    .collect()
            }
            _ => Vec::new(),
        };
        let mut content = std::mem::take(&mut self.pending);
        content.extend(unanswered.into_iter().map(|id| Block::ToolResult {
            tool_use_id: id,
            content: "interrupted by the user: this call did not finish".into(),
            is_error: true,
        }));
        if !content.is_empty() {
            self.push(Message {
                role: Role::User,
                content,
            });
        }
        self.close(Ending {
            outcome: SubagentOutcome::Interrupted,
            reply: None,
            detail: None,
        });
    }

    /// The parent's view of the child once it is over: the `task` result and its record.
    pub fn finished(&self) -> Finished {
        let Some((outcome, report)) = &self.result else {
            return Finished {
                call_id: self.call_id.clone(),
                output: ToolOutput::error(
                    "not run: the user interrupted the turn before this subagent started",
                ),
                record: None,
            };
        };
        let output = if outcome.is_error() {
            ToolOutput::error(report.clone())
        } else {
            ToolOutput::ok(report.clone())
        };
        let record = SubagentRecord {
            session_id: self.session_id.clone(),
            parent_session: self.parent_session.clone(),
            call_id: self.call_id.clone(),
            description: self.task.description.clone(),
            model: self.model.clone(),
            started: self
                .started
                .as_ref()
                .map(|(_, at)| at.clone())
                .unwrap_or_default(),
            outcome: outcome.to_string(),
            usage: self.usage,
            context: self.ctx,
            cost_usd: self.cost_usd,
            tool_calls: u32::try_from(self.calls.len()).unwrap_or(u32::MAX),
            elapsed_ms: self.elapsed_ms,
            transcript: PathBuf::from("sessions").join(format!("{}.jsonl", self.session_id)),
        };
        Finished {
            call_id: self.call_id.clone(),
            output,
            record: Some(record),
        }
    }

    /// Start the session: its transcript (a header naming the parent session and the `task`
    /// call), the `start` phase, the prompt as its first message.
    fn open(&mut self, env: &ChildEnv) {
        let at = now_stamp();
        self.started = Some((Instant::now(), at.clone()));
        let header = SessionHeader {
            session_id: self.session_id.clone(),
            parent_session: Some(env.header.parent_session.clone()),
            generation: env.header.generation,
            step: env.header.step.clone(),
            model: env.model.clone(),
            provider: env.header.provider.clone(),
            started: at,
            workspace: env.header.workspace.clone(),
            subagent: Some(SubagentOf {
                call_id: self.call_id.clone(),
                description: self.task.description.clone(),
            }),
        };
        let path = env.run_dir.transcript_path(&self.session_id);
        self.transcript = Transcript::create(path.clone(), &header);
        if env.tools.bash {
            let dir = crate::engine::jobs::dir_in(&env.run_dir.root)
                .join(format!("subagent-{}", self.session_id));
            self.jobs = Some(Jobs::new(dir, env.jobs, false));
        }
        tracing::info!(
            subagent = %self.call_id,
            session = %self.session_id,
            model = %env.model,
            window = env.thresholds.window,
            "subagent started: {}",
            self.task.description
        );
        self.emit(SubagentPhase::Start {
            id: self.call_id.clone(),
            description: self.task.description.clone(),
            session_id: self.session_id.clone(),
            parent_session: env.header.parent_session.clone(),
            model: env.model.clone(),
            tools: env.tools.names(),
            window: env.thresholds.window,
            transcript: path,
        });
        let prompt = Message::user(self.task.prompt.clone());
        self.push(prompt);
    }

    /// The loop: requests and tool calls until it answers without tools or must stop.
    async fn work(&mut self, env: &ChildEnv) -> Ending {
        loop {
            if self.iterations >= env.max_iterations {
                let stop = EarlyStop::Budget {
                    n: self.iterations,
                    max: env.max_iterations,
                };
                return self.report_early(env, stop).await;
            }
            // Its own handoff line: the report is asked for while there is room to write it.
            if self.iterations > 0 && self.ctx_estimate() >= env.thresholds.at {
                return self.report_early(env, EarlyStop::ContextFull).await;
            }
            self.iterations += 1;
            // Its jobs that ended since its last request are told in this one.
            if let Some(notice) = self.jobs.as_ref().and_then(Jobs::take_notice) {
                self.push(Message::user(notice));
            }
            let resp = match self.request(env, ToolChoice::Auto).await {
                Ok(r) => r,
                Err(e) => return Ending::failed(&e),
            };
            let msg = resp.message();
            let text = msg.text();
            if !msg.content.is_empty() {
                self.push(msg.clone());
            }
            self.account(env, &resp);
            self.note_text(&text);
            if !msg.has_tool_use() {
                return Ending {
                    outcome: SubagentOutcome::Completed,
                    reply: Some(text),
                    detail: None,
                };
            }
            self.run_tools(env, &msg).await;
        }
    }

    /// The child's mini handoff: one last request without tools asks for its report.
    async fn report_early(&mut self, env: &ChildEnv, stop: EarlyStop) -> Ending {
        self.push(Message::user(stop.ask()));
        match self.request(env, ToolChoice::None).await {
            Ok(resp) => {
                // A tool call sent anyway is dropped: only the text is kept.
                let text = resp.text();
                if !text.is_empty() {
                    self.push(Message::assistant(text.clone()));
                }
                self.account(env, &resp);
                self.note_text(&text);
                Ending {
                    outcome: stop.outcome(),
                    reply: Some(text),
                    detail: None,
                }
            }
            Err(e) => Ending::failed(&e),
        }
    }

    /// One request on the child's history, through the same retries as the main thread's.
    async fn request(
        &mut self,
        env: &ChildEnv,
        tool_choice: ToolChoice,
    ) -> Result<ModelResponse, ProviderError> {
        let req = ModelRequest {
            model: env.model.clone(),
            system: env.system.clone(),
            messages: self.messages.clone(),
            tools: env.tools.specs(),
            tool_choice,
            max_tokens: env.max_tokens,
            effort: env.effort,
        };
        // Its text is not streamed to the front end: each reply arrives whole as a `text` phase.
        let mut sink = |_: Delta| {};
        let who = format!("subagent {}", self.call_id);
        let mut on_notice = move |n: StreamNotice| {
            if let StreamNotice::Retry(n) = n {
                n.log(&who);
            }
        };
        stream_with_retry(&*env.provider, &req, &mut sink, &env.retry, &mut on_notice).await
    }

    /// Run the calls of one reply in order; their results become one message.
    async fn run_tools(&mut self, env: &ChildEnv, msg: &Message) {
        let calls: Vec<(String, String, Value)> = msg
            .tool_uses()
            .map(|(id, name, input)| (id.to_string(), name.to_string(), input.clone()))
            .collect();
        self.pending.clear();
        let ctx = ToolCtx {
            session_id: self.session_id.clone(),
            allow_outside: false,
            ..env.tool_ctx.clone()
        };
        for (id, name, input) in calls {
            let summary = tools::summary(&name, &input);
            self.calls.push(CallNote {
                summary: summary.clone(),
                failed: None,
            });
            self.emit(SubagentPhase::ToolCall {
                id: self.call_id.clone(),
                call_id: id.clone(),
                name: name.clone(),
                summary,
                calls: u32::try_from(self.calls.len()).unwrap_or(u32::MAX),
            });
            let out = match (
                ctx.denied.call(&name, &input),
                env.tools.check(&name, &input, &ctx),
            ) {
                // The settings' deny rules hold for a subagent as for the parent.
                (Some(rule), _) => ToolOutput::error(format!(
                    "denied by the permission rule `{rule}` in the user's or the workspace's \
                     settings; do not try this call another way."
                )),
                (None, Ok(())) => self.run_tool(&name, &input, &ctx).await,
                (None, Err(e)) => ToolOutput::from(e),
            };
            let out = tools::for_model(&name, out, &ctx, &mut self.spiller);
            if let Some(note) = self.calls.last_mut() {
                note.failed = Some(out.is_error);
            }
            self.emit(SubagentPhase::ToolResult {
                id: self.call_id.clone(),
                call_id: id.clone(),
                name,
                is_error: out.is_error,
                output: crate::engine::text::truncate_chars(&out.content, RESULT_PREVIEW),
                chars: out.content.chars().count(),
            });
            self.pending.push(Block::ToolResult {
                tool_use_id: id.clone(),
                content: out.content,
                is_error: out.is_error,
            });
            // An image a call read (`read_file` of one) goes with its result.
            self.pending
                .extend(out.images.into_iter().map(|image| Block::Image {
                    image,
                    tool_use_id: Some(id.clone()),
                }));
        }
        let results = std::mem::take(&mut self.pending);
        self.push(Message {
            role: Role::User,
            content: results,
        });
    }

    /// One call it may make: a background `bash` or a job tool on its own jobs, else the tool.
    async fn run_tool(&self, name: &str, input: &Value, ctx: &ToolCtx) -> ToolOutput {
        if let Some(jobs) = &self.jobs {
            if name == tools::names::BASH && crate::engine::jobs::is_background(input) {
                return jobs.run_start(input, ctx).await;
            }
            if let Some(out) = jobs.run_tool(name, input).await {
                return out;
            }
        }
        tools::run(name, input, ctx).await
    }

    /// A response's usage: its context, its cost.
    fn account(&mut self, env: &ChildEnv, resp: &ModelResponse) {
        self.ctx = resp.usage.context();
        self.appended_chars = 0;
        self.usage += resp.usage;
        self.cost_usd += crate::engine::pricing::cost_usd(&env.model, &resp.usage);
        self.emit(SubagentPhase::Usage {
            id: self.call_id.clone(),
            context: self.ctx,
            usage: resp.usage,
            cost_usd: self.cost_usd,
        });
    }

    fn note_text(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        self.last_text = text.to_string();
        // Its replies are in its transcript as messages: the phase goes to the front end only.
        let _ = self.events.send(SubagentEvent::Phase(SubagentPhase::Text {
            id: self.call_id.clone(),
            text: text.to_string(),
        }));
    }

    /// Its context now: the last report plus an estimate of what was appended since.
    fn ctx_estimate(&self) -> u64 {
        self.ctx + context::estimate_tokens(self.appended_chars)
    }

    fn push(&mut self, msg: Message) {
        self.appended_chars += msg.char_len();
        self.transcript.append(&TranscriptLine::Message {
            message: msg.clone(),
        });
        append_message(&mut self.messages, msg);
    }

    /// Tell the front end (through the parent), and keep it in the transcript.
    fn emit(&mut self, phase: SubagentPhase) {
        if let Ok(v) = serde_json::to_value(TranscriptEvent::Subagent(&phase)) {
            self.transcript.append(&TranscriptLine::Event { event: v });
        }
        if let Some(message) = self.transcript.take_error() {
            let _ = self.events.send(SubagentEvent::Warning {
                message: format!(
                    "subagent \"{}\": {message}; it goes on but is no longer recorded",
                    self.task.description
                ),
            });
        }
        let _ = self.events.send(SubagentEvent::Phase(phase));
    }

    /// The end: the report put together, the `end` phase sent and recorded.
    fn close(&mut self, ending: Ending) {
        let mut report = report::result_text(ending.outcome, ending.reply.as_deref(), |why| {
            report::mechanical(
                &self.task.description,
                why,
                &self.calls,
                &self.last_text,
                ending.detail.as_deref(),
            )
        });
        if !self.stopped_jobs.is_empty() {
            report.push_str(&format!(
                "\n\n[flower-tui: the subagent's background jobs were stopped when its task ended: \
                 {}]",
                self.stopped_jobs.join(", ")
            ));
        }
        self.elapsed_ms = self.started.as_ref().map_or(0, |(t, _)| {
            u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX)
        });
        tracing::info!(
            subagent = %self.call_id,
            session = %self.session_id,
            outcome = %ending.outcome,
            tool_calls = self.calls.len(),
            iterations = self.iterations,
            context = self.ctx,
            cost_usd = self.cost_usd,
            ms = self.elapsed_ms,
            "subagent ended"
        );
        let phase = SubagentPhase::End {
            id: self.call_id.clone(),
            session_id: self.session_id.clone(),
            outcome: ending.outcome,
            usage: self.usage,
            context: self.ctx,
            cost_usd: self.cost_usd,
            tool_calls: u32::try_from(self.calls.len()).unwrap_or(u32::MAX),
            iterations: self.iterations,
            elapsed_ms: self.elapsed_ms,
            report_chars: report.chars().count(),
        };
        self.result = Some((ending.outcome, report));
        self.emit(phase);
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        // Dropped mid-run (shutdown): its transcript still ends with every call answered.
        self.interrupt();
    }
}
