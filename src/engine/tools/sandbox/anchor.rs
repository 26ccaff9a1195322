//! The workspace a sandbox confines, as it was first seen: its folder's and its `.git`'s
//! identity (device and inode). A command that could swap the workspace for another folder (move
//! it aside, make an empty one in its place) would run its next command in a folder with no
//! `.git` to protect, write the real `.git` from there unguarded and move it back; the user's
//! next plain `git status` would run what it planted. So the identity is recorded when the
//! session starts ([`pin`]; or at the first command, for a caller that did not), and a sandboxed
//! command is refused, saying why, when the workspace or its `.git` is no longer the one recorded.
//! A `.git` that appears later (a `git init`) is recorded when first seen.
//!
//! The record is per process and per workspace path (a process may run sessions of several
//! workspaces, the tests do).

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// A file's identity on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
}

impl Identity {
    fn of(meta: &std::fs::Metadata) -> Identity {
        Identity {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }
}

/// What was recorded for one workspace.
#[derive(Debug, Clone, Copy)]
struct Anchor {
    workspace: Identity,
    git: Option<Identity>,
}

/// Why a workspace is no longer the one recorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Moved {
    #[error(
        "the workspace {} is no longer the folder flower-tui started with (it was moved or \
         replaced since); the sandbox runs no command there: restart flower-tui in the workspace \
         you mean", .0.display()
    )]
    Workspace(PathBuf),
    #[error(
        "the workspace's .git ({}) is no longer the one flower-tui started with (it was moved, \
         removed or replaced since); the sandbox runs no command there: check it, then restart \
         flower-tui", .0.display()
    )]
    Git(PathBuf),
}

fn anchors() -> &'static Mutex<HashMap<PathBuf, Anchor>> {
    static ANCHORS: OnceLock<Mutex<HashMap<PathBuf, Anchor>>> = OnceLock::new();
    ANCHORS.get_or_init(Mutex::default)
}

/// What the workspace is now: its folder (following a link to it) and its `.git` (not followed).
fn seen(workspace: &Path) -> Option<Anchor> {
    let ws = std::fs::metadata(workspace).ok()?;
    let git = std::fs::symlink_metadata(workspace.join(".git"))
        .ok()
        .map(|m| Identity::of(&m));
    Some(Anchor {
        workspace: Identity::of(&ws),
        git,
    })
}

/// Record the workspace as it is now, unless it was recorded already.
pub fn pin(workspace: &Path) {
    let Some(now) = seen(workspace) else {
        return;
    };
    let mut map = anchors()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    map.entry(workspace.to_path_buf()).or_insert(now);
}

/// Whether the workspace is still the one recorded (recorded now when it was not).
pub(super) fn check(workspace: &Path) -> Result<(), Moved> {
    let Some(now) = seen(workspace) else {
        // Gone: the sandbox's own set-up reports that.
        return Ok(());
    };
    let mut map = anchors()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let recorded = map.entry(workspace.to_path_buf()).or_insert(now);
    if recorded.workspace != now.workspace {
        return Err(Moved::Workspace(workspace.to_path_buf()));
    }
    match (recorded.git, now.git) {
        (Some(before), Some(after)) if before == after => Ok(()),
        (Some(_), _) => Err(Moved::Git(workspace.join(".git"))),
        (None, after) => {
            recorded.git = after;
            Ok(())
        }
    }
}
