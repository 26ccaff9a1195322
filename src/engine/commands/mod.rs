//! Custom slash commands: Markdown files whose body becomes the user's message, from
//! `<config_dir>/flower/commands/`, `~/.claude/commands/` (the user's Claude Code commands),
//! `<workspace>/.flower/commands/` and `<workspace>/.claude/commands/`. `review.md` is `/review`; a file in a subfolder,
//! `frontend/component.md`, is `/frontend:component`.
//!
//! The frontmatter gives `description` (else the body's first line), `argument-hint`, `model`
//! and `allowed-tools`; the body is expanded per call by [`expand`]. When two sources name the
//! same command the workspace's win over the user's own folders (a project's command is the one
//! its people share), and `.flower/` over `.claude/` in each; a built-in command is never
//! replaced. What loses is listed in [`Catalog::shadowed`] (the start says so, naming both files). A file that cannot be read
//! or whose frontmatter is malformed is a [`LoadNotice`]; the other commands still load.

pub(crate) mod allowed;
pub(crate) mod expand;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub(crate) use expand::{Expansion, substitute_arguments};

use crate::engine::frontmatter::{self, FrontmatterError};
use crate::engine::text::one_line;

/// How deep subfolders are read (`a:b:c` at most).
const MAX_DEPTH: usize = 3;
/// At most this many command files are read from one folder tree.
const MAX_FILES: usize = 1_000;
/// A command file larger than this is not loaded (a prompt template is a few kilobytes).
pub const MAX_BYTES: u64 = 1024 * 1024;

/// Where a command comes from, in order of precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CommandSource {
    /// `<workspace>/.flower/commands/`.
    Flower,
    /// `<workspace>/.claude/commands/`.
    Claude,
    /// `<config_dir>/flower/commands/`.
    User,
    /// `~/.claude/commands/`.
    UserClaude,
}

impl CommandSource {
    /// The user's own folders (trusted as theirs).
    pub fn is_users(self) -> bool {
        matches!(self, CommandSource::User | CommandSource::UserClaude)
    }

    /// How `/help` labels it.
    pub fn label(self) -> &'static str {
        match self {
            CommandSource::User | CommandSource::UserClaude => "user",
            CommandSource::Flower | CommandSource::Claude => "project",
        }
    }
}

/// The folders commands are read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandDirs {
    /// flower-tui's config dir (`<config_dir>/flower`); `None` when there is none.
    pub config_dir: Option<PathBuf>,
    /// The user's home (for `~/.claude/commands/`); `None` when there is none.
    pub home: Option<PathBuf>,
    pub workspace: PathBuf,
}

impl CommandDirs {
    /// The command folders in order of precedence.
    pub fn roots(&self) -> Vec<(CommandSource, PathBuf)> {
        let mut roots = vec![
            (
                CommandSource::Flower,
                self.workspace.join(".flower").join("commands"),
            ),
            (
                CommandSource::Claude,
                self.workspace.join(".claude").join("commands"),
            ),
        ];
        if let Some(dir) = &self.config_dir {
            roots.push((CommandSource::User, dir.join("commands")));
        }
        if let Some(home) = &self.home {
            roots.push((
                CommandSource::UserClaude,
                home.join(".claude").join("commands"),
            ));
        }
        roots
    }
}

/// One custom command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    /// Without the slash: `review`, `frontend:component`.
    pub name: String,
    /// One line for `/help` and the `/` completion.
    pub description: String,
    /// What to type after the name (`<issue> [priority]`).
    pub argument_hint: Option<String>,
    /// The model to use for this command's turn.
    pub model: Option<String>,
    /// Tools the command expects (`Bash(git add:*)`, `Read`), as written.
    pub allowed_tools: Vec<String>,
    /// The body after the frontmatter.
    pub body: String,
    pub path: PathBuf,
    pub source: CommandSource,
}

