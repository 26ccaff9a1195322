//! A workspace's `.git` made read-only by a mount, on Linux, where unprivileged user namespaces
//! work.
//!
//! The child of a confined command, between `fork` and `exec` and before it confines itself,
//! enters a new user and mount namespace (`unshare(CLONE_NEWUSER | CLONE_NEWNS)`), denies
//! `setgroups` and maps its own uid and gid to themselves (so it stays the same user, and `exec`
//! drops the capabilities the new namespace gave it), makes every mount private (nothing it
//! mounts reaches the agent's namespace), bind-mounts `.git` onto itself and remounts that bind
//! read-only. A write, create, rename or delete in `.git` then fails with "Read-only file system",
//! and `.git` itself cannot be moved or removed (it is a mount point). Landlock may then grant the
//! whole workspace. The remount keeps the flags the kernel locks on a mount seen from a user
//! namespace (`nosuid`, `nodev`, `noexec`, read in the agent with `statvfs`; the access-time
//! flags are kept by the kernel itself when none is given), or it would be refused. The command
//! cannot undo it: the seccomp filter refuses `unshare`, `setns` and every mount call, Landlock
//! refuses mounts of a confined process, and in a namespace a command could still make (through
//! `clone`) the bind is locked to its read-only flag.
//!
//! Whether this works is asked once per process ([`available`]): a forked child runs the same
//! steps on the temp dir. Where it fails (user namespaces restricted by AppArmor or a sysctl,
//! some containers), the sandbox grants the workspace entry by entry instead (`writable.rs`).
//! Setting [`NO_NAMESPACES_VAR`] skips the probe and takes that fallback (the tests use it).
//!
//! Everything the child uses is built before the fork; the child makes raw system calls only.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;

/// Set to anything, this process protects `.git` entry by entry, without namespaces.
pub const NO_NAMESPACES_VAR: &str = "FLOWER_TUI_SANDBOX_NO_NAMESPACES";

/// The read-only bind of one path, ready for the child.
pub(super) struct ReadOnlyMount {
    target: CString,
    /// `MS_NOSUID`/`MS_NODEV`/`MS_NOEXEC` as the mount holding `target` has them.
    locked: libc::c_ulong,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl ReadOnlyMount {
    /// Read what the child needs for `path` (which must exist).
    pub(super) fn prepare(path: &Path) -> io::Result<Self> {
        let target = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: `statvfs` is plain data; all-zero is a valid value for it.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: a NUL-terminated path and a pointer to a live `statvfs`; the result is checked.
        if unsafe { libc::statvfs(target.as_ptr(), &raw mut st) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let locked = [
            (libc::ST_NOSUID, libc::MS_NOSUID),
            (libc::ST_NODEV, libc::MS_NODEV),
            (libc::ST_NOEXEC, libc::MS_NOEXEC),
        ]
        .into_iter()
        .filter(|(st_flag, _)| st.f_flag & st_flag != 0)
        .fold(0, |acc, (_, ms_flag)| acc | ms_flag);
        // SAFETY: these two calls cannot fail and touch no memory of ours.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        Ok(ReadOnlyMount {
            target,
            locked,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        })
    }

    /// Enter the namespaces and make the target read-only, in the calling process.
    ///
    /// # Safety
    /// Meant for a child between `fork` and `exec` (single-threaded, which `unshare` of a user
    /// namespace requires): raw system calls only, on data built before the fork.
    pub(super) unsafe fn enter(&self) -> io::Result<()> {
        let none = std::ptr::null::<libc::c_char>();
        let target = self.target.as_ptr();
        // SAFETY: raw system calls on NUL-terminated paths and buffers that outlive them; every
        // result is checked.
        unsafe {
            if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) != 0 {
                return Err(io::Error::last_os_error());
            }
            write_all(c"/proc/self/setgroups", b"deny")?;
            write_all(c"/proc/self/uid_map", &self.uid_map)?;
            write_all(c"/proc/self/gid_map", &self.gid_map)?;
            let private = libc::MS_REC | libc::MS_PRIVATE;
            if libc::mount(none, c"/".as_ptr(), none, private, std::ptr::null()) != 0 {
                return Err(io::Error::last_os_error());
            }
            let bind = libc::MS_BIND | libc::MS_REC;
            if libc::mount(target, target, none, bind, std::ptr::null()) != 0 {
                return Err(io::Error::last_os_error());
            }
            let ro = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | self.locked;
            if libc::mount(none, target, none, ro, std::ptr::null()) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Write `data` to the file at `path` in one call.
///
/// # Safety
/// Async-signal-safe: open, write, close.
unsafe fn write_all(path: &std::ffi::CStr, data: &[u8]) -> io::Result<()> {
    // SAFETY: a NUL-terminated path; the buffer lives for the call; results are checked.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        let err = io::Error::last_os_error();
        libc::close(fd);
        if usize::try_from(n).ok() != Some(data.len()) {
            return Err(err);
        }
    }
    Ok(())
}

/// Whether this process can protect `.git` with a read-only mount: asked once, then remembered.
pub fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let route = std::env::var_os(NO_NAMESPACES_VAR).is_none() && probe();
        tracing::info!(
            "sandbox: a workspace's .git is kept read-only {}",
            if route {
                "by a read-only mount in a user namespace"
            } else {
                "by granting writes entry by entry (user namespaces are not available)"
            }
        );
        route
    })
}

/// Run [`ReadOnlyMount::enter`] on the temp dir in a forked child; whether it succeeded.
fn probe() -> bool {
    let temp = std::env::temp_dir();
    let Ok(mount) =
        ReadOnlyMount::prepare(&temp).or_else(|_| ReadOnlyMount::prepare(Path::new("/")))
    else {
        return false;
    };
    // SAFETY: the child makes raw system calls only (`enter`, `_exit`) on data built before the
    // fork, and never returns into Rust code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return false;
    }
    if pid == 0 {
        // SAFETY: in the forked child, as `enter` requires.
        let ok = unsafe { mount.enter() }.is_ok();
        // SAFETY: leaves the child without running any destructor or atexit handler.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: waits for our own child; `status` is a live int.
        let r = unsafe { libc::waitpid(pid, &raw mut status, 0) };
        if r == pid {
            break;
        }
        if r < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return false;
        }
    }
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}
