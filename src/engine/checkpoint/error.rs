//! What can go wrong with checkpoints, as one type. Problems with single files of the workspace
//! (unreadable, over a cap, changed by the user) are not errors: a snapshot or a restore reports
//! them and goes on. An error means the operation as a whole could not be done, and nothing of the
//! workspace was changed by it unless the restore report says so.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use super::object_id::ObjectId;

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The workspace folder cannot be resolved or read.
    #[error("checkpoints of {}: the workspace cannot be read: {source}", path.display())]
    Workspace { path: PathBuf, source: io::Error },
    /// The store (under the data dir) cannot be created, read or written.
    #[error("the checkpoint store {} cannot be used: {source}", path.display())]
    Store { path: PathBuf, source: io::Error },
    /// Another process held the store's lock for longer than the wait allowed.
    #[error(
        "the checkpoint store {} is in use by another flower-tui process (waited {} s)",
        path.display(),
        waited.as_secs()
    )]
    Busy { path: PathBuf, waited: Duration },
    /// A checkpoint or one of its files is not in the store.
    #[error("checkpoint object {id} is not in the store (it may have been removed)")]
    Missing { id: ObjectId },
    /// An object's bytes do not match its name, or a listing does not parse.
    #[error("checkpoint object {id} is damaged: {reason}")]
    Damaged { id: ObjectId, reason: &'static str },
    /// The workspace holds more entries than one checkpoint walks: the walk stopped there and
    /// no checkpoint was taken (a partial one would make an undo remove what it did not see).
    #[error(
        "the workspace has more than {limit} files and folders, more than a checkpoint covers: \
         no checkpoint taken"
    )]
    TooManyFiles { limit: usize },
    /// The blocking task that ran the operation ended without an answer (it panicked or the
    /// runtime is shutting down).
    #[error("the checkpoint task ended without an answer: {0}")]
    Task(#[from] tokio::task::JoinError),
}

impl CheckpointError {
    pub(crate) fn store(path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> CheckpointError {
        let path = path.into();
        move |source| CheckpointError::Store { path, source }
    }
}
