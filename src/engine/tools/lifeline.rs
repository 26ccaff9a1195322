//! Tool processes die with flower-tui, however it dies: a `kill -9` of the agent must
//! not leave a `bash` command or its children running while the repaired transcript tells the
//! model the call was interrupted. MCP stdio servers (`mcp/process.rs`) and hook commands
//! (`hooks/run.rs`) are guarded the same way: a server run by a wrapper (`npx`, a shell) has
//! grandchildren the death signal never reaches.
//!
//! Two parts, both set up by [`prepare`] and [`watch`] around the spawn of a command (which runs
//! as the leader of its own process group):
//! - **`PR_SET_PDEATHSIG` (Linux)**: set in the child before `exec`, so the kernel sends the shell
//!   `SIGKILL` the moment the thread that started it ends. The runtime's threads come and go (a
//!   worker that runs `block_in_place` hands its place to a new thread and ends when idle; the
//!   blocking pool's threads end when idle), so [`spawn`] starts every guarded process from one
//!   thread of its own that lives as long as flower-tui.
//! - **A watcher per command group**: a tiny `bash` outside the group, whose stdin is the read
//!   end of the agent's *lifeline* pipe. Only the agent holds the write end (close-on-exec), so
//!   the read end reports end-of-file exactly when the agent process is gone, however it went; the
//!   watcher then kills the whole group (grandchildren, background jobs the command left running).
//!   It checks once a second whether the group is empty and exits when it is. The watcher starts
//!   *before* the command and learns the group id on a pipe of its own, written by the spawner
//!   thread the moment the command exists: an agent killed while the command starts still leaves
//!   a watcher behind it.
//!
//! Commands also never see a provider key: [`prepare`] removes them from the child's environment.
//! While flower-tui lives, [`GroupKiller`] kills a command's group on a timeout or when the future
//! that runs it is dropped.

use std::io::{self, PipeReader, PipeWriter};
use std::os::fd::AsRawFd;
use std::process::Stdio;
use std::sync::OnceLock;

use tokio::process::{Child, Command};

use crate::engine::secrets::PROVIDER_KEY_VARS;

/// The watcher: read the group id on fd 3 (none: the command never started, leave); wait on the
/// lifeline; on its end kill the group; leave once the group is empty. `read -t 1` returns 1 at
/// end-of-file (the agent is gone) and more than 128 on its timeout.
const WATCHER: &str = r#"IFS= read -r pg <&3
exec 3<&-
case $pg in ''|*[!0-9]*) exit 0 ;; esac
while kill -0 -- "-$pg" 2>/dev/null; do
  read -r -t 1 _
  if [ $? -le 128 ]; then kill -KILL -- "-$pg" 2>/dev/null; exit 0; fi
done"#;

/// The agent's end and the watchers' end of the lifeline pipe, made once.
struct Lifeline {
    read: PipeReader,
    /// Never written and never closed: its closing at the process's death is the signal.
    _write: PipeWriter,
}

fn lifeline() -> Option<&'static Lifeline> {
    static LIFELINE: OnceLock<Option<Lifeline>> = OnceLock::new();
    LIFELINE
        .get_or_init(|| {
            // Both ends are close-on-exec: no command inherits the write end.
            let (read, write) = std::io::pipe().ok()?;
            Some(Lifeline {
                read,
                _write: write,
            })
        })
        .as_ref()
}

/// Set up a command's process before it runs: no provider keys in its environment, and (Linux)
/// killed by the kernel when the agent dies.
pub(crate) fn prepare(cmd: &mut Command) {
    for var in PROVIDER_KEY_VARS {
        cmd.env_remove(var);
    }
    #[cfg(target_os = "linux")]
    {
        let parent = std::process::id();
        // SAFETY: the closure runs in the child between fork and exec, where only
        // async-signal-safe calls are allowed: it makes two system calls (prctl, getppid) and
        // builds an io::Error from a raw code, which does not allocate.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // The agent died before the signal was armed: do not run at all.
                if u32::try_from(libc::getppid()).ok() != Some(parent) {
                    return Err(io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
    }
}

/// Start `cmd` (set up by [`prepare`], leading its own process group) with a watcher on its
/// group: the watcher first, then the command from the spawner thread, which never ends, so the
/// death signal comes with flower-tui's end and not with the end of whichever runtime thread
/// asked. In the caller's runtime (the child's pipes and its reaping are the runtime's); outside
/// one, from the caller's thread. Without `bash` or a lifeline only the death signal guards it.
pub(crate) fn spawn_watched(cmd: Command) -> io::Result<Child> {
    let told = start_watcher().ok().map(|(_, told)| told);
    spawn_then(cmd, move |child| {
        if let (Some(mut told), Some(pid)) = (told, child.id()) {
            use std::io::Write;
            // A watcher that went away cannot be told; the death signal still guards.
            let _ = writeln!(told, "{pid}");
        }
    })
}

/// Start `cmd` from the spawner thread; `then` runs there on the started child, before anything
/// else can happen to this process's threads.
fn spawn_then(mut cmd: Command, then: impl FnOnce(&Child) + Send + 'static) -> io::Result<Child> {
    let (Ok(handle), Some(spawner)) = (tokio::runtime::Handle::try_current(), spawner()) else {
        let child = cmd.spawn()?;
        then(&child);
        return Ok(child);
    };
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let job: Job = Box::new(move || {
        let _runtime = handle.enter();
        let spawned = cmd.spawn();
        if let Ok(child) = &spawned {
            then(child);
        }
        let _ = tx.send(spawned);
    });
    spawner
        .send(job)
        .map_err(|_| io::Error::other("the spawner thread is gone"))?;
    rx.recv()
        .unwrap_or_else(|_| Err(io::Error::other("the spawner thread is gone")))
}

type Job = Box<dyn FnOnce() + Send>;

/// The spawner thread's queue, started once; None if no thread could be started.
fn spawner() -> Option<&'static std::sync::mpsc::Sender<Job>> {
    static SPAWNER: OnceLock<Option<std::sync::mpsc::Sender<Job>>> = OnceLock::new();
    SPAWNER
        .get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("flower-spawner".into())
                .spawn(move || {
                    for job in rx {
                        // A job that panics answers nobody (its caller sees the channel
                        // closed); the thread stays for the next.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                    }
                })
                .ok()?;
            Some(tx)
        })
        .as_ref()
}

