//! Where the file tools read and write text: the disk, unless the front end offers a way of its
//! own. An editor driving the engine may hold unsaved buffers (the tools should read what the
//! user sees) and keep an undo history (the tools' edits should land in it); it plugs in a
//! [`TextFiles`] and the file tools go through it. Everything else (metadata, binary checks,
//! directories, checkpoints) stays on the disk.
//!
//! The calls are blocking: the tools run on tokio's blocking pool. A front end that cannot answer
//! (it went away) returns `None`, and the tool uses the disk as it would without it.

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// A front end's own access to text files (absolute paths).
pub trait TextFiles: Send + Sync {
    /// The text of `path` as the user sees it; `None`: read it from the disk.
    fn read(&self, path: &Path) -> Option<io::Result<String>>;
    /// Write `text` to `path` the way the user's editor would; `None`: write the disk.
    fn write(&self, path: &Path, text: &str) -> Option<io::Result<()>>;
}

/// The file access the tools use: the disk (the default) or a front end's [`TextFiles`].
#[derive(Clone, Default)]
pub struct FileAccess(Option<Arc<dyn TextFiles>>);

impl FileAccess {
    /// Through `files`.
    pub fn through(files: Arc<dyn TextFiles>) -> FileAccess {
        FileAccess(Some(files))
    }

    /// The text of `path` from the front end, or `None` when the disk is to be read.
    pub(crate) fn read(&self, path: &Path) -> Option<io::Result<String>> {
        self.0.as_ref()?.read(path)
    }

    /// Write through the front end; `None` when the disk is to be written.
    pub(crate) fn write(&self, path: &Path, text: &str) -> Option<io::Result<()>> {
        self.0.as_ref()?.write(path, text)
    }
}

impl fmt::Debug for FileAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "FileAccess(front end)"
        } else {
            "FileAccess(disk)"
        })
    }
}

/// Two accesses are the same when both are the disk or both are the same front end's.
impl PartialEq for FileAccess {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Eq for FileAccess {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::sync::Mutex;

    /// Answers reads of one path and records every write.
    struct Buffer {
        path: PathBuf,
        text: String,
        written: Mutex<Vec<(PathBuf, String)>>,
    }

    impl TextFiles for Buffer {
        fn read(&self, path: &Path) -> Option<io::Result<String>> {
            (path == self.path).then(|| Ok(self.text.clone()))
        }
        fn write(&self, path: &Path, text: &str) -> Option<io::Result<()>> {
            self.written
                .lock()
                .unwrap()
                .push((path.to_path_buf(), text.to_string()));
            Some(Ok(()))
        }
    }

    #[test]
    fn the_disk_is_the_default_and_a_front_end_answers_for_itself() {
        let disk = FileAccess::default();
        assert!(disk.read(Path::new("/a")).is_none());
        assert!(disk.write(Path::new("/a"), "x").is_none());
        let buffer = Arc::new(Buffer {
            path: PathBuf::from("/w/a.rs"),
            text: "unsaved".into(),
            written: Mutex::new(Vec::new()),
        });
        let editor = FileAccess::through(buffer.clone());
        assert_eq!(
            editor.read(Path::new("/w/a.rs")).unwrap().unwrap(),
            "unsaved"
        );
        assert!(editor.read(Path::new("/w/b.rs")).is_none());
        editor.write(Path::new("/w/a.rs"), "new").unwrap().unwrap();
        assert_eq!(
            buffer.written.lock().unwrap().as_slice(),
            [(PathBuf::from("/w/a.rs"), "new".to_string())]
        );
        assert_eq!(editor, editor.clone());
        assert_ne!(editor, disk);
        assert_eq!(format!("{disk:?}"), "FileAccess(disk)");
    }
}
