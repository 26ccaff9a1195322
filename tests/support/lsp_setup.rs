//! Real language servers nobody here wrote, installed by the test set-up through the package
//! registries into a cache under `target/` (`registry`: once, under a lock, reused when present):
//! pylsp with pyflakes from PyPI (in a virtual environment) and typescript-language-server with
//! typescript from npm. Versions are pinned. The tests and the `lsp` bench share it.
//!
//! Only when the registry cannot be reached (or the client is not installed) does a test skip,
//! with a message saying so; any other install failure fails the test.

use std::path::{Path, PathBuf};
use std::process::Command;

pub use super::registry::skip;
use super::registry::{install, run_step};

/// The PyPI requirements of pylsp and the linter it reports with.
pub const PYLSP: &[&str] = &["python-lsp-server[pyflakes]==1.15.0", "pyflakes==3.2.0"];
/// The npm packages of the TypeScript server and the compiler it drives.
pub const TYPESCRIPT: &[&str] = &["typescript-language-server@5.3.0", "typescript@5.9.3"];

fn cache_root() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("lsp-servers")
}

/// Where the installed servers' programs are.
pub struct LspServers {
    /// Holds `pylsp`.
    pub python_bin: PathBuf,
    /// Holds `typescript-language-server` (and `tsserver`).
    pub node_bin: PathBuf,
}

impl LspServers {
    /// A `PATH` with the servers' folders first, then `node`'s (the TypeScript server is a node
    /// script) and the system's: no other language server of this machine is on it.
    pub fn path(&self) -> String {
        let mut dirs = vec![self.python_bin.clone(), self.node_bin.clone()];
        let node = std::env::var_os("PATH").and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("node"))
                .find(|n| n.is_file())
        });
        dirs.extend(node.and_then(|n| n.parent().map(Path::to_path_buf)));
        dirs.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from));
        std::env::join_paths(dirs)
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }
}

/// Both servers, installed now if they are not yet, or why the test skips.
pub fn servers() -> Result<LspServers, String> {
    let py = install(&cache_root(), "pylsp-1.15.0", |dir| {
        run_step(
            Command::new("python3").args(["-m", "venv"]).arg(dir),
            "python3",
        )?;
        run_step(
            Command::new(dir.join("bin/python"))
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--disable-pip-version-check",
                    "--no-input",
                    "-q",
                ])
                .args(PYLSP),
            "pip",
        )
    })?;
    let node = install(&cache_root(), "typescript-language-server-5.3.0", |dir| {
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
                .args(TYPESCRIPT),
            "npm",
        )
    })?;
    let servers = LspServers {
        python_bin: py.join("bin"),
        node_bin: node.join("node_modules/.bin"),
    };
    for program in [
        servers.python_bin.join("pylsp"),
        servers.node_bin.join("typescript-language-server"),
    ] {
        assert!(
            program.is_file(),
            "{} is missing after its install",
            program.display()
        );
    }
    Ok(servers)
}
