//! Host services: with the network off a confined command cannot connect to a Unix socket outside
//! the sandbox (a path socket this test listens on, an abstract one, a real tmux server whose
//! `run-shell` would write outside), yet `socketpair` works, and so do git and python; the
//! variables that name such services are gone from its environment. With the network on, the
//! path socket is reached.

use std::io::Read;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use flower_tui::engine::tools::sandbox::{NetworkAccess, SandboxPolicy, Support, seccomp};
use serde_json::json;

use super::{Stray, bash, place, ran, unique};
use crate::support::check::{assert_contains, assert_lacks, assert_starts_with, assert_success};
use crate::support::fake::{FakeServer, U};
use crate::support::headless::{bin_for, lines, run};

/// A path socket outside the workspace, and whether something connected to it (and what it sent).
struct Listener {
    sock: UnixListener,
}

impl Listener {
    fn at(path: &Path) -> Listener {
        let sock = UnixListener::bind(path).unwrap();
        sock.set_nonblocking(true).unwrap();
        Listener { sock }
    }

    /// What a client that connected sent, if one did.
    fn heard(&self) -> Option<String> {
        let (mut s, _) = self.sock.accept().ok()?;
        s.set_nonblocking(false).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        let mut got = String::new();
        let _ = s.read_to_string(&mut got);
        Some(got)
    }
}

/// A perl client that connects to the path socket `$ARGV[0]` (or the abstract one when it starts
/// with `@`) and says hello; it prints what failed.
const CLIENT: &str = r#"perl -e 'use Socket; my $p = $ARGV[0]; $p =~ s/^@/\0/;
socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die "socket: $!\n";
connect($s, pack_sockaddr_un($p)) or die "connect: $!\n";
syswrite($s, "hello"); print "sent\n";'"#;

fn filter_here() {
    assert!(
        seccomp::native().is_some(),
        "no seccomp filter for this machine: Unix sockets are not refused here"
    );
}

#[tokio::test]
async fn a_path_socket_outside_is_not_reached_and_the_result_says_why() {
    filter_here();
    let p = place();
    let path = p.outside.join("service.sock");
    let l = Listener::at(&path);
    let out = bash(
        &p.ws,
        &SandboxPolicy::default(),
        &format!("{CLIENT} {}", path.display()),
    )
    .await;
    assert_eq!(l.heard(), None, "{}", out.content);
    assert!(out.is_error, "{}", out.content);
    assert_starts_with(&out.content, "socket: Permission denied");
    assert_contains(
        &out.content,
        "[sandbox: the sandbox refused the connection: commands run without network",
    );
    assert_contains(&out.content, "Unix sockets included");

    // With the network on, the same client reaches it.
    let on = SandboxPolicy::default().with_network(NetworkAccess::Allowed);
    let out = ran(&p.ws, &on, &format!("{CLIENT} {}", path.display())).await;
    assert_eq!(l.heard().as_deref(), Some("hello"), "{}", out);
}

#[tokio::test]
async fn an_abstract_socket_outside_is_not_reached() {
    filter_here();
    let p = place();
    let name = unique("flower-abstract");
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let sock = UnixListener::bind_addr(&addr).unwrap();
    sock.set_nonblocking(true).unwrap();
    let l = Listener { sock };
    let out = bash(
        &p.ws,
        &SandboxPolicy::default(),
        &format!("{CLIENT} @{name}"),
    )
    .await;
    assert_eq!(l.heard(), None, "{}", out.content);
    assert!(out.is_error, "{}", out.content);
    // The test can reach it itself (so the check above can fail).
    let c = std::os::unix::net::UnixStream::connect_addr(&addr);
    assert!(c.is_ok());
}

#[tokio::test]
async fn socketpair_git_and_python_still_work_with_the_network_off() {
    filter_here();
    let p = place();
    let script = "use Socket; $| = 1; \
        socketpair(my $a, my $b, AF_UNIX, SOCK_STREAM, 0) or die \"socketpair: $!\\n\"; \
        syswrite($a, \"ping\"); sysread($b, my $got, 4); print \"pair $got\\n\";";
    let command = format!(
        "perl -e '{script}' && python3 -c 'import socket, subprocess; a, b = socket.socketpair(); \
         a.send(b\"py\"); print(\"python\", b.recv(2).decode(), \
         subprocess.run([\"echo\", \"child\"], capture_output=True).stdout.decode().strip())' \
         && git init -q repo && cd repo && echo x > f && git add f && \
         git -c user.name=t -c user.email=t@e commit -qm one && git log --format=%s"
    );
    let out = ran(&p.ws, &SandboxPolicy::default(), &command).await;
    assert_starts_with(&out, "pair ping\npython py child\none\n");
    assert_lacks(&out, "[sandbox");
}

