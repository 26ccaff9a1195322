//! Small file-system and time helpers shared by the ledger, the handoff store and the tools.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Write `bytes` to `path` atomically: a temp file beside it, fsync, rename, fsync the directory.
pub(crate) fn atomic_write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace_file(path, bytes, true)
}

/// [`atomic_write`] without the fsyncs: readers and a process killed at any point still see the
/// old file or the new one, never half of one, but a power cut may lose the new one. For records
/// that a durable write follows within milliseconds.
pub(crate) fn atomic_write_unsynced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace_file(path, bytes, false)
}

fn replace_file(path: &Path, bytes: &[u8], sync: bool) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let tmp = dir.join(format!(".{name}.tmp-{}-{}", std::process::id(), unique()));
    let result = (|| {
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        if sync {
            f.sync_all()?;
        }
        drop(f);
        fs::rename(&tmp, path)?;
        if sync && let Ok(d) = File::open(dir) {
            // Directory fsync is best effort: some file systems refuse it.
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// What `<workbench>/.gitignore` holds: everything inside the workbench stays out of git.
pub(crate) const WORKBENCH_GITIGNORE: &str =
    "# Written by flower-tui: its notes and spills stay out of git.\n*\n";

/// Create the workbench (`<workspace>/.flower`) if needed, with a `.gitignore` that ignores
/// everything inside it (so notes and spills never show in `git status`). An existing
/// `.gitignore` is left as the user made it.
pub(crate) fn ensure_workbench(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    let ignore = dir.join(".gitignore");
    if fs::symlink_metadata(&ignore).is_ok() {
        return Ok(());
    }
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&ignore)
    {
        Ok(mut f) => f.write_all(WORKBENCH_GITIGNORE.as_bytes()),
        // Another process wrote it first.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Where [`write_new`] put its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NewFile {
    /// The position of the name taken among the candidates (0 = the first).
    pub index: usize,
    pub path: PathBuf,
}

/// Write `bytes` to the first of `names` (file names in `dir`) that is free, and never over an
/// existing file, also against a concurrent writer. The file appears complete or not at all: the
/// bytes go to a synced temp file first, which is then hard-linked to the free name (a link never
/// replaces a file). Where the file system has no hard links, the name is created exclusively and
/// written in place. Fails when every name is taken.
pub(crate) fn write_new(
    dir: &Path,
    names: impl IntoIterator<Item = String>,
    bytes: &[u8],
) -> io::Result<NewFile> {
    fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".flower-new.tmp-{}-{}",
        std::process::id(),
        unique()
    ));
    let result =
        write_exclusive(&tmp, bytes).and_then(|()| link_to_free_name(dir, &tmp, names, bytes));
    let _ = fs::remove_file(&tmp);
    if result.is_ok()
        && let Ok(d) = File::open(dir)
    {
        // Directory fsync is best effort: some file systems refuse it.
        let _ = d.sync_all();
    }
    result
}

fn link_to_free_name(
    dir: &Path,
    tmp: &Path,
    names: impl IntoIterator<Item = String>,
    bytes: &[u8],
) -> io::Result<NewFile> {
    let mut in_place = false;
    for (index, name) in names.into_iter().enumerate() {
        let path = dir.join(name);
        let mut placed = if in_place {
            write_exclusive(&path, bytes)
        } else {
            fs::hard_link(tmp, &path)
        };
        if let Err(e) = &placed
            && !in_place
            && matches!(
                e.kind(),
                io::ErrorKind::Unsupported | io::ErrorKind::PermissionDenied
            )
        {
            in_place = true;
            placed = write_exclusive(&path, bytes);
        }
        match placed {
            Ok(()) => return Ok(NewFile { index, path }),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("no free file name in {}", dir.display()),
    ))
}

/// Create `path` (which must not exist), write and sync `bytes`; a failed write removes it.
fn write_exclusive(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = OpenOptions::new().write(true).create_new(true).open(path)?;
    let written = f.write_all(bytes).and_then(|()| f.sync_all());
    if written.is_err() {
        drop(f);
        let _ = fs::remove_file(path);
    }
    written
}

/// `base.ext`, then `base-2.ext`, `base-3.ext`, … up to `max` names in all.
pub(crate) fn numbered_names(
    base: &str,
    ext: &str,
    max: u32,
) -> impl Iterator<Item = String> + use<> {
    let (base, ext) = (base.to_string(), ext.to_string());
    (1..=max).map(move |n| {
        if n == 1 {
            format!("{base}.{ext}")
        } else {
            format!("{base}-{n}.{ext}")
        }
    })
}

/// A process-wide counter, for unique names.
pub fn unique() -> u64 {
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// Seconds and nanoseconds since the epoch.
pub(crate) fn now_unix() -> (u64, u32) {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (d.as_secs(), d.subsec_nanos())
}

/// A civil UTC date-time from seconds since the epoch: (year, month, day, hour, minute, second).
pub(crate) fn civil(secs: u64) -> (i64, u32, u32, u32, u32, u32) {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-from-civil inverse.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = if m <= 2 { y + 1 } else { y };
    (
        y,
        m,
        d,
        (rem / 3600) as u32,
        ((rem % 3600) / 60) as u32,
        (rem % 60) as u32,
    )
}

/// `2026-11-29 13:40` (UTC) — the handoff header's time.
pub(crate) fn minute_stamp(secs: u64) -> String {
    let (y, mo, d, h, mi, _) = civil(secs);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}")
}

/// `2026-11-29T13:40:05Z` — RFC 3339 UTC, for ledgers and transcripts.
pub(crate) fn rfc3339(secs: u64) -> String {
    let (y, mo, d, h, mi, s) = civil(secs);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// `20261129T134005Z` — for file names.
pub(crate) fn compact_stamp(secs: u64) -> String {
    let (y, mo, d, h, mi, s) = civil(secs);
    format!("{y:04}{mo:02}{d:02}T{h:02}{mi:02}{s:02}Z")
}

/// A random-looking id: time, pid and a counter mixed (no RNG dependency needed).
pub(crate) fn new_id() -> String {
    let (s, n) = now_unix();
    let mut x = s
        .wrapping_mul(1_000_000_007)
        .wrapping_add(n as u64)
        .wrapping_add((std::process::id() as u64) << 32)
        .wrapping_add(unique().wrapping_mul(0x9E37_79B9_7F4A_7C15));
    // splitmix64 finaliser
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    format!("{}-{:016x}", compact_stamp(s).to_lowercase(), x)
}

/// A pseudo-random number in `0..n` (for jitter), not for security.
pub(crate) fn jitter(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let (s, ns) = now_unix();
    let mut x = (ns as u64) ^ s.rotate_left(17) ^ unique().wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x % n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(minute_stamp(0), "1970-01-01 00:00");
        // 2026-11-29 13:40:05 UTC
        assert_eq!(rfc3339(1_795_959_605), "2026-11-29T13:40:05Z");
        assert_eq!(compact_stamp(951_782_400), "20000229T000000Z");
    }

    #[test]
    fn atomic_write_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b.txt");
        atomic_write(&p, b"one").unwrap();
        atomic_write(&p, b"two").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "two");
        assert_eq!(fs::read_dir(p.parent().unwrap()).unwrap().count(), 1);
    }

    #[test]
    fn write_new_never_overwrites_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("sub");
        let names = || numbered_names("a", "md", 3);
        let first = write_new(&d, names(), b"one").unwrap();
        assert_eq!((first.index, first.path.clone()), (0, d.join("a.md")));
        let second = write_new(&d, names(), b"two").unwrap();
        assert_eq!((second.index, second.path.clone()), (1, d.join("a-2.md")));
        write_new(&d, names(), b"three").unwrap();
        let full = write_new(&d, names(), b"four").unwrap_err();
        assert_eq!(full.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read_to_string(d.join("a.md")).unwrap(), "one");
        assert_eq!(fs::read_to_string(d.join("a-2.md")).unwrap(), "two");
        assert_eq!(fs::read_to_string(d.join("a-3.md")).unwrap(), "three");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 3, "no temp file left");
        // A directory that cannot be made is an error, not a panic.
        let blocker = dir.path().join("file");
        fs::write(&blocker, "x").unwrap();
        assert!(write_new(&blocker.join("d"), names(), b"x").is_err());
    }

    #[test]
    fn two_writers_at_once_take_different_names() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let d = d.clone();
                std::thread::spawn(move || {
                    write_new(
                        &d,
                        numbered_names("x", "txt", 100),
                        format!("{i}").as_bytes(),
                    )
                    .unwrap()
                    .path
                })
            })
            .collect();
        let mut paths: Vec<PathBuf> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        paths.sort();
        paths.dedup();
        assert_eq!(paths.len(), 8);
        let mut seen: Vec<String> = paths
            .iter()
            .map(|p| fs::read_to_string(p).unwrap())
            .collect();
        seen.sort();
        assert_eq!(seen, ["0", "1", "2", "3", "4", "5", "6", "7"]);
    }

    #[test]
    fn workbench_gets_a_gitignore_once() {
        let dir = tempfile::tempdir().unwrap();
        let wb = dir.path().join(".flower");
        ensure_workbench(&wb).unwrap();
        assert_eq!(
            fs::read_to_string(wb.join(".gitignore")).unwrap(),
            WORKBENCH_GITIGNORE
        );
        // The user's own version is kept.
        fs::write(wb.join(".gitignore"), "notes/\n").unwrap();
        ensure_workbench(&wb).unwrap();
        assert_eq!(
            fs::read_to_string(wb.join(".gitignore")).unwrap(),
            "notes/\n"
        );
        // A workbench that cannot be made is an error, not a panic.
        let blocker = dir.path().join("file");
        fs::write(&blocker, "x").unwrap();
        assert!(ensure_workbench(&blocker.join(".flower")).is_err());
    }

    #[test]
    fn ids_differ() {
        assert_ne!(new_id(), new_id());
    }
}
