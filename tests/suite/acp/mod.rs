//! `flower-tui acp` end to end, driven by a real third-party client: the ACP Python SDK
//! (`agent-client-protocol` on PyPI, pinned), installed by the test set-up into a venv under
//! `target/` (and by `.ci/run`). `client.py` plays the editor through a plan and reports what it
//! saw; the model is the loopback fake. A client that cannot be installed fails the test.
//!
//! The faults (malformed lines, unknown methods, a hang-up or a signal mid-turn, a second process
//! loading an open run) are sent as raw lines (`faults.rs`): no SDK would send them.

mod editor;
mod faults;
mod handoff;
mod load;
mod mcp;
mod terminal;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

use crate::support::fake::{self, FakeServer, U};
use crate::support::harness::KEY;
use crate::support::mcp_setup::pip_install;
use crate::support::pty::runtime;

/// The client's PyPI requirement.
pub(crate) const PYTHON_ACP: &str = "agent-client-protocol==0.12.1";
/// Where `.ci/run` and the set-up put its venv (under `target/tmp`).
const VENV: &str = "acp-client/py-acp-0.12.1";

/// How long one client run may take.
const RUN_TIMEOUT: Duration = Duration::from_secs(180);

/// The venv's Python with the ACP SDK, installed now if it is not yet (once; a file lock keeps
/// processes from racing). Panics when it cannot be installed.
pub(crate) fn python() -> PathBuf {
    static IN_PROCESS: Mutex<()> = Mutex::new(());
    let _guard = IN_PROCESS.lock().unwrap_or_else(|p| p.into_inner());
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(VENV);
    let python = dir.join("bin/python");
    let done = dir.join(".complete");
    if done.exists() {
        return python;
    }
    let root = dir.parent().unwrap();
    std::fs::create_dir_all(root).unwrap();
    let lock = std::fs::File::create(root.join(".lock")).unwrap();
    {
        use std::os::fd::AsRawFd;
        // SAFETY: flock on a descriptor we own; released when `lock` is dropped.
        unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) };
    }
    if done.exists() {
        return python;
    }
    let _ = std::fs::remove_dir_all(&dir);
    install_step(Command::new("python3").args(["-m", "venv"]).arg(&dir));
    install_step(&mut pip_install(&python, PYTHON_ACP));
    std::fs::write(&done, b"").unwrap();
    python
}

fn install_step(cmd: &mut Command) {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("the ACP client cannot be installed: cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "the ACP client ({PYTHON_ACP}) cannot be installed: {cmd:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A home for the agent: workspace, data and config dirs, kept across processes.
pub(crate) struct Home {
    dir: TempDir,
}

impl Home {
    pub(crate) fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        std::fs::create_dir_all(dir.path().join("config/flower")).unwrap();
        Home { dir }
    }

    /// The workspace (canonical, as the agent reports paths).
    pub(crate) fn ws(&self) -> PathBuf {
        self.dir.path().join("ws").canonicalize().unwrap()
    }

    pub(crate) fn data(&self) -> PathBuf {
        self.dir.path().join("data/flower")
    }

    /// The environment of the agent: only this home and the fake provider.
    pub(crate) fn env(&self, cmd: &mut Command, server: &FakeServer) {
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("ANTHROPIC_API_KEY", KEY)
            .env("ANTHROPIC_BASE_URL", server.base_url());
    }

    /// The run's manifest (the ledger) of session `id`.
    pub(crate) fn manifest(&self, id: &str) -> Value {
        let path = self.data().join("runs").join(id).join("manifest.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("no ledger at {}: {e}", path.display()));
        serde_json::from_str(&text).unwrap()
    }
}

/// Run the client through `plan` against `flower-tui acp ARGS`; its report. `plan.cwd` defaults
/// to the workspace.
pub(crate) fn drive(home: &Home, server: &FakeServer, mut plan: Value, args: &[&str]) -> Value {
    let python = python();
    if plan.get("cwd").is_none() {
        plan["cwd"] = Value::String(home.ws().display().to_string());
    }
    let stderr_log = home
        .dir
        .path()
        .join(format!("agent-stderr-{}.log", unique()));
    plan["stderr"] = Value::String(stderr_log.display().to_string());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/acp/client.py");
    let mut cmd = Command::new(python);
    home.env(&mut cmd, server);
    cmd.arg(script)
        .arg(plan.to_string())
        .arg(env!("CARGO_BIN_EXE_flower-tui"))
        .arg("acp")
        .args(args)
        .current_dir(home.dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > RUN_TIMEOUT {
            let _ = child.kill();
            panic!(
                "the ACP client did not finish within {RUN_TIMEOUT:?}; agent stderr:\n{}",
                std::fs::read_to_string(&stderr_log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    let agent_err = std::fs::read_to_string(&stderr_log).unwrap_or_default();
    assert!(
        status.success(),
        "the client failed ({status}):\n{err}\nagent stderr:\n{agent_err}"
    );
    serde_json::from_str(out.trim())
        .unwrap_or_else(|e| panic!("the client's report is not JSON ({e}):\n{out}\n{err}"))
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// The updates of the report, in order.
pub(crate) fn updates(report: &Value) -> Vec<&Value> {
    report["log"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "update")
        .map(|e| &e["update"])
        .collect()
}

/// The log entries of `kind` (`permission`, `read`, `write`).
pub(crate) fn entries<'a>(report: &'a Value, kind: &str) -> Vec<&'a Value> {
    report["log"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == kind)
        .collect()
}

/// The text of the agent's message chunks, joined.
pub(crate) fn reply_text(report: &Value) -> String {
    updates(report)
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

/// What every client run starts from: a runtime, the loopback fake model on it, and a fresh home.
/// Keep the runtime bound (`_rt`, not `_`) for the whole test: the fake model runs on it.
pub(crate) fn set_up() -> (tokio::runtime::Runtime, FakeServer, Home) {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    (rt, server, Home::new())
}

/// The flags of a run that hands off in blocking mode (window 40000, headroom 10000: a reply of
/// 31_000 input tokens crosses), with `review` seconds to review the document.
pub(crate) fn handoff_flags(review: &'static str) -> [&'static str; 9] {
    [
        "--yes",
        "--handoff-mode",
        "blocking",
        "--window",
        "40000",
        "--headroom",
        "10000",
        "--review",
        review,
    ]
}

/// Scripts the first turn of a run with [`handoff_flags`]: a tool call whose 31_000 input tokens
/// cross the line, then `doc` as the handoff document the model writes.
pub(crate) fn script_crossing(server: &FakeServer, doc: &str) {
    server.push(fake::anthropic::tool_use("t1", "list_dir", "{}", u(31_000)));
    server.push_writing(fake::anthropic::text(doc, u(31_500)));
}

/// Usage numbers for a scripted reply.
pub(crate) fn u(input: u64) -> U {
    U::new(input, 10)
}