impl CustomCommand {
    /// The body for one call with `args` (what the user typed after the name).
    pub fn expand(&self, args: &str) -> Expansion {
        Expansion::new(&self.body, args)
    }
}

/// A command that is not offered because another one has its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shadowed {
    pub name: String,
    pub path: PathBuf,
    pub by: ShadowedBy,
}

/// What took a shadowed command's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShadowedBy {
    /// A built-in command.
    Builtin,
    /// The command in this file, from a source of higher precedence.
    Command(PathBuf),
}

/// A command file that could not be used: one line for the user, naming the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct LoadNotice {
    pub path: PathBuf,
    pub problem: LoadProblem,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadProblem {
    #[error("cannot be read: {0}")]
    Unreadable(String),
    #[error("is not UTF-8 text")]
    NotText,
    #[error(
        "is {0} bytes, more than a command may be ({MAX_BYTES} bytes); the command is not loaded"
    )]
    TooLarge(u64),
    #[error("{0}; the command is not loaded")]
    Frontmatter(FrontmatterError),
    #[error("`{0}` cannot be a command name (no spaces, `:` or leading `.`)")]
    BadName(String),
    #[error(
        "its allowed-tools ({0}) are not granted: {1}, so its calls are asked for like any other"
    )]
    GrantsHeld(String, GrantsHeldBecause),
}

/// Why a workspace's command files grant nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum GrantsHeldBecause {
    #[error(
        "they were never approved in this workspace (run flower-tui here once to approve them, \
         or trust workspace files)"
    )]
    NeverApproved,
    #[error("you declined them for this workspace (asked again when they change)")]
    Declined,
    #[error("the workspace-file policy is \"ignore\"")]
    Policy,
}

/// The custom commands in force.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Catalog {
    commands: BTreeMap<String, CustomCommand>,
    shadowed: Vec<Shadowed>,
    notices: Vec<LoadNotice>,
    /// Workspace commands' `allowed-tools` waiting for the user's approval, by command name.
    held: BTreeMap<String, Vec<String>>,
}

impl Catalog {
    /// The command called `name` (with or without its slash).
    pub fn get(&self, name: &str) -> Option<&CustomCommand> {
        self.commands.get(name.strip_prefix('/').unwrap_or(name))
    }

    /// Every command, sorted by name.
    pub fn commands(&self) -> impl Iterator<Item = &CustomCommand> {
        self.commands.values()
    }

    pub fn len(&self) -> usize {
        self.commands.len()
    }

    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// Commands not offered because another has their name.
    pub fn shadowed(&self) -> &[Shadowed] {
        &self.shadowed
    }

    /// Files that could not be loaded.
    pub fn notices(&self) -> &[LoadNotice] {
        &self.notices
    }

    /// The workspace's commands that name `allowed-tools` (the user's own are theirs), one
    /// line each, `/name: Tool, Tool`, sorted: what the workspace approval covers.
    pub fn workspace_grants(&self) -> Vec<String> {
        self.commands
            .values()
            .filter(|c| !c.source.is_users() && !c.allowed_tools.is_empty())
            .map(|c| format!("/{}: {}", c.name, c.allowed_tools.join(", ")))
            .collect()
    }

    /// Take back the `allowed-tools` of the workspace's commands until the user approves them
    /// ([`Catalog::release_held`]); each held file gets a notice when `say` is given.
    pub fn hold_workspace_grants(&mut self, say: Option<GrantsHeldBecause>) {
        for c in self.commands.values_mut() {
            if c.source.is_users() || c.allowed_tools.is_empty() {
                continue;
            }
            let held = std::mem::take(&mut c.allowed_tools);
            if let Some(why) = say {
                self.notices.push(LoadNotice {
                    path: c.path.clone(),
                    problem: LoadProblem::GrantsHeld(held.join(", "), why),
                });
            }
            self.held.insert(c.name.clone(), held);
        }
    }

