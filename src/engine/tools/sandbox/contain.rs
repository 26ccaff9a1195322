//! Seeing a command's leader exit without reaping it, so that its process group can be killed
//! while the group's id is still certainly the command's: a zombie keeps its pid, and with it the
//! group id, until it is reaped. Linux: a pidfd, readable once the process has exited. Elsewhere
//! (or on a kernel without pidfds) there is none, and the caller reaps first and kills after.

use std::io;

use super::Containment;

/// A readiness handle for the exit of one child process.
pub(crate) struct LeaderExit {
    #[cfg(target_os = "linux")]
    fd: tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>,
}

impl LeaderExit {
    /// The handle for a command whose group is killed at its end; `None` for one that may leave
    /// background jobs running, or where pidfds are missing.
    pub(crate) fn watch(child: &tokio::process::Child, containment: Containment) -> Option<Self> {
        match containment {
            Containment::KillGroupAtEnd => child.id().and_then(LeaderExit::open),
            Containment::LeaveBackground => None,
        }
    }

    /// A handle on the exit of `pid`, a child not yet reaped. `None` where pidfds are missing.
    pub(crate) fn open(pid: u32) -> Option<Self> {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::FromRawFd;
            let pid = libc::pid_t::try_from(pid).ok()?;
            // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
            let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0u32) };
            let raw = i32::try_from(raw).ok().filter(|&fd| fd >= 0)?;
            // SAFETY: the kernel just returned this descriptor and nothing else owns it.
            let owned = unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) };
            // SAFETY: `owned` is an open descriptor that the AsyncFd owns from here on; an
            // OwnedFd always returns the same descriptor and closes it only when dropped.
            let fd = unsafe {
                tokio::io::unix::AsyncFd::register_with_interest(
                    owned,
                    tokio::io::Interest::READABLE,
                )
            }
            .ok()?;
            Some(LeaderExit { fd })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = pid;
            None
        }
    }

    /// Resolves once the process has exited (it stays a zombie until it is waited for).
    pub(crate) async fn exited(&self) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            // A pidfd stays readable once the process has exited: no need to clear readiness.
            let _ready = self.fd.readable().await?;
            Ok(())
        }
        #[cfg(not(target_os = "linux"))]
        {
            std::future::pending().await
        }
    }
}
