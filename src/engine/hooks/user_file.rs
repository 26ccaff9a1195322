//! The user's own Claude Code settings, `~/.claude/settings.json`: its hooks and permission rules
//! are the user's, so they apply without asking (after the config file's hooks, before a
//! workspace's). A file that cannot be read or is not valid JSON is one notice naming it, and
//! nothing of it applies; the file itself is only ever read.

use std::path::Path;

use super::config::{Hook, SettingsProblem, from_settings};
use crate::engine::permissions::{Anchors, Permissions};

/// What the user's settings file gives.
#[derive(Debug, Clone, Default)]
pub struct UserSettings {
    pub hooks: Vec<Hook>,
    pub permissions: Permissions,
    pub notices: Vec<String>,
}

/// Read `~/.claude/settings.json` under `home` (blocking); nothing when it is absent. `workspace`
/// anchors its rules' `./` patterns.
pub fn user_settings(home: &Path, workspace: &Path) -> UserSettings {
    let path = home.join(".claude").join("settings.json");
    let mut out = UserSettings::default();
    let text = match std::fs::read(&path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(_) => {
                out.notices.push(
                    super::config::SettingsNotice {
                        path,
                        problem: SettingsProblem::Unreadable("it is not UTF-8 text".into()),
                    }
                    .to_string(),
                );
                return out;
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return out,
        Err(e) => {
            out.notices.push(
                super::config::SettingsNotice {
                    path,
                    problem: SettingsProblem::Unreadable(e.to_string()),
                }
                .to_string(),
            );
            return out;
        }
    };
    let (hooks, notices) = from_settings(&text, &path);
    out.notices.extend(notices.iter().map(ToString::to_string));
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
        // Said by `from_settings` already.
        return out;
    };
    if !json.is_object() {
        return out;
    }
    out.hooks = hooks;
    let anchors = Anchors {
        workspace: workspace.to_path_buf(),
        base: home.to_path_buf(),
        home: Some(home.to_path_buf()),
    };
    let (rules, notices) = Permissions::from_settings(&json, &path, &anchors);
    out.permissions = rules;
    out.notices.extend(notices);
    out
}
