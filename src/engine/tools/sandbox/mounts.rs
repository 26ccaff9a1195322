//! The command's own view of the file system, on Linux, where unprivileged user namespaces work:
//! everything read-only but the writable places, and a workspace's `.git` read-only within them.
//!
//! The child of a confined command, between `fork` and `exec` and before it confines itself,
//! enters a new user and mount namespace (`unshare(CLONE_NEWUSER | CLONE_NEWNS)`), denies
//! `setgroups` and maps its own uid and gid to themselves (so it stays the same user, and `exec`
//! drops the capabilities the new namespace gave it), and makes every mount private (nothing it
//! mounts reaches the agent's namespace). Then:
//! 1. each writable place (the workspace, the temp dirs, the configured paths) is copied as a
//!    detached mount tree (`open_tree(OPEN_TREE_CLONE | AT_RECURSIVE)`), keeping its flags;
//! 2. every mount of the namespace is made read-only (`mount_setattr(AT_RECURSIVE)`), so a file
//!    outside the writable places cannot even have its mode, owner, times or extended attributes
//!    changed, which no Landlock right covers (`chmod 777 ~/.ssh/id_ed25519`, `touch -d`);
//! 3. the copies are attached back over their places (`move_mount`): writable as they were;
//! 4. a private `devpts` instance is mounted on `/dev/pts`: the user's terminal is not in it (a
//!    command cannot open it by its name), and a command that needs a terminal (`script`, a
//!    test harness) gets its own from `/dev/ptmx`;
//! 5. each read-only path (a workspace's `.git`, a worktree's git folders that lie in a writable
//!    place) is copied, made read-only and attached over itself: a write, create, rename or
//!    delete there fails with "Read-only file system", and `.git` itself cannot be moved or
//!    removed (it is a mount point);
//! 6. the child changes to its working folder again, so it works in the attached copy.
//!
//! The command cannot undo any of it: the seccomp filter refuses `unshare`, `setns` and every
//! mount call, Landlock refuses mounts of a confined process, and in a namespace a command could
//! still make (through `clone`) the read-only flags are locked.
//!
//! Whether this works is asked once per process ([`available`]): a forked child runs the same
//! steps on the temp dir. Where it fails (user namespaces restricted by AppArmor or a sysctl,
//! some containers, a kernel before 5.12), the sandbox protects `.git` entry by entry instead
//! (`writable.rs`), refuses the metadata calls in read-only mode (`seccomp.rs`), and says at
//! start what is left open. Setting [`NO_NAMESPACES_VAR`] skips the probe and takes that fallback
//! (the tests use it).
//!
//! Everything the child uses is built before the fork; the child makes raw system calls only.

use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Set to anything, this process takes the fallback, without namespaces.
pub const NO_NAMESPACES_VAR: &str = "FLOWER_TUI_SANDBOX_NO_NAMESPACES";

/// `struct mount_attr` as `mount_setattr` reads it.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const OPEN_TREE_CLONE: libc::c_uint = 0x1;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;

/// The view of one command, ready for the child.
pub(super) struct MountPlan {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// The writable places bound back read-write, outermost first, none inside another.
    writable: Vec<CString>,
    /// One slot per writable place for its detached copy, filled in the child.
    copies: Vec<libc::c_int>,
    /// Kept read-only on top of the writable places.
    read_only: Vec<CString>,
    /// Mount a private `devpts` on `/dev/pts`.
    devpts: bool,
}

