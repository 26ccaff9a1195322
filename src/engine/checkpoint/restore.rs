//! Putting the workspace back from one checkpoint's state to another's, for the paths that differ
//! between the two and nothing else (a file the user touched that the two checkpoints agree on is
//! never looked at).
//!
//! Before anything is written, every such path is compared with the `from` state: a path whose
//! current content, type or permission bits differ (the user changed it since) is a conflict.
//! What happens then is the caller's [`OnConflict`]. The rules that make a restore safe:
//! - Every file is written to a temporary name in its directory and renamed into place, with its
//!   permission bits set explicitly (the umask does not change them); a symbolic link is created
//!   the same way. Contents and bits come back byte for byte; times and owners are the restore's.
//! - Nothing is written or removed through a symbolic link: a path whose parent directory is a
//!   link is a conflict, and removing a link removes the link.
//! - A directory is removed only when it is empty; one that holds files no checkpoint knows of
//!   (ignored ones) stays.
//! - An entry whose content no checkpoint holds (over a cap) is neither written over nor removed:
//!   it is reported as untouched, since nothing could bring it back.

use std::ffi::OsStr;
use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::object::Objects;
use super::object_id::ObjectId;
use super::path::RelPath;
use super::tree::{Delta, Node};
use crate::engine::fsutil::unique;

/// What to do when a file changed since the state a restore starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnConflict {
    /// Change nothing at all and report the conflicts (so the user can be asked).
    #[default]
    Stop,
    /// Leave the conflicting files as the user has them; restore the rest.
    KeepUsers,
    /// Take a checkpoint of the workspace first (so nothing is lost), then restore everything.
    Overwrite,
}

/// A path that is not in the state the restore expected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conflict {
    pub path: RelPath,
    pub kind: ConflictKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConflictKind {
    /// Its content, type or permission bits differ.
    Changed,
    /// It exists, where the checkpoint had nothing.
    Created,
    /// It is gone.
    Deleted,
    /// It cannot be read, or a directory above it is a symbolic link.
    Unreadable,
    /// Someone else changed it too while the turn ran (between the turn's own calls).
    ChangedDuringTurn,
}

/// Why a path was left as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Untouched {
    /// The target checkpoint did not store this entry's content (over a cap or unreadable then).
    TargetNotStored,
    /// The entry's current content was not stored (over a cap): replacing or removing it could
    /// not be undone.
    CurrentNotStored,
}

/// A path the restore could not write or remove.
#[derive(Debug)]
pub struct Failure {
    pub path: RelPath,
    pub error: io::Error,
}

/// What a restore did, path by path (the changes themselves are listed by the caller's
/// [`super::Checkpoints::restore`] as file changes).
#[derive(Debug, Default)]
pub(crate) struct Applied {
    pub done: Vec<Delta>,
    pub untouched: Vec<(RelPath, Untouched)>,
    pub failed: Vec<Failure>,
}

/// Sort `deltas` by the current state of their path: as in `before` (kept, to be restored),
/// already as in `after` (dropped: nothing to do), or neither (a conflict, returned).
pub(crate) fn conflicts(ws: &Path, deltas: &mut Vec<Delta>) -> Vec<Conflict> {
    let mut found = Vec::new();
    deltas.retain(|d| match current_matches(ws, &d.path, d.before, d.after) {
        Ok(()) => true,
        Err(_) if current_matches(ws, &d.path, d.after, d.after).is_ok() => false,
        Err(kind) => {
            found.push(Conflict {
                path: d.path.clone(),
                kind,
            });
            true
        }
    });
    found
}

