//! Hook configuration in the two shapes users already write: `[[hooks.EVENT]]` tables in
//! `config.toml` (`matcher`, `command`, `timeout`) and the `hooks` object of a Claude Code
//! settings file (`{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
//! "command": "…", "timeout": 60}]}]}}`).
//!
//! `config.toml` is strict like the rest of that file: an unknown event or key, a wrong type or a
//! matcher that is not a valid regex is a [`HookConfigError`] naming the key. A settings file is
//! shared with Claude Code, which knows more events and hook types: what flower-tui cannot use is
//! skipped with a [`SettingsNotice`] each and the rest is used; only a file that is not a JSON
//! object at all is unusable as a whole.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use super::event::HookEvent;
use crate::engine::text::one_line;

/// A hook's timeout when its entry gives none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest timeout an entry may ask for (a day: anything longer is a mistake).
const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// One configured hook.
#[derive(Debug, Clone)]
pub struct Hook {
    pub event: HookEvent,
    pub matcher: Matcher,
    /// Run with `bash -c` in the workspace.
    pub command: String,
    pub timeout: Duration,
    pub source: HookSource,
}

/// Which file configured a hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookSource {
    /// The user's `config.toml`.
    ConfigFile,
    /// A workspace settings file (used only once approved), by its path.
    Settings(PathBuf),
}

/// Which calls a hook is for. As in Claude Code: empty or `*` is every call; a name or names
/// joined by `|` (letters, digits, `_`) match exactly; anything else is a regex that must match
/// somewhere in the name (`mcp__github__.*`, `Notebook.*`). Case matters.
#[derive(Debug, Clone)]
pub enum Matcher {
    All,
    Names(Vec<String>),
    Regex(regex::Regex),
}

impl Matcher {
    pub fn parse(text: &str) -> Result<Matcher, regex::Error> {
        let text = text.trim();
        if text.is_empty() || text == "*" {
            return Ok(Matcher::All);
        }
        if text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|')
        {
            return Ok(Matcher::Names(
                text.split('|')
                    .filter(|n| !n.is_empty())
                    .map(str::to_string)
                    .collect(),
            ));
        }
        regex::Regex::new(text).map(Matcher::Regex)
    }

    /// Whether any of `subjects` (a tool's names, a source, …) matches. An event without
    /// subjects has no matcher: every hook matches.
    pub fn matches(&self, subjects: &[&str]) -> bool {
        if subjects.is_empty() {
            return true;
        }
        match self {
            Matcher::All => true,
            Matcher::Names(names) => subjects.iter().any(|s| names.iter().any(|n| n == s)),
            Matcher::Regex(re) => subjects.iter().any(|s| re.is_match(s)),
        }
    }

    /// The matcher as written (for `/hooks` and approval prompts).
    pub fn as_text(&self) -> String {
        match self {
            Matcher::All => "*".into(),
            Matcher::Names(names) => names.join("|"),
            Matcher::Regex(re) => re.as_str().to_string(),
        }
    }
}

/// An error in `config.toml`'s `hooks`: the key it is about (`hooks.PreToolUse[0].timeout`) and
/// what is wrong. The caller prefixes the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("key `{key}`: {message}")]
pub struct HookConfigError {
    pub key: String,
    pub message: String,
}

fn err(key: impl Into<String>, message: impl Into<String>) -> HookConfigError {
    HookConfigError {
        key: key.into(),
        message: message.into(),
    }
}

const TOML_KEYS: [&str; 3] = ["matcher", "command", "timeout"];

