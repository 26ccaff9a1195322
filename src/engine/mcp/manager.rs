//! The MCP manager: every enabled server started in the background, its state tracked, its tools
//! offered under `mcp__<server>__<tool>`, calls bounded by the server's `tool_timeout`, failures
//! turned into tool errors and state changes, one server restarted on request, all stopped on
//! shutdown or drop.
//!
//! Each server has a supervisor task (`supervise`) owning its connection; the manager's slots hold
//! what callers need (state, tools, a clone of the rmcp peer) and the process groups, so dropping
//! the manager kills every server at once, without a runtime. A restart bumps the slot's
//! generation: whatever an older supervisor reports afterwards is ignored.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::service::Peer;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use super::client::StartCtx;
use super::config::{Origin, ServerConfig};
use super::names;

mod call;
mod supervise;
use super::process::{Diagnostics, ProcessGroup};
use super::status::{ServerState, ServerStatus};
use crate::engine::types::ToolSpec;
use supervise::{supervise, tool_entries};

/// A server still starting this many times its `startup_timeout` after it was started is given up.
/// (Until then it is only not waited for: it is offered from the next request once ready.)
pub(crate) const GIVE_UP_FACTOR: u32 = 6;
/// How long a stopping server gets after its stdin is closed, and again after SIGTERM.
const STOP_GRACE: Duration = Duration::from_millis(300);
/// The longest [`McpManager::shutdown`] waits for every server together.
const SHUTDOWN_BOUND: Duration = Duration::from_secs(2);
/// A tool description longer than this many characters is cut (as Claude Code does).
pub(crate) const MAX_DESCRIPTION: usize = 2048;

/// What the manager needs to start.
#[derive(Debug, Clone, Default)]
pub struct ManagerParams {
    /// Every configured server, enabled or not, in the order `/mcp` lists them.
    pub servers: Vec<ServerConfig>,
    /// Working directory of stdio servers whose config names none.
    pub workspace: PathBuf,
    /// flower-tui's environment (for the servers' base variables); see `env.rs`.
    pub env: BTreeMap<String, String>,
    /// Receives a server's status every time it changes.
    pub status_tx: Option<mpsc::UnboundedSender<ServerStatus>>,
    /// The workspace's `.mcp.json` awaits the user's approval: its servers (origin `McpJson`)
    /// are held, not started, until [`McpManager::decide_project`].
    pub project: Option<ProjectApproval>,
}

/// The longest a held server waits for [`McpManager::release`] before it spawns anyway.
pub const GATE_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// A workspace's `.mcp.json` the user has not approved yet (this version of it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectApproval {
    pub path: PathBuf,
    /// The SHA-256 of the file's bytes, as the approval store records it.
    pub sha256: String,
}

/// A tool of a ready server, as offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    /// `mcp__<server>__<tool>`.
    pub name: String,
    pub server: String,
    /// The server's own name for it.
    pub tool: String,
    pub spec: ToolSpec,
}

/// A server the first request is still waiting for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartingServer {
    pub name: String,
    /// Since it was started.
    pub elapsed: Duration,
    /// Its `startup_timeout`: how long a request waits for it.
    pub timeout: Duration,
}

/// The MCP servers of one flower-tui process. Not `Clone`: the owner's drop stops every server.
pub struct McpManager {
    shared: Arc<Shared>,
}

struct Shared {
    slots: Vec<Slot>,
    ctx: StartCtx,
    runtime: Option<tokio::runtime::Handle>,
    status_tx: Option<mpsc::UnboundedSender<ServerStatus>>,
    /// Bumped on every change, for waiters.
    version: watch::Sender<u64>,
    /// The `.mcp.json` whose servers are held for the user's decision (taken by it).
    project: Mutex<Option<ProjectApproval>>,
    /// Open once the servers may spawn their processes: at once, or when the TUI has drawn its
    /// first frame ([`McpManager::release`]), so that the frame does not wait for the spawns.
    gate: watch::Sender<bool>,
}

struct Slot {
    config: ServerConfig,
    inner: Mutex<SlotInner>,
}

#[derive(Default)]
struct SlotInner {
    generation: u64,
    state: ServerState,
    started_at: Option<Instant>,
    peer: Option<Peer<RoleClient>>,
    tools: Vec<ToolEntry>,
    last_error: Option<String>,
    warnings: Vec<String>,
    /// Process groups of this slot's servers, by generation, until each is reaped.
    groups: Vec<(u64, Arc<ProcessGroup>)>,
    diag: Option<Arc<Diagnostics>>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

#[derive(Debug, Clone)]
struct ToolEntry {
    qualified: String,
    tool: String,
    description: String,
    schema: Value,
}

impl McpManager {
    /// Start every enabled server in the background and return at once. Call inside a tokio
    /// runtime (without one, every server is marked failed).
    pub fn start(params: ManagerParams) -> Self {
        Self::start_gated(params, true)
    }

