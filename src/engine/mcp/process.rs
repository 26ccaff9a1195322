//! A stdio server's process: started in a session of its own (its own process group, and no
//! controlling terminal, so it can neither read the TUI's keys nor draw over its screen), with the
//! environment of `env.rs`, killed as a whole group when flower-tui lets go of it, and when
//! flower-tui dies without cleaning up: the kernel kills the server (`PR_SET_PDEATHSIG`) and the
//! lifeline watcher of `tools::lifeline` kills its group (what a wrapper started, too).
//!
//! rmcp's own `TokioChildProcess` is not used: it kills its child from a `tokio::spawn` in `Drop`
//! (a panic outside a runtime, nothing at all once the runtime is gone) and only the child, not
//! what the child started (`npx` runs the server as a grandchild). The JSON-RPC still goes through
//! rmcp, over its async-rw transport on the child's pipes.
//!
//! Its stderr is drained all the time (a full pipe would stall the server) and its tail kept for
//! failure reasons; stdout lines that cannot be JSON-RPC are counted on their way to rmcp (which
//! skips them, as the other official SDKs do), so a timeout can say the server wrote garbage.

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// How much of a server's stderr is kept for failure reasons.
const STDERR_TAIL_BYTES: usize = 4096;
/// How much of the first non-JSON stdout line is kept.
const NON_JSON_SAMPLE: usize = 120;
/// rmcp drops a stdout line longer than this (its `DEFAULT_MAX_LINE_LENGTH`).
const MAX_LINE: u64 = 16 * 1024 * 1024;

/// A started stdio server.
pub(crate) struct StdioChild {
    pub child: Child,
    pub stdin: ChildStdin,
    pub stdout: Sniffed<ChildStdout>,
    pub group: Arc<ProcessGroup>,
    pub diag: Arc<Diagnostics>,
}

/// Start `command` with exactly `env` in `cwd`.
pub(crate) fn spawn(
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: &Path,
) -> io::Result<StdioChild> {
    let mut cmd = Command::new(program(command, cwd));
    cmd.args(args)
        .env_clear()
        .envs(env)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    {
        // SAFETY: the closure runs in the forked child before exec and calls only an
        // async-signal-safe function (setsid); it allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                // A new session: its own process group (killed as one) and no controlling terminal.
                if libc::setsid() == -1 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    // The kernel kills the server when flower-tui dies (the death signal), and a watcher kills
    // its whole group then: a wrapper's grandchildren too, even one that ignores a closed stdin.
    crate::engine::tools::lifeline::prepare(&mut cmd);
    // Its own session: the group id is its pid.
    let mut child = crate::engine::tools::lifeline::spawn_watched(cmd)?;
    let group = Arc::new(ProcessGroup::new(child.id()));
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(io::Error::other("the server's pipes were not opened"));
    };
    let diag = Arc::new(Diagnostics::default());
    tokio::spawn(drain_stderr(stderr, diag.clone()));
    Ok(StdioChild {
        child,
        stdin,
        stdout: Sniffed::new(stdout, diag.clone()),
        group,
        diag,
    })
}

/// A relative command with a `/` (`./bin/server`) is taken relative to the server's own directory;
/// a bare name is looked up on the server's `PATH`.
fn program(command: &str, cwd: &Path) -> PathBuf {
    let p = Path::new(command);
    if p.is_relative() && command.contains('/') {
        cwd.join(p)
    } else {
        p.to_path_buf()
    }
}

async fn drain_stderr(mut stderr: tokio::process::ChildStderr, diag: Arc<Diagnostics>) {
    let mut buf = vec![0u8; 4096];
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => diag.push_stderr(buf.get(..n).unwrap_or_default()),
        }
    }
}

/// Stop a server that has been told to (its stdin closed): wait `grace` for it to exit, then
/// SIGTERM its group, wait `grace` again, then SIGKILL. The group is killed as soon as the leader
/// is reaped, so no grandchild outlives it.
pub(crate) async fn stop(
    child: &mut Child,
    group: &ProcessGroup,
    grace: Duration,
) -> Option<ExitStatus> {
    if let Ok(Ok(status)) = tokio::time::timeout(grace, child.wait()).await {
        group.kill_and_disarm();
        return Some(status);
    }
    #[cfg(unix)]
    group.signal(libc::SIGTERM);
    if let Ok(Ok(status)) = tokio::time::timeout(grace, child.wait()).await {
        group.kill_and_disarm();
        return Some(status);
    }
    group.kill_and_disarm();
    match tokio::time::timeout(grace, child.wait()).await {
        Ok(Ok(status)) => Some(status),
        _ => None,
    }
}

