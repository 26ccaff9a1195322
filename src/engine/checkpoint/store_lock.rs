//! One writer at a time per store: two flower-tui processes (or two tasks of one) working in the
//! same workspace take turns. The lock is an advisory `flock` on `<store>/lock`, which the kernel
//! releases however the holder ends (`kill -9` included), so a lock is never left stale. Readers
//! need no lock: objects never change once written.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;
use std::time::{Duration, Instant};

use super::error::CheckpointError;

/// How long a snapshot or restore waits for another process's before it gives up.
pub const LOCK_WAIT: Duration = Duration::from_secs(30);
/// How often a waiting process tries again.
const RETRY: Duration = Duration::from_millis(10);

/// The held lock; dropping it releases it.
#[derive(Debug)]
pub(crate) struct StoreLock {
    _file: File,
}

impl StoreLock {
    /// Take the lock of the store in `dir`, waiting up to `wait`.
    pub(crate) fn take(dir: &Path, wait: Duration) -> Result<StoreLock, CheckpointError> {
        let path = dir.join("lock");
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(CheckpointError::store(&path))?;
        let started = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(StoreLock { _file: file }),
                Err(TryLockError::WouldBlock) if started.elapsed() < wait => {
                    std::thread::sleep(RETRY)
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(CheckpointError::Busy {
                        path: dir.to_path_buf(),
                        waited: started.elapsed(),
                    });
                }
                Err(TryLockError::Error(e)) => return Err(CheckpointError::store(&path)(e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_waits_then_gives_up() {
        let dir = tempfile::tempdir().unwrap();
        let held = StoreLock::take(dir.path(), LOCK_WAIT).unwrap();
        let busy = StoreLock::take(dir.path(), Duration::from_millis(30)).unwrap_err();
        assert!(matches!(busy, CheckpointError::Busy { .. }), "{busy}");
        assert!(
            busy.to_string()
                .contains("in use by another flower-tui process")
        );
        drop(held);
        StoreLock::take(dir.path(), Duration::from_millis(30)).unwrap();
    }
}
