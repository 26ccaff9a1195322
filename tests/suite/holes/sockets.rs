//! Datagram services on the host: a confined command with the network off cannot reach a
//! datagram socket outside by its path (the system log, a user's service) through a
//! `socketpair` end, whatever the call (`sendto`, `connect` + `send`, `sendmsg`) or the pair's
//! type; a stream pair still works, and cannot be pointed elsewhere either.

use std::os::unix::net::UnixDatagram;

use flower_tui::engine::tools::sandbox::{NetworkAccess, SandboxPolicy, seccomp};

use crate::suite::sandbox::{bash, place};

/// Tries every way to send `inject` from a socketpair end to the datagram socket at `argv[1]`
/// and prints one line per way: `DGRAM sendto sent` or `… refused ERRNO`.
const PROBE: &str = r#"
import socket, sys
path = sys.argv[1]
for kind in ("DGRAM", "SEQPACKET", "STREAM"):
    t = getattr(socket, "SOCK_" + kind)
    for how in ("sendto", "connect", "sendmsg"):
        try:
            a, b = socket.socketpair(socket.AF_UNIX, t | socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK)
            if how == "sendto":
                a.sendto(b"inject", path)
            elif how == "connect":
                a.connect(path)
                a.send(b"inject")
            else:
                a.sendmsg([b"inject"], [], 0, path)
            print(kind, how, "sent")
        except OSError as e:
            print(kind, how, "refused", e.errno)
a, b = socket.socketpair()
a.send(b"pair")
print("stream pair", b.recv(4).decode())
"#;

fn received(service: &UnixDatagram) -> Vec<String> {
    let mut got = Vec::new();
    let mut buf = [0u8; 64];
    while let Ok(n) = service.recv(&mut buf) {
        got.push(String::from_utf8_lossy(&buf[..n]).into_owned());
    }
    got
}

#[tokio::test]
async fn a_datagram_service_outside_is_not_reached_through_a_socketpair() {
    assert!(
        seccomp::native().is_some(),
        "no seccomp filter for this machine: socketpairs are not checked here"
    );
    let p = place();
    let path = p.outside.join("log.sock");
    let service = UnixDatagram::bind(&path).unwrap();
    service.set_nonblocking(true).unwrap();
    let script = p.outside.join("probe.py");
    std::fs::write(&script, PROBE).unwrap();
    let command = format!("python3 {} {}", script.display(), path.display());

    let out = bash(&p.ws, &SandboxPolicy::default(), &command).await;
    assert_eq!(
        received(&service),
        Vec::<String>::new(),
        "a confined command reached the datagram service: {}",
        out.content
    );
    for kind in ["DGRAM", "SEQPACKET"] {
        for how in ["sendto", "connect", "sendmsg"] {
            assert!(
                out.content.contains(&format!("{kind} {how} refused")),
                "{kind} {how}: {}",
                out.content
            );
        }
    }
    assert!(
        out.content.contains("stream pair pair"),
        "a stream pair must still work: {}",
        out.content
    );

    // The same probe with the network on reaches it (so the check above can fail).
    let on = SandboxPolicy::default().with_network(NetworkAccess::Allowed);
    let out = bash(&p.ws, &on, &command).await;
    assert!(
        received(&service).iter().any(|m| m == "inject"),
        "{}",
        out.content
    );
}
