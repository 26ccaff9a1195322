//! Metadata outside the writable places: a confined command cannot change the mode, owner, times
//! or extended attributes of a file outside the workspace (Landlock has no right for them), by any
//! call (`chmod`, `fchmod` on a descriptor, `fchmodat2`, through `/proc/self/fd`, `touch -d`,
//! `setxattr`), and in read-only mode not those of the workspace's files either; inside the
//! workspace (workspace-write) it still can.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use flower_tui::engine::tools::sandbox::{SandboxMode, SandboxPolicy};

use crate::suite::sandbox::{Place, bash, confines_writes, place, ran};
use crate::support::check::assert_starts_with;

/// Every way to change `$1`'s metadata the probe knows, each allowed to fail.
const CHANGE: &str = r#"
import ctypes, os, sys
p = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
def attempt(name, f):
    try:
        f()
        print(name, "changed")
    except OSError as e:
        print(name, "refused", e.errno)
attempt("chmod", lambda: os.chmod(p, 0o777))
def fchmod():
    fd = os.open(p, os.O_RDONLY)
    os.fchmod(fd, 0o757)
attempt("fchmod", fchmod)
def proc_fd():
    fd = os.open(p, os.O_RDONLY)
    os.chmod("/proc/self/fd/%d" % fd, 0o775)
attempt("proc-fd", proc_fd)
def fchmodat2():
    if libc.syscall(452, -100, p.encode(), 0o766, 0) != 0:
        raise OSError(ctypes.get_errno(), "fchmodat2")
attempt("fchmodat2", fchmodat2)
attempt("utime", lambda: os.utime(p, (946684800, 946684800)))
attempt("setxattr", lambda: os.setxattr(p, "user.flower", b"planted"))
attempt("chown", lambda: os.chown(p, os.getuid(), os.getgid()))
"#;

/// The probe's calls that change a mode, times or an attribute (all but `chown`).
const MODE_TIMES_ATTRIBUTES: [&str; 6] = [
    "chmod",
    "fchmod",
    "proc-fd",
    "fchmodat2",
    "utime",
    "setxattr",
];

fn xattr(path: &Path, name: &str) -> Option<Vec<u8>> {
    let p = CString::new(path.as_os_str().as_bytes()).unwrap();
    let n = CString::new(name).unwrap();
    let mut buf = [0u8; 64];
    // SAFETY: NUL-terminated strings and a live buffer of the given size.
    let r = unsafe { libc::getxattr(p.as_ptr(), n.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    usize::try_from(r).ok().map(|len| buf[..len].to_vec())
}

/// A file with mode 0600, an old mtime and no attribute; whether this file system keeps user
/// attributes (checked on a control file, so the attribute check below can fail).
fn victim(dir: &Path, name: &str) -> std::path::PathBuf {
    let f = dir.join(name);
    std::fs::write(&f, "secret\n").unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    let control = dir.join(format!("{name}.control"));
    std::fs::write(&control, "").unwrap();
    let c = CString::new(control.as_os_str().as_bytes()).unwrap();
    // SAFETY: NUL-terminated strings and a live buffer.
    let r = unsafe {
        libc::setxattr(
            c.as_ptr(),
            c"user.control".as_ptr(),
            b"x".as_ptr().cast(),
            1,
            0,
        )
    };
    assert_eq!(
        r, 0,
        "this file system keeps no user attributes: the setxattr check cannot run here"
    );
    f
}

/// The probe's output says `verdict` ("refused", "changed") of each of `calls`; the failure names
/// the call and shows the output.
#[track_caller]
fn probe_says(out: &str, calls: &[&str], verdict: &str) {
    for call in calls {
        assert!(out.contains(&format!("{call} {verdict}")), "{call}: {out}");
    }
}

fn unchanged(f: &Path, mtime: i64, out: &str) {
    let meta = std::fs::metadata(f).unwrap();
    assert_eq!(meta.mode() & 0o7777, 0o600, "mode changed: {out}");
    assert_eq!(meta.mtime(), mtime, "times changed: {out}");
    assert_eq!(xattr(f, "user.flower"), None, "attribute planted: {out}");
}

/// Under `policy`, the probe, `chmod 777` and `touch -d` (then `more`, a shell command, if any)
/// change nothing of a fresh victim `name` in `dir`, and the probe says each of its mode, times
/// and attribute calls was refused; the command's output.
async fn nothing_changes(
    p: &Place,
    policy: &SandboxPolicy,
    dir: &Path,
    name: &str,
    more: &str,
) -> String {
    let f = victim(dir, name);
    let mtime = std::fs::metadata(&f).unwrap().mtime();
    let script = p.outside.join("change.py");
    std::fs::write(&script, CHANGE).unwrap();
    let (probe, file) = (script.display(), f.display());
    let command =
        format!("python3 {probe} {file}; chmod 777 {file}; touch -d 2000-01-01 {file}{more}");
    let out = bash(&p.ws, policy, &command).await;
    unchanged(&f, mtime, &out.content);
    probe_says(&out.content, &MODE_TIMES_ATTRIBUTES, "refused");
    out.content
}

#[tokio::test]
async fn metadata_outside_the_workspace_cannot_be_changed() {
    let p = place();
    let policy = SandboxPolicy::default();
    if !confines_writes(&policy, &p.ws) {
        return;
    }
    let chmod_all = format!("; chmod -R 000 {}", p.outside.display());
    let out = nothing_changes(&p, &policy, &p.outside, "id_ed25519", &chmod_all).await;
    probe_says(&out, &["chown"], "refused");
    let script = p.outside.join("change.py");
    assert!(std::fs::metadata(&script).unwrap().mode() & 0o777 != 0);

    // Inside the workspace the same calls work.
    let inside = victim(&p.ws, "own.sh");
    let out = bash(
        &p.ws,
        &policy,
        &format!("python3 {} {}", script.display(), inside.display()),
    )
    .await;
    probe_says(
        &out.content,
        &["chmod", "fchmod", "utime", "setxattr"],
        "changed",
    );
    assert_eq!(
        xattr(&inside, "user.flower").as_deref(),
        Some(&b"planted"[..])
    );
}

#[tokio::test]
async fn read_only_mode_changes_no_metadata_in_the_workspace() {
    let p = place();
    let policy = SandboxPolicy::new(SandboxMode::ReadOnly);
    if !confines_writes(&policy, &p.ws) {
        return;
    }
    nothing_changes(&p, &policy, &p.ws, "build.sh", "").await;
    // The temp dir stays scratch space, metadata included.
    let out = ran(
        &p.ws,
        &policy,
        "t=$(mktemp) && chmod 700 \"$t\" && touch -d 2000-01-01 \"$t\" && stat -c %a \"$t\"",
    )
    .await;
    assert_starts_with(&out, "700");
}
