//! Reading the sandbox's refusals out of real programs' error messages.

use std::path::{Path, PathBuf};

use super::*;
use crate::engine::tools::CommandEnd;
use crate::engine::tools::sandbox::SandboxPolicy;

fn exit(code: Option<i32>, signal: Option<i32>) -> CommandExit {
    let end = match (code, signal) {
        (Some(code), _) => CommandEnd::Exited { code },
        (None, Some(signal)) => CommandEnd::Killed { signal },
        (None, None) => CommandEnd::Unknown,
    };
    CommandExit {
        end,
        elapsed_ms: 3,
        summary: String::new(),
    }
}

fn failed() -> CommandExit {
    exit(Some(1), None)
}

/// A workspace that is not in a temp dir (so `/tmp` paths are not inside it).
fn ws() -> PathBuf {
    PathBuf::from("/nonexistent-ws")
}

fn reason(command: &str, output: &str, e: &CommandExit) -> Option<StopReason> {
    sandbox_stop_reason(&SandboxPolicy::default(), &ws(), command, output, e)
}

/// What a reading found, without its wording.
type Found = Option<(StopKind, Certainty)>;

fn kind_and_certainty(r: Option<StopReason>) -> Found {
    r.map(|r| (r.kind, r.certainty))
}

fn write(path: &str, c: Certainty) -> Found {
    Some((
        StopKind::Write {
            path: PathBuf::from(path),
        },
        c,
    ))
}

#[test]
fn writes_outside_are_read_from_the_usual_messages() {
    use Certainty::{Possible, Sure};
    let cases: [(&str, &str, Found); 7] = [
        (
            "echo x > /etc/x",
            "bash: line 1: /etc/x: Permission denied",
            write("/etc/x", Sure),
        ),
        (
            "touch /etc/x",
            "touch: cannot touch '/etc/x': Permission denied",
            write("/etc/x", Sure),
        ),
        (
            "mkdir /opt/d",
            "mkdir: cannot create directory ‘/opt/d’: Permission denied",
            write("/opt/d", Sure),
        ),
        (
            "git config --global user.name x",
            "error: could not lock config file /home/ann/.gitconfig: Permission denied",
            write("/home/ann/.gitconfig", Sure),
        ),
        (
            "python3 w.py",
            "PermissionError: [Errno 13] Permission denied: '/etc/x'",
            write("/etc/x", Possible),
        ),
        (
            "make install",
            "install: cannot create regular file '/usr/local/bin/t': Read-only file system",
            write("/usr/local/bin/t", Sure),
        ),
        (
            "cp a /srv/a",
            "cp: cannot create regular file '/srv/a': Operation not permitted",
            write("/srv/a", Sure),
        ),
    ];
    for (command, output, want) in cases {
        assert_eq!(
            kind_and_certainty(reason(command, output, &failed())),
            want,
            "{output}"
        );
    }
}

#[test]
fn a_sure_refusal_is_told_even_when_the_command_went_on_and_succeeded() {
    let out = "bash: line 1: /etc/x: Permission denied\ndone";
    let r = reason("echo x > /etc/x; echo done", out, &exit(Some(0), None));
    assert_eq!(kind_and_certainty(r), write("/etc/x", Certainty::Sure));
    // An unsure one is not: the command did what it wanted.
    let out = "PermissionError: [Errno 13] Permission denied: '/etc/x'\ncaught";
    assert_eq!(reason("python3 w.py", out, &exit(Some(0), None)), None);
}

#[test]
fn permission_errors_inside_the_writable_set_are_not_the_sandboxs() {
    let outs = [
        "bash: line 1: ./run.sh: Permission denied",
        "bash: /nonexistent-ws/run.sh: Permission denied",
        "touch: cannot touch '/tmp/x': Permission denied",
        "bash: /dev/null: Permission denied",
    ];
    for out in outs {
        assert_eq!(reason("./run.sh", out, &failed()), None, "{out}");
    }
}

/// A folder outside every temp dir: the checkout, or the home directory when the checkout lies in
/// a temp dir (a clone under `/tmp`).
fn outside_the_temp_dirs() -> PathBuf {
    let checkout = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if !crate::engine::tools::sandbox::in_a_temp_dir(&checkout) {
        return checkout;
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute() && !crate::engine::tools::sandbox::in_a_temp_dir(h))
        .expect("this test needs a folder outside the temp dirs: the checkout or $HOME");
    let base = home.join(".cache").join("flower-tui-sandbox-tests");
    std::fs::create_dir_all(&base).unwrap();
    base
}

#[test]
fn a_symlink_out_of_the_workspace_is_resolved_to_where_it_leads() {
    let dir = tempfile::tempdir_in(outside_the_temp_dirs()).unwrap();
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
    let ws = ws.canonicalize().unwrap();
    let r = sandbox_stop_reason(
        &SandboxPolicy::default(),
        &ws,
        "echo x > link/f",
        "bash: line 1: link/f: Permission denied",
        &failed(),
    );
    let target = outside.canonicalize().unwrap().join("f");
    assert_eq!(
        kind_and_certainty(r),
        write(target.to_str().unwrap(), Certainty::Sure)
    );
}

