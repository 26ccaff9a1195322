//! Context windows learned from overflow messages: `<data_dir>/windows.json`, a map from
//! model name to the window its provider stated. The engine records them; start-up (`config.rs`)
//! reads them back for later runs.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use super::fsutil::atomic_write;

/// The learned-window store of a data dir (`<data_dir>/flower`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LearnedWindows {
    path: PathBuf,
}

impl LearnedWindows {
    /// The store under `data_dir`.
    pub fn in_data_dir(data_dir: &Path) -> Self {
        LearnedWindows {
            path: data_dir.join("windows.json"),
        }
    }

    /// `<data_dir>/windows.json`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The window learned for `model`, if any (a missing or unreadable store knows none).
    pub fn get(&self, model: &str) -> Option<u64> {
        self.load().get(model).copied()
    }

    /// Record `window` for `model` (atomically; other models' entries are kept).
    pub fn record(&self, model: &str, window: u64) -> io::Result<()> {
        let mut map = self.load();
        map.insert(model.to_string(), window);
        let json = serde_json::to_vec_pretty(&map).map_err(io::Error::other)?;
        atomic_write(&self.path, &json)
    }

    fn load(&self) -> BTreeMap<String, u64> {
        std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_per_model_and_survives_a_broken_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = LearnedWindows::in_data_dir(dir.path());
        assert_eq!(store.path(), dir.path().join("windows.json"));
        assert_eq!(store.get("m"), None);
        store.record("m", 200_000).unwrap();
        store.record("n", 128_000).unwrap();
        store.record("m", 180_000).unwrap();
        assert_eq!(store.get("m"), Some(180_000));
        assert_eq!(store.get("n"), Some(128_000));
        std::fs::write(store.path(), "{not json").unwrap();
        assert_eq!(store.get("m"), None, "a broken store knows nothing");
        store.record("m", 100_000).unwrap();
        assert_eq!(store.get("m"), Some(100_000), "and is rewritten whole");
    }
}
