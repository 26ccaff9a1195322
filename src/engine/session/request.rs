//! One model request, streamed, abortable by `Op::Abort`, with retries surfaced as events.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::ActiveTurn;
use super::Engine;
use crate::engine::protocol::{
    Event, ExitReason, HandoffPhase, HandoffRefusal, Op, StreamState, TurnId, TurnKind,
};
use crate::engine::provider::ProviderError;
use crate::engine::provider::retry::{StreamNotice, stream_with_retry};
use crate::engine::types::{Delta, Message, ModelRequest, ModelResponse, ToolChoice};

/// How a request ended.
pub(crate) enum Outcome {
    Done(ModelResponse),
    /// The request failed; `partial` is the text that had already streamed to the user.
    Failed {
        error: ProviderError,
        partial: String,
    },
    /// Esc (or shutdown): the request was dropped; `partial` is the text streamed so far.
    Aborted {
        partial: String,
    },
}

/// What a model request is for (its text reaches the user only for `Main`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// A main-thread request of a turn.
    Main,
    /// The handoff writing turn.
    Handoff,
    /// A compaction summary.
    Summary,
}

impl Purpose {
    fn as_str(self) -> &'static str {
        match self {
            Purpose::Main => "main",
            Purpose::Handoff => "handoff",
            Purpose::Summary => "summary",
        }
    }
}

/// An op that stops the work in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// `Op::Abort` of the running turn.
    Abort,
    /// `Op::Shutdown`, or the front end is gone (remembered in `Engine::shutdown`).
    Shutdown,
}

impl Engine {
    /// Run `fut` while listening for ops: an abort of the running turn drops it (None), as does
    /// shutdown (which is remembered); other ops are sorted by [`Engine::triage`]. A background
    /// handoff's writing result is handled as it arrives (frozen, rescued), never dropping `fut`.
    pub(crate) async fn abortable<F: std::future::Future>(&mut self, fut: F) -> Option<F::Output> {
        tokio::pin!(fut);
        loop {
            tokio::select! {
                out = &mut fut => return Some(out),
                op = self.inbox.ops.recv() => if self.triage(op).is_some() {
                    return None;
                },
                Some(w) = self.handoff.results.recv() => self.on_background(w),
            }
        }
    }

    /// An op that arrived while something runs. Returns what stops the running work; answers a
    /// `/handoff` during a writing turn at once (refused); queues the rest in `pending` for the
    /// engine's loop.
    pub(crate) fn triage(&mut self, op: Option<Op>) -> Option<Stop> {
        match op {
            Some(Op::Shutdown) | None => {
                self.inbox.shutdown = true;
                Some(Stop::Shutdown)
            }
            Some(Op::Abort { turn }) => self.on_abort(turn),
            // The step's memory changes at once, also mid-turn: a pin made now reaches the next
            // successor even if the handoff comes before the turn ends.
            Some(op @ (Op::Pin { .. } | Op::Unpin { .. } | Op::SetFocus { .. })) => {
                self.on_memory_op(op);
                None
            }
            Some(Op::McpRestart { name }) => {
                self.restart_mcp(&name);
                None
            }
            Some(Op::SetMode { mode }) => {
                self.set_mode(mode);
                None
            }
            Some(Op::McpJsonDecision { sha256, approve }) => {
                self.decide_mcp_json(&sha256, approve);
                None
            }
            Some(Op::HooksDecision { sha256, approve }) => {
                self.decide_hooks(&sha256, approve);
                None
            }
            Some(Op::Handoff { turn, .. }) if self.handoff.writing().is_some() => {
                self.refuse_handoff(turn, HandoffRefusal::AlreadyWriting);
                None
            }
            Some(Op::Handoff { turn, .. }) if self.handoff.background().is_some() => {
                // Queued behind the running turn, it would be refused then: say it now.
                self.refuse_handoff(turn, HandoffRefusal::Reviewing);
                None
            }
            Some(
                op @ (Op::CancelHandoff { .. } | Op::ReviewDone { .. } | Op::UnsavedEdits { .. }),
            ) if self.handoff.background().is_some() => {
                self.background_op(op);
                None
            }
            // Questions and revocations are answered at once, also in the middle of a turn.
            Some(Op::Permissions) => {
                self.emit(self.permissions_event());
                None
            }
            Some(Op::Cost) => {
                self.emit(self.cost_event());
                None
            }
            Some(Op::RewindPoints) => {
                self.emit(self.rewind_points());
                None
            }
            Some(Op::ListSessions) => {
                self.emit(self.sessions_event());
                None
            }
            Some(Op::Revoke { rule }) => {
                self.revoke(rule);
                None
            }
            Some(other) => {
                self.inbox.pending.push_back(other);
                None
            }
        }
    }

