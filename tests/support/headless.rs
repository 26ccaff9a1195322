//! The real binary headless against the loopback fake. A [`Scenario`] is a temp home (HOME, the
//! XDG data and config dirs under it, and the workspace the binary runs in: the home itself) with
//! a fake server; [`Scenario::headless`] runs `flower-tui ARGS` there to its end and gives back a
//! [`Run`]: the exit, the output and the JSON-lines events.
//!
//! ```ignore
//! let s = Scenario::new().await;
//! s.script().tool("bash", r#"{"command":"ls"}"#).text("done");
//! let run = s.headless(&["-p", "list", "--yes"]).await.success();
//! assert!(has(&run.events(), "tool_result"));
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use flower_tui::engine::ledger::Manifest;
use serde_json::Value;
use tempfile::TempDir;

use super::check::assert_exit;
use super::fake::FakeServer;
use super::harness::KEY;
use super::script::Script;

/// The flags of a run whose handoff stops the main thread (the blocking flow: its replies are
/// scripted in order) in a 40,000 window with 10,000 headroom, approving its own calls.
pub const BLOCKING: &str = "--yes --handoff-mode blocking --window 40000 --headroom 10000";

/// Command-line flags written as one line, split at spaces (none of them holds a space). The
/// line is kept for the rest of the test run, so the flags can be built in place.
pub fn flags(line: &str) -> Vec<&'static str> {
    let line: &'static str = Box::leak(line.to_owned().into_boxed_str());
    line.split_whitespace().collect()
}

/// The run directory under `home`'s data dir whose manifest was written last.
#[track_caller]
pub fn newest_run(home: &Path) -> PathBuf {
    let runs = home.join("data/flower/runs");
    let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
    for e in std::fs::read_dir(&runs).unwrap().flatten() {
        let m = e.path().join("manifest.json");
        if let Ok(t) = std::fs::metadata(&m).and_then(|md| md.modified())
            && newest.as_ref().is_none_or(|(n, _)| t > *n)
        {
            newest = Some((t, e.path()));
        }
    }
    newest.expect("a run").1
}

/// The newest run's manifest under `home`, as JSON.
#[track_caller]
pub fn manifest(home: &Path) -> Value {
    let text = std::fs::read_to_string(newest_run(home).join("manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The newest run's manifest under `home`, as the ledger reads it.
#[track_caller]
pub fn ledger(home: &Path) -> Manifest {
    Manifest::load(&newest_run(home).join("manifest.json")).unwrap()
}

/// The binary with an empty environment but PATH, its HOME and XDG dirs in `home`, run in `home`.
pub fn bin(home: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_flower-tui"));
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .current_dir(home);
    c
}

/// [`bin`] talking to `server` with the test key.
pub fn bin_for(home: &Path, server: &FakeServer) -> Command {
    let mut c = bin(home);
    c.env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.base_url());
    c
}

/// Run `c` to its end off the async runtime (the fake server keeps answering meanwhile).
pub async fn run(mut c: Command) -> Run {
    let output = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    Run { output }
}

/// A home with a fake server: the place a headless run happens.
pub struct Scenario {
    pub server: FakeServer,
    home: TempDir,
}

impl Scenario {
    /// A fresh home and fake server (inside a tokio runtime).
    pub async fn new() -> Scenario {
        Scenario {
            server: FakeServer::start().await,
            home: tempfile::tempdir().unwrap(),
        }
    }

    /// The model's replies (see [`Script`]).
    pub fn script(&self) -> Script<'_> {
        self.server.script()
    }

    /// The home, which is also the workspace.
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// A path in the home.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.home.path().join(rel)
    }

    /// Write a file in the home (its folders made); its path.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        path
    }

    /// Write the user's `config.toml`.
    pub fn config(&self, toml: &str) -> PathBuf {
        self.write("config/flower/config.toml", toml)
    }

    /// The binary in this home, talking to the fake with the test key; add arguments and run it
    /// with [`run`].
    pub fn command(&self) -> Command {
        bin_for(self.home(), &self.server)
    }

    /// Run `flower-tui ARGS` headless in this home to its end.
    pub async fn headless(&self, args: &[&str]) -> Run {
        let mut c = self.command();
        c.args(args);
        run(c).await
    }
}

/// A finished run of the binary.
#[derive(Debug)]
pub struct Run {
    pub output: Output,
}

impl Run {
    /// Its exit code (None when a signal ended it).
    pub fn code(&self) -> Option<i32> {
        self.output.status.code()
    }

    /// The same run, once it is checked that it exited 0 (its output shown if not).
    #[track_caller]
    pub fn success(self) -> Run {
        assert_exit(&self.output, 0);
        self
    }

    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Every line of stdout as JSON (a line that is not JSON fails the test).
    #[track_caller]
    pub fn events(&self) -> Vec<Value> {
        lines(&self.output)
    }

    /// The run directory the binary named on stderr (`-v` or not, it says where it writes).
    #[track_caller]
    pub fn run_dir(&self) -> PathBuf {
        let err = self.stderr();
        let dir = err
            .lines()
            .find_map(|l| l.strip_prefix("flower-tui: run directory "))
            .unwrap_or_else(|| panic!("no run directory named on stderr:\n{err}"));
        PathBuf::from(dir)
    }
}

/// Every line of stdout as JSON (a line that is not JSON fails the test).
#[track_caller]
pub fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

/// Stderr as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