/// A server's process group, killed on drop unless already gone.
#[derive(Debug)]
pub(crate) struct ProcessGroup {
    /// 0 once disarmed.
    pgid: AtomicI32,
}

impl ProcessGroup {
    fn new(pid: Option<u32>) -> Self {
        ProcessGroup {
            pgid: AtomicI32::new(pid.and_then(|p| i32::try_from(p).ok()).unwrap_or(0)),
        }
    }

    /// The group id while it is still ours.
    pub fn id(&self) -> Option<i32> {
        Some(self.pgid.load(Ordering::SeqCst)).filter(|&p| p > 1)
    }

    /// Send `sig` to the whole group.
    #[cfg(unix)]
    pub fn signal(&self, sig: libc::c_int) {
        if let Some(pgid) = self.id() {
            // SAFETY: kill(2) takes plain integers. The leader has not been reaped (we disarm
            // right after reaping), so the group id is still this server's.
            unsafe {
                libc::kill(-pgid, sig);
            }
        }
    }

    /// SIGKILL the group and never signal it again (call right after reaping the leader, whose
    /// id may then be reused).
    pub fn kill_and_disarm(&self) {
        let pgid = self.pgid.swap(0, Ordering::SeqCst);
        #[cfg(unix)]
        if pgid > 1 {
            // SAFETY: as in `signal`.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill_and_disarm();
    }
}

/// What a server said besides JSON-RPC: its stderr tail, and stdout lines that are not JSON.
#[derive(Debug, Default)]
pub(crate) struct Diagnostics {
    inner: Mutex<DiagInner>,
}

#[derive(Debug, Default)]
struct DiagInner {
    stderr: VecDeque<u8>,
    non_json_lines: u64,
    first_non_json: Option<String>,
    /// Lines over [`MAX_LINE`], which rmcp drops unread.
    oversized_lines: u64,
}

impl Diagnostics {
    fn lock(&self) -> std::sync::MutexGuard<'_, DiagInner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn push_stderr(&self, bytes: &[u8]) {
        let mut d = self.lock();
        d.stderr.extend(bytes);
        let excess = d.stderr.len().saturating_sub(STDERR_TAIL_BYTES);
        d.stderr.drain(..excess);
    }

    fn note_non_json(&self, sample: &[u8]) {
        let mut d = self.lock();
        d.non_json_lines += 1;
        if d.first_non_json.is_none() {
            let text = String::from_utf8_lossy(sample);
            d.first_non_json = Some(text.trim_end().chars().take(NON_JSON_SAMPLE).collect());
        }
    }

    fn note_oversized(&self) {
        self.lock().oversized_lines += 1;
    }

    /// The last lines of stderr (at most `max_lines`, each cut to 200 characters), joined by ` | `.
    pub fn stderr_tail(&self, max_lines: usize) -> String {
        let d = self.lock();
        let bytes: Vec<u8> = d.stderr.iter().copied().collect();
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| l.chars().take(200).collect())
            .collect();
        let start = lines.len().saturating_sub(max_lines);
        lines.get(start..).unwrap_or_default().join(" | ")
    }

    /// Non-JSON stdout lines so far, and the first of them.
    pub fn non_json(&self) -> (u64, Option<String>) {
        let d = self.lock();
        (d.non_json_lines, d.first_non_json.clone())
    }

    /// A clause for failure messages: what the server wrote that may explain it; empty if nothing.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        let oversized = self.lock().oversized_lines;
        if oversized > 0 {
            parts.push(format!(
                "it sent {oversized} message{} over 16 MiB, which {} dropped unread",
                if oversized == 1 { "" } else { "s" },
                if oversized == 1 { "was" } else { "were" },
            ));
        }
        let (count, first) = self.non_json();
        if count > 0 {
            let first = first.unwrap_or_default();
            parts.push(format!(
                "it wrote {count} line{} to stdout that {} not JSON-RPC (first: \"{first}\")",
                if count == 1 { "" } else { "s" },
                if count == 1 { "is" } else { "are" },
            ));
        }
        let tail = self.stderr_tail(3);
        if !tail.is_empty() {
            parts.push(format!("stderr: {tail}"));
        }
        let text = parts.join("; ");
        crate::engine::secrets::redact(&text).into_owned()
    }
}