/// The hooks of `config.toml`'s `hooks` table (`[[hooks.EVENT]]` entries).
pub fn from_toml(table: &toml::Value) -> Result<Vec<Hook>, HookConfigError> {
    let json =
        serde_json::to_value(table).map_err(|e| err("hooks", format!("cannot be read: {e}")))?;
    let Some(events) = json.as_object() else {
        return Err(err(
            "hooks",
            format!("expected a table of events (got {})", kind(&json)),
        ));
    };
    let mut out = Vec::new();
    for (name, entries) in events {
        let key = format!("hooks.{name}");
        let event = HookEvent::parse(name).ok_or_else(|| {
            err(
                &key,
                format!("unknown event; accepted: {}", HookEvent::accepted()),
            )
        })?;
        let Some(entries) = entries.as_array() else {
            return Err(err(
                &key,
                format!(
                    "expected an array of tables, written [[{key}]] (got {})",
                    kind(entries)
                ),
            ));
        };
        for (i, entry) in entries.iter().enumerate() {
            let key = format!("{key}[{i}]");
            let Some(entry) = entry.as_object() else {
                return Err(err(&key, format!("expected a table (got {})", kind(entry))));
            };
            if let Some(unknown) = entry.keys().find(|k| !TOML_KEYS.contains(&k.as_str())) {
                return Err(err(
                    format!("{key}.{unknown}"),
                    format!("unknown key; accepted: {}", TOML_KEYS.join(", ")),
                ));
            }
            let matcher = matcher(entry, &key)?;
            let (command, timeout) = command_and_timeout(entry, &key)?;
            out.push(Hook {
                event,
                matcher,
                command,
                timeout,
                source: HookSource::ConfigFile,
            });
        }
    }
    Ok(out)
}

/// Something in a settings file that flower-tui did not use, or the file itself: one line for the
/// user, naming the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct SettingsNotice {
    pub path: PathBuf,
    pub problem: SettingsProblem,
}

/// What is wrong in a settings file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsProblem {
    #[error("cannot be read: {0}; neither its hooks nor its permission rules are used")]
    Unreadable(String),
    #[error(
        "not valid JSON (line {line}, column {column}): {message}; neither its hooks nor its permission rules are used"
    )]
    NotJson {
        line: usize,
        column: usize,
        message: String,
    },
    #[error(
        "the file must hold a JSON object (got {0}); neither its hooks nor its permission rules are used"
    )]
    NotAnObject(&'static str),
    #[error("`{event}` hooks are not supported by flower-tui and are skipped")]
    UnknownEvent { event: String },
    #[error("`{key}`: hooks of type `{kind}` are not supported (only `command`); skipped")]
    UnsupportedType { key: String, kind: String },
    #[error("`{key}`: {message}; skipped")]
    Invalid { key: String, message: String },
}

/// The hooks of a settings file's text (`path` names it in notices and in each hook's source);
/// other keys of the file (`permissions`, `env`, …) are not flower-tui's and are ignored.
pub fn from_settings(text: &str, path: &Path) -> (Vec<Hook>, Vec<SettingsNotice>) {
    let notice = |problem| SettingsNotice {
        path: path.to_path_buf(),
        problem,
    };
    let json: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            // serde_json ends its message with the position, which the notice gives already.
            let text = e.to_string();
            let at = format!(" at line {} column {}", e.line(), e.column());
            let message = text.strip_suffix(&at).unwrap_or(&text).to_string();
            return (
                Vec::new(),
                vec![notice(SettingsProblem::NotJson {
                    line: e.line(),
                    column: e.column(),
                    message,
                })],
            );
        }
    };
    let Some(obj) = json.as_object() else {
        return (
            Vec::new(),
            vec![notice(SettingsProblem::NotAnObject(kind(&json)))],
        );
    };
    let mut hooks = Vec::new();
    let mut notices = Vec::new();
    match obj.get("hooks") {
        None => {}
        Some(Value::Object(events)) => {
            // In name order, whatever order the JSON map keeps (the ACP SDK has serde_json keep
            // the file's).
            let mut events: Vec<_> = events.iter().collect();
            events.sort_by(|a, b| a.0.cmp(b.0));
            for (name, groups) in events {
                let Some(event) = HookEvent::parse(name) else {
                    notices.push(notice(SettingsProblem::UnknownEvent {
                        event: one_line(name, 60),
                    }));
                    continue;
                };
                let key = format!("hooks.{name}");
                match groups.as_array() {
                    Some(groups) => {
                        for (i, group) in groups.iter().enumerate() {
                            let key = format!("{key}[{i}]");
                            let found = settings_group(event, group, &key, path);
                            hooks.extend(found.0);
                            notices.extend(found.1.into_iter().map(notice));
                        }
                    }
                    None => notices.push(notice(invalid(
                        key,
                        format!("expected an array (got {})", kind(groups)),
                    ))),
                }
            }
        }
        Some(other) => notices.push(notice(invalid(
            "hooks",
            format!("expected an object of events (got {})", kind(other)),
        ))),
    }
    (hooks, notices)
}

