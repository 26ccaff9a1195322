//! A copy of side-editor text that would otherwise be lost (no edit the user typed is ever lost):
//! when a new handoff replaces an editor with unsaved edits, or the process ends with them, the
//! edits go to a file of their own beside the document, `<file name>.unsaved-<timestamp>.md`
//! (masked, written atomically, never over another file; the temp directory when the document's
//! directory cannot take it).

use std::io;
use std::path::{Path, PathBuf};

use crate::engine::fsutil::{self, compact_stamp};

/// Names tried per directory before giving up (`…-2.md`, `…-3.md`, …).
const MAX_NAMES: u32 = 1000;

/// Write `text`, the unsaved edits of the editor on `path`, beside it as
/// `<file name>.unsaved-<timestamp>.md` (`secs` = now, seconds since the epoch). If that
/// directory cannot take it, the system's temp directory is tried. Returns where it landed.
pub(crate) fn keep_unsaved(path: &Path, text: &str, secs: u64) -> io::Result<PathBuf> {
    keep_unsaved_with_fallback(path, text, secs, &std::env::temp_dir())
}

/// [`keep_unsaved`] with the fallback directory given.
pub(crate) fn keep_unsaved_with_fallback(
    path: &Path,
    text: &str,
    secs: u64,
    fallback: &Path,
) -> io::Result<PathBuf> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "handoff.md".into());
    let base = format!("{name}.unsaved-{}", compact_stamp(secs));
    // A provider key typed into the document never reaches disk.
    let text = crate::engine::secrets::redact(text);
    match write_new(dir, &base, text.as_bytes()) {
        Ok(p) => Ok(p),
        Err(first) => write_new(fallback, &base, text.as_bytes()).map_err(|second| {
            io::Error::new(
                first.kind(),
                format!(
                    "{}: {first}; {}: {second}",
                    dir.display(),
                    fallback.display()
                ),
            )
        }),
    }
}

/// `dir/base.md`, or `dir/base-N.md` when taken, never over another file.
fn write_new(dir: &Path, base: &str, bytes: &[u8]) -> io::Result<PathBuf> {
    fsutil::write_new(dir, fsutil::numbered_names(base, "md", MAX_NAMES), bytes).map(|f| f.path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_text_beside_the_file_without_overwriting() {
        let dir = tempfile::tempdir().unwrap();
        let doc = dir.path().join("handoff-demo.md");
        std::fs::write(&doc, "new generation\n").unwrap();
        let secs = 1_800_000_000;
        let a = keep_unsaved(&doc, "my edits\n", secs).unwrap();
        assert_eq!(
            a,
            dir.path()
                .join("handoff-demo.md.unsaved-20270115T080000Z.md")
        );
        let b = keep_unsaved(&doc, "more edits\n", secs).unwrap();
        assert_eq!(
            b,
            dir.path()
                .join("handoff-demo.md.unsaved-20270115T080000Z-2.md")
        );
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "my edits\n");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "more edits\n");
        assert_eq!(
            std::fs::read_to_string(&doc).unwrap(),
            "new generation\n",
            "the document is untouched"
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            3,
            "no temp file left behind"
        );
    }

    #[test]
    fn a_key_in_the_kept_edits_is_masked() {
        let key = "sk-ant-kept-edits-0123456789abcdef";
        crate::engine::secrets::register(key);
        let dir = tempfile::tempdir().unwrap();
        let doc = dir.path().join("handoff-demo.md");
        let kept = keep_unsaved(&doc, &format!("## Notes\nkey {key}\n"), 0).unwrap();
        assert_eq!(
            std::fs::read_to_string(&kept).unwrap(),
            "## Notes\nkey sk-a****\n"
        );
    }

    #[test]
    fn falls_back_when_the_directory_cannot_take_it() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("notes");
        std::fs::write(&blocker, "a file where the directory was").unwrap();
        let fallback = dir.path().join("fallback");
        let kept =
            keep_unsaved_with_fallback(&blocker.join("h.md"), "edits", 0, &fallback).unwrap();
        assert_eq!(kept, fallback.join("h.md.unsaved-19700101T000000Z.md"));
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), "edits");
        let err =
            keep_unsaved_with_fallback(&blocker.join("h.md"), "edits", 0, &blocker).unwrap_err();
        assert!(err.to_string().contains("notes"), "{err}");
    }
}