    /// As [`McpManager::start`], but the servers (already `starting`, so a first request waits
    /// for them) spawn their processes only after [`McpManager::release`], or after
    /// [`GATE_WAIT`] at the latest.
    pub fn start_held(params: ManagerParams) -> Self {
        Self::start_gated(params, false)
    }

    /// Let held servers spawn their processes (see [`McpManager::start_held`]).
    pub fn release(&self) {
        self.shared.gate.send_replace(true);
    }

    fn start_gated(params: ManagerParams, open: bool) -> Self {
        let (version, _) = watch::channel(0);
        let (gate, _) = watch::channel(open);
        let shared = Arc::new(Shared {
            slots: params
                .servers
                .into_iter()
                .map(|config| Slot {
                    config,
                    inner: Mutex::new(SlotInner::default()),
                })
                .collect(),
            ctx: StartCtx {
                workspace: params.workspace,
                env: Arc::new(params.env),
            },
            runtime: tokio::runtime::Handle::try_current().ok(),
            status_tx: params.status_tx,
            version,
            project: Mutex::new(params.project),
            gate,
        });
        let held = shared.project_pending();
        for (idx, slot) in shared.slots.iter().enumerate() {
            if !slot.config.enabled {
                shared.update(idx, None, |s| s.state = ServerState::Disabled);
            } else if held && slot.config.origin == Origin::McpJson {
                shared.update(idx, None, |s| s.state = ServerState::AwaitingApproval);
            } else {
                shared.launch(idx);
            }
        }
        McpManager { shared }
    }

    /// The `.mcp.json` awaiting the user's decision, with the statuses of its held servers.
    pub fn pending_project(&self) -> Option<(ProjectApproval, Vec<ServerStatus>)> {
        let project = lock(&self.shared.project).clone()?;
        let held = self
            .statuses()
            .into_iter()
            .filter(|s| s.state == ServerState::AwaitingApproval)
            .collect();
        Some((project, held))
    }

    /// The user's answer about the pending `.mcp.json` (`sha256` names the version they saw):
    /// start its held servers, or mark them declined. None when no such file is pending (already
    /// decided, or another version).
    pub fn decide_project(&self, sha256: &str, approve: bool) -> Option<ProjectApproval> {
        let project = {
            let mut pending = lock(&self.shared.project);
            if pending.as_ref().is_none_or(|p| p.sha256 != sha256) {
                return None;
            }
            pending.take()?
        };
        for idx in 0..self.shared.slots.len() {
            let held = self
                .shared
                .slots
                .get(idx)
                .is_some_and(|s| s.lock().state == ServerState::AwaitingApproval);
            if !held {
                continue;
            }
            if approve {
                self.shared.launch(idx);
            } else {
                self.shared
                    .update(idx, None, |s| s.state = ServerState::Declined);
            }
        }
        Some(project)
    }

    /// Wait until a server's state changes, or until the earliest `startup_timeout` of the
    /// servers still starting passes; at once when none is starting. (A waiting front end
    /// shows which servers it waits for, [`Self::starting`], after each.)
    pub async fn startup_progress(&self) {
        let mut changes = self.shared.version.subscribe();
        let Some(deadline) = self
            .starting()
            .iter()
            .map(|s| Instant::now() + s.timeout.saturating_sub(s.elapsed))
            .min()
        else {
            return;
        };
        tokio::select! {
            _ = changes.changed() => {}
            _ = tokio::time::sleep_until(deadline.into()) => {}
        }
    }

    /// Every server's status, in config order.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        (0..self.shared.slots.len())
            .filter_map(|i| self.shared.status(i))
            .collect()
    }

    /// One server's status.
    pub fn status(&self, name: &str) -> Option<ServerStatus> {
        self.shared.index(name).and_then(|i| self.shared.status(i))
    }

    /// Servers still starting whose `startup_timeout` has not passed: what a request waits for.
    pub fn starting(&self) -> Vec<StartingServer> {
        let now = Instant::now();
        self.shared
            .slots
            .iter()
            .filter_map(|slot| {
                let s = slot.lock();
                let started = s.started_at?;
                let elapsed = now.saturating_duration_since(started);
                (s.state == ServerState::Starting && elapsed < slot.config.startup_timeout).then(
                    || StartingServer {
                        name: slot.config.name.clone(),
                        elapsed,
                        timeout: slot.config.startup_timeout,
                    },
                )
            })
            .collect()
    }