impl MountPlan {
    /// The plan for `writable` places (directories or files that exist; device files need no
    /// mount of their own) and `read_only` paths within them.
    pub(super) fn prepare(writable: &[PathBuf], read_only: &[PathBuf]) -> io::Result<Self> {
        let mut outer: Vec<&PathBuf> = writable
            .iter()
            .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.is_dir() || m.is_file()))
            .collect();
        outer.sort();
        outer.dedup();
        let mut kept: Vec<&PathBuf> = Vec::new();
        for p in outer {
            if !kept.iter().any(|k| p.starts_with(k)) {
                kept.push(p);
            }
        }
        let writable = kept
            .into_iter()
            .map(|p| c_path(p))
            .collect::<io::Result<Vec<_>>>()?;
        let read_only = read_only
            .iter()
            .filter(|p| std::fs::symlink_metadata(p).is_ok())
            .map(|p| c_path(p))
            .collect::<io::Result<Vec<_>>>()?;
        // SAFETY: these two calls cannot fail and touch no memory of ours.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        Ok(MountPlan {
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            copies: vec![-1; writable.len()],
            writable,
            read_only,
            devpts: Path::new("/dev/pts").is_dir(),
        })
    }

    /// Whether a private `/dev/pts` is mounted (then the child grants it to itself).
    pub(super) fn private_terminals(&self) -> bool {
        self.devpts
    }

    /// Enter the namespaces and make the view, in the calling process.
    ///
    /// # Safety
    /// Meant for a child between `fork` and `exec` (single-threaded, which `unshare` of a user
    /// namespace requires): raw system calls only, on data built before the fork.
    pub(super) unsafe fn enter(&mut self) -> io::Result<()> {
        let none = std::ptr::null::<libc::c_char>();
        let mut cwd = [0u8; 4096];
        // SAFETY: raw system calls on NUL-terminated paths and buffers that outlive them; every
        // result is checked.
        unsafe {
            let have_cwd = libc::syscall(libc::SYS_getcwd, cwd.as_mut_ptr(), cwd.len()) > 0;
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
            for (path, slot) in self.writable.iter().zip(self.copies.iter_mut()) {
                *slot = copy_tree(path)?;
            }
            set_read_only(libc::AT_FDCWD, c"/", 0)?;
            for (path, &copy) in self.writable.iter().zip(self.copies.iter()) {
                attach(copy, path)?;
            }
            if self.devpts {
                let opts = c"newinstance,ptmxmode=0666,mode=0620";
                let flags = libc::MS_NOSUID | libc::MS_NOEXEC;
                if libc::mount(
                    c"devpts".as_ptr(),
                    c"/dev/pts".as_ptr(),
                    c"devpts".as_ptr(),
                    flags,
                    opts.as_ptr().cast(),
                ) != 0
                {
                    return Err(io::Error::last_os_error());
                }
            }
            for path in &self.read_only {
                let copy = copy_tree(path)?;
                set_read_only(copy, c"", libc::AT_EMPTY_PATH)?;
                attach(copy, path)?;
            }
            if have_cwd && libc::chdir(cwd.as_ptr().cast()) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

fn c_path(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

/// A detached copy of the mount tree at `path` (its flags as they are).
///
/// # Safety
/// Async-signal-safe: one system call.
unsafe fn copy_tree(path: &CStr) -> io::Result<libc::c_int> {
    let flags =
        OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint | libc::AT_RECURSIVE as libc::c_uint;
    // SAFETY: a NUL-terminated path; the result is checked.
    let fd = unsafe { libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, path.as_ptr(), flags) };
    libc::c_int::try_from(fd)
        .ok()
        .filter(|&fd| fd >= 0)
        .ok_or_else(io::Error::last_os_error)
}

/// Make the mount tree at `dirfd`/`path` read-only, every mount in it.
///
/// # Safety
/// Async-signal-safe: one system call.
unsafe fn set_read_only(dirfd: libc::c_int, path: &CStr, flags: libc::c_int) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    let flags = flags | libc::AT_RECURSIVE;
    // SAFETY: a NUL-terminated path and an attribute on this stack frame; the result is checked.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dirfd,
            path.as_ptr(),
            flags,
            &raw const attr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Attach the detached tree `copy` over `path`, then close it.
///
/// # Safety
/// Async-signal-safe: two system calls.
unsafe fn attach(copy: libc::c_int, path: &CStr) -> io::Result<()> {
    // SAFETY: a descriptor from `copy_tree`, NUL-terminated paths; the result is checked.
    unsafe {
        let r = libc::syscall(
            libc::SYS_move_mount,
            copy,
            c"".as_ptr(),
            libc::AT_FDCWD,
            path.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        );
        let err = io::Error::last_os_error();
        libc::close(copy);
        if r != 0 {
            return Err(err);
        }
    }
    Ok(())
}

/// Write `data` to the file at `path` in one call.
///
/// # Safety
/// Async-signal-safe: open, write, close.
unsafe fn write_all(path: &CStr, data: &[u8]) -> io::Result<()> {
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

/// Whether this process can give commands a view of their own: asked once, then remembered.
pub fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let route = std::env::var_os(NO_NAMESPACES_VAR).is_none() && probe();
        tracing::info!(
            "sandbox: {}",
            if route {
                "commands run in a mount namespace of their own (read-only but the writable \
                 places, .git read-only, a private /dev/pts)"
            } else {
                "user namespaces are not available: .git is protected entry by entry, \
                 metadata outside is not"
            }
        );
        route
    })
}

/// Run [`MountPlan::enter`] with the temp dir writable and read-only in a forked child; whether
/// it succeeded. The child says so through a pipe before it exits: tearing down its namespaces
/// takes milliseconds (the kernel waits for every CPU to pass a quiescent point), so the answer
/// is taken from the pipe and the child is reaped on a thread of its own.
fn probe() -> bool {
    let temp = std::env::temp_dir();
    let Ok(mut plan) = MountPlan::prepare(std::slice::from_ref(&temp), std::slice::from_ref(&temp))
    else {
        return false;
    };
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: a two-int array for the two ends.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return false;
    }
    let [read_end, write_end] = fds;
    // SAFETY: the child makes raw system calls only (`enter`, `write`, `_exit`) on data built
    // before the fork, and never returns into Rust code.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: in the forked child, as `enter` requires; `write_end` is open.
        unsafe {
            let ok = plan.enter().is_ok() && libc::write(write_end, b"y".as_ptr().cast(), 1) == 1;
            // Leaves the child without running any destructor or atexit handler.
            libc::_exit(if ok { 0 } else { 1 });
        }
    }
    // SAFETY: our own end, closed once; the child holds its copy until it exits.
    unsafe { libc::close(write_end) };
    let mut answer = 0u8;
    let got = pid > 0
        && loop {
            // SAFETY: reads one byte into a live byte; `read_end` is open.
            let n = unsafe { libc::read(read_end, (&raw mut answer).cast(), 1) };
            if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                break n == 1 && answer == b'y';
            }
        };
    // SAFETY: our own end, closed once.
    unsafe { libc::close(read_end) };
    if pid > 0 {
        let reaper = std::thread::Builder::new().name("probe-reaper".into());
        if let Err(e) = reaper.spawn(move || reap(pid)) {
            tracing::debug!("sandbox: reaping the probe inline: {e}");
            reap(pid);
        }
    }
    got
}

/// Wait for our child `pid` to end, so it leaves no zombie.
fn reap(pid: libc::pid_t) {
    let mut status: libc::c_int = 0;
    // SAFETY: waits for our own child; `status` is a live int.
    while unsafe { libc::waitpid(pid, &raw mut status, 0) } < 0
        && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
    {}
}
