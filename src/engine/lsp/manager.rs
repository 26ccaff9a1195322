//! The language servers of a run: which server a file goes to (started on the first file of its
//! language and root), keeping the files flower-tui read or changed in sync with them, and
//! waiting — at most [`LspParams::wait`] — for what they say about a change.
//!
//! Nothing here holds a turn longer than that wait: a server that is starting, indexing, hung or
//! failed is a note in the result, never an error of the call. A file no server handles is
//! skipped without a word.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{Notify, mpsc};
use tokio::time::Instant;

use super::report::{ChangeReport, FileChange, Finding, OpenProblems};
use super::server::{Launch, Phase, ServerHandle, busy_with};
use super::spec::{ServerSpec, find_program, root_of};
use super::uri;
use crate::engine::checkpoint::{ChangeKind, Checkpoints, SnapshotId};

/// How long a call waits for diagnostics by default.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(3);
/// How long a server may take to answer `initialize` by default.
pub const DEFAULT_INIT_TIMEOUT: Duration = Duration::from_secs(20);
/// After the last file's answer, how long to wait for a follow-up (servers that publish
/// syntax and semantic problems separately).
const SETTLE: Duration = Duration::from_millis(150);
/// Larger files are not sent to a server.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// Servers running at once, at most (one per language and root).
const MAX_SERVERS: usize = 8;
/// How long all servers together may take to shut down.
const SHUTDOWN_CAP: Duration = Duration::from_secs(3);

/// What the servers are started with.
pub struct LspParams {
    /// The servers in order of preference (see `spec`).
    pub servers: Vec<ServerSpec>,
    pub workspace: PathBuf,
    /// flower-tui's environment: the servers' (with each one's own `env` on top); its `PATH`
    /// is where programs are looked for.
    pub env: BTreeMap<String, String>,
    pub wait: Duration,
    pub init_timeout: Duration,
    /// Notices for the front end (a server that failed, a configured one not found).
    pub notices: Option<mpsc::UnboundedSender<String>>,
}

impl LspParams {
    /// `servers` in `workspace` with `env`, the default waits and no notices.
    pub fn new(
        servers: Vec<ServerSpec>,
        workspace: PathBuf,
        env: BTreeMap<String, String>,
    ) -> Self {
        LspParams {
            servers,
            workspace,
            env,
            wait: DEFAULT_WAIT,
            init_timeout: DEFAULT_INIT_TIMEOUT,
            notices: None,
        }
    }
}

/// How a file changed, as far as its server needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Created,
    Modified,
    Deleted,
}

/// What [`LspManager::before_call`] learned: the files the call names and whether they existed.
#[derive(Debug, Default)]
pub struct CallWatch {
    named: Vec<(PathBuf, bool)>,
}

