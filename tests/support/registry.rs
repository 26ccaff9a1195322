//! Installing third-party programs the tests run against, through the package registries' own
//! clients (npm, pip): into a cache under `target/`, once (a mutex within the process, a file lock
//! across processes; a finished install is marked complete and reused), each step within a time
//! cap.
//!
//! Only when the registry cannot be reached (or the client is not installed) is the answer a skip,
//! with a message saying so; any other install failure panics, failing the test.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long one install step may take.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(600);

/// Print why a test does not run (cargo shows it with `--nocapture`, nextest always).
pub fn skip(test: &str, why: &str) {
    eprintln!("SKIPPED {test}: {why}");
}

/// `name` under the cache `root`, made by `make` unless already complete. Holds a process-wide mutex and
/// a file lock across processes.
pub fn install(
    root: &Path,
    name: &str,
    make: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<PathBuf, String> {
    static IN_PROCESS: Mutex<()> = Mutex::new(());
    let _guard = IN_PROCESS.lock().unwrap_or_else(|p| p.into_inner());
    let dir = root.join(name);
    let done = dir.join(".complete");
    if done.exists() {
        return Ok(dir);
    }
    std::fs::create_dir_all(root).map_err(|e| format!("cannot create {}: {e}", root.display()))?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(root.join(".lock"))
        .map_err(|e| format!("cannot open the install lock: {e}"))?;
    {
        use std::os::fd::AsRawFd;
        // SAFETY: flock on a descriptor we own; released when `lock` is dropped.
        unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) };
    }
    if done.exists() {
        return Ok(dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    make(&dir)?;
    std::fs::write(&done, b"")
        .map_err(|e| format!("cannot mark {} complete: {e}", dir.display()))?;
    Ok(dir)
}

/// Run one install step. `Err` (a skip) only when the client is missing or the registry cannot be
/// reached; any other failure panics.
pub fn run_step(cmd: &mut Command, client: &str) -> Result<(), String> {
    let started = Instant::now();
    let mut child = match cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!("`{client}` is not installed on this machine"));
        }
        Err(e) => panic!("cannot run {client}: {e}"),
    };
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let out = std::thread::spawn(move || read_all(stdout));
    let err = std::thread::spawn(move || read_all(stderr));
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > INSTALL_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{client} install did not finish within {INSTALL_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = format!(
        "{}{}",
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default()
    );
    if status.success() {
        return Ok(());
    }
    const NETWORK: &[&str] = &[
        "ENOTFOUND",
        "EAI_AGAIN",
        "ECONNREFUSED",
        "ECONNRESET",
        "ETIMEDOUT",
        "ENETUNREACH",
        "network request to",
        "NewConnectionError",
        "Temporary failure in name resolution",
        "Network is unreachable",
        "Max retries exceeded",
        "ConnectTimeoutError",
        "ProxyError",
        // pip found nothing at all for a package that exists: its index did not answer.
        "(from versions: none)",
    ];
    let network_line = text
        .lines()
        .find(|line| NETWORK.iter().any(|n| line.contains(n)));
    if let Some(line) = network_line {
        let line: String = line.trim().chars().take(200).collect();
        return Err(format!("the {client} registry cannot be reached: {line}"));
    }
    panic!("{client} install failed ({status}):\n{text}");
}

fn read_all(r: Option<impl std::io::Read>) -> String {
    let mut s = String::new();
    if let Some(mut r) = r {
        let _ = r.read_to_string(&mut s);
    }
    s
}