    /// `Op::Abort { turn }`: stops the running turn; drops a queued one (which ends at once,
    /// interrupted); an abort of a turn that is over is stale and ignored.
    pub(crate) fn on_abort(&mut self, turn: TurnId) -> Option<Stop> {
        if self.turn.is_some_and(|t| t.id == turn) {
            // Esc kills the background handoff's hooks too.
            self.abort_background_hooks();
            return Some(Stop::Abort);
        }
        let queued = self
            .inbox
            .pending
            .iter()
            .position(|op| op.starts_turn() == Some(turn))
            .and_then(|i| self.inbox.pending.remove(i));
        if let Some(op) = queued {
            let kind = match op {
                Op::Handoff { .. } => TurnKind::Handoff,
                Op::Init { .. } => TurnKind::Init,
                _ => TurnKind::Message,
            };
            self.end_turn(ActiveTurn::new(turn, kind), ExitReason::Interrupted);
        }
        None
    }

    /// Decline a `/handoff` turn: say why, and end it.
    pub(crate) fn refuse_handoff(&mut self, turn: TurnId, reason: HandoffRefusal) {
        self.emit(Event::Handoff(HandoffPhase::Refused {
            reason,
            message: reason.to_string(),
        }));
        self.end_turn(
            ActiveTurn::new(turn, TurnKind::Handoff),
            ExitReason::Unchanged,
        );
    }

    /// `/mcp restart NAME`.
    pub(crate) fn restart_mcp(&mut self, name: &str) {
        let message = match &self.run.mcp {
            None => "no MCP servers are configured ([mcp_servers.NAME] in config.toml, or an \
                     approved .mcp.json)"
                .to_string(),
            Some(mcp) => match mcp.restart(name) {
                Ok(()) => format!("restarting MCP server `{name}`"),
                Err(e) => e.to_string(),
            },
        };
        self.emit_logged(Event::Notice { message });
    }

    /// The user's answer about the workspace's `.mcp.json`: recorded for this workspace and
    /// version of the file (asked again when it changes), then its servers start or stay off.
    pub(crate) fn decide_mcp_json(&mut self, sha256: &str, approve: bool) {
        use crate::engine::mcp::{ApprovalStore, Decision};
        let Some(mcp) = self.run.mcp.clone() else {
            return;
        };
        let Some(project) = mcp.decide_project(sha256, approve) else {
            // Answered already, or about another version of the file: nothing waits for it.
            return;
        };
        let decision = if approve {
            Decision::Approved
        } else {
            Decision::Denied
        };
        let store = ApprovalStore::new(&self.run.places.data_dir);
        if let Err(e) = store.record_digest(&self.run.places.workspace, sha256, decision) {
            self.emit(Event::Warning {
                message: format!(
                    "could not record the decision about {} in {}: {e} (you will be asked again)",
                    project.path.display(),
                    store.path().display()
                ),
            });
        }
        let message = if approve {
            format!(
                "{} approved for this workspace: starting its MCP servers",
                project.path.display()
            )
        } else {
            format!(
                "{} declined: its MCP servers stay off (asked again when the file changes)",
                project.path.display()
            )
        };
        self.emit_logged(Event::Notice { message });
    }

