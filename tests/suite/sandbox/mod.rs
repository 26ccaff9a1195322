//! The `bash` tool's OS sandbox, for real: the kernel's Landlock and seccomp on real commands
//! in real directories. Where this kernel has no Landlock, the file-system tests assert that the
//! sandbox reports it does not confine writes (and run nothing that would write outside).

mod binary;
mod files;
mod git;
mod network;
mod processes;
mod services;
mod wired;

use std::path::{Path, PathBuf};

use flower_tui::engine::tools::sandbox::{self, Enforcement, SandboxPolicy, Support};
use flower_tui::engine::tools::{self, ToolCtx, ToolOutput};

use crate::support::fake::{Reply, U, anthropic as a};

/// A folder outside every temp dir, where the tests make their workspaces, homes and "outside"
/// folders: the build's own temp folder, or, when the checkout itself lies in a temp dir (a clone
/// under `/tmp`), a folder in the home directory.
pub(crate) fn base() -> PathBuf {
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    if !sandbox::in_a_temp_dir(&target) {
        return target;
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute() && !sandbox::in_a_temp_dir(h))
        .expect("the sandbox tests need a folder outside the temp dirs: the checkout or $HOME");
    let base = home.join(".cache").join("flower-tui-sandbox-tests");
    std::fs::create_dir_all(&base).unwrap();
    base
}

/// A workspace and a folder outside it, both outside every temp dir (which the sandbox lets
/// commands write): under [`base`].
pub(crate) struct Place {
    _dir: tempfile::TempDir,
    pub ws: PathBuf,
    pub outside: PathBuf,
}

pub(crate) fn place() -> Place {
    let dir = tempfile::tempdir_in(base()).unwrap();
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let temp = std::env::temp_dir().canonicalize().unwrap();
    let ws = ws.canonicalize().unwrap();
    assert!(
        !ws.starts_with(&temp),
        "the test workspace {} must not be in the temp dir {}",
        ws.display(),
        temp.display()
    );
    let outside = outside.canonicalize().unwrap();
    Place {
        _dir: dir,
        ws,
        outside,
    }
}

/// Run `command` with the real `bash` tool under `policy` in `ws`.
pub(crate) async fn bash(ws: &Path, policy: &SandboxPolicy, command: &str) -> ToolOutput {
    let ctx = ToolCtx {
        sandbox: policy.clone(),
        ..ToolCtx::new(ws, "sandbox-test")
    };
    tools::run("bash", &serde_json::json!({ "command": command }), &ctx).await
}

/// [`bash`], and the call succeeded (the failure shows its output); what it printed.
pub(crate) async fn ran(ws: &Path, policy: &SandboxPolicy, command: &str) -> String {
    let out = bash(ws, policy, command).await;
    assert!(!out.is_error, "{}", out.content);
    out.content
}

/// The model's `bash` call `id` running `command`.
pub(crate) fn bash_call(id: &str, command: &str) -> Reply {
    a::tool_use(
        id,
        "bash",
        &serde_json::json!({ "command": command }).to_string(),
        U::new(1000, 20),
    )
}

/// Whether `policy` confines writes on this machine. When it does not, this asserts the sandbox
/// says so, consistently with what the kernel reports, and prints it: nothing is skipped silently.
pub(crate) fn confines_writes(policy: &SandboxPolicy, ws: &Path) -> bool {
    let enforcement = sandbox::enforcement(policy, ws).unwrap();
    match (&enforcement, Support::current()) {
        (Enforcement::Landlock { abi }, Support::Landlock { abi: kernel }) => {
            assert_eq!(*abi, kernel);
            true
        }
        (Enforcement::FilterOnly { reason }, Support::NoLandlock { reason: kernel }) => {
            assert_eq!(reason, &kernel);
            eprintln!("NOT ENFORCED: this kernel has no Landlock ({reason}); asserting the report");
            false
        }
        other => panic!("the sandbox's report disagrees with the kernel: {other:?}"),
    }
}

/// A file a test may create outside every writable place; removed when dropped, so a sandbox
/// that failed to refuse it leaves nothing behind.
pub(crate) struct Stray(pub PathBuf);

impl Drop for Stray {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A name no other test run uses.
pub(crate) fn unique(prefix: &str) -> String {
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        flower_tui::engine::fsutil::unique()
    )
}
