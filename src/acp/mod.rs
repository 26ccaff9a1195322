//! `flower-tui acp`: flower-tui as an Agent Client Protocol agent, for the editors that host
//! terminal agents (Zed, JetBrains IDEs, Neovim). A third front end beside the TUI and headless
//! mode: the same engine, driven through the same queue pair. JSON-RPC on stdin and stdout
//! (stdout holds protocol messages only, [`stdio`]); the SDK is the `agent-client-protocol`
//! crate, protocol v1.
//!
//! The parts: [`agent`] answers the editor's requests, [`session`] drives one engine per editor
//! session, [`updates`] (with [`tool_calls`] and [`handoff`]) maps engine events to
//! `session/update`s, [`thread`] replays a loaded run's every generation, [`permission`] asks
//! the questions, [`files`] reads and writes through the editor and [`terminal`] runs commands
//! in its terminals, [`prompt`], [`modes`], [`config`] and [`runs`] translate the rest.
//!
//! Faults: the editor closing stdin (or SIGTERM, SIGHUP, SIGINT) aborts every running turn the
//! way Esc does and stops the engines, so the ledger and transcripts are whole; a malformed line
//! is answered with a parse error and the connection goes on; an unknown method is answered
//! "method not found".

mod agent;
mod config;
mod files;
mod handoff;
mod modes;
mod permission;
mod prompt;
mod runs;
mod session;
mod stdio;
mod terminal;
mod thread;
mod tool_calls;
mod updates;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, InitializeRequest, ListSessionsRequest, LoadSessionRequest,
    NewSessionRequest, PromptRequest, SetSessionModeRequest,
};
use agent_client_protocol::{Agent as AgentRole, Client, Error, ErrorCode, Lines};
use tokio::sync::mpsc;

use self::agent::{Agent, Inbound};
use crate::config::Config;

/// Serve the editor on stdin and stdout until it closes the connection (or a signal comes).
/// Returns the exit code: 0 after the editor closed, 128 + N after signal N, 1 when stdout could
/// not be taken or the connection failed.
pub(crate) async fn run(config: Config) -> i32 {
    let out = match stdio::take_stdout() {
        Ok(out) => out,
        Err(e) => {
            eprintln!("flower-tui acp: cannot take stdout for the protocol: {e}");
            return 1;
        }
    };
    tracing::info!(workspace = %config.places.workspace.display(), "acp: serving on stdio");
    let transport = Lines::new(stdio::stdout_lines(out), stdio::stdin_lines());
    let (tx, rx) = mpsc::unbounded_channel();
    let served = wire(&tx)
        .connect_with(transport, async move |cx: ConnectionTo<Client>| {
            Ok(serve(config, cx, rx).await)
        })
        .await;
    match served {
        Ok(code) => code,
        Err(e) => {
            tracing::error!("acp: the connection failed: {e}");
            eprintln!("flower-tui acp: the connection failed: {e}");
            1
        }
    }
}

/// The requests and notifications the agent takes, each handed to the agent's task in order.
/// Any other method is answered "method not found" by the SDK.
fn wire(
    tx: &mpsc::UnboundedSender<Inbound>,
) -> agent_client_protocol::v1::Builder<
    AgentRole,
    impl agent_client_protocol::HandleDispatchFrom<Client>,
> {
    macro_rules! forward {
        ($req:ty, $variant:ident) => {
            forward!($req, $variant, |req| req)
        };
        ($req:ty, $variant:ident, $wrap:expr) => {{
            let tx = tx.clone();
            async move |req: $req, responder, _cx| {
                tx.send(Inbound::$variant($wrap(req), responder))
                    .map_err(|_| Error::new(ErrorCode::INTERNAL_ERROR, "the agent has stopped"))
            }
        }};
    }
    let cancel = {
        let tx = tx.clone();
        async move |n: CancelNotification, _cx| {
            let _ = tx.send(Inbound::Cancel(n));
            Ok(())
        }
    };
    AgentRole
        .v1()
        .name("flower-tui")
        .on_receive_request(
            forward!(InitializeRequest, Initialize, Box::new),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            forward!(NewSessionRequest, NewSession),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            forward!(LoadSessionRequest, LoadSession),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            forward!(ListSessionsRequest, ListSessions),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            forward!(PromptRequest, Prompt),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            forward!(SetSessionModeRequest, SetMode),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(cancel, agent_client_protocol::on_receive_notification!())
}

/// The agent's task: the editor's messages in order until it closes the connection or a signal
/// comes; then every session stops (its turn aborted, its engine shut down).
async fn serve(
    config: Config,
    cx: ConnectionTo<Client>,
    mut rx: mpsc::UnboundedReceiver<Inbound>,
) -> i32 {
    let mut agent = Agent::new(config, cx.clone());
    let mut signals = crate::launch::StopSignals::new();
    let code = loop {
        tokio::select! {
            msg = rx.recv() => match msg {
                Some(msg) => agent.handle(msg).await,
                None => break 0,
            },
            () = cx.incoming_closed() => {
                // What was read before the end is still handled.
                while let Ok(msg) = rx.try_recv() {
                    agent.handle(msg).await;
                }
                tracing::info!("acp: the editor closed the connection");
                break 0;
            }
            (name, n) = signals.next() => {
                tracing::info!("acp: {name}: stopping");
                break 128 + n;
            }
        }
    };
    agent.shutdown().await;
    code
}