    /// Before a request: wait for MCP servers still starting, each at most until its
    /// `startup_timeout` (a later one is offered from a later request). The front end is told
    /// which ones it waits for as that changes. False: the user aborted.
    pub(crate) async fn wait_for_mcp(&mut self) -> bool {
        let Some(mcp) = self.run.mcp.clone() else {
            return true;
        };
        let starting = mcp.starting();
        if starting.is_empty() {
            return true;
        }
        let names: Vec<String> = starting
            .iter()
            .map(|s| format!("{} (up to {} s)", s.name, s.timeout.as_secs_f64().ceil()))
            .collect();
        self.emit_logged(Event::Notice {
            message: format!("Waiting for MCP servers to start: {}", names.join(", ")),
        });
        let mut shown: Vec<String> = Vec::new();
        loop {
            let waiting: Vec<String> = mcp.starting().into_iter().map(|s| s.name).collect();
            if waiting != shown {
                self.emit(Event::McpWaiting {
                    servers: waiting.clone(),
                });
                shown.clone_from(&waiting);
            }
            if waiting.is_empty() {
                return true;
            }
            let next = mcp.clone();
            if self
                .abortable(async move { next.startup_progress().await })
                .await
                .is_none()
            {
                self.emit(Event::McpWaiting {
                    servers: Vec::new(),
                });
                return false;
            }
        }
    }

    /// The built-in tools, the step's own (`todo`, and `recall` for a successor), `task`, then
    /// the tools of every ready MCP server (a server that became ready since the last request is
    /// offered from this one on).
    pub(crate) fn tool_specs(&self) -> Vec<crate::engine::types::ToolSpec> {
        let mut specs = crate::engine::tools::specs();
        specs.extend(self.step_tool_specs());
        specs.push(crate::engine::subagent::spec(self.child_tools()));
        if !self.run.extensions.skills.is_empty() {
            specs.push(crate::engine::skills::SkillCatalog::tool_spec());
        }
        if let Some(mcp) = &self.run.mcp {
            specs.extend(mcp.tool_specs());
        }
        let mut specs = self.tools_for_mode(specs);
        if self.run.prompt.style.is_lean() {
            crate::engine::tools::lean::compact(&mut specs);
        }
        specs
    }

    /// Build a request on the current session's history (old tool output masked).
    pub(crate) fn build_request(&mut self, tool_choice: ToolChoice) -> ModelRequest {
        ModelRequest {
            messages: self.request_messages(),
            model: self.settings.model.clone(),
            system: self.system_for_mode(),
            tools: self.tool_specs(),
            tool_choice,
            max_tokens: self.output_cap(),
            effort: self.settings.effort,
        }
    }

    /// Stream `req`; only a main request's text goes to the front end. Logged with its number,
    /// purpose, retries, outcome and duration.
    pub(crate) async fn stream(&mut self, req: ModelRequest, purpose: Purpose) -> Outcome {
        self.counters.requests += 1;
        let number = self.counters.requests;
        let started = std::time::Instant::now();
        tracing::debug!(
            request = number,
            purpose = purpose.as_str(),
            session = %self.s.id,
            messages = req.messages.len(),
            tool_choice = ?req.tool_choice,
            "request sent"
        );
        let sent = (purpose == Purpose::Main).then(|| request_chars(&req));
        let outcome = self
            .stream_inner(req, purpose == Purpose::Main, number)
            .await;
        let outcome = self.after_reply(outcome, sent, purpose);
        let ms = started.elapsed().as_millis();
        match &outcome {
            Outcome::Done(resp) => tracing::info!(
                request = number,
                purpose = purpose.as_str(),
                ms,
                input = resp.usage.input_tokens,
                cache_read = resp.usage.cache_read_input_tokens,
                cache_write = resp.usage.cache_creation_input_tokens,
                output = resp.usage.output_tokens,
                stop = resp.stop_reason.as_deref().unwrap_or("-"),
                "request done"
            ),
            Outcome::Failed { error, partial } => tracing::warn!(
                request = number,
                purpose = purpose.as_str(),
                ms,
                kind = error.kind.as_str(),
                status = error.status.unwrap_or(0),
                streamed_chars = partial.len(),
                "request failed: {}",
                error.message
            ),
            Outcome::Aborted { partial } => tracing::info!(
                request = number,
                purpose = purpose.as_str(),
                ms,
                streamed_chars = partial.len(),
                "request aborted"
            ),
        }
        outcome
    }

