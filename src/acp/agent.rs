//! The agent side of the connection: one task that takes the editor's requests in order and
//! answers them. `initialize` states what flower-tui does (honestly: images and text, no audio); `session/new` and `session/load` start an engine for the editor's `cwd` with the
//! editor's MCP servers added; `session/list` lists the workspace's runs from the ledger; the
//! requests of a running session go to its task ([`super::session`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate,
    CancelNotification, ClientCapabilities, Implementation, InitializeRequest, InitializeResponse,
    ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, McpServer, NewSessionRequest, NewSessionResponse, PromptCapabilities,
    PromptRequest, PromptResponse, SessionCapabilities, SessionId, SessionListCapabilities,
    SessionNotification, SessionUpdate, SetSessionModeRequest, SetSessionModeResponse,
    UnstructuredCommandInput,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode};
use tokio::sync::oneshot;

use super::session::{self, Command, Handle};
use super::terminal::ClientTerminals;
use crate::config::{Config, SessionChoice};
use crate::engine::text_files::FileAccess;
use crate::engine::tools::terminal::TerminalAccess;

/// A request or notification from the editor, with the handle that answers it (the requests
/// boxed: they differ much in size).
pub(super) enum Inbound {
    Initialize(Box<InitializeRequest>, Responder<InitializeResponse>),
    NewSession(NewSessionRequest, Responder<NewSessionResponse>),
    LoadSession(LoadSessionRequest, Responder<LoadSessionResponse>),
    ListSessions(ListSessionsRequest, Responder<ListSessionsResponse>),
    Prompt(PromptRequest, Responder<PromptResponse>),
    SetMode(SetSessionModeRequest, Responder<SetSessionModeResponse>),
    Cancel(CancelNotification),
}

/// The agent's state: the configuration every session starts from, what the editor can do,
/// and the sessions running.
pub(super) struct Agent {
    base: Config,
    cx: ConnectionTo<Client>,
    client: ClientCapabilities,
    sessions: HashMap<Arc<str>, Session>,
}

/// A running session: its task, its workspace and its custom commands.
struct Session {
    handle: Handle,
    workspace: PathBuf,
    catalog: Arc<crate::engine::commands::Catalog>,
}

impl Agent {
    pub(super) fn new(base: Config, cx: ConnectionTo<Client>) -> Agent {
        Agent {
            base,
            cx,
            client: ClientCapabilities::new(),
            sessions: HashMap::new(),
        }
    }

    pub(super) async fn handle(&mut self, msg: Inbound) {
        match msg {
            Inbound::Initialize(req, r) => {
                let req = *req;
                self.client = req.client_capabilities;
                let _ = r.respond(initialize_response());
            }
            Inbound::NewSession(req, r) => {
                let opened = self
                    .open(&req.cwd, &req.mcp_servers, SessionChoice::New, false)
                    .await;
                let _ = match opened {
                    Ok((id, mode)) => {
                        let answered = r.respond(
                            NewSessionResponse::new(id.clone()).modes(super::modes::state(mode)),
                        );
                        self.announce_commands(&id);
                        answered
                    }
                    Err(e) => r.respond_with_error(e),
                };
            }
            Inbound::LoadSession(req, r) => {
                let choice = SessionChoice::Resume(req.session_id.0.to_string());
                let opened = self.open(&req.cwd, &req.mcp_servers, choice, true).await;
                let _ = match opened {
                    Ok((id, mode)) => {
                        let answered =
                            r.respond(LoadSessionResponse::new().modes(super::modes::state(mode)));
                        self.announce_commands(&id);
                        answered
                    }
                    Err(e) => r.respond_with_error(e),
                };
            }
            Inbound::ListSessions(req, r) => {
                let cwd = req
                    .cwd
                    .unwrap_or_else(|| self.base.places.workspace.clone());
                let _ = r.respond(ListSessionsResponse::new(super::runs::list(
                    &self.base.places.data_dir,
                    &cwd,
                )));
            }
            Inbound::Prompt(req, r) => {
                let Some(s) = self.sessions.get(&req.session_id.0) else {
                    let _ = r.respond_with_error(not_found(&req.session_id));
                    return;
                };
                let images = self.base.places.data_dir.join("acp-images");
                match super::prompt::text(&req.prompt, &s.workspace, &images) {
                    Ok(text) => {
                        let cmd = Command::Prompt { text, responder: r };
                        if let Err(e) = s.handle.commands.send(cmd)
                            && let Command::Prompt { responder, .. } = e.0
                        {
                            let _ = responder.respond_with_error(not_found(&req.session_id));
                        }
                    }
                    Err(why) => {
                        let _ = r.respond_with_error(Error::new(ErrorCode::INVALID_PARAMS, why));
                    }
                }
            }
            Inbound::SetMode(req, r) => {
                let Some(s) = self.sessions.get(&req.session_id.0) else {
                    let _ = r.respond_with_error(not_found(&req.session_id));
                    return;
                };
                let Some(mode) = super::modes::parse(&req.mode_id) else {
                    let _ = r.respond_with_error(Error::new(
                        ErrorCode::INVALID_PARAMS,
                        format!(
                            "no mode `{}` (the modes: {})",
                            req.mode_id.0,
                            crate::engine::policy::Mode::ACCEPTED
                        ),
                    ));
                    return;
                };
                let _ = s
                    .handle
                    .commands
                    .send(Command::SetMode { mode, responder: r });
            }
            Inbound::Cancel(n) => {
                if let Some(s) = self.sessions.get(&n.session_id.0) {
                    let _ = s.handle.commands.send(Command::Cancel);
                }
            }
        }
    }

