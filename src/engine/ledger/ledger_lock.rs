//! File locks for the ledger: a run's `manifest.lock` and the run index's lock, taken with
//! `flock` while a file is read, merged and rewritten, so concurrent processes never lose each
//! other's writes. The kernel drops a lock when its process dies, so one is never stale.

use std::fs;
use std::io;
use std::path::Path;

/// An exclusive lock on a run's ledger (`<run>/manifest.lock`, `flock`): held while the ledger
/// is read, merged and rewritten. The kernel drops it when the process dies, so it is never stale.
pub(crate) struct LedgerLock {
    _file: fs::File,
}

impl LedgerLock {
    /// Wait for the lock of the run at `root`.
    pub fn acquire(root: &Path) -> io::Result<LedgerLock> {
        fs::create_dir_all(root)?;
        Self::acquire_file(&root.join("manifest.lock"))
    }

    /// Wait for an exclusive lock on the file at `path` (created when missing).
    pub fn acquire_file(path: &Path) -> io::Result<LedgerLock> {
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            loop {
                // SAFETY: flock takes a file descriptor we own (it lives as long as `file`).
                let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
                if rc == 0 {
                    break;
                }
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
        Ok(LedgerLock { _file: file })
    }
}
