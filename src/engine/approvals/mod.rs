//! What "always" grants, and what a grant covers: a grant never covers more than the user saw.
//!
//! "Always" never means "every later call of this tool". For `write_file` / `edit_file` it covers
//! that tool inside the workspace. For `bash` it covers the command's *prefix*: the program, plus
//! its subcommand for tools made of subcommands (`cargo test`, `git status`, `npm run`), so that
//! `cargo test --release` is covered after `cargo test` was allowed, and `cargo publish` is not.
//!
//! The rule for compound commands: a command is split into its parts at `;`, `&&`, `||`, `|`,
//! `&` and newlines, and it is covered only when *every* part is. Redirections (except harmless
//! ones such as `2>&1` or `> /dev/null`), command or process substitutions, subshells, control
//! keywords and leading variable assignments make a command that no prefix covers; "always" on it
//! (and on a program that can run anything, such as `sh`, `python`, `sudo`, `xargs`, `rm`) grants
//! that exact command only. Paths outside the workspace are never covered: a file tool's path
//! outside is asked for call by call, and so is a bash command that names one, unless a grant
//! names that exact command ([`Allowances::covers_within`]). A custom command's `allowed-tools`
//! follow the same rule ([`grantable_prefix`]).
//!
//! For `web_fetch` it covers the URL's host (`docs.rs`), never a host that resolves to a
//! private address (those are approved call by call).
//!
//! Grants live for the session: `/new` clears them; `/permissions` lists and revokes them.

mod command_line;

pub(crate) use command_line::Shape;
pub use command_line::parse;

use std::fmt;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::tools::{names, paths};

/// One thing "always" allowed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AllowRule {
    /// Every call of this file tool inside the workspace.
    Tool { tool: String },
    /// bash commands each of whose parts starts with these words (space-separated, shell-quoted).
    BashPrefix { prefix: String },
    /// This bash command, exactly.
    BashCommand { command: String },
    /// `web_fetch` of pages on this host.
    WebDomain { host: String },
}

impl fmt::Display for AllowRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AllowRule::Tool { tool } => write!(f, "{tool} inside the workspace"),
            AllowRule::BashPrefix { prefix } => write!(f, "bash: `{prefix} …`"),
            AllowRule::BashCommand { command } => {
                write!(f, "bash: exactly `{}`", one_line(command, 80))
            }
            AllowRule::WebDomain { host } => write!(f, "web_fetch of {host}"),
        }
    }
}

/// A grant with the words a front end shows for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Allowance {
    pub rule: AllowRule,
    pub label: String,
}

impl From<AllowRule> for Allowance {
    fn from(rule: AllowRule) -> Self {
        Allowance {
            label: rule.to_string(),
            rule,
        }
    }
}

/// What answering "always" to an approval request would grant, with the sentence to show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AllowOffer {
    pub rules: Vec<AllowRule>,
    /// e.g. "always allow `cargo test …` and `cargo build …` this session".
    pub label: String,
}

/// The grants of the current session, in the order they were made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Allowances {
    rules: Vec<AllowRule>,
}

impl Allowances {
    /// Whether the call is allowed by a grant. The caller checks "outside the workspace" first.
    pub fn covers(&self, tool: &str, input: &Value) -> bool {
        if tool == names::WEB_FETCH {
            let host = web_host(input);
            return self.rules.iter().any(
                |r| matches!(r, AllowRule::WebDomain { host: h } if Some(h.as_str()) == host.as_deref()),
            );
        }
        if tool != names::BASH {
            return self
                .rules
                .iter()
                .any(|r| matches!(r, AllowRule::Tool { tool: t } if t == tool));
        }
        let Some(command) = input.get("command").and_then(Value::as_str) else {
            return false;
        };
        self.covers_command(command)
    }

    /// [`Allowances::covers`] for a call in `workspace`: a prefix grant does not cover a bash
    /// command that names a path outside the workspace (`cp notes /elsewhere`, `ls ../..`), which
    /// is asked for call by call like a file tool's; a grant of that exact command does.
    pub fn covers_within(&self, tool: &str, input: &Value, workspace: &Path) -> bool {
        if tool != names::BASH {
            return self.covers(tool, input);
        }
        let Some(command) = input.get("command").and_then(Value::as_str) else {
            return false;
        };
        self.covers_exactly(command)
            || (!names_outside(command, workspace) && self.covers_command(command))
    }