/// Start a watcher waiting to be told a group id: its pid, and the pipe to write the id to
/// (closing it unwritten lets the watcher leave).
fn start_watcher() -> io::Result<(Option<u32>, PipeWriter)> {
    let line = lifeline().ok_or_else(|| io::Error::other("no lifeline"))?;
    let stdin = line.read.try_clone()?;
    // Both ends close-on-exec; the read end becomes the watcher's fd 3 below.
    let (told_read, told_write) = std::io::pipe()?;
    let told_fd = told_read.as_raw_fd();
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(WATCHER)
        .arg("flower-tui-watcher")
        .env_clear()
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own group: outside the one it watches, and out of reach of a Ctrl-C meant for us.
        .process_group(0);
    // SAFETY: runs in the child between fork and exec and makes only async-signal-safe system
    // calls (dup2, fcntl) on a descriptor the child inherited.
    unsafe {
        cmd.pre_exec(move || {
            if told_fd == 3 {
                // dup2 onto itself keeps close-on-exec: clear it instead.
                if libc::fcntl(3, libc::F_SETFD, 0) == -1 {
                    return Err(io::Error::last_os_error());
                }
            } else if libc::dup2(told_fd, 3) == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    // Dropped at once: tokio reaps it in the background when it exits.
    let child = cmd.spawn()?;
    drop(told_read);
    Ok((child.id(), told_write))
}

/// Kills a command's whole process group unless disarmed: on timeout, and when the future
/// running the command is dropped (the `bash` tool's commands and hook commands).
pub(crate) struct GroupKiller {
    pgid: Option<i32>,
}

impl GroupKiller {
    pub(crate) fn new(child: &tokio::process::Child) -> Self {
        GroupKiller {
            pgid: child.id().and_then(|id| i32::try_from(id).ok()),
        }
    }

    /// The command has been reaped: its group id may be reused, so never signal it again.
    pub(crate) fn disarm(&mut self) {
        self.pgid = None;
    }

    pub(crate) fn kill(&mut self) {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid.filter(|&p| p > 1) {
            // SAFETY: kill(2) takes plain integers and has no memory effects. The group leader
            // has not been reaped yet (we disarm right after reaping), so the id is still ours.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Whether `pid` is gone (or a zombie nobody reaped yet).
    fn gone(pid: u32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        }
    }

    /// A process started through [`spawn`] from a thread that then ends lives on; one started
    /// by that thread itself dies with it (the death signal follows the thread).
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_process_outlives_the_thread_that_asked_for_it() {
        let start = |through_spawner: bool| {
            let handle = tokio::runtime::Handle::current();
            std::thread::spawn(move || {
                let _runtime = handle.enter();
                let mut cmd = Command::new("sleep");
                cmd.arg("30").process_group(0).kill_on_drop(true);
                prepare(&mut cmd);
                if through_spawner {
                    spawn_then(cmd, |_| ()).unwrap()
                } else {
                    cmd.spawn().unwrap()
                }
            })
            .join()
            .unwrap()
        };
        let mut kept = start(true);
        let mut lost = start(false);
        let (kept_pid, lost_pid) = (kept.id().unwrap(), lost.id().unwrap());
        let deadline = Instant::now() + Duration::from_secs(5);
        while !gone(lost_pid) {
            assert!(Instant::now() < deadline, "the death signal did not come");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(
            !gone(kept_pid),
            "the spawner's process died with the asking thread"
        );
        kept.kill().await.unwrap();
        let _ = lost.wait().await;
    }

    /// Wait up to 5 s for `pid` to go; whether it went.
    async fn goes(pid: u32) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !gone(pid) {
            if Instant::now() > deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        true
    }

    #[tokio::test]
    async fn the_watcher_leaves_when_the_group_is_empty() {
        let (watcher, mut told) = start_watcher().unwrap();
        let watcher = watcher.unwrap();
        let mut cmd = Command::new("sleep");
        cmd.arg("0.2").process_group(0);
        prepare(&mut cmd);
        let mut child = cmd.spawn().unwrap();
        {
            use std::io::Write;
            writeln!(told, "{}", child.id().unwrap()).unwrap();
        }
        assert!(!gone(watcher), "the watcher waits while the group lives");
        child.wait().await.unwrap();
        // The watcher polls once a second.
        assert!(goes(watcher).await, "the watcher of an empty group stayed");
    }

    #[tokio::test]
    async fn a_watcher_never_told_a_group_leaves() {
        let (watcher, told) = start_watcher().unwrap();
        drop(told);
        assert!(goes(watcher.unwrap()).await, "an untold watcher stayed");
    }
}
