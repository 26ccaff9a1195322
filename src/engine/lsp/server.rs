//! One language server for one root: a task that starts the process (its own session and
//! process group, killed with flower-tui: the MCP servers' spawn in `mcp::process`), initializes
//! it, keeps the files flower-tui opened in sync, and restarts it when it crashes or hangs at
//! `initialize`, at most [`MAX_RESTARTS`] times. The files' texts are kept here, so a restarted
//! server is told them again.
//!
//! What the server publishes lands in [`Shared`] (read by the manager); every change there wakes
//! the manager's waiters. A publish answers the last sync sent for that file when it carries no
//! version, or when its version is the one sent.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc, oneshot};

use super::report::Finding;
use super::rpc::{Connection, Incoming};
use super::spec::ServerSpec;
use super::uri;

/// Restarts after the first start, at most.
pub(crate) const MAX_RESTARTS: u32 = 2;
/// How long `shutdown` may take before the process is stopped anyway.
const SHUTDOWN_CAP: Duration = Duration::from_millis(1_000);
/// How long the process may take to exit after `exit` (then SIGTERM, then SIGKILL).
const EXIT_GRACE: Duration = Duration::from_millis(300);
/// Problems kept per file.
const MAX_PER_FILE: usize = 500;

/// Where a server is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Phase {
    Starting,
    Ready,
    /// It stopped or failed to start; started again after a pause.
    Restarting {
        reason: String,
    },
    /// Given up: it failed too often.
    Failed {
        reason: String,
    },
    Stopped,
}

/// One file as the server knows it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Doc {
    /// The latest sync asked for.
    pub wanted: u64,
    /// The latest sync written to the server (0: not open in it).
    pub sent: u64,
    version: i32,
    /// The sync the latest publish answers (0: none yet).
    pub published: u64,
    pub published_at: Option<Instant>,
    pub found: Vec<Finding>,
}

/// What the manager reads of a server.
#[derive(Debug)]
pub(crate) struct State {
    pub phase: Phase,
    /// Work the server reports in progress (`$/progress` begun, not ended): token → title.
    pub progress: BTreeMap<String, String>,
    pub docs: BTreeMap<PathBuf, Doc>,
    pub restarts: u32,
    /// Given up on, and a call's result said so: its files are passed over from now on.
    pub failure_told: bool,
}

pub(crate) struct Shared {
    state: Mutex<State>,
    changed: Arc<Notify>,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn set_phase(&self, phase: Phase) {
        self.lock().phase = phase;
        self.changed.notify_waiters();
    }
}

/// What a server is started with.
pub(crate) struct Launch {
    pub spec: Arc<ServerSpec>,
    pub root: PathBuf,
    pub workspace: PathBuf,
    /// The whole environment of the process.
    pub env: BTreeMap<String, String>,
    pub init_timeout: Duration,
    /// Woken on every change of any server's state.
    pub changed: Arc<Notify>,
    /// Where the one notice about this server's failure goes.
    pub notices: Option<mpsc::UnboundedSender<String>>,
}

enum Cmd {
    Sync {
        path: PathBuf,
        text: Arc<str>,
        seq: u64,
    },
    Close(PathBuf),
    Shutdown(oneshot::Sender<()>),
}

/// A running server's handle.
pub(crate) struct ServerHandle {
    pub spec: Arc<ServerSpec>,
    pub root: PathBuf,
    shared: Arc<Shared>,
    cmds: mpsc::UnboundedSender<Cmd>,
}

