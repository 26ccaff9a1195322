//! One permission rule: read from its Claude Code spelling, and matched against a call.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use serde_json::Value;

use super::{Anchors, CallRef};
use crate::engine::approvals::{Shape, parse as parse_command, web_host};
use crate::engine::tools::{names, paths};

/// One rule, as written and as read.
#[derive(Debug, Clone)]
pub struct Rule {
    text: String,
    target: Target,
    /// The settings file it was read from (None: given otherwise).
    origin: Option<PathBuf>,
}

#[derive(Debug, Clone)]
enum Target {
    Bash(Command),
    /// File tools (`tools`) on the paths a pattern matches (every path when None).
    Files {
        tools: &'static [&'static str],
        globs: Option<Vec<GlobMatcher>>,
    },
    /// An MCP server's tools (all when `tool` is None).
    Mcp {
        server: String,
        tool: Option<String>,
    },
    /// Every call of this tool.
    Tool(String),
    /// `web_fetch` of a host (`*.name`: the name's subdomains too), or of any host when None.
    Web(Option<String>),
    /// A tool flower-tui does not offer per call (the provider's own web search).
    Nothing,
}

/// What a `Bash(…)` rule names.
#[derive(Debug, Clone)]
enum Command {
    Any,
    /// A part's first words.
    Prefix(Vec<String>),
    /// The whole command, exactly.
    Exact(String),
    /// A part's words joined by spaces, `*` any text.
    Pattern(regex::Regex),
}

const READERS: &[&str] = &[names::READ_FILE, names::GREP, names::GLOB, names::LIST_DIR];
const WRITERS: &[&str] = &[names::WRITE_FILE, names::EDIT_FILE];

impl Rule {
    /// Read `text` (`Tool` or `Tool(spec)`); the error says why it cannot be used.
    pub fn parse(text: &str, anchors: &Anchors) -> Result<Rule, String> {
        let trimmed = text.trim();
        let (tool, spec) = match trimmed.split_once('(') {
            Some((tool, rest)) => match rest.strip_suffix(')') {
                Some(spec) => (tool.trim(), Some(spec.trim())),
                None => return Err("it has no closing `)`".into()),
            },
            None => (trimmed, None),
        };
        let spec = spec.filter(|s| !s.is_empty() && *s != "*" && *s != "**");
        let target = match (tool, spec) {
            ("Bash" | "bash", None) => Target::Bash(Command::Any),
            ("Bash" | "bash", Some(spec)) => Target::Bash(command(spec)?),
            ("Read" | "read_file", spec) => files(READERS, spec, anchors)?,
            ("Edit" | "Write" | "MultiEdit" | "NotebookEdit", spec) => {
                files(WRITERS, spec, anchors)?
            }
            ("edit_file" | "write_file", spec) => files(
                if tool == "edit_file" {
                    &[names::EDIT_FILE]
                } else {
                    &[names::WRITE_FILE]
                },
                spec,
                anchors,
            )?,
            ("Grep" | "grep", spec) => files(&[names::GREP], spec, anchors)?,
            ("Glob" | "glob", spec) => files(&[names::GLOB], spec, anchors)?,
            ("LS" | "list_dir", spec) => files(&[names::LIST_DIR], spec, anchors)?,
            ("Task" | "task", None) => Target::Tool(names::TASK.into()),
            ("Skill" | "skill", None) => Target::Tool(names::SKILL.into()),
            ("WebFetch" | "web_fetch", None) => Target::Web(None),
            ("WebFetch" | "web_fetch", Some(spec)) => Target::Web(Some(web_domain(spec)?)),
            ("WebSearch", _) => Target::Nothing,
            (mcp, None) if mcp.starts_with("mcp__") => mcp_target(mcp)?,
            (_, Some(_)) if tool.starts_with("mcp__") => {
                return Err("an MCP rule takes no `(…)`".into());
            }
            _ => return Err(format!("`{tool}` is not a tool flower-tui knows")),
        };
        Ok(Rule {
            text: trimmed.to_string(),
            target,
            origin: None,
        })
    }

    /// As written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Read from the settings file `origin`.
    pub(super) fn read_from(self, origin: &Path) -> Rule {
        Rule {
            origin: Some(origin.to_path_buf()),
            ..self
        }
    }

    /// The settings file it was read from.
    pub(super) fn origin(&self) -> Option<&Path> {
        self.origin.as_deref()
    }

    /// Whether it is about reading files (`Read(…)`, `read_file(…)`): what the file tools must
    /// keep from the model whichever way they read.
    pub(super) fn reads(&self) -> bool {
        matches!(&self.target, Target::Files { tools, .. } if tools.contains(&names::READ_FILE))
    }

