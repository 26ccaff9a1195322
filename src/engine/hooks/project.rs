//! Whether a workspace's hook settings (`.flower/settings.json`, `.claude/settings.json`) are
//! used: a repository must not run programs by itself, so its hooks run only once the user
//! approved this version of the file in this workspace. The decision is kept in the same store,
//! under the same policy (`ask`, `trust`, `ignore`), as a workspace's `.mcp.json`; each file is
//! decided on its own, against the SHA-256 of its bytes, so an edited file asks again.

use std::path::{Path, PathBuf};

use super::config::{Hook, SettingsNotice, SettingsProblem, from_settings};
use crate::engine::mcp::approval::{ApprovalStore, Decision, sha256_hex};
use crate::engine::mcp::project::McpJsonPolicy;

/// The workspace files that may hold hooks, relative to the workspace, in the order their hooks
/// are listed.
pub(crate) const SETTINGS_FILES: [&str; 2] = [".flower/settings.json", ".claude/settings.json"];

/// One settings file as read, with the hash its approval is recorded against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsFile {
    /// Absolute.
    pub path: PathBuf,
    /// Relative to the workspace, as [`SETTINGS_FILES`] names it (the store's key).
    pub relative: &'static str,
    pub sha256: String,
}

/// What to do with one settings file that names hooks.
#[derive(Debug, Clone)]
pub enum WorkspaceHooks {
    /// Approved (or trusted): run these hooks.
    Use {
        file: SettingsFile,
        hooks: Vec<Hook>,
        /// What in the file was skipped.
        notices: Vec<SettingsNotice>,
    },
    /// Never approved, or changed since: the TUI asks (showing the hooks), then records the
    /// answer with [`record`]. Headless runs ignore it with [`headless_notice`].
    NeedsApproval {
        file: SettingsFile,
        hooks: Vec<Hook>,
        notices: Vec<SettingsNotice>,
    },
    /// Not used, and why.
    Ignored {
        file: SettingsFile,
        reason: IgnoredBecause,
    },
    /// The file cannot be used at all.
    Invalid(SettingsNotice),
}

/// Why a settings file's hooks are not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IgnoredBecause {
    /// The policy is `ignore`.
    Policy,
    /// The user declined this version of the file.
    Declined,
}

impl WorkspaceHooks {
    /// The one-line notice for the user, when there is one to give.
    pub fn notice(&self) -> Option<String> {
        match self {
            WorkspaceHooks::Use { .. } | WorkspaceHooks::NeedsApproval { .. } => None,
            WorkspaceHooks::Ignored { file, reason } => Some(match reason {
                IgnoredBecause::Policy => format!(
                    "{}: its hooks are ignored (the workspace-file policy is \"ignore\")",
                    file.path.display()
                ),
                IgnoredBecause::Declined => format!(
                    "{}: its hooks are not used: you declined them for this workspace (it asks \
                     again when the file changes)",
                    file.path.display()
                ),
            }),
            WorkspaceHooks::Invalid(n) => Some(n.to_string()),
        }
    }
}

/// Decide about each settings file of `workspace` (blocking: it reads the files and the store).
/// A file that is absent or names no hook is left out.
pub fn workspace_hooks(
    workspace: &Path,
    policy: McpJsonPolicy,
    store: &ApprovalStore,
) -> Vec<WorkspaceHooks> {
    SETTINGS_FILES
        .iter()
        .filter_map(|relative| decide(workspace, relative, policy, store))
        .collect()
}

fn decide(
    workspace: &Path,
    relative: &'static str,
    policy: McpJsonPolicy,
    store: &ApprovalStore,
) -> Option<WorkspaceHooks> {
    let path = workspace.join(relative);
    let invalid = |problem| {
        Some(WorkspaceHooks::Invalid(SettingsNotice {
            path: path.clone(),
            problem,
        }))
    };
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return invalid(SettingsProblem::Unreadable(e.to_string())),
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return invalid(SettingsProblem::Unreadable("it is not UTF-8 text".into()));
    };
    let (hooks, mut notices) = from_settings(text, &path);
    let unusable = notices.iter().position(|n| {
        matches!(
            n.problem,
            SettingsProblem::NotJson { .. } | SettingsProblem::NotAnObject(_)
        )
    });
    if let Some(at) = unusable {
        return Some(WorkspaceHooks::Invalid(notices.swap_remove(at)));
    }
    if hooks.is_empty() && notices.is_empty() {
        return None;
    }
    let file = SettingsFile {
        path: path.clone(),
        relative,
        sha256: sha256_hex(&bytes),
    };
    if hooks.is_empty() {
        // Nothing would run: there is nothing to approve, only the notices to give.
        return Some(WorkspaceHooks::Use {
            file,
            hooks,
            notices,
        });
    }
    if policy == McpJsonPolicy::Ignore {
        return Some(WorkspaceHooks::Ignored {
            file,
            reason: IgnoredBecause::Policy,
        });
    }
    Some(
        match (policy, store.file_decision(workspace, relative, &bytes)) {
            (McpJsonPolicy::Trust, _) | (_, Some(Decision::Approved)) => WorkspaceHooks::Use {
                file,
                hooks,
                notices,
            },
            (_, Some(Decision::Denied)) => WorkspaceHooks::Ignored {
                file,
                reason: IgnoredBecause::Declined,
            },
            (_, None) => WorkspaceHooks::NeedsApproval {
                file,
                hooks,
                notices,
            },
        },
    )
}

/// Record the user's answer for the version of `file` they were shown.
pub fn record(
    store: &ApprovalStore,
    workspace: &Path,
    file: &SettingsFile,
    decision: Decision,
) -> std::io::Result<()> {
    store.record_file(workspace, file.relative, &file.sha256, decision)
}

/// The headless reading of [`WorkspaceHooks::NeedsApproval`]: nobody can be asked, so the hooks
/// are not used, with this notice.
pub fn headless_notice(file: &SettingsFile) -> String {
    format!(
        "{}: its hooks are not used: they were never approved in this workspace (run flower-tui \
         here once to approve them, or trust workspace files)",
        file.path.display()
    )
}
