//! The side editor's file watch: the file's directory is watched (an atomic save replaces the
//! inode), and a change to the file itself is sent into the app's loop as the file's path.

use std::path::{Path, PathBuf};

use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc;

/// A watch on one file: its directory is watched (an atomic save replaces the inode) and events
/// for the file's name are forwarded into the loop.
pub(super) struct FileWatch {
    _watcher: RecommendedWatcher,
}

impl FileWatch {
    /// Watch `path`; its changes are sent on `tx` as its path.
    pub(super) fn new(
        path: &Path,
        tx: mpsc::UnboundedSender<PathBuf>,
    ) -> notify::Result<FileWatch> {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let name = path.file_name().map(|n| n.to_os_string());
        let target = path.to_path_buf();
        let mut watcher =
            notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
                let Ok(ev) = res else { return };
                if ev.kind.is_access() {
                    return;
                }
                if ev
                    .paths
                    .iter()
                    .any(|p| p.file_name().map(|n| n.to_os_string()) == name)
                {
                    let _ = tx.send(target.clone());
                }
            })?;
        watcher.watch(&dir, RecursiveMode::NonRecursive)?;
        Ok(FileWatch { _watcher: watcher })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fsutil::atomic_write;
    use std::time::Duration;

    #[tokio::test]
    async fn file_watch_reports_an_atomic_save_of_the_file_only() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("handoff-x.md");
        std::fs::write(&file, "one\n").unwrap();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let _w = FileWatch::new(&file, tx).unwrap();
        std::fs::write(dir.path().join("other.md"), "noise").unwrap();
        atomic_write(&file, b"two\n").unwrap();
        let got = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(got, file);
        assert_eq!(std::fs::read_to_string(&got).unwrap(), "two\n");
        while let Ok(p) = rx.try_recv() {
            assert_eq!(p, file, "only the watched file is reported");
        }
    }
}