    /// Whether a grant names this exact bash command.
    fn covers_exactly(&self, command: &str) -> bool {
        self.rules.iter().any(
            |r| matches!(r, AllowRule::BashCommand { command: c } if c.trim() == command.trim()),
        )
    }

    /// Whether a bash command is allowed: exactly, or every part by a prefix.
    pub fn covers_command(&self, command: &str) -> bool {
        if self.covers_exactly(command) {
            return true;
        }
        let prefixes: Vec<Vec<String>> = self
            .rules
            .iter()
            .filter_map(|r| match r {
                AllowRule::BashPrefix { prefix } => match parse(prefix) {
                    Shape::Plain(mut parts) if parts.len() == 1 => parts.pop(),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        match parse(command) {
            Shape::Plain(parts) => {
                !parts.is_empty()
                    && parts
                        .iter()
                        .all(|part| prefixes.iter().any(|p| part.starts_with(p)))
            }
            Shape::Complex(_) => false,
        }
    }

    /// Add the rules of an offer (a rule granted already is not repeated).
    pub fn grant(&mut self, rules: &[AllowRule]) {
        for r in rules {
            if !self.rules.contains(r) {
                self.rules.push(r.clone());
            }
        }
    }

    /// Remove one grant; false when it was not there.
    pub fn revoke(&mut self, rule: &AllowRule) -> bool {
        let before = self.rules.len();
        self.rules.retain(|r| r != rule);
        self.rules.len() != before
    }

    /// Remove every grant; returns how many there were.
    pub fn clear(&mut self) -> usize {
        std::mem::take(&mut self.rules).len()
    }

    /// The grants with their labels, oldest first.
    pub fn list(&self) -> Vec<Allowance> {
        self.rules.iter().cloned().map(Allowance::from).collect()
    }
}

/// Device files a command may name without leaving the workspace.
const HARMLESS_PATHS: [&str; 4] = ["/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr"];

/// Whether a plain command names a path outside `workspace`: a word (or a flag's `=value`)
/// that is absolute, starts with `~` or climbs with `..`, and resolves outside.
pub(crate) fn names_outside(command: &str, workspace: &Path) -> bool {
    let Shape::Plain(parts) = parse(command) else {
        return false;
    };
    let root = paths::canonical_or_self(workspace);
    parts.iter().flatten().any(|word| {
        let value = match word.split_once('=') {
            Some((flag, value)) if flag.starts_with('-') => value,
            _ => word.as_str(),
        };
        let path_like = value.starts_with('/')
            || value.starts_with('~')
            || value == ".."
            || value.starts_with("../")
            || value.contains("/../")
            || value.ends_with("/..");
        path_like
            && !HARMLESS_PATHS.contains(&value)
            && !paths::is_within(&root, &paths::resolve(workspace, value))
    })
}

/// Whether `prefix` may be granted as a prefix (a custom command's `Bash(prefix:*)`): what
/// "always" would offer for a command starting with it covers no more than it. A program that
/// runs anything (`sh`, `python`, `xargs`) or a subcommand tool without its subcommand (`git`)
/// may not be.
pub fn grantable_prefix(prefix: &str) -> bool {
    match parse(prefix) {
        Shape::Plain(parts) => match parts.as_slice() {
            [part] => prefix_of(part).is_some_and(|safe| safe.len() <= part.len()),
            _ => false,
        },
        Shape::Complex(_) => false,
    }
}

/// What "always" would grant for this call; None when "always" is not offered (a call leaving
/// the workspace is approved call by call).
pub fn offer(tool: &str, input: &Value, outside_workspace: bool) -> Option<AllowOffer> {
    if outside_workspace {
        return None;
    }
    if tool == names::WEB_FETCH {
        let host = web_host(input)?;
        return Some(AllowOffer {
            label: format!("always allow web_fetch of {host} this session"),
            rules: vec![AllowRule::WebDomain { host }],
        });
    }
    if tool != names::BASH {
        return Some(AllowOffer {
            label: format!("always allow {tool} inside the workspace this session"),
            rules: vec![AllowRule::Tool {
                tool: tool.to_string(),
            }],
        });
    }
    let command = input.get("command").and_then(Value::as_str)?.trim();
    if command.is_empty() {
        return None;
    }
    let exact = || AllowOffer {
        rules: vec![AllowRule::BashCommand {
            command: command.to_string(),
        }],
        label: "always allow this exact command this session".into(),
    };
    let Shape::Plain(parts) = parse(command) else {
        return Some(exact());
    };
    let mut prefixes: Vec<String> = Vec::new();
    for part in &parts {
        let Some(p) = prefix_of(part) else {
            return Some(exact());
        };
        let p = p.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ");
        if !prefixes.contains(&p) {
            prefixes.push(p);
        }
    }
    if prefixes.is_empty() {
        return Some(exact());
    }
    let shown: Vec<String> = prefixes.iter().map(|p| format!("`{p} …`")).collect();
    Some(AllowOffer {
        label: format!("always allow {} this session", join_and(&shown)),
        rules: prefixes
            .into_iter()
            .map(|prefix| AllowRule::BashPrefix { prefix })
            .collect(),
    })
}

/// The host a `web_fetch` call names (lower case), if its URL has one.
/// The host of a `web_fetch` call's URL, lower-cased, without the root's trailing dot (one host
/// for grants and permission rules alike).
pub(crate) fn web_host(input: &Value) -> Option<String> {
    let url = input.get("url").and_then(Value::as_str)?;
    let url = reqwest::Url::parse(url.trim()).ok()?;
    url.host_str()
        .map(|h| h.trim_end_matches('.').to_ascii_lowercase())
}

fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Programs made of subcommands: the prefix is the program and its first word (`cargo test`).
const SUBCOMMAND_TOOLS: &[&str] = &[
    "apt",
    "apt-get",
    "brew",
    "bun",
    "bundle",
    "cargo",
    "cmake",
    "composer",
    "conda",
    "deno",
    "docker",
    "dotnet",
    "gh",
    "git",
    "go",
    "gradle",
    "helm",
    "just",
    "kubectl",
    "make",
    "mvn",
    "npm",
    "npx",
    "pip",
    "pip3",
    "pipx",
    "pnpm",
    "podman",
    "poetry",
    "rake",
    "rustup",
    "swift",
    "systemctl",
    "terraform",
    "uv",
    "yarn",
];

/// Programs that run whatever their arguments say (shells, interpreters, wrappers) or destroy
/// data: a prefix grant would allow anything, so "always" covers the exact command only.
const EXACT_ONLY: &[&str] = &[
    "bash", "busybox", "chmod", "chown", "command", "dash", "dd", "doas", "env", "eval", "exec",
    "find", "fish", "ksh", "lua", "mkfs", "nice", "node", "nohup", "perl", "php", "python",
    "python2", "python3", "rm", "rmdir", "ruby", "sh", "shred", "source", "su", "sudo", "time",
    "timeout", "watch", "xargs", "zsh", ".",
];

/// The words of `part` that "always" grants: None when only the exact command may be granted.
fn prefix_of(part: &[String]) -> Option<Vec<String>> {
    let program = part.first()?;
    let base = program.rsplit('/').next().unwrap_or(program);
    if EXACT_ONLY.contains(&base) {
        return None;
    }
    if SUBCOMMAND_TOOLS.contains(&base) {
        // `cargo test`: the subcommand is the next word; a flag there (`git -C dir …`) or no
        // subcommand at all (`make`) leaves no safe prefix.
        let sub = part
            .get(1)
            .filter(|w| !w.starts_with('-') && !w.starts_with('+'))?;
        return Some(vec![program.clone(), sub.clone()]);
    }
    Some(vec![program.clone()])
}

/// A word as a shell would need it written (for labels and stored prefixes).
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=+@%,".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn one_line(s: &str, max: usize) -> String {
    let line: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", line.get(..cut).unwrap_or(&line)),
        None => line,
    }
}

#[cfg(test)]
mod tests;
