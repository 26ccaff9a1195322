//! Whether the user let a workspace's `.mcp.json` start its servers, or one of its other files that
//! name programs (the hook settings, `.claude/settings.json`) run them: a repository must not start
//! programs by itself. One decision per workspace and file, recorded against the SHA-256 of the
//! file's bytes, so a changed file (a new server, another command) asks again.
//!
//! The store is `<data_dir>/mcp_approvals.json`; writes are atomic and serialised by a lock file,
//! so two flower-tui processes approving at once both keep their decision. `.mcp.json` decisions
//! sit under `workspaces` (the first shape of the store); other files under `files`, by workspace
//! and then by the file's path relative to it.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The user's answer for one version of a workspace's `.mcp.json` (or other trusted file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Approved,
    Denied,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StoreFile {
    #[serde(default)]
    workspaces: BTreeMap<String, Entry>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    files: BTreeMap<String, BTreeMap<String, Entry>>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    sha256: String,
    decision: Decision,
    /// Seconds since the epoch.
    at: u64,
}

/// The approvals of every workspace.
#[derive(Debug, Clone)]
pub struct ApprovalStore {
    path: PathBuf,
}

impl ApprovalStore {
    /// The store under flower-tui's data dir (`config::data_dir`).
    pub fn new(data_dir: &Path) -> Self {
        ApprovalStore {
            path: data_dir.join("mcp_approvals.json"),
        }
    }

    /// Where the decisions are kept.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The decision recorded for exactly these bytes of `workspace`'s `.mcp.json`; `None` when the
    /// user was never asked or the file changed since.
    pub fn decision(&self, workspace: &Path, file_bytes: &[u8]) -> Option<Decision> {
        let store = self.read();
        let entry = store.workspaces.get(&key(workspace))?;
        (entry.sha256 == sha256_hex(file_bytes)).then_some(entry.decision)
    }

    /// Record the user's decision for these bytes (replacing any for an older version).
    pub fn record(
        &self,
        workspace: &Path,
        file_bytes: &[u8],
        decision: Decision,
    ) -> io::Result<()> {
        self.record_digest(workspace, &sha256_hex(file_bytes), decision)
    }

    /// [`Self::record`] for the version of the file whose SHA-256 is `sha256` (the one the user
    /// was shown).
    pub fn record_digest(
        &self,
        workspace: &Path,
        sha256: &str,
        decision: Decision,
    ) -> io::Result<()> {
        let entry = Entry::new(sha256, decision);
        self.update(|store| {
            store.workspaces.insert(key(workspace), entry);
        })
    }

    /// The decision recorded for exactly these bytes of the workspace file `file` (its path
    /// relative to the workspace, as `.claude/settings.json`); `None` when the user was never
    /// asked or the file changed since.
    pub fn file_decision(
        &self,
        workspace: &Path,
        file: &str,
        file_bytes: &[u8],
    ) -> Option<Decision> {
        let store = self.read();
        let entry = store.files.get(&key(workspace))?.get(file)?;
        (entry.sha256 == sha256_hex(file_bytes)).then_some(entry.decision)
    }

    /// Record the user's decision for the version of the workspace file `file` whose SHA-256 is
    /// `sha256` (replacing any for an older version).
    pub fn record_file(
        &self,
        workspace: &Path,
        file: &str,
        sha256: &str,
        decision: Decision,
    ) -> io::Result<()> {
        let entry = Entry::new(sha256, decision);
        self.update(|store| {
            store
                .files
                .entry(key(workspace))
                .or_default()
                .insert(file.to_string(), entry);
        })
    }

    /// Change the store under its lock and write it back atomically.
    fn update(&self, change: impl FnOnce(&mut StoreFile)) -> io::Result<()> {
        let _lock = FileLock::acquire(&self.path.with_extension("json.lock"))?;
        let mut store = self.read();
        change(&mut store);
        let json = serde_json::to_vec_pretty(&store).map_err(io::Error::other)?;
        crate::engine::fsutil::atomic_write(&self.path, &json)
    }

