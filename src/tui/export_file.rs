//! `/export`'s file: the conversation's Markdown written where the user said (relative to the
//! workspace), or to a new file in the workspace named after the time. Run by the app; the
//! reducer hears back what was written, or why not.

use std::path::{Path, PathBuf};

use crate::engine::fsutil::{atomic_write, now_unix};

use super::msg::FileError;

/// `/export`: `markdown` to `path` (relative: in the workspace; replaced whole if it exists), or
/// to a new `flower-conversation-<time>.md` in the workspace. The file it wrote or tried to.
pub(crate) fn write(
    workspace: &Path,
    path: Option<PathBuf>,
    markdown: &str,
) -> (PathBuf, Result<(), FileError>) {
    let path = match path {
        Some(p) if p.is_absolute() => p,
        Some(p) => workspace.join(p),
        None => workspace.join(format!(
            "flower-conversation-{}.md",
            crate::engine::fsutil::compact_stamp(now_unix().0)
        )),
    };
    let result = atomic_write(&path, markdown.as_bytes()).map_err(FileError::from);
    (path, result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_writes_in_the_workspace_or_where_told_and_says_why_not() {
        let ws = tempfile::tempdir().expect("temp dir");
        let (path, result) = write(ws.path(), None, "# chat\n");
        assert!(result.is_ok(), "{result:?}");
        assert_eq!(path.parent(), Some(ws.path()));
        assert!(path.file_name().is_some_and(|n| {
            let n = n.to_string_lossy();
            n.starts_with("flower-conversation-") && n.ends_with(".md")
        }));
        assert_eq!(
            std::fs::read_to_string(&path).ok().as_deref(),
            Some("# chat\n")
        );
        let (path, result) = write(ws.path(), Some("chat.md".into()), "x");
        assert_eq!((path, result), (ws.path().join("chat.md"), Ok(())));
        // A place that cannot be written: the error comes back, nothing panics.
        let (path, result) = write(ws.path(), Some("/proc/no/such/chat.md".into()), "x");
        assert_eq!(path, PathBuf::from("/proc/no/such/chat.md"));
        assert!(result.is_err());
    }
}