impl ServerHandle {
    /// Start the server's task (the process starts at once, in the background).
    pub(crate) fn start(l: Launch) -> ServerHandle {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                phase: Phase::Starting,
                progress: BTreeMap::new(),
                docs: BTreeMap::new(),
                restarts: 0,
                failure_told: false,
            }),
            changed: l.changed.clone(),
        });
        let (cmds, rx) = mpsc::unbounded_channel();
        let handle = ServerHandle {
            spec: l.spec.clone(),
            root: l.root.clone(),
            shared: shared.clone(),
            cmds,
        };
        let actor = Actor {
            l,
            shared,
            rx,
            texts: BTreeMap::new(),
            told: false,
        };
        tokio::spawn(actor.run());
        handle
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.shared.lock()
    }

    /// Tell the server `path` holds `text` now (sync number `seq`).
    pub(crate) fn sync(&self, path: &Path, text: Arc<str>, seq: u64) {
        self.lock()
            .docs
            .entry(path.to_path_buf())
            .or_default()
            .wanted = seq;
        let _ = self.cmds.send(Cmd::Sync {
            path: path.to_path_buf(),
            text,
            seq,
        });
    }

    /// The file is gone: closed in the server, forgotten here.
    pub(crate) fn close(&self, path: &Path) {
        self.lock().docs.remove(path);
        let _ = self.cmds.send(Cmd::Close(path.to_path_buf()));
        self.shared.changed.notify_waiters();
    }

    /// Ask the server to shut down and wait until its process is gone.
    pub(crate) async fn shutdown(&self) {
        let (tx, rx) = oneshot::channel();
        if self.cmds.send(Cmd::Shutdown(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}

/// How one run of the process ended.
enum End {
    Shutdown(Option<oneshot::Sender<()>>),
    Failed(String),
}

struct Actor {
    l: Launch,
    shared: Arc<Shared>,
    rx: mpsc::UnboundedReceiver<Cmd>,
    /// The latest text of every open file, and its sync number.
    texts: BTreeMap<PathBuf, (Arc<str>, u64)>,
    /// The failure notice was sent.
    told: bool,
}

impl Actor {
    async fn run(mut self) {
        let mut starts = 0u32;
        let reason = loop {
            starts += 1;
            match self.live_once().await {
                End::Shutdown(reply) => return self.stopped(reply),
                End::Failed(reason) => {
                    tracing::warn!(server = %self.l.spec.name, "language server: {reason}");
                    if starts > MAX_RESTARTS {
                        break reason;
                    }
                    self.tell(&format!(
                        "language server `{}` failed ({reason}); restarting it (at most {MAX_RESTARTS} times)",
                        self.l.spec.name
                    ));
                    self.shared.lock().restarts = starts;
                    self.shared.set_phase(Phase::Restarting {
                        reason: reason.clone(),
                    });
                    let pause = tokio::time::sleep(Duration::from_millis(500 * u64::from(starts)));
                    tokio::pin!(pause);
                    loop {
                        tokio::select! {
                            () = &mut pause => break,
                            cmd = self.rx.recv() => if let Some(reply) = self.remember(cmd) {
                                return self.stopped(reply);
                            },
                        }
                    }
                }
            }
        };
        self.tell(&format!(
            "language server `{}` failed ({reason}); not restarted again",
            self.l.spec.name
        ));
        self.shared.set_phase(Phase::Failed { reason });
        loop {
            let cmd = self.rx.recv().await;
            if let Some(reply) = self.remember(cmd) {
                return self.stopped(reply);
            }
        }
    }

    fn stopped(&self, reply: Option<oneshot::Sender<()>>) {
        self.shared.set_phase(Phase::Stopped);
        if let Some(r) = reply {
            let _ = r.send(());
        }
    }

    /// One notice per server, the first time it fails.
    fn tell(&mut self, message: &str) {
        if !self.told {
            self.told = true;
            if let Some(tx) = &self.l.notices {
                let _ = tx.send(message.to_string());
            }
        }
    }

    /// Keep what a command says while no process takes it; Some when it asks to stop.
    fn remember(&mut self, cmd: Option<Cmd>) -> Option<Option<oneshot::Sender<()>>> {
        match cmd {
            Some(Cmd::Sync { path, text, seq }) => {
                self.texts.insert(path, (text, seq));
                None
            }
            Some(Cmd::Close(path)) => {
                self.texts.remove(&path);
                None
            }
            Some(Cmd::Shutdown(reply)) => Some(Some(reply)),
            None => Some(None),
        }
    }

    /// Start the process, initialize it, serve it until it ends or is told to stop.
    async fn live_once(&mut self) -> End {
        let spec = self.l.spec.clone();
        let args = spec.command.get(1..).unwrap_or_default();
        let mut child = match crate::engine::mcp::process::spawn(
            spec.program(),
            args,
            &self.l.env,
            &self.l.root,
        ) {
            Ok(c) => c,
            Err(e) => return End::Failed(format!("`{}` cannot be started: {e}", spec.program())),
        };
        for t in self.shared.lock().docs.values_mut() {
            t.sent = 0;
        }
        let incoming = Arc::new(Handler {
            shared: self.shared.clone(),
            workspace: self.l.workspace.clone(),
            root: self.l.root.clone(),
        });
        let conn = Connection::start(child.stdout, child.stdin, incoming);
        let failed = {
            let init = conn.request(
                "initialize",
                initialize_params(&self.l.root),
                self.l.init_timeout,
            );
            tokio::pin!(init);
            loop {
                tokio::select! {
                    answer = &mut init => break answer.err().map(|e| {
                        End::Failed(format!("initialize: {e}{}", stderr(&child.diag)))
                    }),
                    cmd = self.rx.recv() => if let Some(reply) = self.remember(cmd) {
                        break Some(End::Shutdown(reply));
                    },
                }
            }
        };
        if let Some(end) = failed {
            drop(conn);
            crate::engine::mcp::process::stop(&mut child.child, &child.group, EXIT_GRACE).await;
            return end;
        }
        conn.notify("initialized", json!({}));
        self.shared.set_phase(Phase::Ready);
        let mut open: HashMap<PathBuf, i32> = HashMap::new();
        let paths: Vec<PathBuf> = self.texts.keys().cloned().collect();
        for path in paths {
            self.send(&conn, &mut open, &path, false);
        }
        loop {
            tokio::select! {
                why = conn.closed() => {
                    let garbage = match conn.garbage() {
                        0 => String::new(),
                        n => format!("; {n} messages were not JSON-RPC"),
                    };
                    let why = format!("it stopped: {why}{garbage}{}", stderr(&child.diag));
                    crate::engine::mcp::process::stop(&mut child.child, &child.group, EXIT_GRACE).await;
                    return End::Failed(why);
                }
                cmd = self.rx.recv() => match cmd {
                    Some(Cmd::Sync { path, text, seq }) => {
                        self.texts.insert(path.clone(), (text, seq));
                        self.send(&conn, &mut open, &path, true);
                    }
                    Some(Cmd::Close(path)) => {
                        self.texts.remove(&path);
                        if open.remove(&path).is_some() {
                            conn.notify("textDocument/didClose", json!({
                                "textDocument": {"uri": uri::of_path(&path)}
                            }));
                        }
                    }
                    other => {
                        let reply = self.remember(other).unwrap_or(None);
                        let _ = conn.request("shutdown", Value::Null, SHUTDOWN_CAP).await;
                        conn.notify("exit", Value::Null);
                        drop(conn);
                        crate::engine::mcp::process::stop(&mut child.child, &child.group, EXIT_GRACE).await;
                        return End::Shutdown(reply);
                    }
                },
            }
        }
    }

    /// Write `path`'s latest text to the server: opened the first time, else changed (and
    /// saved when `save`: the file is on disk as sent).
    fn send(&self, conn: &Connection, open: &mut HashMap<PathBuf, i32>, path: &Path, save: bool) {
        let Some((text, seq)) = self.texts.get(path) else {
            return;
        };
        let uri = uri::of_path(path);
        let version = open.get(path).map_or(1, |v| v + 1);
        {
            let mut state = self.shared.lock();
            let doc = state.docs.entry(path.to_path_buf()).or_default();
            doc.sent = *seq;
            doc.version = version;
        }
        if open.insert(path.to_path_buf(), version).is_none() {
            conn.notify(
                "textDocument/didOpen",
                json!({"textDocument": {"uri": uri, "languageId": super::spec::language_id(path),
                    "version": version, "text": &**text}}),
            );
        } else {
            conn.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"text": &**text}]}),
            );
        }
        if save {
            conn.notify(
                "textDocument/didSave",
                json!({"textDocument": {"uri": uri}, "text": &**text}),
            );
        }
    }
}

