//! The content-addressed objects of the checkpoint store: a file's bytes, a symbolic link's target
//! or a directory listing, each kept once under the SHA-256 of its bytes in
//! `objects/<first two hex digits>/<the other 62>`.
//!
//! An object appears whole or not at all (written to a temporary name, then renamed), is never
//! changed afterwards, and is readable by the owner only (a workspace's files may hold secrets).
//! Objects are not fsynced: a power cut may lose or truncate a recent one, so every read checks
//! the bytes against the name and reports a damaged object instead of returning wrong bytes.
//! While a pack is being written (see `pack`), new objects go into it instead of files of their
//! own; an object is read from its own file, else from a pack.

use std::collections::HashMap;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::error::CheckpointError;
use super::git::Repo;
use super::object_id::ObjectId;
use super::pack::Packs;
use crate::engine::fsutil::unique;

/// The `objects/` folder of a store.
#[derive(Debug, Clone)]
pub(crate) struct Objects {
    dir: PathBuf,
    /// Where contents named by a git blob id are read (see `git`).
    git: Option<Repo>,
    /// Git blobs read ahead for the operation under way (see [`Objects::prefetch`]).
    read_ahead: Arc<Mutex<HashMap<ObjectId, Vec<u8>>>>,
    packs: Arc<Mutex<Packs>>,
}

impl Objects {
    #[cfg(test)]
    pub(crate) fn new(dir: PathBuf) -> Objects {
        Objects::with_git(dir, None)
    }

    /// A store that reads contents named by git blob ids from `repo`.
    pub(crate) fn with_git(dir: PathBuf, repo: Option<Repo>) -> Objects {
        Objects {
            dir,
            git: repo,
            read_ahead: Arc::default(),
            packs: Arc::default(),
        }
    }

    /// Read the git blobs among `ids` in one go, for the `get`s and `has`es that follow (what
    /// an earlier call read ahead is forgotten).
    pub(crate) fn prefetch(&self, ids: impl IntoIterator<Item = ObjectId>) {
        let ids: Vec<ObjectId> = ids
            .into_iter()
            .filter(|id| id.git_blob().is_some())
            .collect();
        let read = match (&self.git, ids.is_empty()) {
            (Some(repo), false) => repo.blobs(&ids),
            _ => HashMap::new(),
        };
        *self.read_ahead.lock().unwrap_or_else(|p| p.into_inner()) = read;
    }

    fn read_ahead(&self, id: &ObjectId) -> Option<Vec<u8>> {
        let held = self.read_ahead.lock().unwrap_or_else(|p| p.into_inner());
        held.get(id).cloned()
    }

    /// The repository whose blobs this store names, if any.
    pub(crate) fn repo(&self) -> Option<&Repo> {
        self.git.as_ref()
    }

    fn path(&self, id: &ObjectId) -> PathBuf {
        let hex = id.hex();
        let (fan, rest) = hex.split_at(2);
        self.dir.join(fan).join(rest)
    }

    /// The folder of the packs.
    pub(crate) fn pack_dir(&self) -> PathBuf {
        self.dir.join("pack")
    }

    fn packs(&self) -> std::sync::MutexGuard<'_, Packs> {
        self.packs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// From now on, new objects go into one new pack (until [`Objects::finish_pack`]).
    pub(crate) fn begin_pack(&self) -> io::Result<()> {
        self.packs().begin(&self.pack_dir())
    }

    /// Complete the pack begun by [`Objects::begin_pack`], if any: what it holds can be read.
    pub(crate) fn finish_pack(&self) -> io::Result<()> {
        self.packs().finish()
    }