#[test]
fn leaving_the_group_and_foreign_calls_are_named() {
    let r = reason(
        "setsid sleep 300 &",
        "setsid: setsid failed: Operation not permitted",
        &exit(Some(0), None),
    );
    assert_eq!(
        kind_and_certainty(r),
        Some((StopKind::Session, Certainty::Sure))
    );
    let r = reason("./a.out32", "", &exit(None, Some(31)));
    assert_eq!(
        kind_and_certainty(r),
        Some((StopKind::Syscall, Certainty::Sure))
    );
}

#[test]
fn network_failures_are_named_only_with_the_network_off() {
    let off = SandboxPolicy::default();
    let on = SandboxPolicy::default().with_network(NetworkAccess::Allowed);
    let ask = |p: &SandboxPolicy, out: &str, e: &CommandExit| {
        kind_and_certainty(sandbox_stop_reason(p, &ws(), "cmd", out, e))
    };
    let refused =
        "bash: socket: Permission denied\nbash: line 1: /dev/tcp/127.0.0.1/80: Permission denied";
    assert_eq!(
        ask(&off, refused, &failed()),
        Some((StopKind::Network, Certainty::Sure))
    );
    let curl = "curl: (6) Could not resolve host: example.com";
    assert_eq!(
        ask(&off, curl, &exit(Some(6), None)),
        Some((StopKind::Network, Certainty::Possible))
    );
    assert_eq!(ask(&off, curl, &exit(Some(0), None)), None);
    assert_eq!(ask(&on, curl, &exit(Some(6), None)), None);
    assert_eq!(ask(&on, refused, &failed()), None);
}

#[test]
fn a_pipeline_that_ended_well_still_gets_the_note_when_a_program_in_it_was_refused() {
    let off = SandboxPolicy::default();
    let ok = exit(Some(0), None);
    let ask = |p: &SandboxPolicy, command: &str, out: &str| {
        kind_and_certainty(sandbox_stop_reason(p, &ws(), command, out, &ok))
    };
    let curl = "curl: (6) Could not resolve host: example.com";
    let piped = "curl -sS https://example.com | head -1";
    assert_eq!(
        ask(&off, piped, curl),
        Some((StopKind::Network, Certainty::Possible))
    );
    assert_eq!(
        ask(&off, "/usr/bin/curl -s x || true", curl),
        Some((StopKind::Network, Certainty::Possible))
    );
    // A refused socket is sure whatever the status.
    assert_eq!(
        ask(
            &off,
            "python3 fetch.py | tail -1",
            "PermissionError: [Errno 13] Permission denied (socket)"
        ),
        Some((StopKind::Network, Certainty::Sure))
    );
    // The same words in text the command only prints (a log) are no refusal.
    assert_eq!(
        ask(
            &off,
            "cat app.log",
            "app: connection refused\ncurl: (7) failed to connect"
        ),
        None
    );
    assert_eq!(
        ask(
            &off,
            "grep -r 'could not resolve' docs",
            "docs/faq.md: could not resolve host"
        ),
        None
    );
    // A permission error that may be a read's is noted only for a command that failed.
    assert_eq!(
        ask(
            &off,
            "find / -name x | head",
            "find: '/root/x': Permission denied"
        ),
        None
    );
    let on = SandboxPolicy::default().with_network(NetworkAccess::Allowed);
    assert_eq!(ask(&on, piped, curl), None);
}

#[test]
fn a_write_to_a_protected_git_is_named_as_such() {
    let dir = tempfile::tempdir_in(outside_the_temp_dirs()).unwrap();
    let ws = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    let policy = SandboxPolicy::default();
    let lock = ws.join(".git/index.lock");
    let top = ws.join("new.txt");
    for namespaces in [true, false] {
        let set = WritableSet::with_namespaces(&policy, &ws, namespaces);
        let ask =
            |command: &str, out: &str| stop_reason_in(&set, &policy, &ws, command, out, &failed());
        let why = if namespaces {
            "Read-only file system"
        } else {
            "Permission denied"
        };
        let out = format!("fatal: Unable to create '{}': {why}", lock.display());
        let r = ask("git commit -qam x", &out).unwrap();
        assert_eq!(
            (r.kind.clone(), r.certainty),
            (StopKind::Protected { path: lock.clone() }, Certainty::Sure)
        );
        assert!(
            r.note().contains("keeps the repository's `.git` read-only"),
            "{}",
            r.note()
        );
        assert_eq!(
            r.note().contains("cannot create, rename or delete entries"),
            !namespaces,
            "{}",
            r.note()
        );
        // A new top-level entry: refused entry by entry; the mount leaves it writable.
        let out = format!("touch: cannot touch '{}': Permission denied", top.display());
        let r = ask("touch new.txt", &out);
        if namespaces {
            assert_eq!(r, None);
        } else {
            assert_eq!(
                r.map(|r| r.kind),
                Some(StopKind::Protected { path: top.clone() })
            );
        }
        // Inside a folder of the workspace a permission error is not the sandbox's.
        let inner = format!(
            "touch: cannot touch '{}': Permission denied",
            ws.join("src/x").display()
        );
        assert_eq!(ask("touch src/x", &inner), None);
    }
}

