//! `bash` in the editor's terminal, when the editor offers `terminal/*` and the session's sandbox
//! does not confine commands (`--sandbox off`): the command runs in a terminal the editor creates
//! (`terminal/create`), embedded in the tool call, so the user watches it live in the editor; the
//! agent waits for it (`terminal/wait_for_exit`) within the call's timeout, kills it on the
//! timeout or a cancel (`terminal/kill`), reads what it printed (`terminal/output`, the editor
//! keeping the end of it within the same limit as here) and releases it (`terminal/release`).
//!
//! While the sandbox confines commands they stay in flower-tui's sandbox: an editor's terminal
//! runs outside it, and the sandbox is the safety net a user chose. A terminal the editor refuses
//! to create leaves the command to run here.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, EnvVariable, KillTerminalRequest, ReleaseTerminalRequest, SessionId,
    SessionNotification, Terminal, TerminalId, TerminalOutputRequest, ToolCallContent,
    ToolCallUpdateFields, WaitForTerminalExitRequest,
};

use super::tool_calls::tool_update;
use crate::engine::tools::terminal::{
    TerminalEnd, TerminalFuture, TerminalRun, TerminalStop, Terminals,
};

/// The terminals shown in tool calls, by tool call id: the call's final update keeps its
/// terminal ([`super::updates`]).
#[derive(Debug, Clone, Default)]
pub(super) struct TerminalCalls(Arc<Mutex<HashMap<String, TerminalId>>>);

impl TerminalCalls {
    fn insert(&self, call: &str, terminal: TerminalId) {
        if let Ok(mut calls) = self.0.lock() {
            calls.insert(call.to_string(), terminal);
        }
    }

    /// The terminal of `call`, taken (the call has ended).
    pub(super) fn take(&self, call: &str) -> Option<TerminalId> {
        self.0.lock().ok()?.remove(call)
    }
}

/// The editor's terminals for one session.
pub(super) struct ClientTerminals {
    pub(super) cx: ConnectionTo<Client>,
    pub(super) session: SessionId,
    pub(super) calls: TerminalCalls,
}

impl Terminals for ClientTerminals {
    fn run<'a>(&'a self, run: TerminalRun<'a>) -> TerminalFuture<'a> {
        Box::pin(self.run_in_terminal(run))
    }
}

impl ClientTerminals {
    async fn run_in_terminal(&self, run: TerminalRun<'_>) -> Option<io::Result<TerminalEnd>> {
        if self.cx.is_incoming_closed() {
            return None;
        }
        let started = Instant::now();
        let create = CreateTerminalRequest::new(self.session.clone(), "bash")
            .args(vec!["-c".to_string(), run.command.to_string()])
            .env(
                run.env
                    .iter()
                    .map(|(k, v)| EnvVariable::new(k.as_str(), v.as_str()))
                    .collect(),
            )
            .cwd(run.cwd.to_path_buf())
            .output_byte_limit(run.output_limit);
        let terminal = match self.cx.send_request(create).block_task().await {
            Ok(created) => created.terminal_id,
            Err(e) => {
                tracing::warn!("acp: the editor did not create a terminal ({e}): running here");
                return None;
            }
        };
        let mut held = Held {
            cx: self.cx.clone(),
            session: self.session.clone(),
            terminal: Some(terminal.clone()),
        };
        self.calls.insert(run.call, terminal.clone());
        let shown = tool_update(
            run.call,
            ToolCallUpdateFields::new().content(vec![ToolCallContent::Terminal(Terminal::new(
                terminal.clone(),
            ))]),
        );
        let _ = self
            .cx
            .send_notification(SessionNotification::new(self.session.clone(), shown));

        let wait = self
            .cx
            .send_request(WaitForTerminalExitRequest::new(
                self.session.clone(),
                terminal.clone(),
            ))
            .block_task();
        let mut interrupt = run.interrupt;
        let stopped = tokio::select! {
            waited = wait => match waited {
                Ok(_) => None,
                Err(e) => return Some(Err(io::Error::other(e.to_string()))),
            },
            () = tokio::time::sleep(run.timeout) => Some(TerminalStop::TimedOut),
            () = interrupted(&mut interrupt) => Some(TerminalStop::Interrupted),
        };
        let elapsed = started.elapsed();
        if stopped.is_some() {
            let kill = KillTerminalRequest::new(self.session.clone(), terminal.clone());
            if let Err(e) = self.cx.send_request(kill).block_task().await {
                tracing::warn!("acp: the editor did not kill terminal {terminal}: {e}");
            }
        }
        let output = self
            .cx
            .send_request(TerminalOutputRequest::new(
                self.session.clone(),
                terminal.clone(),
            ))
            .block_task()
            .await;
        held.release().await;
        let output = match output {
            Ok(output) => output,
            Err(e) => return Some(Err(io::Error::other(e.to_string()))),
        };
        let (exit_code, signal) = match output.exit_status {
            Some(status) => (status.exit_code, status.signal),
            None => (None, None),
        };
        Some(Ok(TerminalEnd {
            output: output.output,
            truncated: output.truncated,
            exit_code,
            signal,
            stopped,
            elapsed,
        }))
    }
}

/// Resolves when the user stops the command; never when nobody can (no receiver, or its
/// sender was dropped).
async fn interrupted(interrupt: &mut Option<tokio::sync::oneshot::Receiver<()>>) {
    let stopped = match interrupt.as_mut() {
        Some(rx) => rx.await.is_ok(),
        None => false,
    };
    if !stopped {
        *interrupt = None;
        std::future::pending::<()>().await;
    }
}

/// A terminal the agent holds: released once done with, or (when the command's future is
/// dropped: the engine stopped) killed and released in the background.
struct Held {
    cx: ConnectionTo<Client>,
    session: SessionId,
    terminal: Option<TerminalId>,
}

impl Held {
    async fn release(&mut self) {
        if let Some(terminal) = self.terminal.take() {
            let release = ReleaseTerminalRequest::new(self.session.clone(), terminal);
            if let Err(e) = self.cx.send_request(release).block_task().await {
                tracing::debug!("acp: a terminal was not released: {e}");
            }
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some(terminal) = self.terminal.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (cx, session) = (self.cx.clone(), self.session.clone());
        runtime.spawn(async move {
            let kill = KillTerminalRequest::new(session.clone(), terminal.clone());
            let _ = cx.send_request(kill).block_task().await;
            let release = ReleaseTerminalRequest::new(session, terminal);
            let _ = cx.send_request(release).block_task().await;
        });
    }
}
