//! The network: with it off, a TCP connection to a port the test listens on and a UDP datagram to a
//! port it reads are both refused (nothing arrives), no Unix socket opens but a `socketpair` does;
//! with it on, both arrive. The seccomp filter does this, so it holds with or without Landlock.

use std::io::ErrorKind;
use std::net::{TcpListener, UdpSocket};
use std::time::Duration;

use flower_tui::engine::tools::ToolOutput;
use flower_tui::engine::tools::sandbox::{NetworkAccess, SandboxPolicy, seccomp};

use super::{bash, place, ran};
use crate::support::check::{assert_contains, assert_lacks, assert_starts_with};

/// The filter exists for this machine (x86-64 and aarch64 Linux); elsewhere these tests fail
/// loudly rather than pass without it.
fn filter_here() {
    assert!(
        seccomp::native().is_some(),
        "no seccomp filter for this machine: the network is not blocked here"
    );
}

/// `command` through the bash tool in a fresh workspace with the network off (the default
/// policy), on a machine the filter exists for.
async fn offline(command: &str) -> ToolOutput {
    filter_here();
    let p = place();
    bash(&p.ws, &SandboxPolicy::default(), command).await
}

pub(super) fn listener() -> (TcpListener, u16) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    let port = l.local_addr().unwrap().port();
    (l, port)
}

pub(super) fn receiver() -> (UdpSocket, u16) {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let port = s.local_addr().unwrap().port();
    (s, port)
}

/// Whether a connection is waiting on `l` (the kernel queues it before `accept`).
pub(super) fn connected(l: &TcpListener) -> bool {
    match l.accept() {
        Ok(_) => true,
        Err(e) if e.kind() == ErrorKind::WouldBlock => false,
        Err(e) => panic!("accept: {e}"),
    }
}

/// The datagram waiting on `s`, if one arrives within its read timeout (a signal for another
/// test's child may interrupt the wait: it is resumed).
pub(super) fn datagram(s: &UdpSocket) -> Option<String> {
    let mut buf = [0u8; 64];
    loop {
        match s.recv_from(&mut buf) {
            Ok((n, _)) => return Some(String::from_utf8_lossy(&buf[..n]).into_owned()),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return None;
            }
            Err(e) => panic!("recv: {e}"),
        }
    }
}

#[tokio::test]
async fn a_tcp_connection_to_a_loopback_listener_is_refused() {
    let (l, port) = listener();
    let out = offline(&format!(
        "exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
    ))
    .await;
    assert!(!connected(&l), "a connection arrived: {}", out.content);
    assert!(out.is_error, "{}", out.content);
    assert_lacks(&out.content, "connected\n");
    assert!(
        out.content.contains(
            "[sandbox: the sandbox refused the connection: commands run without network access"
        ),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn a_udp_datagram_is_refused() {
    let (s, port) = receiver();
    let out = offline(&format!("echo hello > /dev/udp/127.0.0.1/{port}")).await;
    assert_eq!(datagram(&s), None, "{}", out.content);
    assert!(out.is_error, "{}", out.content);
    assert_contains(&out.content, "[sandbox: the sandbox refused the connection");
}

#[tokio::test]
async fn with_the_network_off_no_socket_opens_but_a_socketpair_does() {
    let script = "use Socket; $| = 1; \
        socketpair(my $a, my $b, AF_UNIX, SOCK_STREAM, 0) or die \"pair: $!\\n\"; print \"pair ok\\n\"; \
        socket(my $u, AF_UNIX, SOCK_STREAM, 0) or print \"unix socket: $!\\n\"; \
        socket(my $t, AF_INET, SOCK_STREAM, 0) or die \"inet socket: $!\\n\"; print \"inet ok\\n\";";
    let out = offline(&format!("perl -e '{script}'")).await;
    assert_starts_with(
        &out.content,
        "pair ok\nunix socket: Permission denied\ninet socket: Permission denied",
    );
    assert_contains(&out.content, "[sandbox: the sandbox refused the connection");
}

#[tokio::test]
async fn a_refused_connection_is_noted_even_when_the_pipeline_ends_well() {
    let (l, port) = listener();
    let out = offline(&format!("curl -sS http://127.0.0.1:{port}/ | head -1")).await;
    assert!(!connected(&l), "{}", out.content);
    assert!(
        !out.is_error,
        "the pipeline's status is head's: {}",
        out.content
    );
    assert_contains(&out.content, "curl: (7)");
    assert_contains(
        &out.content,
        "[sandbox: commands run without network access",
    );
    // A command that only prints such words gets no note.
    let out = offline("printf 'app: connection refused\\n' > app.log && cat app.log").await;
    assert_lacks(&out.content, "[sandbox");
}

#[tokio::test]
async fn with_the_network_on_tcp_and_udp_arrive() {
    filter_here();
    let p = place();
    let (l, tcp) = listener();
    let (s, udp) = receiver();
    let policy = SandboxPolicy::default().with_network(NetworkAccess::Allowed);
    let out = ran(
        &p.ws,
        &policy,
        &format!(
            "exec 3<>/dev/tcp/127.0.0.1/{tcp} && echo connected && echo hello > \
             /dev/udp/127.0.0.1/{udp}"
        ),
    )
    .await;
    assert!(connected(&l), "{}", out);
    assert_eq!(datagram(&s).as_deref(), Some("hello\n"));
    assert_lacks(&out, "[sandbox");
}
