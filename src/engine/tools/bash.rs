//! `bash`: run a shell command in the workspace, with a timeout, output captured in order.
//!
//! stdout and stderr share one pipe, so the output reads as it would in a terminal. The command
//! runs in its own process group; a timeout or a dropped future (Esc) kills the whole group, so
//! grandchildren die too. Output is capped in memory (head and tail kept). Under a sandbox
//! ([`super::sandbox`]) the command is confined, its group is killed when it ends, and a result the
//! sandbox caused ends with a note that says so. With the sandbox off, a front end that offers
//! terminals runs the command in one of its own ([`super::terminal`]); the result reads the same.

use std::collections::VecDeque;
use std::io;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::process::Child;
use tokio::time::Instant;

use super::args::Args;
use super::lifeline::GroupKiller;
use super::sandbox::{self, Containment, LeaderExit, SandboxPolicy};
use super::terminal::{TerminalEnd, TerminalRun, TerminalStop, Terminals};
use super::{CommandEnd, CommandExit, MAX_BASH_TIMEOUT, ToolCtx, ToolOutput, ToolResult};
use crate::engine::text::clean_terminal_output;
use crate::engine::types::ToolSpec;
use live::LiveOutput;

/// Bytes kept from the start of the output.
const HEAD_BYTES: usize = 256 * 1024;
/// Bytes kept from the end of the output.
const TAIL_BYTES: usize = 256 * 1024;
/// After the command exits, how long to keep reading output that background processes still write.
const DRAIN_GRACE: Duration = Duration::from_millis(300);

pub(super) fn spec() -> ToolSpec {
    ToolSpec {
        name: super::names::BASH.into(),
        description: format!(
            "Run a shell command with `bash -c` in the workspace root. stdin is empty (no \
             interactive input); stdout and stderr are returned together in order, followed by \
             the exit code. The command is killed after `timeout` seconds (default {}, at most \
             {}). Output over 512 KiB keeps its start and end. Avoid interactive programs and \
             pagers; prefer read_file, grep, glob and list_dir for looking at files.",
            super::DEFAULT_BASH_TIMEOUT.as_secs(),
            MAX_BASH_TIMEOUT.as_secs()
        ),
        input_schema: json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command line to run."},
                "timeout": {"type": "number", "minimum": 1, "maximum": MAX_BASH_TIMEOUT.as_secs(), "description": "Seconds before the command is killed."},
                "run_in_background": {"type": "boolean", "description": "Run it as a background job (a dev server, a watcher, a long test run): returns at once with the job's id and first lines; no timeout. Read it with job_output, stop it with job_stop; you are told when it ends."}
            },
            "required": ["command"],
            "additionalProperties": false
        }),
    }
}

pub(super) async fn run(args: &Args<'_>, ctx: &ToolCtx, live: Live<'_>) -> ToolResult {
    let command = args.str("command")?;
    if command.trim().is_empty() {
        return Err("`bash`: the command is empty.".into());
    }
    let timeout = match args.opt_f64("timeout")? {
        Some(secs) => Duration::from_secs_f64(secs.clamp(1.0, MAX_BASH_TIMEOUT.as_secs_f64())),
        None => ctx.bash_timeout,
    };
    let done = match in_front_terminal(command, ctx, timeout, live).await {
        Ok(ran) => ran.map_err(|e| format!("The front end's terminal failed: {e}"))?,
        Err(live) => execute(command, &ctx.workspace, timeout, live, &ctx.sandbox)
            .await
            .map_err(|e| format!("Could not start the shell: {e}"))?,
    };
    let mut out = done.into_output(timeout);
    let stop = out.exit.as_ref().and_then(|exit| {
        sandbox::sandbox_stop_reason(&ctx.sandbox, &ctx.workspace, command, &out.content, exit)
    });
    if let Some(stop) = stop {
        let stopped = stop.stopped();
        out.content.push('\n');
        out.content.push_str(&stopped.message);
        out.sandbox = Some(Box::new(stopped));
    }
    Ok(out)
}

/// What a caller may do with a command while it runs.
pub struct Live<'a> {
    /// Called with new output (throttled, redacted; see [`live`]).
    pub on_output: &'a mut (dyn FnMut(String) + Send),
    /// Resolves when the user interrupts: the command is killed and what it printed until then
    /// is its result, marked interrupted. A dropped sender is no interrupt.
    pub interrupt: Option<tokio::sync::oneshot::Receiver<()>>,
    /// The front end's terminal for a command the sandbox would not confine, and the tool call
    /// it belongs to ([`super::terminal`]); None runs every command here.
    pub terminal: Option<FrontTerminal<'a>>,
}

