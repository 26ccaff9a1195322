//! The user's terminal: a confined command run by the real binary in a terminal cannot write
//! escape sequences to it through `/dev/tty` (OSC 52 sets the clipboard, OSC 0 the title), type
//! into it (`TIOCSTI`), open it by its `/dev/pts` name, or get it back through `setsid` or
//! `script`; a command that needs a terminal gets a private one.

use flower_tui::engine::tools::sandbox::{self, Support};
use serde_json::json;

use crate::support::fake::{FakeServer, U, anthropic as a};
use crate::support::pty::{Pty, find, lock, runtime};

/// What the model runs: each attempt prints how it ended, then a private terminal is asked for.
const ATTEMPTS: &str = r#"printf '\033]52;c;UFdORUQ=\007\033]0;PWNED-TITLE\007' > /dev/tty; echo "tty=$?"
for t in /dev/pts/[0-9]*; do printf '\033]0;PWNED-PTS\007' > "$t" 2>/dev/null && echo "wrote $t"; done
python3 -c 'import fcntl, termios, os
for path in ("/dev/tty", "/dev/stdin"):
    try:
        fd = os.open(path, os.O_RDWR)
        fcntl.ioctl(fd, termios.TIOCSTI, b"x")
        print("typed into", path)
    except OSError as e:
        print("sti", path, e.errno)'
setsid sh -c "printf '\033]0;PWNED-SETSID\007' > /dev/tty" 2>/dev/null; echo "setsid=$?"
script -qec 'printf "\033]0;PWNED-SCRIPT\007"' /dev/null > /dev/null
script -qec 'tty; echo private-ok' /dev/null"#;

#[test]
fn a_confined_command_cannot_reach_the_users_terminal() {
    if !Support::current().confines_writes() {
        eprintln!("NOT ENFORCED: this kernel cannot confine writes; nothing to run");
        return;
    }
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    server.push(a::tool_use(
        "t1",
        "bash",
        &json!({ "command": ATTEMPTS }).to_string(),
        U::new(1000, 20),
    ));
    server.push(a::text("done", U::new(1200, 20)));
    let mut t = Pty::start(&server, &["-p", "try the terminal", "--output", "json"]);
    let status = t.wait_exit();
    let raw = lock(&t.shared.raw).clone();
    let text = String::from_utf8_lossy(&raw).into_owned();
    assert!(status.success(), "{text}");
    for needle in [
        &b"\x1b]52;"[..],
        b"\x1b]0;PWNED-TITLE",
        b"\x1b]0;PWNED-PTS",
        b"\x1b]0;PWNED-SETSID",
        b"\x1b]0;PWNED-SCRIPT",
    ] {
        assert_eq!(
            find(&raw, needle),
            None,
            "{} reached the terminal: {text}",
            String::from_utf8_lossy(needle)
        );
    }
    let output = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
        .find(|e| e["type"] == "tool_result")
        .and_then(|e| e["output"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no tool result: {text}"));
    assert!(output.contains("tty=1"), "{output}");
    assert!(!output.contains("typed into"), "{output}");
    assert!(!output.contains("wrote /dev/pts"), "{output}");
    // The command's own private terminal works, where the mount route runs.
    if sandbox::namespaces_available() {
        assert!(output.contains("private-ok"), "{output}");
    } else {
        eprintln!("NOT CHECKED: no user namespaces here, so no private terminal: {output}");
    }
}
