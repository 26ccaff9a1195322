//! Processes: a command's daemons and background jobs do not outlive it, neither its end nor a
//! `kill -9` of the process that ran it; the provider key is not in its environment, nor can it
//! be read from another process's (`/proc/<pid>/environ`, `mem`). With the sandbox off a `setsid`
//! daemon does escape, which is what the sandbox is for.

use std::path::Path;
use std::process::{Command, Stdio};

use flower_tui::engine::tools::sandbox::SandboxPolicy;

use super::{bash, place, ran};
use crate::suite::faults::{gone, read_pid, wait_until};
use crate::support::check::{assert_contains, assert_lacks, assert_starts_with};
use crate::support::headless::{flags, run};

const AGENT_ENV: &str = "FLOWER_SANDBOX_TEST_AGENT";
const KEY: &str = "sk-ant-SANDBOX-0123456789abcdef";

/// A command that starts three would-be survivors and records their pids: `setsid` itself, a
/// perl daemon that calls `setsid()` and goes on whether it worked or not, and a plain background
/// job. It waits until the daemon has written its pid.
pub(super) const DAEMONS: &str = "setsid sleep 300 & echo $! > setsid.pid
perl -MPOSIX -e 'POSIX::setsid(); open(my $f, \">\", \"daemon.tmp\") or die; print $f $$; close $f; rename(\"daemon.tmp\", \"daemon.pid\"); sleep 300' &
sleep 300 & echo $! > job.pid
while [ ! -s daemon.pid ]; do sleep 0.05; done
echo started";

pub(super) fn pid(ws: &Path, name: &str) -> u32 {
    read_pid(&ws.join(name))
}

/// The session id of a live process.
fn session_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name: state ppid pgrp session …
    stat.rsplit(')')
        .next()?
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()
}