/// Whether `path` is as `expected` says (`target` excuses a directory that is already there).
pub(crate) fn current_matches(
    ws: &Path,
    path: &RelPath,
    expected: Option<Node>,
    target: Option<Node>,
) -> Result<(), ConflictKind> {
    if parents_are_plain(ws, path).is_err() {
        // Nothing was expected here: a link or file in a parent's place is that parent's own
        // change (replaced before this path is written), or the write fails; nothing is lost.
        return match expected {
            None => Ok(()),
            Some(_) => Err(ConflictKind::Unreadable),
        };
    }
    let full = path.on(ws);
    let meta = match fs::symlink_metadata(&full) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(_) => return Err(ConflictKind::Unreadable),
    };
    let Some(meta) = meta else {
        return match expected {
            None | Some(Node::Dir(_)) => Ok(()),
            Some(_) => Err(ConflictKind::Deleted),
        };
    };
    let ft = meta.file_type();
    match expected {
        None if ft.is_dir() && matches!(target, Some(Node::Dir(_))) => Ok(()),
        None => Err(ConflictKind::Created),
        Some(Node::Dir(_)) if ft.is_dir() => Ok(()),
        Some(Node::Dir(_)) => Err(ConflictKind::Changed),
        Some(Node::File { mode, id, size }) => {
            let same = ft.is_file()
                && meta.len() == size
                && meta.permissions().mode() & 0o7777 == mode
                && content_is(&full, &id).map_err(|_| ConflictKind::Unreadable)?;
            if same {
                Ok(())
            } else {
                Err(ConflictKind::Changed)
            }
        }
        Some(Node::Link(id)) => {
            let target = fs::read_link(&full).map_err(|_| ConflictKind::Changed)?;
            if ObjectId::of(target.as_os_str().as_bytes()) == id {
                Ok(())
            } else {
                Err(ConflictKind::Changed)
            }
        }
        Some(Node::Unstored { size, mtime, .. }) => {
            use std::os::unix::fs::MetadataExt;
            let same = !ft.is_dir()
                && meta.len() == size
                && meta.mtime() == mtime.secs
                && u32::try_from(meta.mtime_nsec()).ok() == Some(mtime.nanos);
            if same {
                Ok(())
            } else {
                Err(ConflictKind::Changed)
            }
        }
    }
}

/// Whether a file's current bytes are the contents `id` names (never following a link).
fn content_is(path: &Path, id: &ObjectId) -> io::Result<bool> {
    let mut f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    Ok(id.names(&bytes))
}

