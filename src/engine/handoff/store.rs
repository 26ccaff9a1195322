//! The handoff document on disk: the live file per step, the archive of earlier
//! generations, and reading the file back after the review window.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::HandoffDoc;
use super::workbench_locks::safe_step_name;
use crate::engine::fsutil::{atomic_write, compact_stamp, numbered_names, write_new};

/// `<workbench>/notes/handoff-<safe step>.md`.
pub(crate) fn live_path(workbench: &Path, step: &str) -> PathBuf {
    workbench
        .join("notes")
        .join(format!("handoff-{}.md", safe_step_name(step)))
}

/// `<workbench>/notes/archive/handoff/`.
pub(crate) fn archive_dir(workbench: &Path) -> PathBuf {
    workbench.join("notes").join("archive").join("handoff")
}

/// Archive the previous live file (if any) to `<wb>/notes/archive/handoff/<step>-<compact_stamp>.md`
/// (never overwriting an archive: `-2`, `-3`… when the name exists — two handoffs in the same
/// second), then write the new document atomically. Returns the live path. Runs under the step's
/// document lock (`workbench_locks::with_doc_lock`), so two processes never interleave these steps.
///
/// The previous file is copied into the archive (created exclusively, fsynced) before the live file
/// is replaced by an atomic rename, so at every moment at least one complete copy of each generation
/// is on disk. A live file that already holds exactly `markdown` is left as it is (a freeze
/// repeated after a crash archives nothing twice).
pub fn freeze(workbench: &Path, step: &str, markdown: &str, now_secs: u64) -> io::Result<PathBuf> {
    freeze_timed(workbench, step, markdown, now_secs).map(|(path, _)| path)
}

/// [`freeze`], and what the document lock cost (taking and releasing it).
pub(crate) fn freeze_timed(
    workbench: &Path,
    step: &str,
    markdown: &str,
    now_secs: u64,
) -> io::Result<(PathBuf, Duration)> {
    super::workbench_locks::with_doc_lock(workbench, step, || {
        freeze_unlocked(workbench, step, markdown, now_secs)
    })
}

/// [`freeze`] without the document lock: only for measuring what the lock costs.
pub fn freeze_unlocked(
    workbench: &Path,
    step: &str,
    markdown: &str,
    now_secs: u64,
) -> io::Result<PathBuf> {
    let live = live_path(workbench, step);
    match fs::read(&live) {
        Ok(previous) if previous == markdown.as_bytes() => return Ok(live),
        Ok(previous) => {
            archive(workbench, step, &previous, now_secs)?;
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(io::Error::new(
                e.kind(),
                format!(
                    "cannot archive the previous handoff {}: {e}",
                    live.display()
                ),
            ));
        }
    }
    atomic_write(&live, markdown.as_bytes())?;
    Ok(live)
}

/// Names tried for one archive file in one second (`-2`, `-3`, …).
const MAX_ARCHIVE_NAMES: u32 = 10_000;

/// Write `bytes` to a new archive file (never over another); returns its path.
fn archive(workbench: &Path, step: &str, bytes: &[u8], now_secs: u64) -> io::Result<PathBuf> {
    let base = format!("{}-{}", safe_step_name(step), compact_stamp(now_secs));
    let names = numbered_names(&base, "md", MAX_ARCHIVE_NAMES);
    write_new(&archive_dir(workbench), names, bytes).map(|f| f.path)
}

/// What reading the frozen document back found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadBack {
    /// The file's text (bytes that are not UTF-8 are replaced, not refused: the user's edits win).
    Text(String),
    /// The file is gone (deleted by the user).
    Missing,
    /// The file holds only whitespace (emptied by the user).
    Empty,
    /// The file could not be read; the message says why.
    Unreadable(String),
}

/// Read the live document back after the review window. A provider key put into the file (typed
/// in the side editor or `$EDITOR`, pasted by a command) is masked, in the text returned and in
/// the file itself, so it reaches neither the successor nor a handoff file on disk.
pub(crate) fn read_back(path: &Path) -> ReadBack {
    match fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let text = match crate::engine::secrets::redact(&text) {
                std::borrow::Cow::Borrowed(_) => text,
                std::borrow::Cow::Owned(masked) => {
                    if let Err(e) = atomic_write(path, masked.as_bytes()) {
                        tracing::warn!(
                            "could not rewrite {} with its key masked: {e}",
                            path.display()
                        );
                    }
                    masked
                }
            };
            if text.trim().is_empty() {
                ReadBack::Empty
            } else {
                ReadBack::Text(text)
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => ReadBack::Missing,
        Err(e) => ReadBack::Unreadable(format!("{}: {e}", path.display())),
    }
}

