//! Lock files for a workspace's handoff documents: several flower-tui processes may
//! work in one workspace, and none may overwrite, archive away or read another's document.
//!
//! Two kinds, both in `<workbench>/locks/`:
//! - a **step claim** (`step-<safe step>.lock`), held for as long as a process works on a step:
//!   a second live process whose step name is claimed takes `<step>-2` (and so on);
//! - a **document lock** (`handoff-<safe step>.lock`), held while a process freezes (reads the
//!   previous file, archives it, writes the new one) and reads the document back.
//!
//! A lock is an advisory `flock` on the file (`File::try_lock`), which the kernel drops when the
//! process dies however it dies (`kill -9` included), so a stale lock — a file whose holder is
//! gone — is simply locked again by the next process: taken over. The holder's pid is written
//! inside, for the messages ("in use by pid 4242") and for file systems without `flock`, where the
//! pid is the lock: a file naming a live process other than this one is held, any other is stale.
//! A lock file is removed when it is released, and an acquirer checks that the path still names
//! the file it locked (a releaser may have removed it in between), so two holders never coexist.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The longest step name used in a file name, in characters.
pub(crate) const MAX_STEP_NAME_CHARS: usize = 64;

/// A step name that is safe as part of a file name: letters and digits of any script, `-`, `_` and
/// `.` are kept; everything else (separators, spaces, control characters) becomes `-`; runs of `-`
/// collapse; leading dots and dashes go (no hidden files, no `..`); at most 64 characters; never
/// empty (`step`).
pub(crate) fn safe_step_name(step: &str) -> String {
    let mut out = String::new();
    for c in step.chars() {
        let c = if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
            c
        } else {
            '-'
        };
        if c == '-' && out.ends_with('-') {
            continue;
        }
        out.push(c);
    }
    let trimmed: String = out
        .trim_start_matches(['.', '-'])
        .chars()
        .take(MAX_STEP_NAME_CHARS)
        .collect();
    let trimmed = trimmed.trim_end_matches(['-', '.']);
    if trimmed.is_empty() {
        "step".to_string()
    } else {
        trimmed.to_string()
    }
}

/// How many names a step tries (`x`, `x-2`, … `x-99`) before giving up on a claim.
pub(crate) const MAX_STEP_NAMES: u32 = 99;

/// How long a document lock is waited for before the freeze or read-back gives up.
pub(crate) const DOC_LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// The width a pid is written in (a `u32` has at most 10 digits).
const PID_WIDTH: usize = 10;

/// `<workbench>/locks/`.
pub(crate) fn locks_dir(workbench: &Path) -> PathBuf {
    workbench.join("locks")
}

/// The claim file of a step name.
pub(crate) fn claim_path(workbench: &Path, step: &str) -> PathBuf {
    locks_dir(workbench).join(format!("step-{}.lock", safe_step_name(step)))
}

/// The document lock file of a step name.
pub(crate) fn doc_lock_path(workbench: &Path, step: &str) -> PathBuf {
    locks_dir(workbench).join(format!("handoff-{}.lock", safe_step_name(step)))
}

/// A held lock file. Dropping it releases the lock and removes the file.
#[derive(Debug)]
pub(crate) struct LockFile {
    file: File,
    path: PathBuf,
    /// The pid a stale lock named when this process took it over.
    pub took_over: Option<u32>,
}

/// What an attempt to take a lock found.
#[derive(Debug)]
pub(crate) enum TryLock {
    Acquired(LockFile),
    /// A live process holds it (its pid, when the file names one).
    Held {
        pid: Option<u32>,
    },
}

