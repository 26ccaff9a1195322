//! Real MCP servers nobody here wrote, installed by the test set-up through the package registries
//! into a cache under `target/` (once; a lock keeps parallel tests and processes from racing; reused
//! when present): the reference server `@modelcontextprotocol/server-everything` from npm, and the
//! Python `mcp` SDK from PyPI (for `tests/support/mcp/http_server.py`). Versions are pinned.
//!
//! Only when the registry cannot be reached (or the client is not installed) does a test skip, with
//! a message saying so; any other install failure fails the test (`registry`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use super::registry::skip;
use super::registry::{install, run_step};

/// The npm package and version of the reference server.
pub const EVERYTHING: &str = "@modelcontextprotocol/server-everything@2026.8.31";
/// The PyPI requirement of the Python SDK.
pub const PYTHON_MCP: &str = "mcp==2.3.0";

fn cache_root() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mcp-servers")
}

/// The reference server's entry script (run it with `node <script> stdio`), or why the test skips.
pub fn everything() -> Result<PathBuf, String> {
    let dir = install(&cache_root(), "npm-server-everything-2026.8.31", |dir| {
        run_step(
            Command::new("npm")
                .args([
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--no-save",
                    "--loglevel=error",
                    "--prefix",
                ])
                .arg(dir)
                .arg(EVERYTHING),
            "npm",
        )
    })?;
    Ok(dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"))
}

/// A Python with the `mcp` SDK, or why the test skips.
pub fn python_with_mcp() -> Result<PathBuf, String> {
    let dir = install(&cache_root(), "py-mcp-2.3.0", |dir| {
        run_step(
            Command::new("python3").args(["-m", "venv"]).arg(dir),
            "python3",
        )?;
        run_step(&mut pip_install(&dir.join("bin/python"), PYTHON_MCP), "pip")
    })?;
    Ok(dir.join("bin/python"))
}

/// `<python> -m pip install <requirement>`, quiet and asking nothing (into that Python's venv).
pub fn pip_install(python: &Path, requirement: &str) -> Command {
    let mut pip = Command::new(python);
    pip.args([
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-input",
        "-q",
        requirement,
    ]);
    pip
}

/// The Python SDK server of `tests/support/mcp/http_server.py`, on a loopback port; killed on drop.
pub struct PythonServer {
    child: Child,
    pub url: String,
}

impl PythonServer {
    pub fn start(python: &Path) -> PythonServer {
        Self::start_on(python, 0)
    }

    /// The server on `port` (0: one the kernel picks), e.g. again where a killed one was.
    pub fn start_on(python: &Path, port: u16) -> PythonServer {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/mcp/http_server.py");
        let mut child = Command::new(python)
            .arg(script)
            .arg(port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the Python server");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let port = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(p) = line.strip_prefix("PORT ") {
                        break p.trim().to_string();
                    }
                }
                _ => {
                    let _ = child.kill();
                    panic!("the Python server ended before printing its port");
                }
            }
        };
        PythonServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kill it now (a server that goes away mid-session).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for PythonServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Processes whose environment holds `marker` (`NAME=value`), from `/proc`: finds a server and
/// everything it started, whoever their parent is now.
pub fn pids_with_env(marker: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        // A zombie keeps its environ readable until reaped; it is already dead for our purposes.
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            && stat
                .rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'))
        {
            continue;
        }
        if let Ok(env) = std::fs::read(format!("/proc/{pid}/environ"))
            && env.split(|b| *b == 0).any(|kv| kv == marker.as_bytes())
        {
            out.push(pid);
        }
    }
    out
}

/// Wait up to `limit` for no process to carry `marker`; the ones left.
pub fn wait_gone(marker: &str, limit: Duration) -> Vec<u32> {
    let start = Instant::now();
    loop {
        let left = pids_with_env(marker);
        if left.is_empty() || start.elapsed() > limit {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