/// A front end's terminals, for one tool call.
pub struct FrontTerminal<'a> {
    pub terminals: &'a dyn Terminals,
    pub call: &'a str,
}

/// Run `command` in the front end's terminal when it offers one and the sandbox would not confine
/// the command anyway. Err gives `live` back: run it here (no terminal, a confining sandbox, or a
/// front end that could not start it).
async fn in_front_terminal<'a>(
    command: &str,
    ctx: &ToolCtx,
    timeout: Duration,
    mut live: Live<'a>,
) -> Result<io::Result<Finished>, Live<'a>> {
    if ctx.sandbox.is_on() {
        return Err(live);
    }
    let Some(front) = live.terminal.take() else {
        return Err(live);
    };
    let run = TerminalRun {
        call: front.call,
        command,
        cwd: &ctx.workspace,
        env: [
            ("PAGER", "cat"),
            ("GIT_PAGER", "cat"),
            ("GIT_TERMINAL_PROMPT", "0"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .to_vec(),
        timeout,
        output_limit: (HEAD_BYTES + TAIL_BYTES) as u64,
        interrupt: live.interrupt.take(),
    };
    match front.terminals.run(run).await {
        Some(ended) => Ok(ended.map(Finished::from_terminal)),
        None => Err(live),
    }
}

/// Why we killed a command before it ended by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stopped {
    TimedOut,
    /// The user stopped it (Esc).
    Interrupted,
}

/// What a finished (or killed) command left behind.
struct Finished {
    output: String,
    status: Option<ExitStatus>,
    /// We killed it (None: it ended by itself).
    stopped: Option<Stopped>,
    elapsed: Duration,
    /// Background processes still held the output open when we stopped reading.
    left_running: bool,
    /// What became of them: killed with the command, or left running.
    containment: Containment,
}

impl Finished {
    /// A command that ran in the front end's terminal, as one that ran here: the output the
    /// terminal kept (a note where its start was dropped), the status it reported.
    fn from_terminal(end: TerminalEnd) -> Finished {
        use std::os::unix::process::ExitStatusExt;
        let status = match (end.exit_code, end.signal.as_deref()) {
            (Some(code), _) => Some(ExitStatus::from_raw((code as i32 & 0xff) << 8)),
            (None, Some(signal)) => {
                super::terminal::signal_number(signal).map(ExitStatus::from_raw)
            }
            (None, None) => None,
        };
        let mut output = String::new();
        if end.truncated {
            output.push_str(&format!(
                "[... the start of the output was dropped: the terminal keeps its last {} KiB ...]\n",
                (HEAD_BYTES + TAIL_BYTES) / 1024
            ));
        }
        output.push_str(&end.output);
        Finished {
            output,
            status,
            stopped: end.stopped.map(|s| match s {
                TerminalStop::TimedOut => Stopped::TimedOut,
                TerminalStop::Interrupted => Stopped::Interrupted,
            }),
            elapsed: end.elapsed,
            left_running: false,
            containment: Containment::KillGroupAtEnd,
        }
    }

    fn exit(&self, timeout: Duration) -> CommandExit {
        let (end, summary) = match self.stopped {
            Some(Stopped::Interrupted) => (
                CommandEnd::Interrupted,
                format!("interrupted after {}s", fmt_secs_1(self.elapsed)),
            ),
            Some(Stopped::TimedOut) => (
                CommandEnd::TimedOut,
                format!("timed out after {}s", fmt_secs(timeout)),
            ),
            None => match &self.status {
                Some(s) => (status_end(s), describe_status(s).0),
                None => (CommandEnd::Unknown, "exit status unknown".to_string()),
            },
        };
        CommandExit {
            end,
            elapsed_ms: u64::try_from(self.elapsed.as_millis()).unwrap_or(u64::MAX),
            summary,
        }
    }