    /// Keep `bytes` (whose id is `id`) unless the store has them already. True when written now.
    pub(crate) fn put(&self, id: &ObjectId, bytes: &[u8]) -> io::Result<bool> {
        let path = self.path(id);
        if fs::symlink_metadata(&path).is_ok() {
            return Ok(false);
        }
        {
            let mut packs = self.packs();
            if packs.holds(&self.pack_dir(), id, false) {
                return Ok(false);
            }
            if let Some(appended) = packs.append(id, bytes) {
                return appended;
            }
        }
        let dir = path.parent().unwrap_or(&self.dir);
        let tmp = self
            .dir
            .join(format!("tmp-{}-{}", std::process::id(), unique()));
        let written = (|| {
            let open = || {
                OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&tmp)
            };
            let mut f = match open() {
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    fs::create_dir_all(&self.dir)?;
                    open()?
                }
                other => other?,
            };
            f.write_all(bytes)?;
            drop(f);
            match fs::rename(&tmp, &path) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    fs::create_dir_all(dir)?;
                    fs::rename(&tmp, &path)
                }
                other => other,
            }
        })();
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written.map(|()| true)
    }

    /// The bytes of `id`, checked against it.
    pub(crate) fn get(&self, id: &ObjectId) -> Result<Vec<u8>, CheckpointError> {
        if id.git_blob().is_some() {
            if let Some(bytes) = self.read_ahead(id) {
                return Ok(bytes);
            }
            return self
                .git
                .as_ref()
                .and_then(|repo| repo.blob(id))
                .ok_or(CheckpointError::Missing { id: *id });
        }
        let bytes = match fs::read(self.path(id)) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                match self.packs().read(&self.pack_dir(), id) {
                    Some(Ok(bytes)) => bytes,
                    Some(Err(source)) => {
                        return Err(CheckpointError::Store {
                            path: self.pack_dir(),
                            source,
                        });
                    }
                    None => return Err(CheckpointError::Missing { id: *id }),
                }
            }
            Err(source) => {
                return Err(CheckpointError::Store {
                    path: self.path(id),
                    source,
                });
            }
        };
        if ObjectId::of(&bytes) != *id {
            return Err(CheckpointError::Damaged {
                id: *id,
                reason: "its bytes do not match its name",
            });
        }
        Ok(bytes)
    }

    /// Whether `id` is stored (its bytes are not read).
    pub(crate) fn has(&self, id: &ObjectId) -> bool {
        if id.git_blob().is_some() {
            let held = self.read_ahead.lock().unwrap_or_else(|p| p.into_inner());
            if held.contains_key(id) {
                return true;
            }
            drop(held);
            return self.git.as_ref().is_some_and(|repo| repo.has(id));
        }
        fs::symlink_metadata(self.path(id)).is_ok()
            || self.packs().holds(&self.pack_dir(), id, true)
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_print_and_parse() {
        let id = ObjectId::of(b"hello\n");
        assert_eq!(
            id.hex(),
            "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
        );
        assert_eq!(id.hex().parse::<ObjectId>().unwrap(), id);
        assert!("5891".parse::<ObjectId>().is_err());
        assert!(id.hex().to_uppercase().parse::<ObjectId>().is_err());
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(serde_json::from_str::<ObjectId>(&json).unwrap(), id);
        assert!(serde_json::from_str::<ObjectId>("\"zz\"").is_err());
    }

    #[test]
    fn objects_are_kept_once_and_checked_when_read() {
        let dir = tempfile::tempdir().unwrap();
        let objects = Objects::new(dir.path().join("objects"));
        let id = ObjectId::of(b"content");
        assert!(objects.put(&id, b"content").unwrap());
        assert!(!objects.put(&id, b"content").unwrap(), "kept once");
        assert!(objects.has(&id));
        assert_eq!(objects.get(&id).unwrap(), b"content");
        // Owner-only.
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(objects.path(&id))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // A damaged object is reported, not returned.
        fs::write(objects.path(&id), b"truncat").unwrap();
        assert!(matches!(
            objects.get(&id),
            Err(CheckpointError::Damaged { .. })
        ));
        let absent = ObjectId::of(b"never stored");
        assert!(matches!(
            objects.get(&absent),
            Err(CheckpointError::Missing { .. })
        ));
        // No temporary file is left behind.
        let names: Vec<_> = fs::read_dir(objects.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}