#[tokio::test]
async fn a_tmux_server_outside_cannot_be_asked_to_write_outside() {
    filter_here();
    let p = place();
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("NOT RUN: no tmux on this machine");
        return;
    }
    let sock = p.outside.join("tmux.sock");
    let target = p.outside.join(unique("tmux-wrote"));
    let stray = Stray(target.clone());
    let started = Command::new("tmux")
        .args(["-S", sock.to_str().unwrap(), "-f", "/dev/null"])
        .args(["new-session", "-d", "sleep 60"])
        .status()
        .unwrap();
    assert!(started.success());
    let kill = || {
        let _ = Command::new("tmux")
            .args(["-S", sock.to_str().unwrap(), "kill-server"])
            .status();
    };
    let run_shell = format!(
        "tmux -S {} run-shell 'echo escaped > {}'",
        sock.display(),
        target.display()
    );
    let out = bash(&p.ws, &SandboxPolicy::default(), &run_shell).await;
    let escaped = stray.0.exists();
    // Outside the sandbox the same command does write (so the check above can fail).
    let plain = bash(&p.ws, &SandboxPolicy::off(), &run_shell).await;
    let plain_wrote = stray.0.exists();
    kill();
    assert!(
        !escaped,
        "the tmux server wrote for the sandbox: {}",
        out.content
    );
    assert!(out.is_error, "{}", out.content);
    assert_contains(&out.content, "[sandbox:");
    assert!(plain_wrote, "{}", plain.content);
}

/// One headless run of the real binary in `ws` whose model runs `command` once, with the
/// network switch `network` and the service variables set as a user's session would have them:
/// the command's output.
async fn run_with_services(home: &Path, ws: &Path, network: &str, command: &str) -> String {
    let server = FakeServer::start().await;
    server
        .script()
        .usage(U::new(1000, 20))
        .tool("bash", json!({ "command": command }).to_string())
        .usage(U::new(1200, 20))
        .text("done");
    let mut c = bin_for(home, &server);
    c.env("TMUX", "/tmp/tmux-1000/default,1234,0")
        .env("SSH_AUTH_SOCK", "/tmp/ssh-agent.sock")
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus")
        .env("DISPLAY", ":0")
        .args([
            "--workspace",
            ws.to_str().unwrap(),
            "--sandbox-network",
            network,
        ])
        .args(["-p", "print the environment"]);
    let out = run(c).await.output;
    assert_success(&out);
    let events = lines(&out);
    let result = events
        .iter()
        .find(|e| e["type"] == "tool_result")
        .unwrap_or_else(|| panic!("no result: {events:?}"));
    result["output"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn the_variables_naming_host_services_are_not_passed_on_with_the_network_off() {
    if !Support::current().confines_writes() {
        eprintln!("NOT ENFORCED: this kernel cannot confine writes; nothing to run");
        return;
    }
    let p = place();
    let names = [
        "TMUX",
        "SSH_AUTH_SOCK",
        "DBUS_SESSION_BUS_ADDRESS",
        "DISPLAY",
    ];
    let command = names.map(|n| format!("{n}=[${n}]")).join(" ");
    let command = format!("echo {command} HOME=[$HOME]");
    let off = run_with_services(&p.outside, &p.ws, "off", &command).await;
    assert_starts_with(
        &off,
        "TMUX=[] SSH_AUTH_SOCK=[] DBUS_SESSION_BUS_ADDRESS=[] DISPLAY=[] HOME=[/",
    );
    // With the network on, commands may use the user's services: the variables stay.
    let on = run_with_services(&p.outside, &p.ws, "on", &command).await;
    assert_starts_with(
        &on,
        "TMUX=[/tmp/tmux-1000/default,1234,0] SSH_AUTH_SOCK=[/tmp/ssh-agent.sock] \
             DBUS_SESSION_BUS_ADDRESS=[unix:path=/run/user/1000/bus] DISPLAY=[:0]",
    );
}