#[test]
fn an_unreadable_permission_error_may_have_been_the_sandbox() {
    let r = reason(
        "sudo ls",
        "sudo: unable to resolve: Operation not permitted",
        &failed(),
    );
    assert_eq!(
        kind_and_certainty(r),
        Some((StopKind::Permission, Certainty::Possible))
    );
    assert_eq!(reason("true", "", &exit(Some(0), None)), None);
    assert_eq!(reason("false", "", &failed()), None);
}

#[test]
fn with_the_sandbox_off_nothing_is_blamed_on_it() {
    let off = SandboxPolicy::off();
    let r = sandbox_stop_reason(
        &off,
        Path::new("/w"),
        "echo x > /etc/x",
        "bash: line 1: /etc/x: Permission denied",
        &failed(),
    );
    assert_eq!(r, None);
    let r = sandbox_stop_reason(&off, Path::new("/w"), "x", "", &exit(None, Some(31)));
    assert_eq!(r, None);
}

#[test]
fn notes_name_the_sandbox_and_say_how_sure_they_are() {
    let r = reason(
        "echo x > /etc/x",
        "bash: line 1: /etc/x: Permission denied",
        &failed(),
    )
    .unwrap();
    let note = r.note();
    assert!(
        note.starts_with("[sandbox: the sandbox refused the write to `/etc/x`"),
        "{note}"
    );
    assert!(note.contains(&r.writable), "{note}");
    assert!(
        r.writable.contains("the workspace (/nonexistent-ws)"),
        "{note}"
    );
    let possible = reason("python3 w.py", "Permission denied: '/etc/x'", &failed()).unwrap();
    assert!(
        possible.note().contains("may have been the sandbox's"),
        "{}",
        possible.note()
    );
    let net = StopReason {
        kind: StopKind::Network,
        certainty: Certainty::Possible,
        writable: String::new(),
        network: NetworkAccess::Blocked,
        top_level_closed: false,
    };
    assert!(
        net.note().contains("may have been the sandbox's"),
        "{}",
        net.note()
    );
}

#[test]
fn a_bare_file_name_before_the_phrase_is_read_as_the_path() {
    let ro = SandboxPolicy::new(crate::engine::tools::sandbox::SandboxMode::ReadOnly);
    let r = sandbox_stop_reason(
        &ro,
        &ws(),
        "echo x > new.txt",
        "bash: line 1: new.txt: Permission denied",
        &exit(Some(0), None),
    );
    assert_eq!(
        kind_and_certainty(r),
        write("/nonexistent-ws/new.txt", Certainty::Sure)
    );
}

#[test]
fn a_sure_line_wins_over_an_earlier_unsure_one() {
    let out = "bash: line 1: /home/ann/.bashrc: Permission denied\n\
               touch: cannot touch '/home/ann/.profile': Permission denied";
    let r = reason("echo x >> ~/.bashrc; touch ~/.profile", out, &failed());
    assert_eq!(
        kind_and_certainty(r),
        write("/home/ann/.profile", Certainty::Sure)
    );
}

#[test]
fn a_refused_socket_in_a_traceback_is_read_as_the_network() {
    let out = "  File \"socket.py\", line 232, in __init__\n    \
               _socket.socket.__init__(self, family, type, proto, fileno)\n\
               PermissionError: [Errno 13] Permission denied";
    assert_eq!(
        kind_and_certainty(reason("python3 c.py", out, &failed())),
        Some((StopKind::Network, Certainty::Possible))
    );
}

#[test]
fn the_unsure_permission_note_lists_every_refusal() {
    let r = reason(
        "python3 s.py",
        "PermissionError: [Errno 1] Operation not permitted",
        &failed(),
    )
    .unwrap();
    let note = r.note();
    assert!(
        note.contains("may not start new sessions or process groups"),
        "{note}"
    );
    assert!(note.contains("and have no network"), "{note}");
    let on = SandboxPolicy::default().with_network(NetworkAccess::Allowed);
    let r = sandbox_stop_reason(&on, &ws(), "x", "Operation not permitted", &failed()).unwrap();
    assert!(!r.note().contains("network"), "{}", r.note());
}

#[test]
fn a_stop_on_the_wire_names_what_was_refused_and_how_sure_that_is() {
    let write = SandboxStopped {
        kind: StopKind::Write {
            path: PathBuf::from("/etc/x"),
        },
        certainty: Certainty::Sure,
        message: "[sandbox: refused]".into(),
    };
    assert_eq!(
        serde_json::to_string(&write).unwrap(),
        r#"{"kind":"write","path":"/etc/x","certainty":"sure","message":"[sandbox: refused]"}"#
    );
    let network = SandboxStopped {
        kind: StopKind::Network,
        certainty: Certainty::Possible,
        message: "m".into(),
    };
    assert_eq!(
        serde_json::to_string(&network).unwrap(),
        r#"{"kind":"network","certainty":"possible","message":"m"}"#
    );
}