impl LockFile {
    /// Take the lock at `path` if no live process holds it (creating the file and its folder).
    pub fn try_acquire(path: &Path) -> io::Result<TryLock> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        // A releaser removes its file: the path may name a new file after we opened the old one.
        for _ in 0..16 {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)?;
            match file.try_lock() {
                Ok(()) => {
                    if !names_file(path, &file) {
                        continue;
                    }
                    return Self::held_now(file, path).map(TryLock::Acquired);
                }
                Err(fs::TryLockError::WouldBlock) => {
                    return Ok(TryLock::Held {
                        pid: read_pid(path),
                    });
                }
                Err(fs::TryLockError::Error(e)) if e.kind() == io::ErrorKind::Unsupported => {
                    return Self::try_pid_lock(file, path);
                }
                Err(fs::TryLockError::Error(e)) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("cannot lock {}: {e}", path.display()),
                    ));
                }
            }
        }
        Err(io::Error::other(format!(
            "cannot lock {}: it keeps being replaced",
            path.display()
        )))
    }

    /// Take the lock at `path`, waiting up to `timeout` for a live holder to release it. Returns
    /// the lock and how long it was waited for.
    pub fn acquire(path: &Path, timeout: Duration) -> io::Result<(LockFile, Duration)> {
        let start = Instant::now();
        let mut pause = Duration::from_micros(50);
        loop {
            match Self::try_acquire(path)? {
                TryLock::Acquired(lock) => return Ok((lock, start.elapsed())),
                TryLock::Held { pid } => {
                    if start.elapsed() >= timeout {
                        let by = pid.map_or_else(String::new, |p| format!(" by pid {p}"));
                        return Err(io::Error::new(
                            io::ErrorKind::WouldBlock,
                            format!(
                                "{} is held{by} for more than {} s",
                                path.display(),
                                timeout.as_secs()
                            ),
                        ));
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(5));
                }
            }
        }
    }

    /// The lock is ours: note whose it was, write our pid. The pid is written over the old one in
    /// a fixed width, never by truncating the file: on ext4 a truncate to zero makes the next close
    /// flush the file (`auto_da_alloc`), which cost 4 ms a lock.
    fn held_now(mut file: File, path: &Path) -> io::Result<LockFile> {
        let before = read_pid_from(&mut file).filter(|p| *p != std::process::id());
        file.rewind()?;
        file.write_all(format!("{:>PID_WIDTH$}\n", std::process::id()).as_bytes())?;
        Ok(LockFile {
            file,
            path: path.to_path_buf(),
            took_over: before,
        })
    }

    /// Where `flock` is not supported, the pid inside is the lock.
    fn try_pid_lock(mut file: File, path: &Path) -> io::Result<TryLock> {
        match read_pid_from(&mut file) {
            Some(pid) if pid != std::process::id() && pid_alive(pid) => {
                Ok(TryLock::Held { pid: Some(pid) })
            }
            _ => Self::held_now(file, path).map(TryLock::Acquired),
        }
    }

    /// Whether this lock still holds: the path names the file we locked.
    #[cfg(test)]
    pub fn is_intact(&self) -> bool {
        names_file(&self.path, &self.file)
    }
}

impl Drop for LockFile {
    fn drop(&mut self) {
        // Removed while still locked (a waiter that opened it sees it gone and opens a new one),
        // then unlocked by closing.
        if names_file(&self.path, &self.file) {
            let _ = fs::remove_file(&self.path);
        }
        let _ = self.file.unlock();
    }
}