    /// Wait until no server is still starting within its `startup_timeout`: each one is ready,
    /// failed, or late (then it is offered from a later request, once ready).
    pub async fn wait_for_startup(&self) {
        while !self.starting().is_empty() {
            self.startup_progress().await;
        }
    }

    /// The tools of every ready server, in config order then the server's order.
    pub fn tools(&self) -> Vec<McpTool> {
        let mut out = Vec::new();
        for slot in &self.shared.slots {
            let s = slot.lock();
            if !matches!(s.state, ServerState::Ready { .. }) {
                continue;
            }
            for t in &s.tools {
                out.push(McpTool {
                    name: t.qualified.clone(),
                    server: slot.config.name.clone(),
                    tool: t.tool.clone(),
                    spec: ToolSpec {
                        name: t.qualified.clone(),
                        description: t.description.clone(),
                        input_schema: t.schema.clone(),
                    },
                });
            }
        }
        out
    }

    /// The specs of [`Self::tools`], for a model request.
    pub fn tool_specs(&self) -> Vec<ToolSpec> {
        self.tools().into_iter().map(|t| t.spec).collect()
    }

    /// Whether `name` is an MCP tool name (offered now or not).
    pub fn is_mcp_tool(name: &str) -> bool {
        name.starts_with(names::PREFIX)
    }

    /// Stop `name`'s server (if running) and start it again, enabled or not — but never a
    /// server of a `.mcp.json` the user has not approved (that is the approval's to start).
    pub fn restart(&self, name: &str) -> Result<(), RestartError> {
        let idx = self
            .shared
            .index(name)
            .ok_or_else(|| RestartError::Unknown(name.to_string()))?;
        let state = self
            .shared
            .slots
            .get(idx)
            .map(|s| s.lock().state.clone())
            .unwrap_or_default();
        if matches!(state, ServerState::AwaitingApproval | ServerState::Declined) {
            return Err(RestartError::NotApproved(name.to_string()));
        }
        self.shared.launch(idx);
        Ok(())
    }

    /// Stop every server: close its stdin, then SIGTERM, then SIGKILL its process group; at most
    /// about two seconds in all.
    pub async fn shutdown(&self) {
        let mut tasks = Vec::new();
        for slot in &self.shared.slots {
            let mut s = slot.lock();
            if let Some(stop) = s.stop.take() {
                let _ = stop.send(());
            }
            tasks.extend(s.task.take());
        }
        let _ = tokio::time::timeout(SHUTDOWN_BOUND, futures_util::future::join_all(tasks)).await;
        self.shared.kill_all();
        for idx in 0..self.shared.slots.len() {
            self.shared.update(idx, None, |s| {
                if !matches!(s.state, ServerState::Disabled | ServerState::Failed { .. }) {
                    s.state = ServerState::Stopped;
                }
                s.peer = None;
                s.tools.clear();
            });
        }
    }
}

impl Drop for McpManager {
    fn drop(&mut self) {
        self.shared.kill_all();
        for slot in &self.shared.slots {
            if let Some(task) = slot.lock().task.take() {
                task.abort();
            }
        }
    }
}

/// Why `/mcp restart NAME` did nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RestartError {
    #[error("no MCP server is named `{0}`")]
    Unknown(String),
    /// A `.mcp.json` server the user has not approved (or declined).
    #[error(
        "MCP server `{0}` comes from this workspace's .mcp.json, which is not approved: it starts          once you approve the file"
    )]
    NotApproved(String),
}

impl Slot {
    fn lock(&self) -> MutexGuard<'_, SlotInner> {
        lock(&self.inner)
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    /// A `.mcp.json` awaits the user's decision.
    fn project_pending(&self) -> bool {
        lock(&self.project).is_some()
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.slots.iter().position(|s| s.config.name == name)
    }

    fn status(&self, idx: usize) -> Option<ServerStatus> {
        let slot = self.slots.get(idx)?;
        let s = slot.lock();
        Some(ServerStatus {
            name: slot.config.name.clone(),
            origin: slot.config.origin,
            transport: slot.config.transport.summary(),
            state: s.state.clone(),
            tools: s.tools.iter().map(|t| t.tool.clone()).collect(),
            last_error: s.last_error.clone(),
            warnings: s.warnings.clone(),
        })
    }

    /// Change slot `idx` if `generation` is still current (`None`: whatever it is), then tell
    /// the listeners.
    fn update(&self, idx: usize, generation: Option<u64>, f: impl FnOnce(&mut SlotInner)) -> bool {
        let Some(slot) = self.slots.get(idx) else {
            return false;
        };
        {
            let mut s = slot.lock();
            if generation.is_some_and(|g| g != s.generation) {
                return false;
            }
            f(&mut s);
        }
        self.version.send_modify(|v| *v += 1);
        if let (Some(tx), Some(status)) = (&self.status_tx, self.status(idx)) {
            let _ = tx.send(status);
        }
        true
    }

