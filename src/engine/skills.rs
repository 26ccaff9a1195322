//! Skills in the Agent Skills format: a folder holding a `SKILL.md` (YAML frontmatter `name`,
//! `description`, optional `license`, `compatibility`, `metadata`, `allowed-tools`, then the
//! instructions) and any files the instructions refer to. Read from `<config_dir>/flower/skills/`,
//! `~/.claude/skills/`, `<workspace>/.flower/skills/` and `<workspace>/.claude/skills/`, in that
//! order of precedence: the user's own skills win over a workspace's of the same name (as in
//! Claude Code), `flower` folders over `.claude` ones.
//!
//! The system prompt lists names and descriptions only ([`SkillCatalog::listing`]: sorted, one
//! line each, the same bytes for the same files, so the prompt cache holds); the `skill` tool
//! returns one skill's instructions, read from disk when called, and the list of files beside
//! them. Those files may be outside the workspace: [`SkillCatalog::holds`] tells the engine that a
//! read-only tool's path lies in a loaded skill's folder, which it lets `read_file` (and the
//! other read-only tools) read without asking, as it does the run's spill folder. So a
//! workspace's skill folder that resolves outside the workspace (a symlink) is not loaded: a
//! repository must not open the machine's folders to reads by itself.
//!
//! A `SKILL.md` that cannot be read, has malformed frontmatter, an invalid name or no
//! description is a [`SkillNotice`]; the other skills still load.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::engine::commands::substitute_arguments;
use crate::engine::frontmatter::{self, FrontmatterError};
use crate::engine::text::one_line;
use crate::engine::tools::{ToolOutput, paths};
use crate::engine::types::ToolSpec;

/// The tool's name.
pub const SKILL_TOOL: &str = crate::engine::tools::names::SKILL;
/// The file that makes a folder a skill.
pub(crate) const SKILL_FILE: &str = "SKILL.md";
const MAX_NAME: usize = 64;
const MAX_DESCRIPTION: usize = 1024;
/// Files beside `SKILL.md` listed by the tool; the rest are counted.
const MAX_FILES_LISTED: usize = 100;
/// How deep the files of a skill's folder are listed.
const MAX_DEPTH: usize = 4;

/// Where a skill comes from, in order of precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SkillSource {
    /// `<config_dir>/flower/skills/`.
    User,
    /// `~/.claude/skills/`.
    UserClaude,
    /// `<workspace>/.flower/skills/`.
    Project,
    /// `<workspace>/.claude/skills/`.
    ProjectClaude,
}

/// The folders skills are read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillDirs {
    /// flower-tui's config dir (`<config_dir>/flower`).
    pub config_dir: Option<PathBuf>,
    /// The user's home (for `~/.claude/skills`).
    pub home: Option<PathBuf>,
    pub workspace: PathBuf,
}

impl SkillDirs {
    /// The skill folders in order of precedence.
    pub fn roots(&self) -> Vec<(SkillSource, PathBuf)> {
        let mut roots = Vec::new();
        if let Some(dir) = &self.config_dir {
            roots.push((SkillSource::User, dir.join("skills")));
        }
        if let Some(home) = &self.home {
            roots.push((SkillSource::UserClaude, home.join(".claude").join("skills")));
        }
        roots.push((
            SkillSource::Project,
            self.workspace.join(".flower").join("skills"),
        ));
        roots.push((
            SkillSource::ProjectClaude,
            self.workspace.join(".claude").join("skills"),
        ));
        roots
    }
}

/// One loaded skill (its instructions are read when the tool is called).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    /// One line, at most 1,024 characters.
    pub description: String,
    pub license: Option<String>,
    pub compatibility: Option<String>,
    pub allowed_tools: Vec<String>,
    pub metadata: BTreeMap<String, String>,
    /// The skill's folder (absolute).
    pub dir: PathBuf,
    pub source: SkillSource,
}

/// A `SKILL.md` that could not be used: one line for the user, naming the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {problem}; the skill is not loaded", path.display())]
pub struct SkillNotice {
    pub path: PathBuf,
    pub problem: SkillProblem,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillProblem {
    #[error("cannot be read: {0}")]
    Unreadable(String),
    #[error("is not UTF-8 text")]
    NotText,
    #[error("{0}")]
    Frontmatter(FrontmatterError),
    #[error(
        "`{0}` is not a skill name (at most 64 lowercase letters, digits and single hyphens, not at either end)"
    )]
    BadName(String),
    #[error("it has no description (the frontmatter's `description`)")]
    NoDescription,
    /// A workspace's skill folder that resolves outside the workspace (a symlink): loading it
    /// would let a repository open any folder of the machine to reads without asking.
    #[error("the folder resolves to {}, outside the workspace", .0.display())]
    OutsideWorkspace(PathBuf),
}