/// The servers of a run.
pub struct LspManager {
    specs: Vec<Arc<ServerSpec>>,
    workspace: PathBuf,
    env: BTreeMap<String, String>,
    wait: Duration,
    init_timeout: Duration,
    notices: Option<mpsc::UnboundedSender<String>>,
    running: Mutex<Vec<Arc<ServerHandle>>>,
    /// Where each spec's program was found (None: not found), looked up once.
    found: Mutex<HashMap<String, Option<PathBuf>>>,
    /// A hash of the text last sent for each file.
    sent: Mutex<HashMap<PathBuf, u64>>,
    changed: Arc<Notify>,
    seq: AtomicU64,
    closed: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl LspManager {
    pub fn new(p: LspParams) -> LspManager {
        LspManager {
            specs: p
                .servers
                .into_iter()
                .filter(|s| s.enabled)
                .map(Arc::new)
                .collect(),
            workspace: crate::engine::tools::paths::canonical_or_self(&p.workspace),
            env: p.env,
            wait: p.wait,
            init_timeout: p.init_timeout,
            notices: p.notices,
            running: Mutex::new(Vec::new()),
            found: Mutex::new(HashMap::new()),
            sent: Mutex::new(HashMap::new()),
            changed: Arc::new(Notify::new()),
            seq: AtomicU64::new(1),
            closed: AtomicBool::new(false),
        }
    }

    pub(crate) fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Where `spec`'s program is, looked up once.
    fn program(&self, spec: &ServerSpec) -> Option<PathBuf> {
        let mut found = lock(&self.found);
        if let Some(p) = found.get(&spec.name) {
            return p.clone();
        }
        let path_var = self.env.get("PATH").map(String::as_str);
        let p = find_program(spec.program(), path_var);
        if p.is_none() && !spec.builtin {
            self.tell(format!(
                "language server `{}`: `{}` not found (PATH); its files get no diagnostics",
                spec.name,
                spec.program()
            ));
        }
        found.insert(spec.name.clone(), p.clone());
        p
    }

    fn tell(&self, message: String) {
        if let Some(tx) = &self.notices {
            let _ = tx.send(message);
        }
    }

    /// The server for `path` (started now if it is the first file of its language and root);
    /// None when no server handles it or none can be had.
    pub(crate) fn server_for(&self, path: &Path) -> Option<Arc<ServerHandle>> {
        if !path.starts_with(&self.workspace) || self.closed.load(Ordering::SeqCst) {
            return None;
        }
        let (spec, program) = self
            .specs
            .iter()
            .filter(|s| s.handles(path))
            .find_map(|s| Some((s.clone(), self.program(s)?)))?;
        let root = root_of(&spec, path, &self.workspace);
        let mut running = lock(&self.running);
        if let Some(h) = running
            .iter()
            .find(|h| h.spec.name == spec.name && h.root == root)
        {
            return Some(h.clone());
        }
        if running.len() >= MAX_SERVERS {
            return None;
        }
        let mut resolved = (*spec).clone();
        if let Some(first) = resolved.command.first_mut() {
            *first = program.display().to_string();
        }
        let mut env = self.env.clone();
        env.extend(spec.env.clone());
        tracing::info!(server = %spec.name, root = %root.display(), "language server starting");
        let handle = Arc::new(ServerHandle::start(Launch {
            spec: Arc::new(ServerSpec {
                name: spec.name.clone(),
                ..resolved
            }),
            root,
            workspace: self.workspace.clone(),
            env,
            init_timeout: self.init_timeout,
            changed: self.changed.clone(),
            notices: self.notices.clone(),
        }));
        running.push(handle.clone());
        Some(handle)
    }

    /// Send `path` as it is on disk to its server unless that text was sent last; the sync's
    /// number (None: no server, unreadable, too large or not text).
    fn sync(&self, h: &ServerHandle, path: &Path) -> Option<u64> {
        let meta = std::fs::metadata(path).ok()?;
        if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
            return None;
        }
        let text = String::from_utf8(std::fs::read(path).ok()?).ok()?;
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut hasher);
        let hash = hasher.finish();
        if lock(&self.sent).insert(path.to_path_buf(), hash) == Some(hash) {
            let wanted = h.lock().docs.get(path).map(|d| d.wanted);
            if let Some(seq) = wanted {
                return Some(seq);
            }
        }
        let seq = self.seq.fetch_add(1, Ordering::SeqCst);
        h.sync(path, Arc::from(text), seq);
        Some(seq)
    }

    /// A file was read: open it in its server (started now if needed), so its problems are known
    /// before the model changes it. Returns at once.
    pub fn touch(&self, path: &Path) {
        if let Some(h) = self.server_for(path) {
            let _ = self.sync(&h, path);
        }
    }

    /// Before a call: a read opens its file; a write or edit sends its file as it is now, unless
    /// that text was sent last (what is wrong before the change: a file another writer changed
    /// since is compared with what they left, not with what this process last sent); the named
    /// files are remembered.
    pub fn before_call(&self, tool: &str, input: &serde_json::Value) -> CallWatch {
        use crate::engine::tools::names;
        let path = input
            .get("path")
            .and_then(serde_json::Value::as_str)
            .filter(|p| !p.trim().is_empty())
            .map(|raw| crate::engine::tools::paths::resolve(&self.workspace, raw));
        let Some(path) = path else {
            return CallWatch::default();
        };
        if tool == names::READ_FILE {
            self.touch(&path);
            return CallWatch::default();
        }
        if !names::writes_files(tool) {
            return CallWatch::default();
        }
        let existed = path.is_file();
        if existed && let Some(h) = self.server_for(&path) {
            let _ = self.sync(&h, &path);
        }
        CallWatch {
            named: vec![(path, existed)],
        }
    }

    /// After a call: the files it changed (a write or edit: the file it named; another call:
    /// the difference of its two checkpoints, when there are) are sent to their servers, and
    /// what they say about them is compared with before. None when no changed file has a server.
    pub async fn after_call(
        &self,
        watch: CallWatch,
        checkpoints: Option<(Checkpoints, SnapshotId, SnapshotId)>,
    ) -> Option<ChangeReport> {
        let deadline = Instant::now() + self.wait;
        let changed = match checkpoints {
            _ if !watch.named.is_empty() => named_changes(watch),
            Some((store, before, after)) => checkpoint_changes(&store, before, after).await,
            None => Vec::new(),
        };
        let mut targets = Vec::new();
        for (path, kind) in changed {
            // A server given up on, once a result said so, is passed over like a file of no
            // known language.
            let Some(h) = self.server_for(&path).filter(|h| !h.lock().failure_told) else {
                continue;
            };
            if kind == Kind::Deleted {
                lock(&self.sent).remove(&path);
                h.close(&path);
                continue;
            }
            targets.push((h, path, kind));
        }
        if targets.is_empty() {
            return None;
        }
        // What each file had before: wait (within the same deadline) for the answer to the
        // text sent before the call, if it is still on its way.
        let pending: Vec<(Arc<ServerHandle>, PathBuf, u64)> = targets
            .iter()
            .filter_map(|(h, p, _)| {
                let d = h.lock().docs.get(p).cloned()?;
                (d.wanted > 0 && d.published < d.wanted).then(|| (h.clone(), p.clone(), d.wanted))
            })
            .collect();
        self.wait_fresh(&pending, deadline, false).await;
        let mut files = Vec::new();
        let mut waits = Vec::new();
        for (h, path, kind) in &targets {
            let before = match kind {
                Kind::Created => Some(Vec::new()),
                _ => h
                    .lock()
                    .docs
                    .get(path)
                    .filter(|d| d.published > 0 && d.published == d.wanted)
                    .map(|d| d.found.clone()),
            };
            if let Some(seq) = self.sync(h, path) {
                waits.push((h.clone(), path.clone(), seq));
                files.push((before, h.clone(), path.clone(), seq));
            }
        }
        self.wait_fresh(&waits, deadline, true).await;
        let mut notes = BTreeSet::new();
        let mut compared = Vec::new();
        for (before, h, path, seq) in files {
            let mut state = h.lock();
            match state.docs.get(&path).filter(|d| d.published >= seq) {
                Some(d) => compared.push(FileChange {
                    path: uri::shown(&path, &self.workspace),
                    before,
                    after: d.found.clone(),
                }),
                None => {
                    notes.insert(self.why_silent(&h, &state, &path));
                    state.failure_told |= matches!(state.phase, Phase::Failed { .. });
                }
            }
        }
        Some(ChangeReport::of(&compared, notes.into_iter().collect()))
    }

    /// Why `h` said nothing about `path` in time.
    fn why_silent(&self, h: &ServerHandle, state: &super::server::State, path: &Path) -> String {
        let (name, file) = (&h.spec.name, uri::shown(path, &self.workspace));
        let secs = self.wait.as_secs_f32();
        match &state.phase {
            Phase::Starting => format!("`{name}` is still starting: no diagnostics for {file} yet"),
            Phase::Restarting { reason } => {
                format!(
                    "`{name}` failed ({reason}) and is restarting: no diagnostics for {file} yet"
                )
            }
            Phase::Failed { reason } => format!(
                "`{name}` failed ({reason}) and is not restarted again: no diagnostics for {file} \
                 or its other files from now on"
            ),
            Phase::Stopped => format!("`{name}` has stopped: no diagnostics for {file}"),
            Phase::Ready => match busy_with(state) {
                Some(work) => format!(
                    "`{name}` is still busy ({work}): no diagnostics for {file} within {secs:.0} s"
                ),
                None => format!("`{name}` said nothing about {file} within {secs:.0} s"),
            },
        }
    }

    /// Wait until every target's server answered its sync (or failed), then, with `settle`,
    /// until their answers have been quiet for a moment; never past `deadline`.
    async fn wait_fresh(
        &self,
        targets: &[(Arc<ServerHandle>, PathBuf, u64)],
        deadline: Instant,
        settle: bool,
    ) {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let now = Instant::now();
            let mut all = true;
            let mut last = None;
            for (h, path, seq) in targets {
                let state = h.lock();
                if matches!(state.phase, Phase::Failed { .. } | Phase::Stopped) {
                    continue;
                }
                match state.docs.get(path) {
                    Some(d) if d.published >= *seq => last = last.max(d.published_at),
                    _ => all = false,
                }
            }
            let wake = match (all, last) {
                (true, Some(t)) if settle => Instant::from_std(t) + SETTLE,
                (true, _) => return,
                (false, _) => deadline,
            };
            if now >= wake.min(deadline) {
                return;
            }
            let _ = tokio::time::timeout_at(wake.min(deadline), notified).await;
        }
    }

    fn handles(&self) -> Vec<Arc<ServerHandle>> {
        lock(&self.running).clone()
    }

    /// Stop every server (`shutdown`, `exit`, then their process groups are killed), within a
    /// few seconds in all. No server starts after this.
    pub async fn shutdown(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let all = self.handles();
        let stops = futures_util::future::join_all(all.iter().map(|h| h.shutdown()));
        let _ = tokio::time::timeout(SHUTDOWN_CAP, stops).await;
    }

    /// The latest problems of every file the servers have open and answered for.
    pub fn open_problems(&self) -> OpenProblems {
        let mut open = OpenProblems::default();
        for h in self.handles() {
            let state = h.lock();
            for (path, d) in &state.docs {
                if d.published > 0 {
                    open.files.push(uri::shown(path, &self.workspace));
                    open.found.extend(d.found.iter().cloned());
                }
            }
        }
        open
    }

    pub(crate) fn specs(&self) -> &[Arc<ServerSpec>] {
        &self.specs
    }

    pub(crate) fn running(&self) -> Vec<Arc<ServerHandle>> {
        self.handles()
    }

    pub(crate) fn is_found(&self, spec: &ServerSpec) -> bool {
        self.program(spec).is_some()
    }

    /// Whether any enabled server's program is found (the `diagnostics` tool is offered then).
    pub fn any_found(&self) -> bool {
        self.specs.iter().any(|s| self.is_found(s))
    }

    /// Bring the files to their servers as they are on disk now and wait for what they say:
    /// for the `diagnostics` tool. Files gone from disk are closed.
    pub(crate) async fn refresh(&self, paths: &[PathBuf]) -> (Vec<String>, Vec<String>) {
        let deadline = Instant::now() + self.wait;
        let mut waits = Vec::new();
        for path in paths {
            let Some(h) = self.server_for(path) else {
                continue;
            };
            if !path.is_file() {
                lock(&self.sent).remove(path);
                h.close(path);
                continue;
            }
            if let Some(seq) = self.sync(&h, path) {
                waits.push((h, path.clone(), seq));
            }
        }
        self.wait_fresh(&waits, deadline, true).await;
        let mut files = Vec::new();
        let mut notes = BTreeSet::new();
        for (h, path, seq) in &waits {
            let state = h.lock();
            files.push(uri::shown(path, &self.workspace));
            if state.docs.get(path).is_none_or(|d| d.published < *seq) {
                notes.insert(self.why_silent(h, &state, path));
            }
        }
        (files, notes.into_iter().collect())
    }

    /// Every file the servers have open.
    pub(crate) fn open_files(&self) -> Vec<PathBuf> {
        self.handles()
            .iter()
            .flat_map(|h| h.lock().docs.keys().cloned().collect::<Vec<_>>())
            .collect()
    }

    /// The latest problems of `path` (empty when none was published).
    pub(crate) fn problems_of(&self, path: &Path) -> Vec<Finding> {
        self.handles()
            .iter()
            .filter_map(|h| h.lock().docs.get(path).map(|d| d.found.clone()))
            .flatten()
            .collect()
    }
}

/// The file a write or edit named, if it is there now: created or modified.
fn named_changes(watch: CallWatch) -> Vec<(PathBuf, Kind)> {
    watch
        .named
        .into_iter()
        .filter(|(p, _)| p.is_file())
        .map(|(p, existed)| {
            let kind = if existed {
                Kind::Modified
            } else {
                Kind::Created
            };
            (p, kind)
        })
        .collect()
}

/// The files that differ between a call's two checkpoints, and how.
async fn checkpoint_changes(
    store: &Checkpoints,
    before: SnapshotId,
    after: SnapshotId,
) -> Vec<(PathBuf, Kind)> {
    let root = store.workspace().to_path_buf();
    let Ok(files) = store
        .in_background(move |s| s.changed_files(&before, &after))
        .await
    else {
        return Vec::new();
    };
    files
        .into_iter()
        .map(|(rel, kind)| {
            let kind = match kind {
                ChangeKind::Created => Kind::Created,
                ChangeKind::Deleted => Kind::Deleted,
                ChangeKind::Modified | ChangeKind::ModeChanged => Kind::Modified,
            };
            let path = crate::engine::tools::paths::canonical_or_self(&rel.on(&root));
            (path, kind)
        })
        .collect()
}
