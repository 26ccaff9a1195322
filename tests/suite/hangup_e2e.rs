//! A closed terminal (its window closed, `tmux kill-session`) on the real binary in a
//! pseudo-terminal: the way out keeps the side editor's unsaved edits, every key typed into it
//! included, tells the engine where, and exits cleanly, however the program first learns that
//! the terminal is gone. The kernel fails every write to the terminal from the moment it closes,
//! and only then sends SIGHUP: a frame drawn in between (a spinner, a keystroke's echo) fails
//! before the signal can be handled. And keys that reached the program with the signal are still
//! the user's: the loop sees the signal first.

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::fake::Gate;
use crate::support::files::write;
use crate::support::headless::{BLOCKING, flags, manifest};
use crate::support::pty::{POLL, Pty, READY, kept_beside, served};
use crate::support::script::doc;

const CTRL_O: &str = "\x0f";

/// A home whose config keeps the writing reserve small (`max_tokens = 1024`), so that a
/// 40,000-token window hands off in the background at 30,000.
fn home() -> Arc<tempfile::TempDir> {
    let home = tempfile::tempdir().unwrap();
    let cfg = home.path().join("config/flower");
    write(&cfg.join("config.toml"), "max_tokens = 1024\n");
    Arc::new(home)
}

#[test]
fn a_frame_that_finds_the_terminal_closed_keeps_the_edits_and_exits_cleanly() {
    // The review of a background handoff with an edit typed into it, while the main thread's
    // request runs beside it: its spinner keeps drawing frames. SIGHUP is blocked in the program,
    // so the frame that fails on the closed terminal is all it learns: the race the signal
    // loses, every time.
    let (_rt, server) = served();
    let held = Gate::new();
    server.script().at(31_000).tool("list_dir", "{}");
    server
        .script()
        .at(31_300)
        .held(&held)
        .text("never answered")
        .at(31_000)
        .writing()
        .text(&doc("gone"));
    let args = flags("--yes --window 40000 --headroom 10000 --review 60 --step gone");
    let mut t = Pty::start_wrapped(home(), &server, &["env", "--block-signal=HUP"], &args);
    t.wait_for(READY);
    t.ask("keep my edits");
    t.wait("the review beside the work", |s| {
        s.contains("handoff-gone.md") && s.contains("successor in")
    });
    let typed = "- typed before the terminal went";
    t.keys(CTRL_O);
    t.new_line_at_end();
    t.keys(typed);
    t.wait("the edit, the countdown paused, the spinner running", |s| {
        s.contains(typed) && s.contains("paused") && s.contains("working…")
    });
    t.hang_up(" ");
    let status = t.wait_exit();
    assert!(status.success(), "{status}");
    let file = t.workspace().join(".flower/notes/handoff-gone.md");
    let kept = kept_beside(&file);
    assert_eq!(kept.len(), 1, "{kept:?}");
    let text = std::fs::read_to_string(&kept[0]).unwrap();
    assert!(text.contains(typed), "{text:?}");
    assert!(!std::fs::read_to_string(&file).unwrap().contains(typed));
    // The engine was told where they are: the next start offers them.
    let step = &manifest(t.home().path())["steps"][0];
    assert_eq!(step["handoffs"].as_array().map(Vec::len), Some(0));
    assert_eq!(
        step["frozen"]["unsaved"],
        kept[0].to_string_lossy().as_ref(),
        "{step:#}"
    );
    held.open();
}

fn kill(signal: &str, pid: u32) {
    let sent = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill {signal}");
}

/// Wait until every thread of `pid` is stopped (state `T` in /proc).
fn wait_stopped(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(20);
    let stopped = |stat: String| {
        // The state follows the command's closing parenthesis.
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('T'))
    };
    let task_dir = format!("/proc/{pid}/task");
    loop {
        let all = std::fs::read_dir(&task_dir)
            .unwrap()
            .flatten()
            .all(|t| std::fs::read_to_string(t.path().join("stat")).is_ok_and(stopped));
        if all {
            return;
        }
        assert!(Instant::now() < deadline, "{pid} did not stop");
        std::thread::sleep(POLL);
    }
}

#[test]
fn keys_that_arrive_with_sighup_are_in_the_kept_edits() {
    // The program is stopped while a line is typed into the side editor and SIGHUP is sent: on
    // waking it has the signal and the keys at once, and its loop takes the signal first.
    let (_rt, server) = served();
    server.script().over_the_line(&doc("late"));
    let args = flags(&format!("{BLOCKING} --review 60 --step late"));
    let mut t = Pty::start_in(home(), &server, &args);
    t.wait_for(READY);
    t.ask("keep my late keys");
    t.wait("the review", |s| {
        s.contains("handoff-late.md") && s.contains("successor in")
    });
    t.new_line_at_end();
    t.wait("the edit, the countdown paused", |s| s.contains("paused"));
    let pid = t.pid();
    kill("-STOP", pid);
    wait_stopped(pid);
    let typed = "- typed as the terminal went";
    t.keys(typed);
    kill("-HUP", pid);
    kill("-CONT", pid);
    let status = t.wait_exit();
    assert!(status.success(), "{status}");
    let file = t.workspace().join(".flower/notes/handoff-late.md");
    let kept = kept_beside(&file);
    assert_eq!(kept.len(), 1, "{kept:?}");
    let text = std::fs::read_to_string(&kept[0]).unwrap();
    assert!(text.contains(typed), "{text:?}");
    let m = manifest(t.home().path());
    assert_eq!(
        m["steps"][0]["frozen"]["unsaved"],
        kept[0].to_string_lossy().as_ref()
    );
}