/// The skills in force.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillCatalog {
    skills: BTreeMap<String, Skill>,
    /// Skills not offered because one of higher precedence has their name: (theirs, the winner's).
    shadowed: Vec<(PathBuf, PathBuf)>,
    notices: Vec<SkillNotice>,
}

/// Read every skill of `dirs` (blocking: it reads the folders and each `SKILL.md`).
pub fn load(dirs: &SkillDirs) -> SkillCatalog {
    let mut catalog = SkillCatalog::default();
    let workspace = paths::canonical_or_self(&dirs.workspace);
    for (source, root) in dirs.roots() {
        let Ok(entries) = std::fs::read_dir(&root) else {
            continue;
        };
        let mut folders: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| e.path())
            .filter(|p| p.join(SKILL_FILE).is_file())
            .collect();
        folders.sort();
        for dir in folders {
            let read = read_skill(&dir, source).and_then(|skill| {
                let from_workspace =
                    matches!(source, SkillSource::Project | SkillSource::ProjectClaude);
                if from_workspace && !paths::is_within(&workspace, &skill.dir) {
                    return Err(SkillProblem::OutsideWorkspace(skill.dir));
                }
                Ok(skill)
            });
            match read {
                Ok(skill) => match catalog.skills.get(&skill.name) {
                    Some(winner) => catalog.shadowed.push((dir, winner.dir.clone())),
                    None => {
                        catalog.skills.insert(skill.name.clone(), skill);
                    }
                },
                Err(problem) => catalog.notices.push(SkillNotice {
                    path: dir.join(SKILL_FILE),
                    problem,
                }),
            }
        }
    }
    catalog
}

fn read_skill(dir: &Path, source: SkillSource) -> Result<Skill, SkillProblem> {
    let (fm, body) = read_file(&dir.join(SKILL_FILE))?;
    let folder_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = fm.text("name").map_or(folder_name, str::to_string);
    if !valid_name(&name) {
        return Err(SkillProblem::BadName(one_line(&name, 80)));
    }
    let description = fm
        .text("description")
        .map(str::to_string)
        .or_else(|| first_paragraph(&body))
        .ok_or(SkillProblem::NoDescription)?;
    let metadata = match fm.get("metadata") {
        Some(frontmatter::Value::Map(m)) => m.clone(),
        _ => BTreeMap::new(),
    };
    let dir = paths::canonical_or_self(dir);
    Ok(Skill {
        name,
        description: one_line(&description, MAX_DESCRIPTION),
        license: fm.text("license").map(str::to_string),
        compatibility: fm.text("compatibility").map(str::to_string),
        allowed_tools: frontmatter::names(fm.get("allowed-tools")),
        metadata,
        dir,
        source,
    })
}

/// A `SKILL.md`'s frontmatter and body.
fn read_file(path: &Path) -> Result<(frontmatter::Frontmatter, String), SkillProblem> {
    let bytes = std::fs::read(path).map_err(|e| SkillProblem::Unreadable(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|_| SkillProblem::NotText)?;
    let (fm, body) = frontmatter::split(&text).map_err(SkillProblem::Frontmatter)?;
    Ok((fm, body.to_string()))
}

/// Lowercase letters, digits and single hyphens, not at either end, at most 64 characters.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// The body's first paragraph of text (not a heading): the description when none is given.
fn first_paragraph(body: &str) -> Option<String> {
    let mut lines = Vec::new();
    for line in body.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            if lines.is_empty() {
                continue;
            }
            break;
        }
        lines.push(line);
    }
    (!lines.is_empty()).then(|| lines.join(" "))
}