    /// Start an engine for `cwd` (a new run, or the run `choice` names) and its session task;
    /// answers once the engine has started (and the conversation was replayed, for a load).
    async fn open(
        &mut self,
        cwd: &Path,
        servers: &[McpServer],
        choice: SessionChoice,
        replay: bool,
    ) -> Result<(SessionId, crate::engine::policy::Mode), Error> {
        let mut config = super::config::for_session(&self.base, cwd, choice, servers)
            .map_err(|e| Error::new(ErrorCode::INVALID_PARAMS, e))?;
        let keep = crate::launch::prepare_demo(&mut config, true).map_err(engine_error)?;
        let mut params = crate::launch::engine_params(&config, true).map_err(engine_error)?;
        // The editor sends the first message (the demo does not play by itself here).
        params.start.autostart = None;
        let id = SessionId::new(params.run_dir.run_id.clone());
        if self.sessions.contains_key(&id.0) {
            return Err(Error::new(
                ErrorCode::INVALID_REQUEST,
                format!("session {} is already open in this connection", id.0),
            ));
        }
        let claim = super::runs::Claim::take(&params.run_dir.root, &id.0)
            .map_err(|e| Error::new(ErrorCode::INVALID_REQUEST, e))?;
        let fs = &self.client.fs;
        if fs.read_text_file || fs.write_text_file {
            params.tools.files = FileAccess::through(Arc::new(super::files::ClientFiles {
                cx: self.cx.clone(),
                session: id.clone(),
                read: fs.read_text_file,
                write: fs.write_text_file,
                runtime: tokio::runtime::Handle::current(),
            }));
        }
        let terminals = super::terminal::TerminalCalls::default();
        if self.client.terminal {
            params.tools.terminals = TerminalAccess::through(Arc::new(ClientTerminals {
                cx: self.cx.clone(),
                session: id.clone(),
                calls: terminals.clone(),
            }));
        }
        let mcp = params.mcp.clone();
        if let Some(m) = &mcp {
            m.release();
        }
        let commands = params.extensions.commands.clone();
        let workspace = params.places.workspace.clone();
        let run_root = params.run_dir.root.clone();
        let engine = crate::engine::session::spawn(params).map_err(engine_error)?;
        tracing::info!(session = %id.0, workspace = %workspace.display(), "acp session opened");
        let (handle, ready) = session::start(session::Start {
            id: id.clone(),
            cx: self.cx.clone(),
            engine,
            workspace: workspace.clone(),
            review_secs: config.context.review.secs(),
            replay,
            run_root,
            notices: self
                .client
                .session
                .as_ref()
                .is_some_and(|s| s.notices.is_some()),
            mcp,
            commands: commands.clone(),
            terminals,
            keep: (keep, claim),
        });
        let mode = ready.await.map_err(|_| {
            Error::new(
                ErrorCode::INTERNAL_ERROR,
                "the engine stopped as it started",
            )
        })?;
        let session = Session {
            handle,
            workspace,
            catalog: commands,
        };
        self.sessions.insert(id.0.clone(), session);
        Ok((id, mode))
    }

    /// The commands a prompt may start with: `/handoff` and the custom commands.
    fn announce_commands(&self, id: &SessionId) {
        let Some(s) = self.sessions.get(&id.0) else {
            return;
        };
        let mut commands = vec![
            AvailableCommand::new(
                "handoff",
                "Write the handoff document now and continue in a fresh generation",
            )
            .input(AvailableCommandInput::Unstructured(
                UnstructuredCommandInput::new("what the next generation should focus on"),
            )),
        ];
        commands.extend(
            s.catalog
                .commands()
                .map(|c| AvailableCommand::new(c.name.as_str(), c.description.as_str())),
        );
        let update = SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands));
        let _ = self
            .cx
            .send_notification(SessionNotification::new(id.clone(), update));
    }

    /// Stop every session (each aborts its turn and stops its engine) and wait for them.
    pub(super) async fn shutdown(&mut self) {
        let mut waits = Vec::new();
        for (_, s) in self.sessions.drain() {
            let (tx, rx) = oneshot::channel();
            if s.handle.commands.send(Command::Shutdown(tx)).is_ok() {
                waits.push((rx, s.handle.task));
            }
        }
        for (rx, task) in waits {
            let _ = rx.await;
            let _ = task.await;
        }
    }
}

/// What flower-tui offers: protocol v1 (whatever the client asked, it is the one spoken), loading
/// and listing sessions, text, images and embedded text resources (no audio), the editor's
/// stdio and HTTP MCP servers. Commands run in flower-tui's own sandbox, their output streamed
/// into the tool call; with the sandbox off, in the editor's terminal when it offers one
/// ([`super::terminal`]).
fn initialize_response() -> InitializeResponse {
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .prompt_capabilities(
                    PromptCapabilities::new()
                        .image(true)
                        .audio(false)
                        .embedded_context(true),
                )
                .mcp_capabilities(McpCapabilities::new().http(true).sse(false))
                .session_capabilities(
                    SessionCapabilities::new().list(SessionListCapabilities::new()),
                ),
        )
        .agent_info(
            Implementation::new("flower-tui", env!("CARGO_PKG_VERSION")).title("flower-tui"),
        )
}

fn not_found(id: &SessionId) -> Error {
    agent_client_protocol::v1::schema::Error::session_not_found(id.clone()).into()
}

/// An engine error as the editor's error (keys masked).
fn engine_error(e: crate::engine::error::Error) -> Error {
    let message = crate::engine::secrets::redact(&e.to_string()).into_owned();
    Error::new(ErrorCode::INTERNAL_ERROR, message)
}
