//! One editor session: a task that owns one engine (the same engine and queue pair as the TUI's)
//! and speaks for it. It turns the editor's prompts, cancels and mode changes into `Op`s, the
//! engine's events into `session/update`s ([`super::updates`]), and every question the engine
//! asks (an approval, the handoff's review, an unapproved `.mcp.json` or hooks file) into a
//! `session/request_permission` whose answer goes back as an `Op`.
//!
//! The editor's session id is the run's id: it stays the same across every generation of the
//! run, and `session/load` (or the terminal's `--resume RUN_ID`) continues the run from its
//! ledger, the whole thread replayed first ([`super::thread`]). One prompt runs at a time; a
//! second one while a turn runs is refused.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    PermissionOption, PromptResponse, RequestPermissionOutcome, RequestPermissionRequest,
    SessionId, SessionNotification, SessionUpdate, SetSessionModeResponse, StopReason, ToolCall,
    ToolCallStatus, ToolCallUpdate,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode};
use tokio::sync::{mpsc, oneshot};

use super::permission::{self, Asked};
use super::updates::Mapper;
use crate::engine::commands::Catalog;
use crate::engine::mcp::McpManager;
use crate::engine::policy::Mode;
use crate::engine::protocol::{Event, ExitReason, HandoffId, HandoffPhase, Op, TurnId};
use crate::engine::session::EngineHandle;

/// What the agent tells a session.
pub(super) enum Command {
    Prompt {
        text: String,
        responder: Responder<PromptResponse>,
    },
    Cancel,
    SetMode {
        mode: Mode,
        responder: Responder<SetSessionModeResponse>,
    },
    /// The editor went away (or a signal came): abort the turn, stop the engine, then answer.
    Shutdown(oneshot::Sender<()>),
}

/// An answer the editor gave to a question the session asked.
enum Answer {
    Approval {
        id: String,
        outcome: Option<RequestPermissionOutcome>,
    },
    Reviewed(HandoffId),
    McpJson {
        sha256: String,
        approve: bool,
    },
    Hooks {
        sha256: String,
        approve: bool,
    },
}

/// The prompt whose turn runs.
struct Running {
    turn: TurnId,
    responder: Responder<PromptResponse>,
    /// The engine's error, when the turn fails.
    failure: Option<String>,
}

/// How a session starts.
pub(super) struct Start {
    pub(super) id: SessionId,
    pub(super) cx: ConnectionTo<Client>,
    pub(super) engine: EngineHandle,
    pub(super) workspace: PathBuf,
    /// Seconds of the review window; None: the engine does not wait for a review.
    pub(super) review_secs: Option<u64>,
    /// Send the events of the start and the whole thread of the run (`session/load`).
    pub(super) replay: bool,
    /// The run's directory (its ledger, for the thread).
    pub(super) run_root: PathBuf,
    pub(super) notices: bool,
    pub(super) mcp: Option<Arc<McpManager>>,
    pub(super) commands: Arc<Catalog>,
    /// The editor's terminals shown in tool calls (commands run there with the sandbox off).
    pub(super) terminals: super::terminal::TerminalCalls,
    /// Kept until the session ends: the demo's scratch workspace, the claim on the run.
    pub(super) keep: (Option<crate::engine::demo::Scratch>, super::runs::Claim),
}

/// What the agent keeps of a running session.
pub(super) struct Handle {
    pub(super) commands: mpsc::UnboundedSender<Command>,
    pub(super) task: tokio::task::JoinHandle<()>,
}

/// The session's task and its state.
struct Session {
    id: SessionId,
    cx: ConnectionTo<Client>,
    engine: EngineHandle,
    mapper: Mapper,
    workspace: PathBuf,
    review_secs: Option<u64>,
    next_turn: TurnId,
    running: Option<Running>,
    answers: mpsc::UnboundedSender<Answer>,
    mcp: Option<Arc<McpManager>>,
    catalog: Arc<Catalog>,
    run_root: PathBuf,
}