    /// A missing or unreadable store is empty: the worst outcome is being asked again.
    fn read(&self) -> StoreFile {
        std::fs::read(&self.path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }
}

impl Entry {
    fn new(sha256: &str, decision: Decision) -> Self {
        Entry {
            sha256: sha256.to_string(),
            decision,
            at: crate::engine::fsutil::now_unix().0,
        }
    }
}

fn key(workspace: &Path) -> String {
    std::fs::canonicalize(workspace)
        .unwrap_or_else(|_| workspace.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

/// The hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// An exclusive `flock` held until dropped (released by the kernel if the process dies).
struct FileLock {
    _file: std::fs::File,
}

impl FileLock {
    fn acquire(path: &Path) -> io::Result<Self> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: flock(2) on a descriptor this function owns; no memory is shared.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(FileLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn once_per_workspace_and_again_when_the_file_changes() {
        let data = tempfile::tempdir().unwrap();
        let ws_a = tempfile::tempdir().unwrap();
        let ws_b = tempfile::tempdir().unwrap();
        let store = ApprovalStore::new(data.path());
        let v1 = br#"{"mcpServers":{"a":{"command":"x"}}}"#;
        let v2 = br#"{"mcpServers":{"a":{"command":"y"}}}"#;
        assert_eq!(store.decision(ws_a.path(), v1), None);
        store.record(ws_a.path(), v1, Decision::Approved).unwrap();
        store.record(ws_b.path(), v1, Decision::Denied).unwrap();
        assert_eq!(store.decision(ws_a.path(), v1), Some(Decision::Approved));
        assert_eq!(store.decision(ws_b.path(), v1), Some(Decision::Denied));
        // A changed file is a new question; the other workspace keeps its answer.
        assert_eq!(store.decision(ws_a.path(), v2), None);
        store.record(ws_a.path(), v2, Decision::Denied).unwrap();
        assert_eq!(store.decision(ws_a.path(), v2), Some(Decision::Denied));
        assert_eq!(store.decision(ws_a.path(), v1), None);
        assert_eq!(store.decision(ws_b.path(), v1), Some(Decision::Denied));
        // A corrupt store asks again rather than failing.
        std::fs::write(store.path(), b"{not json").unwrap();
        assert_eq!(store.decision(ws_b.path(), v1), None);
        store.record(ws_b.path(), v1, Decision::Approved).unwrap();
        assert_eq!(store.decision(ws_b.path(), v1), Some(Decision::Approved));
    }

    #[test]
    fn other_files_are_decided_apart_from_mcp_json_and_from_each_other() {
        let data = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let store = ApprovalStore::new(data.path());
        let v1 = br#"{"hooks":{}}"#;
        let sha = sha256_hex(v1);
        store.record(ws.path(), b"{}", Decision::Approved).unwrap();
        assert_eq!(
            store.file_decision(ws.path(), ".claude/settings.json", v1),
            None
        );
        store
            .record_file(ws.path(), ".claude/settings.json", &sha, Decision::Approved)
            .unwrap();
        store
            .record_file(ws.path(), ".flower/settings.json", &sha, Decision::Denied)
            .unwrap();
        assert_eq!(
            store.file_decision(ws.path(), ".claude/settings.json", v1),
            Some(Decision::Approved)
        );
        assert_eq!(
            store.file_decision(ws.path(), ".flower/settings.json", v1),
            Some(Decision::Denied)
        );
        assert_eq!(
            store.file_decision(ws.path(), ".claude/settings.json", b"{}"),
            None
        );
        // The `.mcp.json` decision is untouched, and a store of the first shape still reads.
        assert_eq!(store.decision(ws.path(), b"{}"), Some(Decision::Approved));
        let text = std::fs::read_to_string(store.path()).unwrap();
        let first_shape: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut first_shape = first_shape.as_object().unwrap().clone();
        first_shape.remove("files");
        std::fs::write(store.path(), serde_json::to_vec(&first_shape).unwrap()).unwrap();
        assert_eq!(store.decision(ws.path(), b"{}"), Some(Decision::Approved));
        assert_eq!(
            store.file_decision(ws.path(), ".claude/settings.json", v1),
            None
        );
    }

    #[test]
    fn concurrent_writers_keep_every_decision() {
        let data = tempfile::tempdir().unwrap();
        let workspaces: Vec<_> = (0..8).map(|_| tempfile::tempdir().unwrap()).collect();
        std::thread::scope(|s| {
            for ws in &workspaces {
                let store = ApprovalStore::new(data.path());
                s.spawn(move || store.record(ws.path(), b"{}", Decision::Approved).unwrap());
            }
        });
        let store = ApprovalStore::new(data.path());
        for ws in &workspaces {
            assert_eq!(store.decision(ws.path(), b"{}"), Some(Decision::Approved));
        }
    }

    #[test]
    fn sha256_of_known_input() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
