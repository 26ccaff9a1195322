//! Language servers against real ones: pylsp (with pyflakes) and typescript-language-server,
//! installed by the test set-up from PyPI and npm (`support::lsp_setup`; a test skips, saying so,
//! only when a registry cannot be reached). The fault tests use a small server of ours that
//! misbehaves on purpose (`tests/fixtures/lsp/faulty_server.py`).

mod attribution;
mod engine;
mod faults;
mod kill;
mod two_processes;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use flower_tui::engine::lsp::{LspParams, ServerSpec, spec};

use crate::support::lsp_setup::{self, skip};

/// The `PATH` of the installed servers, or None (said) when they cannot be installed here.
pub fn server_path(test: &str) -> Option<String> {
    match lsp_setup::servers() {
        Ok(servers) => Some(servers.path()),
        Err(why) => {
            skip(test, &why);
            None
        }
    }
}

/// The built-in servers, with the ones not installed here turned off (pyright would win over
/// pylsp where it is on PATH).
pub fn real_servers() -> Vec<ServerSpec> {
    spec::builtins()
        .into_iter()
        .map(|mut s| {
            s.enabled = matches!(s.name.as_str(), "pylsp" | "typescript");
            s
        })
        .collect()
}

/// Parameters for the real servers (on `path`) in `workspace`.
pub fn real_params(workspace: &Path, path: String) -> LspParams {
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    env.insert("PATH".into(), path);
    env.insert("HOME".into(), std::env::var("HOME").unwrap_or_default());
    LspParams::new(real_servers(), workspace.to_path_buf(), env)
}

/// Pids of the processes whose working directory is `dir` (the servers run in their root).
pub fn processes_in(dir: &Path) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        if std::fs::read_link(entry.path().join("cwd")).is_ok_and(|c| c == dir) {
            out.push(pid);
        }
    }
    out
}

/// Wait up to `cap` for no process to be left in `dir`; the ones left.
pub async fn left_in(dir: &Path, cap: Duration) -> Vec<u32> {
    let deadline = tokio::time::Instant::now() + cap;
    loop {
        let left = processes_in(dir);
        if left.is_empty() || tokio::time::Instant::now() >= deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