    /// The held `allowed-tools` are granted again (the user approved them).
    pub fn release_held(&mut self) {
        for (name, tools) in std::mem::take(&mut self.held) {
            if let Some(c) = self.commands.get_mut(&name) {
                c.allowed_tools = tools;
            }
        }
    }
}

/// Read every command of `dirs` (blocking: it reads the folders and files). `builtins` are the names of the built-in commands (with or
/// without their slash), which a custom command never replaces.
pub fn load(dirs: &CommandDirs, builtins: &[&str]) -> Catalog {
    let builtin = |name: &str| {
        builtins
            .iter()
            .any(|b| b.strip_prefix('/').unwrap_or(b).eq_ignore_ascii_case(name))
    };
    let mut catalog = Catalog::default();
    for (source, root) in dirs.roots() {
        let mut files = Vec::new();
        collect(&root, &mut Vec::new(), &mut files);
        for (parts, path) in files {
            let name = parts.join(":");
            if parts.iter().any(|p| !valid_part(p)) {
                catalog.notices.push(LoadNotice {
                    path,
                    problem: LoadProblem::BadName(one_line(&name, 80)),
                });
                continue;
            }
            if builtin(&name) {
                catalog.shadowed.push(Shadowed {
                    name,
                    path,
                    by: ShadowedBy::Builtin,
                });
                continue;
            }
            if let Some(winner) = catalog.commands.get(&name) {
                catalog.shadowed.push(Shadowed {
                    name,
                    path,
                    by: ShadowedBy::Command(winner.path.clone()),
                });
                continue;
            }
            match read_command(&path, name.clone(), source) {
                Ok(command) => {
                    catalog.commands.insert(name, command);
                }
                Err(problem) => catalog.notices.push(LoadNotice { path, problem }),
            }
        }
    }
    catalog
}

/// The `.md` files under `dir` with the folder names leading to them, sorted (hidden entries and
/// folders deeper than [`MAX_DEPTH`] are skipped).
fn collect(dir: &Path, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if out.len() >= MAX_FILES {
            return;
        }
        let file_name = entry.file_name().to_string_lossy().into_owned();
        if file_name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        // Follows symbolic links; the depth limit ends a loop.
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            if prefix.len() + 1 < MAX_DEPTH {
                prefix.push(file_name);
                collect(&path, prefix, out);
                prefix.pop();
            }
        } else if let Some(stem) = file_name.strip_suffix(".md") {
            let mut parts = prefix.clone();
            parts.push(stem.to_string());
            out.push((parts, path));
        }
    }
}

fn valid_part(part: &str) -> bool {
    !part.is_empty()
        && !part.starts_with('.')
        && !part.contains([':', '/'])
        && !part.contains(char::is_whitespace)
}

fn read_command(
    path: &Path,
    name: String,
    source: CommandSource,
) -> Result<CustomCommand, LoadProblem> {
    let size = std::fs::metadata(path)
        .map_err(|e| LoadProblem::Unreadable(e.to_string()))?
        .len();
    if size > MAX_BYTES {
        return Err(LoadProblem::TooLarge(size));
    }
    let bytes = std::fs::read(path).map_err(|e| LoadProblem::Unreadable(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|_| LoadProblem::NotText)?;
    let (fm, body) = frontmatter::split(&text).map_err(LoadProblem::Frontmatter)?;
    let description = match fm.text("description") {
        Some(d) => one_line(d, 200),
        None => first_line(body),
    };
    Ok(CustomCommand {
        name,
        description,
        argument_hint: fm.text("argument-hint").map(str::to_string),
        model: fm.text("model").map(str::to_string),
        allowed_tools: frontmatter::names(fm.get("allowed-tools")),
        body: body.to_string(),
        path: path.to_path_buf(),
        source,
    })
}

/// A body's first line with text, without a heading's `#`s: the description when none is given.
fn first_line(body: &str) -> String {
    body.lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty())
        .map(|l| one_line(l, 100))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