/// A reader that passes everything through and notes lines whose first non-blank byte cannot start
/// a JSON-RPC message (`{`, or `[` for a batch).
pub(crate) struct Sniffed<R> {
    inner: R,
    diag: Arc<Diagnostics>,
    /// At the start of a line (only blanks seen so far on it).
    at_line_start: bool,
    /// Bytes of the current line so far.
    line_len: u64,
}

impl<R> Sniffed<R> {
    fn new(inner: R, diag: Arc<Diagnostics>) -> Self {
        Sniffed {
            inner,
            diag,
            at_line_start: true,
            line_len: 0,
        }
    }

    fn scan(&mut self, bytes: &[u8]) {
        self.measure_lines(bytes);
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            if self.at_line_start {
                match b {
                    b' ' | b'\t' | b'\r' | b'\n' => {}
                    b'{' | b'[' => self.at_line_start = false,
                    _ => {
                        let rest = bytes.get(i..).unwrap_or_default();
                        let end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
                        self.diag.note_non_json(
                            rest.get(..end.min(NON_JSON_SAMPLE * 4)).unwrap_or_default(),
                        );
                        self.at_line_start = false;
                    }
                }
                i += 1;
            } else {
                // Skip to the end of the line.
                match bytes
                    .get(i..)
                    .and_then(|r| r.iter().position(|&c| c == b'\n'))
                {
                    Some(pos) => {
                        i += pos + 1;
                        self.at_line_start = true;
                    }
                    None => break,
                }
            }
        }
    }
}

impl<R> Sniffed<R> {
    /// Note lines longer than rmcp accepts.
    fn measure_lines(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some(pos) = rest.iter().position(|&c| c == b'\n') {
            if self.line_len + pos as u64 > MAX_LINE {
                self.diag.note_oversized();
            }
            self.line_len = 0;
            rest = rest.get(pos + 1..).unwrap_or_default();
        }
        self.line_len += rest.len() as u64;
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Sniffed<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &polled {
            this.scan(buf.filled().get(before..).unwrap_or_default());
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffer_counts_lines_that_cannot_be_json_rpc() {
        let diag = Arc::new(Diagnostics::default());
        let mut s = Sniffed::new(tokio::io::empty(), diag.clone());
        s.scan(b"{\"jsonrpc\":\"2.0\"}\n  [1]\nhello world\n\n{\"a\":");
        s.scan(b"1}\nstill not json");
        s.scan(b" across chunks\n");
        assert_eq!(diag.non_json(), (2, Some("hello world".to_string())));
        assert!(
            diag.describe()
                .contains("2 lines to stdout that are not JSON-RPC (first: \"hello world\")")
        );
    }

    #[test]
    fn sniffer_notes_lines_rmcp_drops_for_their_size() {
        let diag = Arc::new(Diagnostics::default());
        let mut s = Sniffed::new(tokio::io::empty(), diag.clone());
        let chunk = vec![b'{'; 1024 * 1024];
        for _ in 0..17 {
            s.scan(&chunk);
        }
        s.scan(b"}\n{\"small\":1}\n");
        assert_eq!(
            diag.describe(),
            "it sent 1 message over 16 MiB, which was dropped unread"
        );
    }

    #[test]
    fn stderr_tail_keeps_the_last_lines() {
        let diag = Diagnostics::default();
        diag.push_stderr(&vec![b'x'; 10_000]);
        diag.push_stderr(b"\nline one\n\nline two\nline three\n");
        assert_eq!(diag.stderr_tail(2), "line two | line three");
        assert_eq!(diag.lock().stderr.len(), STDERR_TAIL_BYTES);
    }
}
