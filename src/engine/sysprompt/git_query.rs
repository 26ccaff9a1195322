//! The environment block's `git` queries: each runs with nothing the repository could make it
//! run (see [`git`]), is read the moment its output closes, and is given up after
//! [`GIT_TIMEOUT`]. While one runs it is known by the thread that asked, so that a look nobody
//! will use (a resumed session that only undid and left) is stopped, not left running after
//! flower-tui.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::thread::ThreadId;
use std::time::{Duration, Instant};

/// How long a `git` query may take at session start before it is given up.
const GIT_TIMEOUT: Duration = Duration::from_secs(2);

/// The queries running: the thread that asked, the process. A process leaves the list before
/// it is reaped (under the lock), so a pid here is never another process's.
static RUNNING: Mutex<Vec<(ThreadId, u32)>> = Mutex::new(Vec::new());

fn running() -> std::sync::MutexGuard<'static, Vec<(ThreadId, u32)>> {
    RUNNING.lock().unwrap_or_else(|p| p.into_inner())
}

/// Stop the queries `thread` runs now (and so its look at the environment: what it finds is
/// not used).
pub(crate) fn stop_looking(thread: ThreadId) {
    for (_, pid) in running().iter().filter(|(t, _)| *t == thread) {
        if let Ok(pid) = libc::pid_t::try_from(*pid) {
            // SAFETY: a signal to a child this process spawned and has not reaped (see RUNNING).
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// Whether `child` has ended (it is then reaped and off the list), under the list's lock.
fn ended(child: &mut std::process::Child) -> std::io::Result<Option<std::process::ExitStatus>> {
    let mut list = running();
    let status = child.try_wait();
    if !matches!(status, Ok(None)) {
        list.retain(|(_, pid)| *pid != child.id());
    }
    status
}

/// Kill and reap `child`, off the list.
fn stop(child: &mut std::process::Child) {
    let mut list = running();
    list.retain(|(_, pid)| *pid != child.id());
    let _ = child.kill();
    let _ = child.wait();
}

/// `git <args>` in `dir`: its stdout when it succeeds within [`GIT_TIMEOUT`]. Never takes a
/// lock or writes: `git status` would otherwise refresh and rewrite the user's `.git/index`
/// (`--no-optional-locks`, and the variable for a git that reads only that). It runs outside
/// the sandbox, so it runs no program the repository's own config names, whoever wrote it:
/// no `core.fsmonitor`, no hooks, and no clean/smudge filter (`off`, from `filters_off`; a
/// status re-reads a file whose stat changed through its clean filter); submodules, which have
/// configs of their own, are not looked into.
pub(super) fn git(dir: &Path, off: &[String], args: &[&str]) -> Option<String> {
    let mut child = Command::new("git")
        .arg("--no-optional-locks")
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(off)
        .args(args)
        .current_dir(dir)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    running().push((std::thread::current().id(), child.id()));
    let deadline = Instant::now() + GIT_TIMEOUT;
    let mut stdout = child.stdout.take()?;
    let out = read_within(&mut stdout, deadline);
    drop(stdout);
    // The output is whole once the pipe closes, and git exits right after: its status is
    // looked at often.
    let mut pause = Duration::from_micros(50);
    let status = loop {
        match ended(&mut child) {
            Ok(Some(status)) if out.is_some() => break Some(status),
            Ok(None) if out.is_some() && Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(2));
            }
            _ => {
                stop(&mut child);
                break None;
            }
        }
    };
    out.filter(|_| status.is_some_and(|s| s.success()))
}

/// All of `pipe` until its writer closes it, if that happens before `deadline`: woken by the
/// data itself (`poll`), not by a timer, so a query's answer is taken the moment it is written.
fn read_within(pipe: &mut std::process::ChildStdout, deadline: Instant) -> Option<String> {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        let mut fd = libc::pollfd {
            fd: pipe.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = libc::c_int::try_from(left.as_millis().max(1)).unwrap_or(libc::c_int::MAX);
        // SAFETY: one live pollfd, its count, a timeout.
        let ready = unsafe { libc::poll(&raw mut fd, 1, ms) };
        if ready < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return None;
        }
        if ready <= 0 {
            continue;
        }
        match pipe.read(&mut buf) {
            Ok(0) => return String::from_utf8(out).ok(),
            Ok(n) => out.extend_from_slice(buf.get(..n)?),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_is_read_to_its_close_and_given_up_at_the_deadline() {
        let spawn = |script: &str| {
            Command::new("sh")
                .args(["-c", script])
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let mut quick = spawn("printf 'one\n'; sleep 0.05; printf 'two\n'");
        let started = Instant::now();
        let deadline = started + Duration::from_secs(5);
        let out = read_within(quick.stdout.as_mut().unwrap(), deadline);
        assert_eq!(
            out.as_deref(),
            Some("one\ntwo\n"),
            "both writes, to the close"
        );
        assert!(started.elapsed() < Duration::from_secs(2));
        quick.wait().unwrap();

        let mut stuck = spawn("exec sleep 30");
        let started = Instant::now();
        let out = read_within(
            stuck.stdout.as_mut().unwrap(),
            started + Duration::from_millis(200),
        );
        assert_eq!(out, None);
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_millis(200) && waited < Duration::from_secs(5),
            "{waited:?}"
        );
        stuck.kill().unwrap();
        stuck.wait().unwrap();
    }

    #[test]
    fn a_look_is_stopped_by_the_thread_that_runs_it() {
        // A query that never answers, run and waited for as `git` runs and waits for one.
        let looking = std::thread::spawn(|| {
            let mut child = Command::new("sleep")
                .arg("30")
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            running().push((std::thread::current().id(), child.id()));
            let deadline = Instant::now() + Duration::from_secs(20);
            let out = read_within(child.stdout.as_mut().unwrap(), deadline);
            // Its output closes as it dies; its status may come a moment later.
            let status = loop {
                match ended(&mut child) {
                    Ok(None) => std::thread::sleep(Duration::from_millis(1)),
                    done => break done,
                }
            };
            (out, status.ok().flatten().and_then(|s| s.code()))
        });
        let thread = looking.thread().id();
        while !running().iter().any(|(t, _)| *t == thread) {
            std::thread::sleep(Duration::from_millis(5));
        }
        // Another thread's stop leaves it running; its own thread's stop kills it.
        stop_looking(std::thread::current().id());
        assert!(running().iter().any(|(t, _)| *t == thread));
        stop_looking(thread);
        let (out, code) = looking.join().unwrap();
        assert_eq!(
            out.as_deref(),
            Some(""),
            "its output closed when it was killed"
        );
        assert_eq!(code, None, "killed by a signal, not exited");
        assert!(!running().iter().any(|(t, _)| *t == thread));
    }
}