/// Start the session's task; `ready` fires once the engine has started (and, for `replay`, the
/// conversation so far has been sent), with the working mode in force.
pub(super) fn start(s: Start) -> (Handle, oneshot::Receiver<Mode>) {
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    let (ready_tx, ready_rx) = oneshot::channel();
    let (answer_tx, answer_rx) = mpsc::unbounded_channel();
    let session = Session {
        id: s.id,
        cx: s.cx,
        engine: s.engine,
        mapper: Mapper::new(s.workspace.clone(), s.notices).showing_terminals(s.terminals),
        workspace: s.workspace,
        review_secs: s.review_secs,
        next_turn: TurnId::FIRST,
        running: None,
        answers: answer_tx,
        mcp: s.mcp,
        catalog: s.commands,
        run_root: s.run_root,
    };
    let keep = s.keep;
    let replay = s.replay;
    let task = tokio::spawn(async move {
        session.run(cmd_rx, answer_rx, ready_tx, replay).await;
        drop(keep);
    });
    let handle = Handle {
        commands: cmd_tx,
        task,
    };
    (handle, ready_rx)
}

impl Session {
    async fn run(
        mut self,
        mut commands: mpsc::UnboundedReceiver<Command>,
        mut answers: mpsc::UnboundedReceiver<Answer>,
        ready: oneshot::Sender<Mode>,
        replay: bool,
    ) {
        let Some(mode) = self.starting(ready, replay).await else {
            return self.stop(None).await;
        };
        tracing::info!(session = %self.id.0, mode = mode.as_str(), "acp session ready");
        let done = loop {
            tokio::select! {
                cmd = commands.recv() => match cmd {
                    Some(Command::Shutdown(done)) => break Some(done),
                    Some(cmd) => self.command(cmd).await,
                    None => break None,
                },
                ev = self.engine.events.recv() => match ev {
                    Some(ev) => self.event(ev),
                    None => break None,
                },
                Some(answer) = answers.recv() => self.answer(answer).await,
            }
        };
        self.stop(done).await;
    }

    /// The engine's start: its events until the answer to a `Cost` sent first (the engine answers
    /// ops only once started), then `ready` with the mode in force. None when the engine stopped.
    async fn starting(&mut self, ready: oneshot::Sender<Mode>, replay: bool) -> Option<Mode> {
        let mut mode = Mode::Normal;
        // The whole thread was sent from the ledger: the engine's replay of its latest
        // generation is in it already.
        let mut thread_sent = false;
        self.engine.ops.send(Op::Cost).await.ok()?;
        loop {
            let ev = self.engine.events.recv().await?;
            match &ev {
                Event::Cost { .. } => break,
                Event::Mode { mode: m } => mode = *m,
                Event::Resumed { session_id, .. } if replay => {
                    let thread = super::thread::replay(&self.run_root, session_id, &self.workspace);
                    if let Some(updates) = thread {
                        thread_sent = true;
                        for update in updates {
                            self.send(update);
                        }
                    }
                }
                Event::UserMessage { turn: None, .. } | Event::AssistantDone { turn: None, .. }
                    if thread_sent =>
                {
                    continue;
                }
                _ => {}
            }
            if replay {
                self.event(ev);
            } else {
                // Questions still reach the editor (an unapproved `.mcp.json`, a review left
                // open by an earlier process); the rest of the start is in the log.
                self.question(&ev);
            }
        }
        let _ = ready.send(mode);
        Some(mode)
    }

    async fn command(&mut self, cmd: Command) {
        match cmd {
            Command::Prompt { text, responder } => self.prompt(text, responder).await,
            Command::Cancel => {
                if let Some(r) = &self.running {
                    let _ = self.engine.ops.send(Op::Abort { turn: r.turn }).await;
                }
            }
            Command::SetMode { mode, responder } => {
                let sent = self.engine.ops.send(Op::SetMode { mode }).await;
                let _ = match sent {
                    Ok(()) => responder.respond(SetSessionModeResponse::new()),
                    Err(_) => responder.respond_with_error(stopped()),
                };
            }
            Command::Shutdown(_) => {}
        }
    }

