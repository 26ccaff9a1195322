//! Language servers against real ones: pylsp (with pyflakes) and typescript-language-server,
//! installed by `.ci/lsp-servers.sh` into `target/lsp-servers` (or `FLOWER_LSP_SERVERS`). A test
//! whose server is missing fails and says how to install it. The fault tests use a small server
//! of ours that misbehaves on purpose (`tests/fixtures/lsp/faulty_server.py`).

mod engine;
mod faults;
mod kill;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use flower_tui::engine::lsp::{LspParams, ServerSpec, spec};

/// Where the servers were installed.
pub fn servers_dir() -> PathBuf {
    std::env::var_os("FLOWER_LSP_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/lsp-servers"))
}

/// `PATH` with the installed servers first; panics naming the installer when one is missing.
pub fn server_path() -> String {
    let dir = servers_dir();
    let bins = [dir.join("venv/bin"), dir.join("node/node_modules/.bin")];
    for (bin, name) in [
        (&bins[0], "pylsp"),
        (&bins[1], "typescript-language-server"),
    ] {
        assert!(
            bin.join(name).exists(),
            "{name} is not installed in {}: run `bash .ci/lsp-servers.sh` (CI runs it)",
            bin.display()
        );
    }
    format!(
        "{}:{}:/usr/local/bin:/usr/bin:/bin",
        bins[0].display(),
        bins[1].display()
    )
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

/// Parameters for the real servers in `workspace`.
pub fn real_params(workspace: &Path) -> LspParams {
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    env.insert("PATH".into(), server_path());
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
