//! Whether a workspace's settings (`.flower/settings.json`, `.claude/settings.json`,
//! `.claude/settings.local.json`) are used: a repository must not run programs nor grant itself
//! tools by itself, so a file's hooks and `permissions.allow` rules apply only once the user
//! approved this version of the file in this workspace; its `deny` and `ask` rules, which can
//! only make calls fail or ask, apply at once. The same holds for the `allowed-tools` of the
//! workspace's command files, approved together ([`command_grants`]). The decisions are kept in
//! the same store, under the same policy (`ask`, `trust`, `ignore`), as a workspace's
//! `.mcp.json`; each file is decided on its own, against the SHA-256 of its bytes, so an edited
//! file asks again.

use std::path::{Path, PathBuf};

use super::config::{Hook, SettingsNotice, SettingsProblem, from_settings};
use crate::engine::commands::GrantsHeldBecause;
use crate::engine::mcp::approval::{ApprovalStore, Decision, sha256_hex};
use crate::engine::mcp::project::McpJsonPolicy;
use crate::engine::permissions::{Anchors, Permissions};

/// The workspace files that may hold hooks and permission rules, relative to the workspace, in
/// the order their hooks are listed.
pub(crate) const SETTINGS_FILES: [&str; 3] = [
    ".flower/settings.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
];

/// The store's key for the workspace command files' `allowed-tools`.
pub const COMMAND_GRANTS: &str = "commands: allowed-tools";

/// What waits for the user's approval in a workspace: a settings file's hooks and `allow` rules,
/// or the command files' `allowed-tools` (one line a command).
#[derive(Debug, Clone)]
pub struct Unapproved {
    pub file: SettingsFile,
    pub hooks: Vec<Hook>,
    pub allow: Permissions,
    pub command_grants: Vec<String>,
}

impl Unapproved {
    /// What approving it would do, one line each (hooks masked).
    pub fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self.hooks.iter().map(super::note::describe).collect();
        out.extend(self.allow.lines());
        out.extend(self.command_grants.iter().map(|l| format!("command {l}")));
        out
    }

    /// The headless reading: nobody can be asked, so nothing of it is used, with this notice.
    pub fn headless_notice(&self) -> String {
        if self.file.relative == COMMAND_GRANTS {
            return format!(
                "the allowed-tools of this workspace's commands ({}) are not granted: {}",
                self.command_grants.join("; "),
                GrantsHeldBecause::NeverApproved
            );
        }
        headless_notice(&self.file)
    }
}

/// The workspace's settings files as decided: each file's hooks, the restricting rules of every
/// readable file (used at once), and notices about rules that cannot be used.
#[derive(Debug, Clone, Default)]
pub struct WorkspaceSettings {
    pub files: Vec<WorkspaceHooks>,
    pub restrict: Permissions,
    pub notices: Vec<String>,
}

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
        /// Its `permissions.allow` rules.
        allow: Permissions,
        /// What in the file was skipped.
        notices: Vec<SettingsNotice>,
    },
    /// Never approved, or changed since: the TUI asks (showing the hooks), then records the
    /// answer with [`record`]. Headless runs ignore it with [`headless_notice`].
    NeedsApproval {
        file: SettingsFile,
        hooks: Vec<Hook>,
        allow: Permissions,
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
                    "{}: its hooks and allow rules are ignored (the workspace-file policy is \
                     \"ignore\")",
                    file.path.display()
                ),
                IgnoredBecause::Declined => format!(
                    "{}: its hooks and allow rules are not used: you declined them for this \
                     workspace (it asks again when the file changes)",
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
    workspace_settings(workspace, None, policy, store).files
}

/// [`workspace_hooks`] with the files' permission rules (`home` anchors their `~/` patterns).
pub fn workspace_settings(
    workspace: &Path,
    home: Option<&Path>,
    policy: McpJsonPolicy,
    store: &ApprovalStore,
) -> WorkspaceSettings {
    let mut out = WorkspaceSettings::default();
    let anchors = Anchors {
        workspace: workspace.to_path_buf(),
        base: workspace.to_path_buf(),
        home: home.map(Path::to_path_buf),
    };
    for relative in SETTINGS_FILES {
        if let Some(decided) = decide(workspace, relative, policy, store, &anchors, &mut out) {
            out.files.push(decided);
        }
    }
    out
}

fn decide(
    workspace: &Path,
    relative: &'static str,
    policy: McpJsonPolicy,
    store: &ApprovalStore,
    anchors: &Anchors,
    out: &mut WorkspaceSettings,
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
    let (rules, rule_notices) = match serde_json::from_str(text) {
        Ok(json) => Permissions::from_settings(&json, &path, anchors),
        Err(_) => (Permissions::default(), Vec::new()),
    };
    out.notices.extend(rule_notices);
    let (restrict, allow) = rules.split_grants();
    out.restrict.extend(restrict);
    if hooks.is_empty() && allow.is_empty() && notices.is_empty() {
        return None;
    }
    let file = SettingsFile {
        path: path.clone(),
        relative,
        sha256: sha256_hex(&bytes),
    };
    if hooks.is_empty() && allow.is_empty() {
        // Nothing would run: there is nothing to approve, only the notices to give.
        return Some(WorkspaceHooks::Use {
            file,
            hooks,
            allow,
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
                allow,
                notices,
            },
            (_, Some(Decision::Denied)) => WorkspaceHooks::Ignored {
                file,
                reason: IgnoredBecause::Declined,
            },
            (_, None) => WorkspaceHooks::NeedsApproval {
                file,
                hooks,
                allow,
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

/// What to do with the `allowed-tools` of the workspace's command files (`lines`, one a command,
/// as [`crate::engine::commands::Catalog::workspace_grants`] gives them): used when approved (or
/// trusted), else held, and asked about when never decided.
pub fn command_grants(
    workspace: &Path,
    lines: Vec<String>,
    policy: McpJsonPolicy,
    store: &ApprovalStore,
) -> Result<(), CommandGrants> {
    if lines.is_empty() || policy == McpJsonPolicy::Trust {
        return Ok(());
    }
    if policy == McpJsonPolicy::Ignore {
        return Err(CommandGrants::Held(GrantsHeldBecause::Policy));
    }
    let bytes = lines.join("\n").into_bytes();
    match store.file_decision(workspace, COMMAND_GRANTS, &bytes) {
        Some(Decision::Approved) => Ok(()),
        Some(Decision::Denied) => Err(CommandGrants::Held(GrantsHeldBecause::Declined)),
        None => Err(CommandGrants::Ask(Box::new(Unapproved {
            file: SettingsFile {
                path: workspace.join(".claude").join("commands"),
                relative: COMMAND_GRANTS,
                sha256: sha256_hex(&bytes),
            },
            hooks: Vec::new(),
            allow: Permissions::default(),
            command_grants: lines,
        }))),
    }
}

/// Why the command files' `allowed-tools` are not granted now.
#[derive(Debug, Clone)]
pub enum CommandGrants {
    /// Not granted, for this reason.
    Held(GrantsHeldBecause),
    /// Not granted until the user approves them.
    Ask(Box<Unapproved>),
}

/// The headless reading of [`WorkspaceHooks::NeedsApproval`]: nobody can be asked, so the hooks
/// are not used, with this notice.
pub fn headless_notice(file: &SettingsFile) -> String {
    format!(
        "{}: its hooks (and allow rules) are not used: they were never approved in this workspace \
         (run flower-tui here once to approve them, or trust workspace files)",
        file.path.display()
    )
}