/// `path` names the same file as `file` (not removed, not replaced).
#[cfg(unix)]
fn names_file(path: &Path, file: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (fs::metadata(path), file.metadata()) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn names_file(path: &Path, _file: &File) -> bool {
    path.exists()
}

/// The pid a lock file names.
pub(crate) fn read_pid(path: &Path) -> Option<u32> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn read_pid_from(file: &mut File) -> Option<u32> {
    let mut s = String::new();
    file.rewind().ok()?;
    file.read_to_string(&mut s).ok()?;
    s.trim().parse().ok()
}

/// Whether a process with this pid exists.
#[cfg(unix)]
pub(crate) fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 sends nothing; it only checks that the process exists and may
    // be signalled. No memory is involved.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
pub(crate) fn pid_alive(_pid: u32) -> bool {
    true
}

/// A step name this process holds in a workspace, and what it had to skip to get it.
#[derive(Debug)]
pub(crate) struct StepClaim {
    pub lock: LockFile,
    /// The name claimed (`step`, or `step-2`, … when that was in use).
    pub name: String,
    /// Names in use by live processes that were skipped, with their pids.
    pub skipped: Vec<(String, Option<u32>)>,
}

/// Claim `step` in `workbench`, or the first of `step-2`, `step-3`, … that no live process holds.
pub(crate) fn claim_step(workbench: &Path, step: &str) -> io::Result<StepClaim> {
    let mut skipped = Vec::new();
    for n in 1..=MAX_STEP_NAMES {
        let name = if n == 1 {
            step.to_string()
        } else {
            format!("{step}-{n}")
        };
        match LockFile::try_acquire(&claim_path(workbench, &name))? {
            TryLock::Acquired(lock) => {
                return Ok(StepClaim {
                    lock,
                    name,
                    skipped,
                });
            }
            TryLock::Held { pid } => skipped.push((name, pid)),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::WouldBlock,
        format!("step names {step} to {step}-{MAX_STEP_NAMES} are all in use"),
    ))
}

/// Claim exactly `step` (a resumed step keeps its name); `Held` when a live process has it.
pub(crate) fn claim_exact(workbench: &Path, step: &str) -> io::Result<TryLock> {
    LockFile::try_acquire(&claim_path(workbench, step))
}

/// Hold the document lock of `step` for `f`. Returns what `f` returns and what the lock cost:
/// the time to take it (waiting included) plus the time to release it, `f` itself excluded.
pub fn with_doc_lock<T>(
    workbench: &Path,
    step: &str,
    f: impl FnOnce() -> io::Result<T>,
) -> io::Result<(T, Duration)> {
    let (lock, acquired) = LockFile::acquire(&doc_lock_path(workbench, step), DOC_LOCK_TIMEOUT)?;
    let out = f();
    let release = Instant::now();
    drop(lock);
    let cost = acquired + release.elapsed();
    out.map(|t| (t, cost))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_is_exclusive_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("locks/a.lock");
        let TryLock::Acquired(a) = LockFile::try_acquire(&p).unwrap() else {
            panic!("first")
        };
        assert_eq!(read_pid(&p), Some(std::process::id()));
        assert!(a.is_intact());
        // A second open file description is refused while the first holds it (as another
        // process would be).
        match LockFile::try_acquire(&p).unwrap() {
            TryLock::Held { pid } => assert_eq!(pid, Some(std::process::id())),
            TryLock::Acquired(_) => panic!("two holders"),
        }
        drop(a);
        assert!(!p.exists(), "released locks leave no file");
        assert!(matches!(
            LockFile::try_acquire(&p).unwrap(),
            TryLock::Acquired(_)
        ));
    }

    #[test]
    fn a_stale_lock_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.lock");
        // A file left by a process that died: it names a pid but nobody holds the flock.
        fs::write(&p, "999999999\n").unwrap();
        // (An unpadded pid from another writer is read as well as a padded one.)
        let TryLock::Acquired(l) = LockFile::try_acquire(&p).unwrap() else {
            panic!("stale lock not taken over")
        };
        assert_eq!(l.took_over, Some(999_999_999));
        assert_eq!(read_pid(&p), Some(std::process::id()));
    }

    #[test]
    fn a_removed_or_replaced_lock_is_not_intact() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.lock");
        let TryLock::Acquired(l) = LockFile::try_acquire(&p).unwrap() else {
            panic!()
        };
        fs::remove_file(&p).unwrap();
        assert!(!l.is_intact());
        // Another process takes the path now; our drop must not remove its file.
        let TryLock::Acquired(other) = LockFile::try_acquire(&p).unwrap() else {
            panic!("the path is free again")
        };
        drop(l);
        assert!(p.exists() && other.is_intact());
    }

    #[test]
    fn waiting_for_a_held_lock_times_out_with_the_holder_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w.lock");
        let _held = LockFile::acquire(&p, Duration::ZERO).unwrap();
        let err = LockFile::acquire(&p, Duration::from_millis(20)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        assert!(
            err.to_string()
                .contains(&format!("by pid {}", std::process::id())),
            "{err}"
        );
    }

    #[test]
    fn threads_contending_for_one_lock_never_overlap() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.lock");
        let inside = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (p, inside) = (p.clone(), inside.clone());
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        let (l, _) = LockFile::acquire(&p, Duration::from_secs(10)).unwrap();
                        let n = inside.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        assert_eq!(n, 0, "two holders at once");
                        inside.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                        drop(l);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }

    #[test]
    fn step_claims_take_the_next_free_name() {
        let dir = tempfile::tempdir().unwrap();
        let wb = dir.path();
        let a = claim_step(wb, "fix build").unwrap();
        assert_eq!(a.name, "fix build");
        assert!(a.skipped.is_empty());
        let b = claim_step(wb, "fix build").unwrap();
        assert_eq!(b.name, "fix build-2");
        assert_eq!(
            b.skipped,
            vec![("fix build".to_string(), Some(std::process::id()))]
        );
        // Names that map to one file name are one claim.
        let c = claim_step(wb, "fix/build").unwrap();
        assert_eq!(c.name, "fix/build-3");
        drop(a);
        let d = claim_step(wb, "fix build").unwrap();
        assert_eq!(d.name, "fix build", "a released name is free again");
        assert!(matches!(
            claim_exact(wb, "fix build-2").unwrap(),
            TryLock::Held { .. }
        ));
        assert_eq!(claim_path(wb, "a b"), wb.join("locks/step-a-b.lock"));
    }

    #[test]
    fn pids() {
        assert!(pid_alive(std::process::id()));
        assert!(!pid_alive(0));
        assert!(!pid_alive(999_999_999));
    }
}