#[tokio::test]
async fn a_setsid_daemon_and_a_background_job_do_not_outlive_the_command() {
    let p = place();
    let out = bash(&p.ws, &SandboxPolicy::default(), DAEMONS).await;
    assert_contains(&out.content, "started");
    let daemon = pid(&p.ws, "daemon.pid");
    let job = pid(&p.ws, "job.pid");
    let setsid = pid(&p.ws, "setsid.pid");
    // The daemon's setsid() was refused: it stayed in the command's session.
    assert_contains(&out.content, "setsid failed: Operation not permitted");
    assert_contains(
        &out.content,
        "[sandbox: the sandbox refuses `setsid` and `setpgid`",
    );
    tokio::task::spawn_blocking(move || {
        wait_until("the command's processes to end with it", 5, || {
            [daemon, job, setsid].iter().all(|&p| gone(p))
        })
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn with_the_sandbox_off_a_setsid_daemon_escapes() {
    let p = place();
    let out = bash(&p.ws, &SandboxPolicy::off(), DAEMONS).await;
    assert_contains(&out.content, "started");
    let daemon = pid(&p.ws, "daemon.pid");
    let job = pid(&p.ws, "job.pid");
    let setsid = pid(&p.ws, "setsid.pid");
    let alive = !gone(daemon);
    let own_session = session_of(daemon) == Some(daemon);
    // Clean up before asserting: these would otherwise run for five minutes.
    for p in [daemon, job, setsid] {
        // SAFETY: kill(2) with plain integers; these pids were just read from our own command.
        unsafe {
            libc::kill(i32::try_from(p).unwrap(), libc::SIGKILL);
        }
    }
    assert!(
        alive && own_session,
        "the unsandboxed daemon escapes: {}",
        out.content
    );
    assert_contains(&out.content, "are still running");
}

/// The test binary itself as an agent: it runs the sandboxed `bash` tool and is killed with
/// SIGKILL by a test in this module while the command runs.
#[test]
#[ignore = "entry point: a process running a sandboxed command, killed by a test in this module"]
fn sandbox_agent_entry() {
    let Ok(args) = std::env::var(AGENT_ENV) else {
        return;
    };
    let (ws, command) = args.split_once('\n').unwrap();
    assert_eq!(std::env::var("ANTHROPIC_API_KEY").as_deref(), Ok(KEY));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let out = runtime.block_on(bash(Path::new(ws), &SandboxPolicy::default(), command));
    println!("RESULT {}", out.content);
}

fn agent(ws: &Path, command: &str) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(flags("--exact suite::sandbox::processes::sandbox_agent_entry --ignored --nocapture --test-threads=1 -q"))
    .env(AGENT_ENV, format!("{}\n{command}", ws.display()))
    .env("ANTHROPIC_API_KEY", KEY)
    .stdin(Stdio::null());
    c
}

#[tokio::test]
async fn a_setsid_daemon_does_not_outlive_a_kill_9_of_the_agent() {
    let p = place();
    let command = format!("{DAEMONS}\necho $$ > shell.pid\nsleep 1000");
    let mut child = agent(&p.ws, &command)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let ws = p.ws.clone();
    let pids = tokio::task::spawn_blocking(move || {
        ["daemon.pid", "job.pid", "shell.pid"].map(|f| pid(&ws, f))
    })
    .await
    .unwrap();
    for p in pids {
        assert!(!gone(p), "{p} runs before the kill");
    }
    child.kill().unwrap();
    child.wait().unwrap();
    tokio::task::spawn_blocking(move || {
        wait_until("the command's processes to die with the agent", 10, || {
            pids.iter().all(|&p| gone(p))
        })
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn the_provider_key_is_not_in_the_commands_environment() {
    let p = place();
    let c = agent(&p.ws, "env > env.txt; echo listed");
    let out = run(c).await.output;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert_contains(&stdout, "RESULT listed");
    let env = std::fs::read_to_string(p.ws.join("env.txt")).unwrap();
    assert_contains(&env, "PATH=");
    assert!(!env.contains(KEY), "{env}");
    assert_lacks(&env, "ANTHROPIC_API_KEY");
}

#[tokio::test]
async fn git_commits_in_the_sandbox_without_detaching_its_maintenance() {
    let p = place();
    let out = ran(
        &p.ws,
        &SandboxPolicy::default(),
        "git init -q . && echo a > a.txt && git add a.txt && git -c user.name=A -c \
         user.email=a@example.com commit -qm first && git log --format=%s",
    )
    .await;
    assert_starts_with(&out, "first\n");
    assert_lacks(&out, "setsid");
    assert_lacks(&out, "[sandbox");
}

#[tokio::test]
async fn another_processs_environment_and_memory_cannot_be_read() {
    let p = place();
    let policy = SandboxPolicy::default();
    if !super::confines_writes(&policy, &p.ws) {
        return;
    }
    // A process of the same user with a secret in its environment, like the shell that started
    // flower-tui with the provider key exported.
    let secret = "sk-flower-environ-test-0123456789";
    let mut holder = Command::new("sleep")
        .arg("60")
        .env("FLOWER_TEST_SECRET", secret)
        .spawn()
        .unwrap();
    let other = holder.id();
    let command = format!(
        "cat /proc/{other}/environ; echo; cat /proc/$PPID/environ; echo; \
         head -c 8 /proc/{other}/mem; echo; tr '\\0' ' ' < /proc/{other}/cmdline; echo; \
         grep -c . /proc/self/status"
    );
    let out = bash(&p.ws, &policy, &command).await;
    // Outside the sandbox the same read shows it (so the checks below can fail).
    let plain = bash(
        &p.ws,
        &SandboxPolicy::off(),
        &format!("cat /proc/{other}/environ"),
    )
    .await;
    let _ = holder.kill();
    let _ = holder.wait();
    assert_contains(&plain.content, secret);
    assert_lacks(&out.content, secret);
    for denied in [
        format!("cat: /proc/{other}/environ: Permission denied"),
        format!("head: cannot open '/proc/{other}/mem' for reading: Permission denied"),
    ] {
        assert!(out.content.contains(&denied), "{denied}: {}", out.content);
    }
    // The parent (this test process) too.
    let parent_denied = out.content.lines().any(|l| {
        l.starts_with("cat: /proc/")
            && l.ends_with("/environ: Permission denied")
            && !l.contains(&other.to_string())
    });
    assert!(parent_denied, "{}", out.content);
    // What programs read in `/proc` still works: the system's files, and a program's own
    // folder when the shell runs it in place (the last command).
    let out = ran(
        &p.ws,
        &policy,
        "head -1 /proc/meminfo && nproc && python3 -c 'import os; print(\"py\", os.cpu_count() > 0)' \
         && cargo --version >/dev/null && echo cargo && grep -c ^Name /proc/self/status",
    ).await;
    assert_starts_with(&out, "MemTotal:");
    assert_contains(&out, "py True\ncargo\n1\n");
}
