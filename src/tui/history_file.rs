//! The input history of a workspace on disk: `<data_dir>/flower/history/<hash>.jsonl`, one JSON
//! object (`{"text": …}`) a line, appended as messages are sent (so two runs at once both keep
//! theirs) and trimmed to the newest [`KEEP`] entries when it is loaded. Secrets are redacted
//! before a line is written; a line that does not parse is skipped.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::fsutil::atomic_write;
use crate::engine::secrets;

/// Entries kept on load.
pub(crate) const KEEP: usize = 1_000;
/// The file is rewritten with the newest [`KEEP`] entries once it holds more than this many.
const TRIM_AT: usize = 2 * KEEP;

#[derive(Serialize, Deserialize)]
struct Line {
    text: String,
}

/// The history file of `workspace` under `data_dir` (`<data_dir>/flower`).
pub(crate) fn path_for(data_dir: &Path, workspace: &Path) -> PathBuf {
    let key = workspace.to_string_lossy();
    // FNV-1a: stable across runs and platforms (std's hasher is not).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let name = workspace
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                .take(40)
                .collect::<String>()
        })
        .unwrap_or_default();
    data_dir
        .join("history")
        .join(format!("{name}-{h:016x}.jsonl"))
}

/// The entries of the file, oldest first (the newest [`KEEP`]); a missing file is empty. A file
/// grown past twice that is rewritten with what is kept.
pub(crate) fn load(path: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let all: Vec<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Line>(l).ok())
        .map(|l| l.text)
        .filter(|t| !t.trim().is_empty())
        .collect();
    let start = all.len().saturating_sub(KEEP);
    let kept: Vec<String> = all.get(start..).unwrap_or_default().to_vec();
    if all.len() > TRIM_AT {
        let mut body = String::new();
        for t in &kept {
            if let Ok(l) = serde_json::to_string(&Line { text: t.clone() }) {
                body.push_str(&l);
                body.push('\n');
            }
        }
        let _ = atomic_write(path, body.as_bytes());
    }
    kept
}

/// Append one entry (redacted) to the file, creating it and its directory.
pub(crate) fn append(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let line = serde_json::to_string(&Line {
        text: secrets::redact(text).into_owned(),
    })
    .map_err(std::io::Error::other)?;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    // One write of the whole line: appends from two runs never interleave inside a line.
    f.write_all(format!("{line}\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_load_back_in_order_and_bad_lines_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_for(dir.path(), Path::new("/home/u/my proj"));
        assert!(path.starts_with(dir.path().join("history")));
        assert!(
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("myproj-")
        );
        assert_ne!(path, path_for(dir.path(), Path::new("/home/v/my proj")));
        assert!(load(&path).is_empty(), "no file yet");
        append(&path, "first").unwrap();
        append(&path, "second\nwith two lines").unwrap();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"not json\n{\"text\":\"   \"}\n").unwrap();
        append(&path, "third").unwrap();
        assert_eq!(load(&path), ["first", "second\nwith two lines", "third"]);
    }

    #[test]
    fn a_long_file_is_trimmed_to_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.jsonl");
        for i in 0..(TRIM_AT + 5) {
            append(&path, &format!("m{i}")).unwrap();
        }
        let got = load(&path);
        assert_eq!(got.len(), KEEP);
        assert_eq!(got.last().map(String::as_str), Some("m2004"));
        let lines = std::fs::read_to_string(&path).unwrap().lines().count();
        assert_eq!(lines, KEEP, "rewritten with what is kept");
    }

    #[test]
    fn secrets_are_redacted_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.jsonl");
        let key = "sk-test-history-SECRET-0123456789";
        secrets::register(key);
        append(&path, &format!("use {key} please")).unwrap();
        let raw = std::fs::read_to_string(&path).unwrap();
        assert!(!raw.contains("SECRET-0123456789"), "{raw}");
    }
}
