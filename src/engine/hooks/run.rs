//! Running one hook command: `bash -c` in the workspace, in a session and process group of its own
//! (no controlling terminal) that dies with flower-tui (`tools::lifeline`), the event's JSON on stdin, stdout and stderr read as they
//! come and capped (a hook that floods its output costs no memory), the whole group killed at the
//! timeout or when the caller stops waiting. Output is masked for secrets before anything sees it.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::time::Instant;

use crate::engine::secrets;
use crate::engine::tools::lifeline::{self, GroupKiller};

/// Bytes kept of each of a hook's stdout and stderr; the rest is read and counted.
pub const OUTPUT_CAP: usize = 64 * 1024;
/// After the hook exits, how long to keep reading what its background processes still write.
const DRAIN_GRACE: Duration = Duration::from_millis(300);

/// How a hook's process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookExit {
    /// It exited with this code.
    Code(i32),
    /// A signal killed it (not ours).
    Signal(i32),
    /// It ran past its timeout; it and its group were killed.
    TimedOut(Duration),
    /// It could not be started or waited for.
    Failed(String),
}

impl std::fmt::Display for HookExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HookExit::Code(c) => write!(f, "exit code {c}"),
            HookExit::Signal(s) => write!(f, "killed by signal {s}"),
            HookExit::TimedOut(t) => write!(f, "timed out after {}s", t.as_secs_f64()),
            HookExit::Failed(why) => write!(f, "could not run: {why}"),
        }
    }
}

/// One of a hook's output streams as kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// The first [`OUTPUT_CAP`] bytes (cut back to a whitespace when more followed, so a secret
    /// is never shown in part), as text, secrets masked.
    pub text: String,
    /// Bytes read and not kept.
    pub dropped: u64,
}

/// A hook's process, finished.
#[derive(Debug)]
pub(super) struct Finished {
    pub exit: HookExit,
    pub stdout: Captured,
    pub stderr: Captured,
    pub elapsed: Duration,
}

/// Run `command` with `stdin` as its input.
pub(super) async fn run(
    command: &str,
    stdin: Vec<u8>,
    workspace: &Path,
    timeout: Duration,
) -> Finished {
    let started = Instant::now();
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(command)
        .current_dir(workspace)
        .env("CLAUDE_PROJECT_DIR", workspace)
        .env("FLOWER_PROJECT_DIR", workspace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // SAFETY: the closure runs in the forked child before exec and calls only an
    // async-signal-safe function (setsid); it allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
            // A session of its own: its own process group (killed as one), and no controlling
            // terminal, so a hook can neither read the TUI's keys nor draw over its screen.
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    // No provider keys; the hook and its group die with flower-tui.
    lifeline::prepare(&mut cmd);
    let mut child = match lifeline::spawn_watched(cmd) {
        Ok(child) => child,
        Err(e) => {
            return Finished {
                exit: HookExit::Failed(e.to_string()),
                stdout: Captured::default(),
                stderr: Captured::default(),
                elapsed: started.elapsed(),
            };
        }
    };
    let mut out = Capture::default();
    let mut err = Capture::default();
    let exit = supervise(&mut child, stdin, timeout, &mut out, &mut err).await;
    Finished {
        exit,
        stdout: out.finish(),
        stderr: err.finish(),
        elapsed: started.elapsed(),
    }
}

/// Feed the hook, read its output, wait for it (or kill its group at the timeout).
async fn supervise(
    child: &mut Child,
    stdin: Vec<u8>,
    timeout: Duration,
    out: &mut Capture,
    err: &mut Capture,
) -> HookExit {
    let mut group = GroupKiller::new(child);
    let pipe = child.stdin.take();
    let write = async move {
        // A hook that does not read its input closes the pipe: that is no error.
        if let Some(mut pipe) = pipe {
            let _ = pipe.write_all(&stdin).await;
            let _ = pipe.shutdown().await;
        }
    };
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let read = async { tokio::join!(drain(stdout, out), drain(stderr, err)) };
    tokio::pin!(write, read);
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let (mut written, mut read_all) = (false, false);
    let ended = loop {
        tokio::select! {
            status = child.wait() => {
                group.disarm();
                break status.map(|s| exit_of(&s)).unwrap_or_else(|e| HookExit::Failed(e.to_string()));
            }
            () = &mut deadline => {
                group.kill();
                let _ = child.start_kill();
                let _ = child.wait().await;
                group.disarm();
                break HookExit::TimedOut(timeout);
            }
            () = &mut write, if !written => written = true,
            _ = &mut read, if !read_all => read_all = true,
        }
    };
    if !read_all {
        // What is left in the pipes; background processes that keep them open are not waited for.
        let _ = tokio::time::timeout(DRAIN_GRACE, &mut read).await;
    }
    ended
}

fn exit_of(status: &ExitStatus) -> HookExit {
    if let Some(code) = status.code() {
        return HookExit::Code(code);
    }
    use std::os::unix::process::ExitStatusExt;
    match status.signal() {
        Some(sig) => HookExit::Signal(sig),
        None => HookExit::Failed(status.to_string()),
    }
}

async fn drain(reader: Option<impl AsyncRead + Unpin>, into: &mut Capture) {
    let Some(mut reader) = reader else { return };
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => into.push(chunk.get(..n).unwrap_or_default()),
        }
    }
}

/// The first [`OUTPUT_CAP`] bytes of a stream, and a count of the rest.
#[derive(Default)]
struct Capture {
    kept: Vec<u8>,
    dropped: u64,
}

impl Capture {
    fn push(&mut self, data: &[u8]) {
        let room = OUTPUT_CAP.saturating_sub(self.kept.len());
        let (keep, rest) = data.split_at(data.len().min(room));
        self.kept.extend_from_slice(keep);
        self.dropped += rest.len() as u64;
    }

    fn finish(self) -> Captured {
        let mut text = String::from_utf8_lossy(&self.kept).into_owned();
        let mut dropped = self.dropped;
        if dropped > 0 {
            // The cut may fall inside a secret: drop the last, partial word.
            let cut = text.rfind(char::is_whitespace).unwrap_or(0);
            dropped += (text.len() - cut) as u64;
            text.truncate(cut);
        }
        Captured {
            text: secrets::redact(&text).into_owned(),
            dropped,
        }
    }
}