/// One `{"matcher": …, "hooks": [{"type": "command", …}]}` group of a settings file.
fn settings_group(
    event: HookEvent,
    group: &Value,
    key: &str,
    path: &Path,
) -> (Vec<Hook>, Vec<SettingsProblem>) {
    let mut problems = Vec::new();
    let Some(group) = group.as_object() else {
        let got = kind(group);
        return (
            Vec::new(),
            vec![invalid(key, format!("expected an object (got {got})"))],
        );
    };
    let matcher = match matcher(group, key) {
        Ok(m) => m,
        Err(e) => return (Vec::new(), vec![invalid(e.key, e.message)]),
    };
    let Some(entries) = group.get("hooks").and_then(Value::as_array) else {
        let got = group.get("hooks").map_or("nothing", kind);
        let message = format!("expected an array of hooks (got {got})");
        return (Vec::new(), vec![invalid(format!("{key}.hooks"), message)]);
    };
    let mut hooks = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let key = format!("{key}.hooks[{i}]");
        let Some(entry) = entry.as_object() else {
            let got = kind(entry);
            problems.push(invalid(&key, format!("expected an object (got {got})")));
            continue;
        };
        match entry.get("type").and_then(Value::as_str) {
            Some("command") => {}
            Some(other) => {
                problems.push(SettingsProblem::UnsupportedType {
                    key,
                    kind: one_line(other, 40),
                });
                continue;
            }
            None => {
                problems.push(invalid(
                    format!("{key}.type"),
                    "expected \"command\"".to_string(),
                ));
                continue;
            }
        }
        match command_and_timeout(entry, &key) {
            Ok((command, timeout)) => hooks.push(Hook {
                event,
                matcher: matcher.clone(),
                command,
                timeout,
                source: HookSource::Settings(path.to_path_buf()),
            }),
            Err(e) => problems.push(invalid(e.key, e.message)),
        }
    }
    (hooks, problems)
}

fn invalid(key: impl Into<String>, message: String) -> SettingsProblem {
    SettingsProblem::Invalid {
        key: key.into(),
        message,
    }
}

fn matcher(entry: &Map<String, Value>, key: &str) -> Result<Matcher, HookConfigError> {
    match entry.get("matcher") {
        None | Some(Value::Null) => Ok(Matcher::All),
        Some(Value::String(text)) => Matcher::parse(text).map_err(|e| {
            let first = e.to_string();
            let first = first.lines().last().unwrap_or("").trim().to_string();
            err(
                format!("{key}.matcher"),
                format!("not a valid regex: {first}"),
            )
        }),
        Some(other) => Err(err(
            format!("{key}.matcher"),
            format!("expected a string (got {})", kind(other)),
        )),
    }
}

fn command_and_timeout(
    entry: &Map<String, Value>,
    key: &str,
) -> Result<(String, Duration), HookConfigError> {
    let command = match entry.get("command") {
        Some(Value::String(c)) if !c.trim().is_empty() => c.clone(),
        Some(Value::String(_)) => return Err(err(format!("{key}.command"), "is empty")),
        Some(other) => {
            return Err(err(
                format!("{key}.command"),
                format!("expected a string (got {})", kind(other)),
            ));
        }
        None => return Err(err(format!("{key}.command"), "is missing")),
    };
    let timeout = match entry.get("timeout") {
        None | Some(Value::Null) => DEFAULT_TIMEOUT,
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|s| *s > 0.0)
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .filter(|d| *d <= MAX_TIMEOUT)
            .ok_or_else(|| {
                err(
                    format!("{key}.timeout"),
                    format!(
                        "expected seconds, more than 0 and at most {} (got {n})",
                        MAX_TIMEOUT.as_secs()
                    ),
                )
            })?,
        Some(other) => {
            return Err(err(
                format!("{key}.timeout"),
                format!("expected a number of seconds (got {})", kind(other)),
            ));
        }
    };
    Ok((command, timeout))
}

/// A JSON value's kind, as the settings-file notices name it.
fn kind(v: &Value) -> &'static str {
    crate::engine::text::value_kind(v, "an object")
}