    /// Whether it names paths (so an `allow` covers those paths wherever they are).
    pub(super) fn names_path(&self) -> bool {
        matches!(self.target, Target::Files { globs: Some(_), .. })
    }

    /// As a `deny` or `ask`: whether it catches the call (for a command, any part of it).
    pub(super) fn restricts(&self, call: CallRef<'_>) -> bool {
        match &self.target {
            Target::Bash(c) => bash_command(call).is_some_and(|cmd| c.any_part(cmd)),
            _ => self.other(call),
        }
    }

    /// As an `allow`: whether it covers the call (for a command, every part of it).
    pub(super) fn grants(&self, call: CallRef<'_>) -> bool {
        match &self.target {
            Target::Bash(c) => bash_command(call).is_some_and(|cmd| c.every_part(cmd)),
            _ => self.other(call),
        }
    }

    fn other(&self, call: CallRef<'_>) -> bool {
        match &self.target {
            Target::Bash(_) | Target::Nothing => false,
            Target::Tool(t) => t == call.name,
            Target::Web(domain) => {
                call.name == names::WEB_FETCH
                    && domain.as_deref().is_none_or(|want| {
                        web_host(call.input).is_some_and(|host| host_matches(&host, want))
                    })
            }
            Target::Mcp { server, tool } => {
                let Some(rest) = call.name.strip_prefix("mcp__") else {
                    return false;
                };
                let Some((s, t)) = rest.split_once("__") else {
                    return false;
                };
                s == server && tool.as_ref().is_none_or(|want| want == t)
            }
            Target::Files { tools, globs } => {
                if !tools.contains(&call.name) {
                    return false;
                }
                let Some(globs) = globs else { return true };
                let raw = call
                    .input
                    .get("path")
                    .and_then(Value::as_str)
                    .filter(|p| !p.trim().is_empty())
                    .unwrap_or(".");
                let resolved = paths::resolve(call.workspace, raw);
                let lexical = lexical(call.workspace, raw);
                globs
                    .iter()
                    .any(|g| g.is_match(&resolved) || g.is_match(&lexical))
            }
        }
    }
}

/// `raw` joined to the workspace, `.` and `..` folded, links not followed.
fn lexical(workspace: &Path, raw: &str) -> PathBuf {
    let joined = workspace.join(raw.trim());
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn bash_command<'a>(call: CallRef<'a>) -> Option<&'a str> {
    (call.name == names::BASH)
        .then(|| call.input.get("command").and_then(Value::as_str))
        .flatten()
}

fn command(spec: &str) -> Result<Command, String> {
    let prefix = spec
        .strip_suffix(":*")
        .or_else(|| spec.strip_suffix(" *"))
        .map(str::trim);
    if let Some(p) = prefix.filter(|p| !p.contains('*')) {
        if p.is_empty() {
            return Ok(Command::Any);
        }
        return match parse_command(p) {
            Shape::Plain(mut parts) if parts.len() == 1 => parts
                .pop()
                .map(Command::Prefix)
                .ok_or_else(|| "its prefix is empty".into()),
            _ => Err("its prefix is not plain words".into()),
        };
    }
    if spec.contains('*') {
        let words: Vec<String> = spec
            .split('*')
            .map(|piece| regex::escape(&piece.split_whitespace().collect::<Vec<_>>().join(" ")))
            .collect();
        // Spaces around a `*` stay optional word breaks: `git * main` matches `git push main`.
        let body = words.join(".*");
        return regex::Regex::new(&format!("^{body}$"))
            .map(Command::Pattern)
            .map_err(|e| e.to_string());
    }
    Ok(Command::Exact(spec.to_string()))
}

impl Command {
    /// Whether a part (its words) matches.
    fn part(&self, words: &[String]) -> bool {
        match self {
            Command::Any => true,
            Command::Prefix(p) => words.starts_with(p),
            Command::Exact(e) => {
                words.join(" ") == e.split_whitespace().collect::<Vec<_>>().join(" ")
            }
            Command::Pattern(re) => re.is_match(&words.join(" ")),
        }
    }

    /// For `deny` and `ask`: any part; a command too complex to split matches when the rule's
    /// words appear in it anywhere.
    fn any_part(&self, command: &str) -> bool {
        if let Command::Exact(e) = self
            && command.trim() == e.trim()
        {
            return true;
        }
        match parse_command(command) {
            Shape::Plain(parts) => parts.iter().any(|p| self.part(p)),
            Shape::Complex(_) => {
                let words: Vec<String> = command
                    .split(|c: char| c.is_whitespace() || ";&|()`$<>{}\"'\\".contains(c))
                    .filter(|w| !w.is_empty())
                    .map(str::to_string)
                    .collect();
                (0..words.len()).any(|i| words.get(i..).is_some_and(|rest| self.starts(rest)))
            }
        }
    }