    fn into_output(self, timeout: Duration) -> ToolOutput {
        let exit = self.exit(timeout);
        let mut content = clean_terminal_output(self.output.trim_end_matches(['\n', '\r']));
        if content.trim().is_empty() {
            content = "(no output)".into();
        }
        content.push_str("\n\n");
        let failed;
        if self.stopped == Some(Stopped::Interrupted) {
            failed = true;
            content.push_str(&format!(
                "[{}: the user stopped the command; it and its child processes were killed; the \
                 output above is what it printed until then]",
                exit.summary
            ));
        } else if self.stopped == Some(Stopped::TimedOut) {
            failed = true;
            content.push_str(&format!(
                "[timed out after {}s: the command and its child processes were killed; the \
                 output above is what it printed until then]",
                fmt_secs(timeout)
            ));
        } else {
            match self.status.as_ref().map(describe_status) {
                Some((text, ok)) => {
                    failed = !ok;
                    content.push_str(&format!("[{text}]"));
                }
                None => {
                    failed = true;
                    content.push_str("[exit status unknown]");
                }
            }
        }
        match (self.left_running, self.containment) {
            (false, _) => {}
            (true, Containment::LeaveBackground) => content.push_str(
                "\n[background processes started by the command are still running; their \
                 further output is not captured]",
            ),
            (true, Containment::KillGroupAtEnd) => content.push_str(
                "\n[background processes started by the command were stopped when it ended: \
                 the sandbox lets nothing a command starts outlive it]",
            ),
        }
        ToolOutput {
            content,
            is_error: failed,
            spilled: None,
            diff: None,
            exit: Some(Box::new(exit)),
            sandbox: None,
            appendix: None,
            images: Vec::new(),
        }
    }
}

/// Seconds with one decimal: `2.5`.
fn fmt_secs_1(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64())
}

fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", d.as_secs())
    } else {
        format!("{s:.1}")
    }
}

/// How a command that ended by itself ended.
fn status_end(status: &ExitStatus) -> CommandEnd {
    if let Some(code) = status.code() {
        return CommandEnd::Exited { code };
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return CommandEnd::Killed { signal };
        }
    }
    CommandEnd::Unknown
}

fn describe_status(status: &ExitStatus) -> (String, bool) {
    if let Some(code) = status.code() {
        return (format!("exit code {code}"), code == 0);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return (format!("killed by signal {sig}"), false);
        }
    }
    (format!("{status}"), false)
}

async fn execute(
    command: &str,
    cwd: &Path,
    timeout: Duration,
    live: Live<'_>,
    policy: &SandboxPolicy,
) -> io::Result<Finished> {
    // From before the spawn: the command may run a while before `spawn` returns (its guards are
    // set up in between, `lifeline`).
    let started = Instant::now();
    let (mut child, mut reader, containment) = match spawn("bash", command, cwd, policy) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => spawn("sh", command, cwd, policy)?,
        other => other?,
    };
    let mut group = GroupKiller::new(&child);
    // Contained: see the leader exit without reaping it, so its group can be killed first.
    let leader = LeaderExit::watch(&child, containment);
    let mut leader_exited = false;
    let mut capture = Capture::default();
    let mut shown = LiveOutput::default();
    let Live {
        on_output,
        interrupt,
        ..
    } = live;
    let mut interrupt = interrupt;
    let mut chunk = vec![0u8; 64 * 1024];
    let mut eof = false;
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);

    // Read while the command runs, until it exits, the deadline passes or the user stops it.
    let mut stopped = None;
    let mut status = None;
    while status.is_none() && !leader_exited {
        let flush_at = shown.next_due();
        tokio::select! {
            r = reader.read(&mut chunk), if !eof => match r {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => {
                    let data = chunk.get(..n).unwrap_or_default();
                    capture.push(data);
                    shown.push(data, Instant::now());
                }
            },
            s = child.wait(), if leader.is_none() => {
                if containment == Containment::KillGroupAtEnd {
                    group.kill();
                }
                group.disarm();
                status = Some(s?);
            }
            r = exited(leader.as_ref()), if leader.is_some() => {
                r?;
                leader_exited = true;
            }
            () = &mut deadline => {
                stopped = Some(Stopped::TimedOut);
                group.kill();
                let _ = child.start_kill();
                status = Some(child.wait().await?);
                group.disarm();
            }
            stop = interrupt_sent(&mut interrupt), if interrupt.is_some() => {
                interrupt = None;
                // A dropped sender is no interrupt; a sent one stops the command now.
                if stop {
                    stopped = Some(Stopped::Interrupted);
                    group.kill();
                    let _ = child.start_kill();
                    status = Some(child.wait().await?);
                    group.disarm();
                }
            }
            () = tokio::time::sleep_until(flush_at.unwrap_or_else(Instant::now)), if flush_at.is_some() => {
                if let Some(text) = shown.take(Instant::now(), false) {
                    on_output(text);
                }
            }
        }
    }
    let elapsed = started.elapsed();

    // Drain what is left in the pipe; stop if background processes keep it open.
    let grace_end = Instant::now() + DRAIN_GRACE;
    while !eof {
        match tokio::time::timeout_at(grace_end, reader.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) => eof = true,
            Ok(Ok(n)) => {
                let data = chunk.get(..n).unwrap_or_default();
                capture.push(data);
                shown.push(data, Instant::now());
            }
            Err(_) => break,
        }
    }
    if let Some(text) = shown.take(Instant::now(), true) {
        on_output(text);
    }
    if leader_exited {
        // The leader is a zombie until reaped: its group id is still the command's.
        group.kill();
        status = Some(child.wait().await?);
        group.disarm();
    }
    Ok(Finished {
        output: capture.finish(),
        status,
        stopped,
        elapsed,
        left_running: !eof,
        containment,
    })
}

