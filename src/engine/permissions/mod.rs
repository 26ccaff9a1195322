//! Permission rules: the `permissions` block of a Claude Code settings file (`allow`, `ask`,
//! `deny`), in Claude Code's rule syntax, and what they say about one tool call.
//!
//! - `Bash` (every command), `Bash(git status:*)` or `Bash(git status *)` (each part of the
//!   command starts with those words), `Bash(npm test)` (exactly that), `Bash(git * main)` (`*`
//!   inside: any words there);
//! - `Read(pattern)`: the reading tools (`read_file`, `grep`, `glob`, `list_dir`) on a path the
//!   pattern matches; `Edit(pattern)` (and `Write`, `MultiEdit`, `NotebookEdit`): the file
//!   writers. The pattern is gitignore-like: `//abs/path` absolute, `~/path` under the home,
//!   `/path` under the folder the settings file is for, `./path` or `path` under the workspace;
//!   a pattern with no `/` matches that name at any depth; `*` stays within a folder, `**`
//!   crosses folders. No pattern: every call of those tools;
//! - `mcp__server` or `mcp__server__*` (every tool of that server), `mcp__server__tool`;
//! - `Grep`, `Glob`, `LS`, `Task` and flower-tui's own tool names: every call of that tool;
//! - `WebFetch` (every `web_fetch`), `WebFetch(domain:HOST)` (`*.HOST` for its subdomains too);
//!   `WebSearch` matches nothing: the provider runs that search, not a call flower-tui can stop.
//!
//! `deny` wins over everything (`--yes`, an "always" grant, a hook's allow, a read that needs no
//! approval); then `ask` (the user is asked even where something would allow the call; headless
//! cannot ask and refuses); then `allow` (the call runs unasked). A `deny` or `ask` on `bash`
//! matches when any part of the command does (and a command too complex to split matches when
//! the rule's words appear in it anywhere); an `allow` needs every part. An `allow` that names
//! a path covers it even outside the workspace; a command that names a path outside is still
//! asked. A rule that cannot be read is a notice naming its file; the others still apply.
//!
//! A `Read` deny rule also keeps its files from every other way of reading them that goes
//! through the file tools ([`Permissions::denied`]): a `grep`, `glob` or `list_dir` over a
//! folder holding one leaves it out, an `@file` attachment is refused, and so is a subagent's
//! read. `/permissions` lists every rule with the file it came from ([`Permissions::listed`]).

mod rule;

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

pub use rule::Rule;

use crate::engine::tools::Denied;

/// One rule in force as `/permissions` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListedRule {
    /// `deny`, `ask` or `allow`.
    pub kind: &'static str,
    /// As written.
    pub rule: String,
    /// The settings file it came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<PathBuf>,
}

/// What a rule does when it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Allow,
    Ask,
    Deny,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Allow => "allow",
            Kind::Ask => "ask",
            Kind::Deny => "deny",
        }
    }
}

/// Where rule patterns are anchored: the workspace (`./x`, `x`), the folder the settings file is
/// for (`/x`), the home (`~/x`).
#[derive(Debug, Clone)]
pub struct Anchors {
    pub workspace: PathBuf,
    /// The folder the settings file is for: the workspace for its `.claude/settings*.json`, the
    /// home for `~/.claude/settings.json`.
    pub base: PathBuf,
    pub home: Option<PathBuf>,
}

/// The rules in force, each list in the order the files gave them.
#[derive(Debug, Clone, Default)]
pub struct Permissions {
    allow: Vec<Rule>,
    ask: Vec<Rule>,
    deny: Vec<Rule>,
}

/// What the rules say about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Refused, by this rule (as written).
    Deny(String),
    /// The user must be asked, because of this rule.
    Ask(String),
    /// Runs unasked; `names_path`: the rule names the call's path (so it covers a path outside
    /// the workspace too).
    Allow { rule: String, names_path: bool },
}

/// One call as the rules see it.
#[derive(Debug, Clone, Copy)]
pub struct CallRef<'a> {
    pub name: &'a str,
    pub input: &'a Value,
    pub workspace: &'a Path,
}

impl Permissions {
    /// The `permissions` object of a settings file at `origin` (its other keys are not read).
    /// A rule that cannot be used is a notice naming the file; the rest apply.
    pub fn from_settings(json: &Value, origin: &Path, anchors: &Anchors) -> (Self, Vec<String>) {
        let mut out = Permissions::default();
        let mut notices = Vec::new();
        let Some(block) = json.get("permissions") else {
            return (out, notices);
        };
        let Some(obj) = block.as_object() else {
            notices.push(format!(
                "{}: `permissions` is not an object; no rule of it is used",
                origin.display()
            ));
            return (out, notices);
        };
        for (kind, key) in [
            (Kind::Allow, "allow"),
            (Kind::Ask, "ask"),
            (Kind::Deny, "deny"),
        ] {
            let Some(list) = obj.get(key) else { continue };
            let Some(items) = list.as_array() else {
                notices.push(format!(
                    "{}: `permissions.{key}` is not a list; none of it is used",
                    origin.display()
                ));
                continue;
            };
            for item in items {
                let Some(text) = item.as_str() else {
                    notices.push(format!(
                        "{}: `permissions.{key}` holds {item}, not a rule; it is not used",
                        origin.display()
                    ));
                    continue;
                };
                match Rule::parse(text, anchors) {
                    Ok(rule) => out.list_mut(kind).push(rule.read_from(origin)),
                    Err(why) => notices.push(format!(
                        "{}: the {key} rule `{}` is not used: {why}",
                        origin.display(),
                        crate::engine::text::one_line(text, 80)
                    )),
                }
            }
        }
        (out, notices)
    }