    /// A prompt: one turn, refused while another runs.
    async fn prompt(&mut self, text: String, responder: Responder<PromptResponse>) {
        if self.running.is_some() {
            let _ = responder.respond_with_error(Error::new(
                ErrorCode::INVALID_REQUEST,
                "a prompt is already running in this session: cancel it first",
            ));
            return;
        }
        let turn = self.next_turn;
        self.next_turn = turn.next();
        let op = super::prompt::op(turn, &text, &self.catalog);
        if self.engine.ops.send(op).await.is_err() {
            let _ = responder.respond_with_error(stopped());
            return;
        }
        self.running = Some(Running {
            turn,
            responder,
            failure: None,
        });
    }

    /// One engine event: its updates, its questions, and the end of the prompt's turn.
    fn event(&mut self, ev: Event) {
        for update in self.mapper.updates(&ev) {
            self.send(update);
        }
        self.question(&ev);
        match ev {
            Event::Error { message, .. } => {
                if let Some(r) = &mut self.running {
                    r.failure = Some(message);
                }
            }
            Event::TurnEnd { turn, reason, .. } => self.turn_ended(turn, reason),
            _ => {}
        }
    }

    /// The questions an event asks the user.
    fn question(&self, ev: &Event) {
        match ev {
            Event::ApprovalRequest {
                id,
                name,
                summary,
                outside_workspace,
                command,
                diff,
                always,
                unsandboxed,
            } => {
                let asked = Asked {
                    id,
                    name,
                    summary,
                    command: command.as_deref(),
                    diff: diff.as_deref(),
                    always: always.as_ref(),
                    outside_workspace: *outside_workspace,
                    unsandboxed: unsandboxed.as_deref(),
                };
                let (call, options) = permission::approval_question(&self.workspace, &asked);
                let id = id.clone();
                self.ask(call, options, move |outcome| Answer::Approval {
                    id,
                    outcome,
                });
            }
            Event::Handoff(HandoffPhase::Frozen {
                handoff,
                path,
                awaits_review: true,
                ..
            }) => self.review(*handoff, path.clone()),
            Event::McpJsonApproval {
                path,
                sha256,
                servers,
            } => {
                let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
                let what = format!(
                    "Start the MCP servers of {} ({})?",
                    path.display(),
                    names.join(", ")
                );
                let sha256 = sha256.clone();
                self.trust(&format!("mcp-json-{sha256}"), &what, move |approve| {
                    Answer::McpJson { sha256, approve }
                });
            }
            Event::HooksApproval(q) => {
                let what = format!(
                    "Run the hooks of {}?\n{}",
                    q.path.display(),
                    q.hooks.join("\n")
                );
                let sha256 = q.sha256.clone();
                self.trust(&format!("hooks-{sha256}"), &what, move |approve| {
                    Answer::Hooks { sha256, approve }
                });
            }
            _ => {}
        }
    }

    /// The prompt's turn ended: answer it.
    fn turn_ended(&mut self, turn: TurnId, reason: ExitReason) {
        let Some(running) = self.running.take_if(|r| r.turn == turn) else {
            return;
        };
        let stop = match reason {
            ExitReason::Interrupted => StopReason::Cancelled,
            ExitReason::MaxIterations { .. } => StopReason::MaxTurnRequests,
            ExitReason::Completed | ExitReason::Handoff | ExitReason::Unchanged => {
                StopReason::EndTurn
            }
            ExitReason::Error(kind) => {
                let message = running.failure.unwrap_or_else(|| format!("error: {kind}"));
                let _ = running
                    .responder
                    .respond_with_error(Error::new(ErrorCode::INTERNAL_ERROR, message));
                return;
            }
        };
        let _ = running.responder.respond(PromptResponse::new(stop));
    }

    async fn answer(&mut self, answer: Answer) {
        let op = match answer {
            Answer::Approval { id, outcome } => Op::Approval {
                id,
                decision: permission::decision(outcome.as_ref()),
            },
            Answer::Reviewed(handoff) => Op::ReviewDone { handoff },
            Answer::McpJson { sha256, approve } => Op::McpJsonDecision { sha256, approve },
            Answer::Hooks { sha256, approve } => Op::HooksDecision { sha256, approve },
        };
        let _ = self.engine.ops.send(op).await;
    }

