//! The hooks of the config file: `[[hooks.EVENT]]` tables (`matcher`, `command`, `timeout`),
//! read by `engine::hooks::config`. A bad entry is one notice naming the file, the key and the
//! problem, and every other entry still loads: a typo in one hook must not stop the others nor
//! the run. The workspace's settings files are decided at launch (they need the approval store).

use std::path::Path;

use serde::Deserialize;

use super::env::{self, Env};
use crate::engine::hooks::{self, Hook};

/// The config file's key of this concern.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct HookKeys {
    /// `[[hooks.EVENT]]` tables.
    pub(crate) hooks: Option<toml::Value>,
}

/// The effective hooks of the config file.
#[derive(Debug, Clone, Default)]
pub(crate) struct HookSettings {
    pub(crate) hooks: Vec<Hook>,
    /// One line per entry that could not be used.
    pub(crate) notices: Vec<String>,
}

/// Read this concern's key; `env` names the file in notices.
pub(crate) fn resolve(keys: HookKeys, env: &Env) -> HookSettings {
    let Some(table) = keys.hooks else {
        return HookSettings::default();
    };
    let path = env::config_path(env).unwrap_or_else(|| "config.toml".into());
    read(&table, &path)
}

/// Every usable entry of the `hooks` table, and a notice for each one that is not.
fn read(table: &toml::Value, path: &Path) -> HookSettings {
    let mut out = HookSettings::default();
    let mut notice = |e: hooks::HookConfigError| {
        out.notices
            .push(format!("{}: {e}; that hook is not used", path.display()));
    };
    let Some(events) = table.as_table() else {
        // Not a table of events: the whole key is wrong, and says so.
        if let Err(e) = hooks::config::from_toml(table) {
            notice(e);
        }
        return out;
    };
    let mut hooks = Vec::new();
    for (event, entries) in events {
        let Some(list) = entries.as_array() else {
            if let Err(e) = hooks::config::from_toml(&one(event, entries.clone())) {
                notice(e);
            }
            continue;
        };
        for (i, entry) in list.iter().enumerate() {
            let single = one(event, toml::Value::Array(vec![entry.clone()]));
            match hooks::config::from_toml(&single) {
                Ok(found) => hooks.extend(found),
                Err(mut e) => {
                    // Each entry is read alone: give the key its place in the file's list.
                    let alone = format!("hooks.{event}[0]");
                    if let Some(rest) = e.key.strip_prefix(&alone) {
                        e.key = format!("hooks.{event}[{i}]{rest}");
                    }
                    notice(e);
                }
            }
        }
    }
    out.hooks = hooks;
    out
}

/// A `hooks` table with one event.
fn one(event: &str, entries: toml::Value) -> toml::Value {
    let mut table = toml::map::Map::new();
    table.insert(event.to_string(), entries);
    toml::Value::Table(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_entry_is_a_notice_and_the_rest_loads() {
        let text = r#"
[[hooks.PreToolUse]]
matcher = "Bash"
command = "echo one"

[[hooks.PreToolUse]]
command = "echo two"
timeout = "soon"

[[hooks.Nope]]
command = "x"

[[hooks.Stop]]
command = "echo three"
"#;
        let value: toml::Value = toml::from_str(text).unwrap();
        let keys = HookKeys {
            hooks: value.get("hooks").cloned(),
        };
        let got = read(keys.hooks.as_ref().unwrap(), Path::new("/c/config.toml"));
        let commands: Vec<&str> = got.hooks.iter().map(|h| h.command.as_str()).collect();
        assert_eq!(commands, ["echo one", "echo three"]);
        assert_eq!(got.notices.len(), 2, "{:?}", got.notices);
        assert!(
            got.notices
                .iter()
                .any(|n| n.starts_with("/c/config.toml: key `hooks.PreToolUse[1].timeout`")),
            "{:?}",
            got.notices
        );
        assert!(
            got.notices.iter().any(|n| n.contains("`hooks.Nope`")),
            "{:?}",
            got.notices
        );
        assert!(got.notices.iter().all(|n| !n.contains('\n')));
    }

    #[test]
    fn hooks_that_are_not_a_table_say_so() {
        let got = read(&toml::Value::Integer(3), Path::new("/c/config.toml"));
        assert!(got.hooks.is_empty());
        assert_eq!(got.notices.len(), 1);
        assert!(got.notices[0].contains("`hooks`"), "{}", got.notices[0]);
    }
}