/// Check that no directory between the workspace and `path` is a symbolic link or a file.
fn parents_are_plain(ws: &Path, path: &RelPath) -> io::Result<()> {
    let mut up = path.parent();
    let mut chain = Vec::new();
    while let Some(p) = up {
        if p.is_root() {
            break;
        }
        up = p.parent();
        chain.push(p);
    }
    for dir in chain.iter().rev() {
        match fs::symlink_metadata(dir.on(ws)) {
            Ok(meta) if meta.file_type().is_dir() => {}
            Ok(_) => {
                return Err(io::Error::other(format!(
                    "{dir} is a symbolic link or a file, not a directory"
                )));
            }
            // The rest does not exist either: it will be created.
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Bring every path of `deltas` from its `before` to its `after` state.
pub(crate) fn apply(ws: &Path, objects: &Objects, deltas: Vec<Delta>) -> Applied {
    let mut applied = Applied::default();
    let mut todo = Vec::with_capacity(deltas.len());
    for d in deltas {
        match (d.before, d.after) {
            (Some(Node::Unstored { .. }), _) => applied
                .untouched
                .push((d.path, Untouched::CurrentNotStored)),
            (_, Some(Node::Unstored { .. })) => {
                applied.untouched.push((d.path, Untouched::TargetNotStored))
            }
            _ => todo.push(d),
        }
    }
    let mut failed_paths: Vec<RelPath> = Vec::new();
    // Removals, deepest first.
    for d in todo.iter().rev() {
        let result = match (d.before, d.after) {
            (Some(b), None | Some(Node::Dir(_))) if !b.is_dir() => remove_entry(ws, &d.path),
            (Some(Node::Dir(_)), after) if after.is_none_or(|a| !a.is_dir()) => {
                match remove_dir(ws, &d.path) {
                    // Files no checkpoint knows of keep it; fine unless a file must take its place.
                    Err(e) if after.is_none() && is_not_empty(&e) => Ok(()),
                    other => other,
                }
            }
            _ => Ok(()),
        };
        if let Err(error) = result {
            failed_paths.push(d.path.clone());
            applied.failed.push(Failure {
                path: d.path.clone(),
                error,
            });
        }
    }
    // Directories, then contents, parents first.
    for d in todo {
        if failed_paths.contains(&d.path) {
            continue;
        }
        let result = match d.after {
            Some(Node::Dir(_)) => make_dir(ws, &d.path),
            Some(Node::File { mode, id, .. }) => match d.before {
                // Only the bits changed, and the bytes there are still the same (an overwritten
                // conflict may hold other bytes): the file is kept, its bits set.
                Some(Node::File { id: old, .. })
                    if old == id && content_is(&d.path.on(ws), &id).unwrap_or(false) =>
                {
                    set_mode(ws, &d.path, mode)
                }
                _ => objects
                    .get(&id)
                    .map_err(io::Error::other)
                    .and_then(|bytes| write_file(ws, &d.path, &bytes, mode)),
            },
            Some(Node::Link(id)) => objects
                .get(&id)
                .map_err(io::Error::other)
                .and_then(|target| write_link(ws, &d.path, &target)),
            Some(Node::Unstored { .. }) | None => Ok(()),
        };
        match result {
            Ok(()) => applied.done.push(d),
            Err(error) => applied.failed.push(Failure {
                path: d.path,
                error,
            }),
        }
    }
    applied
}

fn is_not_empty(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::DirectoryNotEmpty || e.raw_os_error() == Some(libc::ENOTEMPTY)
}

fn remove_entry(ws: &Path, path: &RelPath) -> io::Result<()> {
    parents_are_plain(ws, path)?;
    match fs::remove_file(path.on(ws)) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

fn remove_dir(ws: &Path, path: &RelPath) -> io::Result<()> {
    parents_are_plain(ws, path)?;
    let full = path.on(ws);
    match fs::symlink_metadata(&full) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Ok(meta) if !meta.file_type().is_dir() => return Ok(()),
        _ => {}
    }
    fs::remove_dir(full)
}

fn make_dir(ws: &Path, path: &RelPath) -> io::Result<()> {
    parents_are_plain(ws, path)?;
    let full = path.on(ws);
    match fs::symlink_metadata(&full) {
        Ok(meta) if meta.file_type().is_dir() => Ok(()),
        // A file or link in its place (only an overwriting restore, which backed it up, gets
        // here): replaced, never followed.
        Ok(_) => fs::remove_file(&full).and_then(|()| fs::create_dir(&full)),
        Err(_) => fs::create_dir_all(full),
    }
}

fn set_mode(ws: &Path, path: &RelPath, mode: u32) -> io::Result<()> {
    parents_are_plain(ws, path)?;
    fs::set_permissions(path.on(ws), fs::Permissions::from_mode(mode))
}

/// The temporary name beside `full`, and its directory (created when missing).
fn temp_beside(ws: &Path, path: &RelPath) -> io::Result<(PathBuf, PathBuf)> {
    parents_are_plain(ws, path)?;
    let full = path.on(ws);
    let dir = full.parent().unwrap_or(ws).to_path_buf();
    fs::create_dir_all(&dir)?;
    let tmp = dir.join(format!(
        ".flower-restore-{}-{}.tmp",
        std::process::id(),
        unique()
    ));
    Ok((full, tmp))
}

fn write_file(ws: &Path, path: &RelPath, bytes: &[u8], mode: u32) -> io::Result<()> {
    let (full, tmp) = temp_beside(ws, path)?;
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.set_permissions(fs::Permissions::from_mode(mode))?;
        drop(f);
        fs::rename(&tmp, &full)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

fn write_link(ws: &Path, path: &RelPath, target: &[u8]) -> io::Result<()> {
    let (full, tmp) = temp_beside(ws, path)?;
    let result = std::os::unix::fs::symlink(OsStr::from_bytes(target), &tmp)
        .and_then(|()| fs::rename(&tmp, &full));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}