impl SkillCatalog {
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.get(name)
    }

    /// Every skill, sorted by name.
    pub fn skills(&self) -> impl Iterator<Item = &Skill> {
        self.skills.values()
    }

    pub fn len(&self) -> usize {
        self.skills.len()
    }

    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// Skill folders not offered because one of higher precedence has their name, with the
    /// winner's folder.
    pub fn shadowed(&self) -> &[(PathBuf, PathBuf)] {
        &self.shadowed
    }

    pub fn notices(&self) -> &[SkillNotice] {
        &self.notices
    }

    /// The system prompt's section on skills; `None` when there is none.
    pub fn listing(&self) -> Option<String> {
        if self.skills.is_empty() {
            return None;
        }
        let mut out = format!(
            "# Skills\nSkills are instructions for particular tasks, kept in folders. When a task \
             matches a skill's description, call the `{SKILL_TOOL}` tool with the skill's name \
             before you start, and follow what it returns.\n"
        );
        for skill in self.skills.values() {
            out.push_str(&format!("- {}: {}\n", skill.name, skill.description));
        }
        Some(out)
    }

    /// `/skills`: one line per skill (name, description, folder), then what could not be
    /// loaded.
    pub fn report(&self) -> String {
        let mut out = if self.skills.is_empty() {
            "no skills (folders with a SKILL.md under .flower/skills, .claude/skills, \
             <config_dir>/flower/skills or ~/.claude/skills)\n"
                .to_string()
        } else {
            format!("{} skill(s):\n", self.skills.len())
        };
        for s in self.skills.values() {
            out.push_str(&format!(
                "  {} — {} ({})\n",
                s.name,
                one_line(&s.description, 120),
                s.dir.display()
            ));
        }
        for n in &self.notices {
            out.push_str(&format!("  not loaded: {n}\n"));
        }
        out
    }

    /// The `skill` tool, for the model.
    pub fn tool_spec() -> ToolSpec {
        ToolSpec {
            name: SKILL_TOOL.into(),
            description: "Load a skill listed under # Skills in the system prompt: its \
                          instructions and the files in its folder (read them with read_file \
                          at the absolute paths given). Call it before doing a task the skill \
                          describes."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The skill's name, as listed."},
                    "arguments": {"type": "string", "description": "Optional arguments for skills that take them."}
                },
                "required": ["name"],
                "additionalProperties": false
            }),
        }
    }

    /// Run the `skill` tool: the skill's instructions, read now, and the files beside them
    /// (blocking: it reads the skill's folder).
    pub fn run(&self, input: &Value) -> ToolOutput {
        let Some(name) = input.get("name").and_then(Value::as_str) else {
            return ToolOutput::error(format!(
                "`{SKILL_TOOL}` needs `name`, the name of a listed skill."
            ));
        };
        let Some(skill) = self.skills.get(name.trim()) else {
            let known: Vec<&str> = self.skills.keys().map(String::as_str).collect();
            return ToolOutput::error(format!(
                "There is no skill `{}`. The skills are: {}.",
                one_line(name, 80),
                if known.is_empty() {
                    "(none)".to_string()
                } else {
                    known.join(", ")
                }
            ));
        };
        let path = skill.dir.join(SKILL_FILE);
        let body = match read_file(&path) {
            Ok((_, body)) => body,
            Err(problem) => {
                return ToolOutput::error(format!(
                    "The skill `{}` cannot be loaded: {}",
                    skill.name,
                    SkillNotice { path, problem }
                ));
            }
        };
        let dir = skill.dir.to_string_lossy();
        let mut body = body
            .replace("${CLAUDE_SKILL_DIR}", &dir)
            .replace("${FLOWER_SKILL_DIR}", &dir);
        if let Some(args) = input.get("arguments").and_then(Value::as_str)
            && !args.trim().is_empty()
        {
            body = substitute_arguments(&body, args);
        }
        let mut out = format!(
            "Skill `{}` (folder {dir}):\n\n{}\n",
            skill.name,
            body.trim()
        );
        let (files, more) = files_beside(&skill.dir);
        if !files.is_empty() {
            out.push_str(&format!(
                "\nFiles in the skill's folder (read them with read_file at {dir}/<file>):\n"
            ));
            for f in &files {
                out.push_str(&format!("- {f}\n"));
            }
            if more > 0 {
                out.push_str(&format!("- … and {more} more\n"));
            }
        }
        ToolOutput::ok(out)
    }

    /// Whether `path` (absolute) lies in the folder of a loaded skill.
    pub fn holds(&self, path: &Path) -> bool {
        let path = paths::canonical_or_self(path);
        self.skills
            .values()
            .any(|s| paths::is_within(&s.dir, &path))
    }
}

/// The files of a skill's folder other than its `SKILL.md`, relative and sorted (hidden ones
/// skipped), at most [`MAX_FILES_LISTED`], and how many more there are.
fn files_beside(dir: &Path) -> (Vec<String>, usize) {
    let mut all = Vec::new();
    walk(dir, "", 0, &mut all);
    all.retain(|f| f != SKILL_FILE);
    all.sort();
    let more = all.len().saturating_sub(MAX_FILES_LISTED);
    all.truncate(MAX_FILES_LISTED);
    (all, more)
}

fn walk(dir: &Path, prefix: &str, depth: usize, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        // Enough to know there are more than are listed.
        if out.len() > 10 * MAX_FILES_LISTED {
            return;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let shown = format!("{prefix}{name}");
        match entry.file_type() {
            Ok(t) if t.is_dir() => {
                if depth + 1 < MAX_DEPTH {
                    walk(&entry.path(), &format!("{shown}/"), depth + 1, out);
                }
            }
            Ok(_) => out.push(shown),
            Err(_) => {}
        }
    }
}

#[cfg(test)]
#[path = "skills_tests.rs"]
mod tests;