    /// Ask the editor; `then` makes the answer of the outcome (None: no answer came).
    fn ask(
        &self,
        call: ToolCallUpdate,
        options: Vec<PermissionOption>,
        then: impl FnOnce(Option<RequestPermissionOutcome>) -> Answer + Send + 'static,
    ) {
        let request = RequestPermissionRequest::new(self.id.clone(), call, options);
        let (cx, answers) = (self.cx.clone(), self.answers.clone());
        tokio::spawn(async move {
            let outcome = match cx.send_request(request).block_task().await {
                Ok(r) => Some(r.outcome),
                Err(e) => {
                    tracing::warn!("acp: a permission request failed: {e}");
                    None
                }
            };
            let _ = answers.send(then(outcome));
        });
    }

    /// A yes/no question about the workspace's configuration, on a tool call of its own.
    fn trust(&self, id: &str, what: &str, then: impl FnOnce(bool) -> Answer + Send + 'static) {
        self.send(SessionUpdate::ToolCall(
            ToolCall::new(id.to_string(), what).status(ToolCallStatus::Pending),
        ));
        let (call, options) = permission::trust_question(id, what);
        self.ask(call, options, move |outcome| {
            then(permission::decision(outcome.as_ref()) != crate::engine::protocol::Approval::Deny)
        });
    }

    /// The review window of `handoff`: asked until the user continues (or the window's time
    /// passes with no answer, or the editor cannot answer), then the successor starts.
    fn review(&self, handoff: HandoffId, path: Option<PathBuf>) {
        let (cx, answers, id) = (self.cx.clone(), self.answers.clone(), self.id.clone());
        let window = self.review_secs.map(Duration::from_secs);
        tokio::spawn(async move {
            review_rounds(&cx, &id, handoff, path.as_deref(), window).await;
            let _ = answers.send(Answer::Reviewed(handoff));
        });
    }

    fn send(&self, update: SessionUpdate) {
        if let Err(e) = self
            .cx
            .send_notification(SessionNotification::new(self.id.clone(), update))
        {
            tracing::debug!("acp: an update was not sent: {e}");
        }
    }

    /// Abort the turn, stop the engine and its MCP servers (the ledger is written by the engine as
    /// it stops), answer the prompt that was running, then `done`.
    async fn stop(mut self, done: Option<oneshot::Sender<()>>) {
        if let Some(r) = &self.running {
            let _ = self.engine.ops.send(Op::Abort { turn: r.turn }).await;
        }
        let _ = self.engine.ops.send(Op::Shutdown).await;
        while let Some(ev) = self.engine.events.recv().await {
            if let Event::TurnEnd { turn, reason, .. } = ev {
                self.turn_ended(turn, reason);
            }
        }
        let _ = (&mut self.engine.task).await;
        if let Some(r) = self.running.take() {
            let _ = r
                .responder
                .respond(PromptResponse::new(StopReason::Cancelled));
        }
        if let Some(mcp) = self.mcp.take() {
            mcp.shutdown().await;
        }
        tracing::info!(session = %self.id.0, "acp session stopped");
        if let Some(done) = done {
            let _ = done.send(());
        }
    }
}

/// Ask the review question until the user continues. The first round lasts the review window
/// (its time passing is "continue", as in the TUI); "wait" asks again with no time limit, for
/// the user to edit and save the file.
async fn review_rounds(
    cx: &ConnectionTo<Client>,
    id: &SessionId,
    handoff: HandoffId,
    path: Option<&Path>,
    window: Option<Duration>,
) {
    let mut first = true;
    loop {
        let (call, options) = super::handoff::review_question(handoff, path, first);
        let sent = cx
            .send_request(RequestPermissionRequest::new(id.clone(), call, options))
            .block_task();
        let answer = match window.filter(|_| first) {
            Some(window) => match tokio::time::timeout(window, sent).await {
                Ok(answer) => answer,
                Err(_) => return,
            },
            None => sent.await,
        };
        match answer.map(|r| r.outcome) {
            Ok(RequestPermissionOutcome::Selected(s))
                if &*s.option_id.0 == super::handoff::WAIT =>
            {
                first = false;
            }
            _ => return,
        }
    }
}

/// The error of a request the stopped engine cannot answer.
fn stopped() -> Error {
    Error::new(
        ErrorCode::INTERNAL_ERROR,
        "the session's engine has stopped",
    )
}
