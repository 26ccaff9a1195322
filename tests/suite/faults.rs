//! Faults on the real binary: configuration edge cases, secrets, children that die with
//! the agent, `--continue` over damaged runs, oversized input, run directories with several steps.

mod children;
mod config;
mod input;
mod resume;
mod review_files;
mod rundir;
mod secrets;
mod signals;
mod tui;

use std::time::{Duration, Instant};

/// Whether `pid` is gone (or a zombie: dead, waiting for whoever adopted it to reap it).
pub(crate) fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Poll `ok` every 50 ms until it holds; panic naming `what` after `secs` seconds.
pub(crate) fn wait_until(what: &str, secs: u64, ok: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A pid written by a command into `file`, once it is there.
pub(crate) fn read_pid(file: &std::path::Path) -> u32 {
    wait_until(&format!("{}", file.display()), 20, || {
        std::fs::read_to_string(file).is_ok_and(|t| t.trim().parse::<u32>().is_ok())
    });
    std::fs::read_to_string(file)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}