    fn list_mut(&mut self, kind: Kind) -> &mut Vec<Rule> {
        match kind {
            Kind::Allow => &mut self.allow,
            Kind::Ask => &mut self.ask,
            Kind::Deny => &mut self.deny,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.ask.is_empty() && self.deny.is_empty()
    }

    /// The rules of `other` after these.
    pub fn extend(&mut self, other: Permissions) {
        self.allow.extend(other.allow);
        self.ask.extend(other.ask);
        self.deny.extend(other.deny);
    }

    /// Split into the rules that only restrict (`ask`, `deny`: a workspace's are used without
    /// approval, they can only make calls ask or fail) and those that grant (`allow`).
    pub fn split_grants(self) -> (Permissions, Permissions) {
        (
            Permissions {
                allow: Vec::new(),
                ask: self.ask,
                deny: self.deny,
            },
            Permissions {
                allow: self.allow,
                ..Permissions::default()
            },
        )
    }

    /// Every rule as `kind: rule`, for `/permissions` and an approval question.
    pub fn lines(&self) -> Vec<String> {
        [
            (Kind::Deny, &self.deny),
            (Kind::Ask, &self.ask),
            (Kind::Allow, &self.allow),
        ]
        .into_iter()
        .flat_map(|(kind, rules)| {
            rules
                .iter()
                .map(move |r| format!("{}: {}", kind.as_str(), r.text()))
        })
        .collect()
    }

    /// Every rule with the file it came from, `deny` first, then `ask`, then `allow`, each list
    /// in the order the files gave it: what `/permissions` lists.
    pub fn listed(&self) -> Vec<ListedRule> {
        [
            (Kind::Deny, &self.deny),
            (Kind::Ask, &self.ask),
            (Kind::Allow, &self.allow),
        ]
        .into_iter()
        .flat_map(|(kind, rules)| {
            rules.iter().map(move |r| ListedRule {
                kind: kind.as_str(),
                rule: r.text().to_string(),
                source: r.origin().map(Path::to_path_buf),
            })
        })
        .collect()
    }

    /// What the deny rules forbid, as the tools are given it: the paths the `Read` rules keep
    /// from the model, and every call a deny rule refuses (`workspace`: where the rules'
    /// relative patterns are anchored, and what a call's paths are read against).
    pub fn denied(&self, workspace: &Path) -> Denied {
        if self.deny.is_empty() {
            return Denied::default();
        }
        let reads = Permissions {
            deny: self.deny.iter().filter(|r| r.reads()).cloned().collect(),
            ..Permissions::default()
        };
        let all = Permissions {
            deny: self.deny.clone(),
            ..Permissions::default()
        };
        let (ws, ws_calls) = (workspace.to_path_buf(), workspace.to_path_buf());
        Denied::new(
            move |path| reads.denies_reading(path, &ws).map(str::to_string),
            move |name, input| {
                let call = CallRef {
                    name,
                    input,
                    workspace: &ws_calls,
                };
                all.deny
                    .iter()
                    .find(|r| r.restricts(call))
                    .map(|r| r.text().to_string())
            },
        )
    }

    /// What the rules say about `call`: `deny` first, then `ask`, then `allow`; None when no
    /// rule matches.
    pub fn verdict(&self, call: CallRef<'_>) -> Option<Verdict> {
        if let Some(r) = self.deny.iter().find(|r| r.restricts(call)) {
            return Some(Verdict::Deny(r.text().to_string()));
        }
        if let Some(r) = self.ask.iter().find(|r| r.restricts(call)) {
            return Some(Verdict::Ask(r.text().to_string()));
        }
        self.allow
            .iter()
            .find(|r| r.grants(call))
            .map(|r| Verdict::Allow {
                rule: r.text().to_string(),
                names_path: r.names_path(),
            })
    }

    /// Whether a `Read` deny rule refuses reading `path` (an instruction file's import, an
    /// attached file): what the model must not see by any route.
    pub fn denies_reading(&self, path: &Path, workspace: &Path) -> Option<&str> {
        let input = serde_json::json!({ "path": path.to_string_lossy() });
        let call = CallRef {
            name: crate::engine::tools::names::READ_FILE,
            input: &input,
            workspace,
        };
        self.deny.iter().find(|r| r.restricts(call)).map(Rule::text)
    }
}

#[cfg(test)]
mod tests;