/// [`read_back`] under the step's document lock (no other process is halfway through a freeze),
/// and what the lock cost.
pub(crate) fn read_back_locked(workbench: &Path, step: &str, path: &Path) -> (ReadBack, Duration) {
    match super::workbench_locks::with_doc_lock(workbench, step, || Ok(read_back(path))) {
        Ok(r) => r,
        Err(e) => (ReadBack::Unreadable(e.to_string()), Duration::ZERO),
    }
}

/// Write `text` back to a handoff file that is gone (deleted during its review), under the
/// step's document lock when the file is in a workbench; the folder is made again if it went too.
pub(crate) fn write_back(
    workbench: Option<&Path>,
    step: &str,
    path: &Path,
    text: &str,
) -> io::Result<()> {
    let write = || {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        atomic_write(path, text.as_bytes())
    };
    match workbench {
        Some(wb) => super::workbench_locks::with_doc_lock(wb, step, write).map(|_| ()),
        None => write(),
    }
}

/// Whether `text` is another handoff document than the one frozen as `frozen`: its header line
/// names another step or generation (another process's freeze). Returns what it
/// names. A file whose header line was removed or no longer parses is the user's edit, not
/// another document.
pub(crate) fn foreign(text: &str, frozen: &str) -> Option<String> {
    let theirs = HandoffDoc::parse(text).meta?;
    let ours = HandoffDoc::parse(frozen).meta?;
    let same = safe_step_name(&theirs.step) == safe_step_name(&ours.step)
        && theirs.generation == ours.generation;
    (!same).then(|| format!("step {}, generation {}", theirs.step, theirs.generation))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archived(wb: &Path) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = fs::read_dir(archive_dir(wb))
            .map(|rd| {
                rd.map(|e| {
                    let e = e.unwrap();
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        fs::read_to_string(e.path()).unwrap(),
                    )
                })
                .collect()
            })
            .unwrap_or_default();
        out.sort();
        out
    }

    #[test]
    fn step_names() {
        let table = [
            ("fix-macos-build", "fix-macos-build"),
            ("fix/macos build", "fix-macos-build"),
            ("../../etc/passwd", "etc-passwd"),
            ("..", "step"),
            ("", "step"),
            ("   ", "step"),
            ("a\0b\nc", "a-b-c"),
            ("交接-干活", "交接-干活"),
            ("v1.2_final.", "v1.2_final"),
            ("C:\\Users\\x", "C-Users-x"),
            (".hidden", "hidden"),
        ];
        for (input, want) in table {
            assert_eq!(safe_step_name(input), want, "{input:?}");
        }
        let long = safe_step_name(&"ü".repeat(200));
        assert_eq!(
            long.chars().count(),
            super::super::workbench_locks::MAX_STEP_NAME_CHARS
        );
        assert_eq!(
            live_path(Path::new("/wb"), "a b"),
            Path::new("/wb/notes/handoff-a-b.md")
        );
    }

    #[test]
    fn first_freeze_writes_the_live_file_only() {
        let dir = tempfile::tempdir().unwrap();
        let wb = dir.path().join(".flower");
        let path = freeze(&wb, "my step", "# one\n", 1_795_959_605).unwrap();
        assert_eq!(path, wb.join("notes/handoff-my-step.md"));
        assert_eq!(fs::read_to_string(&path).unwrap(), "# one\n");
        assert!(archived(&wb).is_empty());
    }

    #[test]
    fn three_freezes_in_the_same_second_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let wb = dir.path();
        let now = 1_795_959_605; // 2026-11-29T13:40:05Z
        for text in ["gen 1", "gen 2", "gen 3"] {
            freeze(wb, "s", text, now).unwrap();
        }
        assert_eq!(fs::read_to_string(live_path(wb, "s")).unwrap(), "gen 3");
        assert_eq!(
            archived(wb),
            [
                ("s-20261129T134005Z-2.md".to_string(), "gen 2".to_string()),
                ("s-20261129T134005Z.md".to_string(), "gen 1".to_string()),
            ]
        );
        // A later second gets its own plain name; the notes folder holds only the live file.
        freeze(wb, "s", "gen 4", now + 1).unwrap();
        // The same text again (a freeze repeated after a crash) archives nothing.
        freeze(wb, "s", "gen 4", now + 2).unwrap();
        assert_eq!(archived(wb).len(), 3);
        assert!(archived(wb).contains(&("s-20261129T134006Z.md".to_string(), "gen 3".to_string())));
        let notes: Vec<_> = fs::read_dir(wb.join("notes"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let mut notes = notes;
        notes.sort();
        assert_eq!(notes, ["archive", "handoff-s.md"]);
        // The document lock is gone once the freeze is over.
        assert!(!super::super::workbench_locks::doc_lock_path(wb, "s").exists());
    }

    #[test]
    fn steps_do_not_share_files() {
        let dir = tempfile::tempdir().unwrap();
        freeze(dir.path(), "a", "A", 0).unwrap();
        freeze(dir.path(), "b", "B", 0).unwrap();
        assert!(archived(dir.path()).is_empty());
        assert_eq!(
            read_back(&live_path(dir.path(), "a")),
            ReadBack::Text("A".into())
        );
    }

    #[test]
    fn unwritable_workbench_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        // A regular file where the workbench folder should be: nothing can be created below it
        // (permission bits would not stop root, which runs these tests in CI containers).
        let wb = dir.path().join("wb");
        fs::write(&wb, "not a folder").unwrap();
        assert!(freeze(&wb, "s", "text", 0).is_err());

        // The live file exists but the archive folder cannot be made: the live file is kept.
        let wb2 = dir.path().join("wb2");
        freeze(&wb2, "s", "first", 0).unwrap();
        fs::create_dir_all(wb2.join("notes")).unwrap();
        fs::write(wb2.join("notes/archive"), "blocker").unwrap();
        assert!(freeze(&wb2, "s", "second", 1).is_err());
        assert_eq!(
            read_back(&live_path(&wb2, "s")),
            ReadBack::Text("first".into())
        );
    }

    #[test]
    fn another_steps_or_generations_document_is_foreign() {
        let ours =
            "# Handoff · step fix build · generation 2 · 1.0K/2K · 2026-11-29 13:40\n## Doing\nx\n";
        assert_eq!(foreign(ours, ours), None);
        let edited = format!("{ours}a line the user added\n");
        assert_eq!(foreign(&edited, ours), None);
        // The same step by another spelling of its file name is the same step.
        let spelled = ours.replace("step fix build", "step fix-build");
        assert_eq!(foreign(&spelled, ours), None);
        // The header removed or mangled by the user: still ours.
        assert_eq!(foreign("## Doing\nx\n", ours), None);
        let other_step = ours.replace("step fix build", "step fix build-2");
        assert_eq!(
            foreign(&other_step, ours).as_deref(),
            Some("step fix build-2, generation 2")
        );
        let other_gen = ours.replace("generation 2", "generation 3");
        assert!(foreign(&other_gen, ours).is_some());
    }

    #[test]
    fn read_back_cases() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.md");
        assert_eq!(read_back(&p), ReadBack::Missing);
        fs::write(&p, " \n\t\n").unwrap();
        assert_eq!(read_back(&p), ReadBack::Empty);
        fs::write(&p, "").unwrap();
        assert_eq!(read_back(&p), ReadBack::Empty);
        fs::write(&p, "## Doing\nx\n").unwrap();
        assert_eq!(read_back(&p), ReadBack::Text("## Doing\nx\n".into()));
        fs::write(&p, b"caf\xe9 ok").unwrap();
        assert_eq!(read_back(&p), ReadBack::Text("caf\u{fffd} ok".into()));
        // A folder where the file should be cannot be read.
        let folder = dir.path().join("folder.md");
        fs::create_dir(&folder).unwrap();
        match read_back(&folder) {
            ReadBack::Unreadable(msg) => assert!(msg.contains("folder.md"), "{msg}"),
            other => panic!("expected Unreadable, got {other:?}"),
        }
    }
}