    /// (Re)start slot `idx`: a new generation, the old supervisor told to stop.
    fn launch(self: &Arc<Self>, idx: usize) {
        let Some(slot) = self.slots.get(idx) else {
            return;
        };
        let Some(runtime) = self.runtime.clone() else {
            self.update(idx, None, |s| {
                s.state = ServerState::Failed {
                    reason: "flower-tui started its MCP servers outside an async runtime".into(),
                };
            });
            return;
        };
        let (stop_tx, stop_rx) = oneshot::channel();
        let generation = {
            let mut s = slot.lock();
            if let Some(old) = s.stop.take() {
                let _ = old.send(());
            }
            // The old supervisor stops its own process; it is not awaited here.
            drop(s.task.take());
            s.generation += 1;
            s.stop = Some(stop_tx);
            s.generation
        };
        self.update(idx, Some(generation), |s| {
            s.state = ServerState::Starting;
            s.started_at = Some(Instant::now());
            s.peer = None;
            s.tools.clear();
            s.last_error = None;
            s.warnings.clear();
            s.diag = None;
        });
        let task = runtime.spawn(supervise(self.clone(), idx, generation, stop_rx));
        let mut s = slot.lock();
        if s.generation == generation {
            s.task = Some(task);
        }
    }

    /// Kill every server's process group now (no runtime needed).
    fn kill_all(&self) {
        for slot in &self.slots {
            let mut s = slot.lock();
            for (_, group) in s.groups.drain(..) {
                group.kill_and_disarm();
            }
        }
    }

    fn note_error(&self, idx: usize, generation: u64, message: &str) {
        self.update(idx, Some(generation), |s| {
            s.last_error = Some(message.to_string())
        });
    }

    /// Mark slot `idx` failed now (if `generation` is still current and it was ready), and stop
    /// its supervisor without letting it report anything more.
    fn lose(&self, idx: usize, generation: u64, reason: String) {
        let Some(slot) = self.slots.get(idx) else {
            return;
        };
        let stop = {
            let mut s = slot.lock();
            if s.generation != generation || !matches!(s.state, ServerState::Ready { .. }) {
                return;
            }
            // What the old supervisor says from now on is stale.
            s.generation += 1;
            drop(s.task.take());
            s.stop.take()
        };
        if let Some(stop) = stop {
            let _ = stop.send(());
        }
        self.update(idx, None, |s| {
            s.state = ServerState::Failed { reason };
            s.peer = None;
            s.tools.clear();
        });
    }

    /// The failure reason of slot `idx` once its state turns failed (at most `wait`).
    async fn await_failure(&self, idx: usize, generation: u64, wait: Duration) -> Option<String> {
        let mut changes = self.version.subscribe();
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            {
                let slot = self.slots.get(idx)?;
                let s = slot.lock();
                if s.generation != generation {
                    return None;
                }
                if let ServerState::Failed { reason } = &s.state {
                    return Some(reason.clone());
                }
            }
            tokio::select! {
                _ = changes.changed() => {}
                _ = tokio::time::sleep_until(deadline) => return None,
            }
        }
    }

    fn set_tools(
        &self,
        idx: usize,
        generation: u64,
        peer: Peer<RoleClient>,
        tools: Vec<rmcp::model::Tool>,
    ) {
        let server = self
            .slots
            .get(idx)
            .map(|s| s.config.name.clone())
            .unwrap_or_default();
        let entries = tool_entries(&server, tools);
        self.update(idx, Some(generation), |s| {
            s.state = ServerState::Ready {
                tools: entries.len(),
            };
            s.peer = Some(peer);
            s.tools = entries;
        });
    }

    fn finish(&self, idx: usize, generation: u64, state: ServerState) {
        self.update(idx, Some(generation), |s| {
            s.state = state;
            s.peer = None;
            s.tools.clear();
        });
        if let Some(slot) = self.slots.get(idx) {
            let mut s = slot.lock();
            s.groups.retain(|(g, group)| {
                let keep = *g != generation;
                if !keep {
                    group.kill_and_disarm();
                }
                keep
            });
        }
    }
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if (s - s.round()).abs() < 0.001 {
        format!("{} s", s.round() as u64)
    } else {
        format!("{s:.1} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manager_and_its_futures_can_move_between_tasks() {
        fn shared<T: Send + Sync>(_: &T) {}
        fn sendable<F: std::future::Future + Send>(_: F) {}
        let m = McpManager::start(ManagerParams::default());
        shared(&m);
        let input = Value::Null;
        sendable(m.call("mcp__x__y", &input));
        sendable(m.wait_for_startup());
        sendable(m.shutdown());
    }
}