fn stderr(diag: &crate::engine::mcp::process::Diagnostics) -> String {
    match diag.stderr_tail(3) {
        t if t.is_empty() => String::new(),
        t => format!(" (stderr: {t})"),
    }
}

/// What flower-tui tells a server about itself: plain text documents, published diagnostics
/// (with versions), progress, one workspace folder; nothing it would not use.
fn initialize_params(root: &Path) -> Value {
    let root_uri = uri::of_path(root);
    json!({
        "processId": std::process::id(),
        "clientInfo": {"name": "flower-tui", "version": env!("CARGO_PKG_VERSION")},
        "rootUri": root_uri,
        "rootPath": root.display().to_string(),
        "workspaceFolders": [{"uri": root_uri, "name": folder_name(root)}],
        "capabilities": {
            "textDocument": {
                "synchronization": {"didSave": true, "dynamicRegistration": false},
                "publishDiagnostics": {"relatedInformation": false, "versionSupport": true},
            },
            "workspace": {"configuration": true, "workspaceFolders": true},
            "window": {"workDoneProgress": true},
            "general": {"positionEncodings": ["utf-16"]},
        },
    })
}

fn folder_name(root: &Path) -> String {
    root.file_name()
        .map_or_else(|| "workspace".into(), |n| n.to_string_lossy().into_owned())
}