    /// A try that broke after showing text is replayed: the front end is told to drop what it
    /// showed, and `partial` only ever holds the text of the latest try.
    async fn stream_inner(&mut self, req: ModelRequest, visible: bool, number: u64) -> Outcome {
        let provider = self.run.provider.client.clone();
        let policy = self.run.provider.retry;
        let events = self.run.events.clone();
        let turn = self.turn_id();
        let notice_events = self.run.events.clone();
        // The sink and the notice handler both reach the text of the current try.
        let partial = Mutex::new(String::new());
        let shown = AtomicBool::new(false);
        let silent = AtomicBool::new(false);
        let mut sink = |d: Delta| match d {
            Delta::Text(t) => {
                lock(&partial).push_str(&t);
                if visible {
                    shown.store(true, Ordering::Relaxed);
                    let _ = events.send(Event::TextDelta { turn, text: t });
                }
            }
            Delta::Thinking(t) => {
                if visible {
                    shown.store(true, Ordering::Relaxed);
                    let _ = events.send(Event::ThinkingDelta { text: t });
                }
            }
            Delta::ToolUseStart { .. } | Delta::Alive => {}
        };
        let mut on_notice = |n: StreamNotice| match n {
            StreamNotice::Retry(n) => {
                n.log(&number);
                if n.discarded {
                    let chars = std::mem::take(&mut *lock(&partial)).chars().count();
                    if shown.swap(false, Ordering::Relaxed) {
                        let _ = notice_events.send(Event::Stream(StreamState::Discarded { chars }));
                    }
                }
                let _ = notice_events.send(Event::Retry {
                    attempt: n.attempt,
                    max: n.max,
                    reason: n.reason,
                    delay_ms: u64::try_from(n.delay.as_millis()).unwrap_or(u64::MAX),
                });
            }
            StreamNotice::Silent(d) => {
                tracing::info!(
                    request = number,
                    silent_ms = d.as_millis(),
                    "provider silent"
                );
                silent.store(true, Ordering::Relaxed);
                let _ = notice_events.send(Event::Stream(StreamState::Silent {
                    silent_ms: u64::try_from(d.as_millis()).unwrap_or(u64::MAX),
                }));
            }
            StreamNotice::Resumed => {
                silent.store(false, Ordering::Relaxed);
                let _ = notice_events.send(Event::Stream(StreamState::Resumed));
            }
            StreamNotice::ImagesLeftOut { reason } => {
                let _ = notice_events.send(Event::Notice {
                    message: format!(
                        "images left out: {reason}; the conversation goes on without them (each \
                         is named in its place, and the transcript keeps it)"
                    ),
                });
            }
        };
        let result = self
            .abortable(stream_with_retry(
                &*provider,
                &req,
                &mut sink,
                &policy,
                &mut on_notice,
            ))
            .await;
        if silent.load(Ordering::Relaxed) {
            // Aborted while silent: nothing else would close the silence.
            self.emit(Event::Stream(StreamState::Resumed));
        }
        let partial = partial.into_inner().unwrap_or_else(|p| p.into_inner());
        match result {
            Some(Ok(resp)) => {
                if shown.load(Ordering::Relaxed) {
                    self.take_back(&resp, partial.chars().count());
                }
                Outcome::Done(resp)
            }
            Some(Err(error)) => Outcome::Failed { error, partial },
            None => Outcome::Aborted { partial },
        }
    }
}

fn lock(m: &Mutex<String>) -> MutexGuard<'_, String> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The characters a request sends: system prompt, tool specs and messages, counted as the
/// estimates count them (what a response's prompt tokens are compared with).
fn request_chars(req: &ModelRequest) -> usize {
    let tools = serde_json::to_string(&req.tools).map_or(0, |t| t.len());
    req.system.len() + tools + req.messages.iter().map(Message::char_len).sum::<usize>()
}