    /// Whether the rule's words start `words` (what follows them is not read).
    fn starts(&self, words: &[String]) -> bool {
        match self {
            Command::Any => true,
            Command::Prefix(p) => words.starts_with(p),
            Command::Exact(e) => {
                let want: Vec<&str> = e.split_whitespace().collect();
                words.len() >= want.len() && words.iter().zip(&want).all(|(a, b)| a == b)
            }
            Command::Pattern(re) => (1..=words.len()).any(|j| {
                words
                    .get(..j)
                    .is_some_and(|head| re.is_match(&head.join(" ")))
            }),
        }
    }

    /// For `allow`: the exact command, or every part.
    fn every_part(&self, command: &str) -> bool {
        if let Command::Exact(e) = self {
            return command.trim() == e.trim();
        }
        match parse_command(command) {
            Shape::Plain(parts) => !parts.is_empty() && parts.iter().all(|p| self.part(p)),
            Shape::Complex(_) => matches!(self, Command::Any),
        }
    }
}

fn files(
    tools: &'static [&'static str],
    spec: Option<&str>,
    anchors: &Anchors,
) -> Result<Target, String> {
    let Some(spec) = spec else {
        return Ok(Target::Files { tools, globs: None });
    };
    let canonical = |p: &Path| paths::canonical_or_self(p);
    let (root, pattern) = if let Some(rest) = spec.strip_prefix("//") {
        (PathBuf::from("/"), rest.to_string())
    } else if let Some(rest) = spec.strip_prefix("~/") {
        let home = anchors
            .home
            .as_ref()
            .ok_or("it names `~` and there is no home folder")?;
        (canonical(home), rest.to_string())
    } else if let Some(rest) = spec.strip_prefix('/') {
        (canonical(&anchors.base), rest.to_string())
    } else {
        let rest = spec.strip_prefix("./").unwrap_or(spec);
        (canonical(&anchors.workspace), rest.to_string())
    };
    let pattern = pattern.trim_end_matches('/');
    if pattern.is_empty() {
        return Ok(Target::Files {
            tools,
            globs: Some(vec![glob(&format!("{}/**", esc(&root)))?]),
        });
    }
    // gitignore: a pattern with no slash matches that name at any depth.
    let anywhere = !pattern.contains('/') && !spec.starts_with("./") && !spec.starts_with('/');
    let base = if anywhere {
        format!("{}/**/{pattern}", esc(&root))
    } else {
        format!("{}/{pattern}", esc(&root))
    };
    // A folder's rule covers what is inside it.
    Ok(Target::Files {
        tools,
        globs: Some(vec![glob(&base)?, glob(&format!("{base}/**"))?]),
    })
}

/// A path as a literal in a glob.
fn esc(path: &Path) -> String {
    let s = path.to_string_lossy();
    let s = s.trim_end_matches('/');
    globset::escape(s)
}

fn glob(pattern: &str) -> Result<GlobMatcher, String> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| format!("its pattern cannot be read: {e}"))
}

fn mcp_target(name: &str) -> Result<Target, String> {
    let rest = name.trim_start_matches("mcp__");
    let (server, tool) = match rest.split_once("__") {
        Some((s, "*" | "")) => (s, None),
        Some((s, t)) => (s, Some(t.to_string())),
        None => (rest, None),
    };
    if server.is_empty() {
        return Err("it names no MCP server".into());
    }
    Ok(Target::Mcp {
        server: server.to_string(),
        tool,
    })
}

/// The host a `WebFetch(domain:…)` rule names, lower-cased.
fn web_domain(spec: &str) -> Result<String, String> {
    let host = spec
        .strip_prefix("domain:")
        .map(|h| h.trim().trim_end_matches('.').to_ascii_lowercase())
        .filter(|h| !h.is_empty() && !h.contains(['/', ' ', ':']))
        .ok_or("a WebFetch rule names a host: `WebFetch(domain:example.com)`")?;
    Ok(host)
}

/// `host` is the rule's `want`, or one of its subdomains when `want` is `*.name`.
fn host_matches(host: &str, want: &str) -> bool {
    match want.strip_prefix("*.") {
        Some(parent) => host == parent || host.ends_with(&format!(".{parent}")),
        None => host == want,
    }
}
