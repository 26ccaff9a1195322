//! One job's process: started like a `bash` command (the same shell, sandbox, process group,
//! parent-death signal and lifeline watcher), then watched by a task of its own that streams its
//! output into the log and records how it ended. A stop is `SIGTERM` to the whole group, then
//! `SIGKILL` after the grace period; when the leader ends, whatever it left in its group is
//! killed with it (a job is its whole group). The group dies with flower-tui however that ends:
//! the kernel's death signal, the lifeline watcher, and the [`GroupKiller`] the task holds.

use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use super::{JobChange, JobState, Table};
use crate::engine::tools::lifeline::GroupKiller;
use crate::engine::tools::sandbox::{LeaderExit, SandboxPolicy};

/// After the leader ended, how long output still in the pipe is read.
const DRAIN: Duration = Duration::from_millis(300);

/// A started job's process, before its task watches it.
pub(super) struct Spawned {
    child: tokio::process::Child,
    reader: crate::engine::tools::OutputReader,
    pub(super) pgid: Option<u32>,
}

/// Start `command` in `cwd` under `policy`, as the `bash` tool would.
pub(super) fn spawn(command: &str, cwd: &Path, policy: &SandboxPolicy) -> io::Result<Spawned> {
    let (child, reader, _containment) =
        match crate::engine::tools::spawn_shell("bash", command, cwd, policy) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                crate::engine::tools::spawn_shell("sh", command, cwd, policy)?
            }
            other => other?,
        };
    let pgid = child.id();
    Ok(Spawned {
        child,
        reader,
        pgid,
    })
}

/// What the watching task needs.
pub(super) struct Watch {
    pub table: Arc<Mutex<Table>>,
    pub id: u32,
    pub grace: Duration,
    pub stop: oneshot::Receiver<()>,
    pub done: watch::Sender<bool>,
    pub changes: Option<mpsc::UnboundedSender<JobChange>>,
}

/// Watch `s` until it ends: its output into the log, a stop asked for, how it ended.
pub(super) async fn watch(s: Spawned, w: Watch) {
    let Spawned {
        mut child,
        mut reader,
        pgid,
    } = s;
    let mut group = GroupKiller::new(&child);
    let leader = pgid.and_then(LeaderExit::open);
    let mut chunk = vec![0u8; 64 * 1024];
    let mut eof = false;
    let mut stop = Some(w.stop);
    let mut stopped = false;
    let mut kill_at: Option<Instant> = None;
    let mut status = None;
    loop {
        tokio::select! {
            r = reader.read(&mut chunk), if !eof => match r {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => push(&w.table, w.id, chunk.get(..n).unwrap_or_default()),
            },
            r = exited(leader.as_ref()), if leader.is_some() => {
                let _ = r;
                break;
            }
            s = child.wait(), if leader.is_none() => {
                status = s.ok();
                break;
            }
            r = stop_sent(&mut stop), if stop.is_some() => {
                stop = None;
                if r {
                    stopped = true;
                    signal_group(pgid, libc::SIGTERM);
                    kill_at = Some(Instant::now() + w.grace);
                }
            }
            () = tokio::time::sleep_until(kill_at.unwrap_or_else(Instant::now)), if kill_at.is_some() => {
                kill_at = None;
                group.kill();
            }
        }
    }
    // The leader has ended: nothing of its group outlives it. Killed while the leader is a
    // zombie (not reaped yet), so the group id is still the job's.
    group.kill();
    if let Ok(mut t) = w.table.lock()
        && let Some(job) = t.job_mut(w.id)
    {
        job.pgid = None;
    }
    if status.is_none() {
        status = child.wait().await.ok();
    }
    group.disarm();
    let grace_end = Instant::now() + DRAIN;
    while !eof {
        match tokio::time::timeout_at(grace_end, reader.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => eof = true,
            Ok(Ok(n)) => push(&w.table, w.id, chunk.get(..n).unwrap_or_default()),
        }
    }
    let state = if stopped {
        JobState::Stopped
    } else {
        match status {
            Some(s) => state_of(&s),
            None => JobState::Unknown,
        }
    };
    if let Ok(mut t) = w.table.lock() {
        t.finish(w.id, state);
    }
    let _ = w.done.send(true);
    if let Some(tx) = &w.changes {
        let _ = tx.send(JobChange::Ended);
    }
}

fn push(table: &Arc<Mutex<Table>>, id: u32, data: &[u8]) {
    if let Ok(mut t) = table.lock()
        && let Some(job) = t.job_mut(id)
    {
        job.log.push(data);
    }
}

/// How a reaped process ended.
fn state_of(status: &std::process::ExitStatus) -> JobState {
    if let Some(code) = status.code() {
        return JobState::Exited { code };
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return JobState::Killed { signal };
        }
    }
    JobState::Unknown
}

/// Send `sig` to the group `pgid` (the job's leader is not reaped yet, so the id is its own).
pub(super) fn signal_group(pgid: Option<u32>, sig: i32) {
    #[cfg(unix)]
    if let Some(pgid) = pgid.and_then(|p| i32::try_from(p).ok()).filter(|&p| p > 1) {
        // SAFETY: kill(2) takes plain integers and has no memory effects.
        unsafe {
            libc::kill(-pgid, sig);
        }
    }
}

async fn exited(leader: Option<&LeaderExit>) -> io::Result<()> {
    match leader {
        Some(l) => l.exited().await,
        None => std::future::pending().await,
    }
}

/// Whether a stop was asked for (false: the sender is gone).
async fn stop_sent(stop: &mut Option<oneshot::Receiver<()>>) -> bool {
    match stop {
        Some(rx) => rx.await.is_ok(),
        None => false,
    }
}