/// Resolves when the contained command's leader has exited (never without a handle).
async fn exited(leader: Option<&LeaderExit>) -> io::Result<()> {
    match leader {
        Some(l) => l.exited().await,
        None => std::future::pending().await,
    }
}

/// Whether the user stopped the command (false: the sender is gone, or there is none).
async fn interrupt_sent(interrupt: &mut Option<tokio::sync::oneshot::Receiver<()>>) -> bool {
    match interrupt {
        Some(rx) => rx.await.is_ok(),
        None => false,
    }
}

/// The read end of the shared stdout/stderr pipe.
pub(crate) type OutputReader = tokio::net::unix::pipe::Receiver;

/// Start `command` with `shell` in `cwd` under `policy`: its own process group (or session),
/// stdout and stderr on one pipe, the lifeline's guards set. Background jobs start this way too.
pub(crate) fn spawn(
    shell: &str,
    command: &str,
    cwd: &Path,
    policy: &SandboxPolicy,
) -> io::Result<(Child, OutputReader, Containment)> {
    let (sender, reader) = tokio::net::unix::pipe::pipe()?;
    let write_end = sender.into_blocking_fd()?;
    let write_end_2 = write_end.try_clone()?;
    let (child, containment) = {
        // The Command holds the write ends; it is dropped at the end of this block so that the
        // pipe reports end-of-file once the command (and whatever inherited it) is done.
        let (mut cmd, enforcement, containment) =
            sandbox::shell_command(shell, command, cwd, policy).map_err(io::Error::other)?;
        if policy.is_on() && !enforcement.confines_writes() {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                tracing::warn!(
                    ?enforcement,
                    "the sandbox does not confine commands' writes"
                );
            });
        }
        cmd.current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::from(write_end))
            .stderr(Stdio::from(write_end_2))
            .env("PAGER", "cat")
            .env("GIT_PAGER", "cat")
            .env("GIT_TERMINAL_PROMPT", "0")
            .kill_on_drop(true);
        // A sandboxed command starts a session of its own (so it leads its process group too,
        // and has no controlling terminal); `setsid` fails for a group leader.
        if !sandbox::starts_own_session(policy) {
            cmd.process_group(0);
        }
        // No provider keys; the command and its group die with the agent.
        super::lifeline::prepare(&mut cmd);
        (super::lifeline::spawn_watched(cmd)?, containment)
    };
    Ok((child, reader, containment))
}

/// Output kept in memory: the first [`HEAD_BYTES`] and the last [`TAIL_BYTES`].
#[derive(Default)]
struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    omitted: u64,
}

impl Capture {
    fn push(&mut self, mut data: &[u8]) {
        if self.head.len() < HEAD_BYTES {
            let (head, rest) = data.split_at(data.len().min(HEAD_BYTES - self.head.len()));
            self.head.extend_from_slice(head);
            data = rest;
        }
        if data.is_empty() {
            return;
        }
        if data.len() >= TAIL_BYTES {
            self.omitted += (self.tail.len() + data.len() - TAIL_BYTES) as u64;
            self.tail.clear();
            self.tail
                .extend(data.get(data.len() - TAIL_BYTES..).unwrap_or(data));
            return;
        }
        let overflow = (self.tail.len() + data.len()).saturating_sub(TAIL_BYTES);
        if overflow > 0 {
            self.tail.drain(..overflow);
            self.omitted += overflow as u64;
        }
        self.tail.extend(data);
    }

    fn finish(self) -> String {
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        if self.omitted > 0 {
            out.push_str(&format!(
                "\n[... {} bytes of output omitted ...]\n",
                self.omitted
            ));
        }
        let (a, b) = self.tail.as_slices();
        let tail = [a, b].concat();
        out.push_str(&String::from_utf8_lossy(&tail));
        out
    }
}

pub mod live;

#[cfg(test)]
mod tests;