/// The server's own messages: diagnostics and progress into [`Shared`]; its requests answered.
struct Handler {
    shared: Arc<Shared>,
    workspace: PathBuf,
    root: PathBuf,
}

impl Incoming for Handler {
    fn notification(&self, method: &str, params: Value) {
        match method {
            "textDocument/publishDiagnostics" => self.published(params),
            "$/progress" => self.progress(&params),
            _ => return,
        }
        self.shared.changed.notify_waiters();
    }

    fn request(&self, method: &str, params: &Value) -> Result<Value, String> {
        match method {
            "workspace/configuration" => {
                let n = params
                    .get("items")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                Ok(Value::Array(vec![Value::Null; n]))
            }
            "workspace/workspaceFolders" => Ok(json!([{
                "uri": uri::of_path(&self.root), "name": folder_name(&self.root)
            }])),
            "window/workDoneProgress/create"
            | "client/registerCapability"
            | "client/unregisterCapability"
            | "window/showMessageRequest" => Ok(Value::Null),
            other => Err(format!("{other} is not supported by flower-tui")),
        }
    }
}

impl Handler {
    fn published(&self, params: Value) {
        let Ok(p) = serde_json::from_value::<lsp_types::PublishDiagnosticsParams>(params) else {
            return;
        };
        let Some(path) = uri::to_path(&p.uri) else {
            return;
        };
        let shown = uri::shown(&path, &self.workspace);
        let found: Vec<Finding> = p
            .diagnostics
            .iter()
            .take(MAX_PER_FILE)
            .map(|d| Finding::from_lsp(&shown, d))
            .collect();
        let mut state = self.shared.lock();
        let Some(doc) = state.docs.get_mut(&path) else {
            return;
        };
        // An answer to an older version than the one sent: stale.
        if p.version.is_some_and(|v| v < doc.version) || doc.sent == 0 {
            return;
        }
        doc.found = found;
        doc.published = doc.sent;
        doc.published_at = Some(Instant::now());
    }

    fn progress(&self, params: &Value) {
        let token = match params.get("token") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => return,
        };
        let value = params.get("value");
        let kind = value.and_then(|v| v.get("kind")).and_then(Value::as_str);
        let mut state = self.shared.lock();
        match kind {
            Some("begin") => {
                let title = value
                    .and_then(|v| v.get("title"))
                    .and_then(Value::as_str)
                    .unwrap_or("working")
                    .chars()
                    .take(80)
                    .collect();
                state.progress.insert(token, title);
                // A flood of tokens never ended is bounded.
                while state.progress.len() > 64 {
                    state.progress.pop_first();
                }
            }
            Some("end") => {
                state.progress.remove(&token);
            }
            _ => {}
        }
    }
}

/// Titles of the work in progress, for a note.
pub(crate) fn busy_with(state: &State) -> Option<String> {
    let titles: BTreeSet<&str> = state.progress.values().map(String::as_str).collect();
    (!titles.is_empty()).then(|| titles.into_iter().take(3).collect::<Vec<_>>().join(", "))
}
