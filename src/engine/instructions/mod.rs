//! Project instructions: the user's `<config_dir>/flower/AGENTS.md` and `~/.claude/CLAUDE.md`,
//! then `AGENTS.md` (or `CLAUDE.md` where a directory has no `AGENTS.md`) in every directory from
//! the git root down to the workspace, in that order, each labelled with its path, and after each
//! file the files it imports with `@path` ([`imports`]). Read from disk at the start of every
//! session, so a handoff's successor gets them fresh; capped in size, with a line that says what
//! was cut; keys in them are masked.

mod imports;

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// The file names looked for in each directory, in order of preference.
pub(crate) const FILE_NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];
/// The default cap on all instruction files together.
pub(crate) const DEFAULT_MAX_BYTES: usize = 32 * 1024;

/// Where the instructions come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionSources {
    /// `<config_dir>/flower` (the user's own `AGENTS.md` is there); None: no user file.
    pub user_dir: Option<PathBuf>,
    /// The user's home (`~/.claude/CLAUDE.md`, `@~/…` imports); None: none.
    pub home: Option<PathBuf>,
    /// The cap on all files together, in bytes.
    pub max_bytes: usize,
}

impl Default for InstructionSources {
    fn default() -> Self {
        InstructionSources {
            user_dir: None,
            home: None,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// One instruction file as the session got it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InstructionFile {
    pub path: PathBuf,
    /// Its size on disk.
    pub bytes: usize,
    /// How many of its bytes the system prompt holds (less than `bytes` when the cap cut it).
    pub included: usize,
    /// Why it could not be read, if it could not.
    pub error: Option<String>,
}

/// The instructions of one session: the files and the prompt block built from them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Instructions {
    pub files: Vec<InstructionFile>,
    /// `# Project instructions` with every file under its path; empty when there are none.
    pub block: String,
}

/// The git root above `dir` (the nearest ancestor holding `.git`, a directory or a worktree's
/// file); None outside a repository.
pub(crate) fn git_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The instruction files for `workspace`, in the order the model reads them.
pub(crate) fn discover(sources: &InstructionSources, workspace: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(dir) = &sources.user_dir {
        let user = dir.join("AGENTS.md");
        if user.is_file() {
            out.push(user);
        }
    }
    if let Some(home) = &sources.home {
        let user = home.join(".claude").join("CLAUDE.md");
        if user.is_file() {
            out.push(user);
        }
    }
    let top = git_root(workspace).unwrap_or_else(|| workspace.to_path_buf());
    // From the top down to the workspace.
    let mut dirs: Vec<&Path> = workspace
        .ancestors()
        .take_while(|d| d.starts_with(&top))
        .collect();
    dirs.reverse();
    for dir in dirs {
        if let Some(file) = FILE_NAMES
            .iter()
            .map(|name| dir.join(name))
            .find(|p| p.is_file())
        {
            out.push(file);
        }
    }
    out
}

/// Read the instruction files within the cap and build the prompt block.
pub(crate) fn load(sources: &InstructionSources, workspace: &Path) -> Instructions {
    let paths = discover(sources, workspace);
    if paths.is_empty() {
        return Instructions::default();
    }
    let cap = sources.max_bytes;
    let mut left = cap;
    let mut files = Vec::new();
    let mut block = String::from(
        "# Project instructions\n\nThe user and the project wrote these files for you; follow them. \
         They are listed from the most general to the most specific: where they disagree, the \
         later file wins, and the user's own messages win over all of them.\n",
    );
    let top = git_root(workspace).unwrap_or_else(|| workspace.to_path_buf());
    let mut seen: HashSet<PathBuf> = paths.iter().map(|p| imports::identity(p)).collect();
    let users = user_files(sources);
    let mut out = Loading {
        workspace,
        cap,
        left: &mut left,
        files: &mut files,
        block: &mut block,
    };
    for path in paths {
        let trusted = users.contains(&path);
        let text = out.add(&path, None);
        let scope = imports::Scope {
            home: sources.home.as_deref(),
            top: &top,
            trusted,
        };
        if let Some(text) = text {
            out.add_imports(&text, &path, &scope, 1, &mut seen);
        }
    }
    Instructions { files, block }
}

/// The user's own instruction files (their imports may reach anywhere but secrets).
fn user_files(sources: &InstructionSources) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(dir) = &sources.user_dir {
        out.push(dir.join("AGENTS.md"));
    }
    if let Some(home) = &sources.home {
        out.push(home.join(".claude").join("CLAUDE.md"));
    }
    out
}

/// The block being built and what is left of the cap.
struct Loading<'a> {
    workspace: &'a Path,
    cap: usize,
    left: &'a mut usize,
    files: &'a mut Vec<InstructionFile>,
    block: &'a mut String,
}

impl Loading<'_> {
    /// One file under its label (`by`: the file that imported it); its text when it was read.
    fn add(&mut self, path: &Path, by: Option<&Path>) -> Option<String> {
        let shown = label(path, self.workspace);
        match by {
            Some(by) => self.block.push_str(&format!(
                "\n## {shown} (imported by {})\n\n",
                label(by, self.workspace)
            )),
            None => self.block.push_str(&format!("\n## {shown}\n\n")),
        }
        let text = match fs::read(path) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => {
                self.block.push_str(&format!("[could not be read: {e}]\n"));
                self.files.push(InstructionFile {
                    path: path.to_path_buf(),
                    bytes: 0,
                    included: 0,
                    error: Some(e.to_string()),
                });
                return None;
            }
        };
        let text = crate::engine::secrets::redact(&text).into_owned();
        let kept = cut_at_line(&text, *self.left);
        if !kept.trim().is_empty() {
            self.block.push_str(kept.trim_end());
            self.block.push_str("\n\n");
        }
        if kept.len() < text.len() {
            self.block.push_str(&format!(
                "[cut here: {} of this file's {} bytes are not included (the instructions are \
                 capped at {} bytes); read {} for the rest]\n",
                text.len() - kept.len(),
                text.len(),
                self.cap,
                path.display()
            ));
        }
        *self.left -= kept.len();
        self.files.push(InstructionFile {
            bytes: text.len(),
            included: kept.len(),
            path: path.to_path_buf(),
            error: None,
        });
        Some(text)
    }

    /// The files `text` (of `path`) imports, each after the last, depth first, each file once.
    fn add_imports(
        &mut self,
        text: &str,
        path: &Path,
        scope: &imports::Scope<'_>,
        depth: usize,
        seen: &mut HashSet<PathBuf>,
    ) {
        for found in imports::find(text, path, scope.home) {
            let target = match found {
                imports::Import::File(target) => target,
                imports::Import::Missing => continue,
            };
            if !seen.insert(imports::identity(&target)) {
                continue;
            }
            if let Some(why) = scope.refusal(&target) {
                self.block.push_str(&format!(
                    "[{} does not import {}: {why}]\n",
                    label(path, self.workspace),
                    target.display()
                ));
                continue;
            }
            if depth > imports::MAX_DEPTH {
                self.block.push_str(&format!(
                    "[{} is not imported: imports go at most {} deep]\n",
                    target.display(),
                    imports::MAX_DEPTH
                ));
                continue;
            }
            if let Some(text) = self.add(&target, Some(path)) {
                self.add_imports(&text, &target, scope, depth + 1, seen);
            }
        }
    }
}

/// The path as the model sees it: relative to the workspace when inside it.
fn label(path: &Path, workspace: &Path) -> String {
    match path.strip_prefix(workspace) {
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

/// The longest start of `text` within `max` bytes that ends at a line end (or the whole text).
fn cut_at_line(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let head = text.as_bytes().get(..max).unwrap_or_default();
    match head.iter().rposition(|&b| b == b'\n') {
        Some(i) => text.get(..=i).unwrap_or_default(),
        None => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Tree {
        _tmp: tempfile::TempDir,
        root: PathBuf,
    }

    fn tree() -> Tree {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        Tree { _tmp: tmp, root }
    }

    fn put(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    #[test]
    fn root_to_workspace_with_claude_md_where_agents_md_is_missing() {
        let t = tree();
        let repo = t.root.join("repo");
        let ws = repo.join("crates/app");
        fs::create_dir_all(repo.join(".git")).unwrap();
        fs::create_dir_all(&ws).unwrap();
        let user = t.root.join("config/flower");
        put(&user.join("AGENTS.md"), "user rules\n");
        put(&repo.join("AGENTS.md"), "root agents\n");
        put(
            &repo.join("CLAUDE.md"),
            "root claude: ignored, AGENTS.md is here\n",
        );
        put(&repo.join("crates/CLAUDE.md"), "crates claude\n");
        put(&ws.join("AGENTS.md"), "app agents\n");
        // Above the git root: not read.
        put(&t.root.join("AGENTS.md"), "outside the repository\n");
        let sources = InstructionSources {
            user_dir: Some(user.clone()),
            ..Default::default()
        };
        assert_eq!(
            discover(&sources, &ws),
            [
                user.join("AGENTS.md"),
                repo.join("AGENTS.md"),
                repo.join("crates/CLAUDE.md"),
                ws.join("AGENTS.md")
            ]
        );
        let got = load(&sources, &ws);
        let order: Vec<usize> = ["user rules", "root agents", "crates claude", "app agents"]
            .iter()
            .map(|m| got.block.find(m).unwrap())
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{}", got.block);
        assert!(!got.block.contains("ignored") && !got.block.contains("outside"));
        // Each labelled with its path (relative inside the workspace).
        assert!(
            got.block
                .contains(&format!("## {}\n", repo.join("AGENTS.md").display()))
        );
        assert!(got.block.contains("\n## AGENTS.md\n"), "{}", got.block);
        assert_eq!(got.files.len(), 4);
    }

    #[test]
    fn no_repository_means_the_workspace_only_and_nothing_means_no_block() {
        let t = tree();
        let ws = t.root.join("ws");
        fs::create_dir_all(&ws).unwrap();
        put(&t.root.join("AGENTS.md"), "parent\n");
        assert!(load(&InstructionSources::default(), &ws).block.is_empty());
        put(&ws.join("CLAUDE.md"), "only claude\n");
        let got = load(&InstructionSources::default(), &ws);
        assert!(got.block.contains("only claude") && !got.block.contains("parent"));
    }

    #[test]
    fn the_cap_cuts_at_a_line_and_says_what_it_cut() {
        let t = tree();
        let ws = t.root.join("ws");
        fs::create_dir_all(ws.join(".git")).unwrap();
        let big: String = (0..100).map(|i| format!("rule number {i:03}\n")).collect();
        put(&ws.join("AGENTS.md"), &big);
        let sources = InstructionSources {
            max_bytes: 1000,
            ..Default::default()
        };
        let got = load(&sources, &ws);
        let f = &got.files[0];
        assert_eq!(f.bytes, 1600);
        assert_eq!(f.included, 992, "62 whole lines of 16 bytes");
        assert!(got.block.contains("rule number 061\n"));
        assert!(!got.block.contains("rule number 062"));
        assert!(
            got.block.contains(&format!(
                "[cut here: 608 of this file's 1600 bytes are not included (the instructions are capped at 1000 bytes); read {} for the rest]",
                ws.join("AGENTS.md").display()
            )),
            "{}",
            got.block
        );
        // A later file past the cap is named, with nothing of it included.
        let sub = ws.join("sub");
        put(&sub.join("AGENTS.md"), "late rules here\n");
        let got = load(&sources, &sub);
        assert_eq!(got.files[1].included, 0);
        assert!(got.block.contains("\n## AGENTS.md\n"), "{}", got.block);
        assert!(!got.block.contains("late rules"), "{}", got.block);
        assert!(
            got.block.contains("[cut here: 16 of this file's 16 bytes"),
            "{}",
            got.block
        );
    }

    #[test]
    fn unreadable_and_non_utf8_files_are_said() {
        let t = tree();
        let ws = t.root.join("ws");
        fs::create_dir_all(&ws).unwrap();
        fs::write(ws.join("AGENTS.md"), b"caf\xe9 rules\n").unwrap();
        let got = load(&InstructionSources::default(), &ws);
        assert!(got.block.contains("caf\u{fffd} rules"), "{}", got.block);
        // A directory named AGENTS.md is not a file: skipped.
        let ws2 = t.root.join("ws2");
        fs::create_dir_all(ws2.join("AGENTS.md")).unwrap();
        assert!(load(&InstructionSources::default(), &ws2).files.is_empty());
    }

    #[test]
    fn claude_md_in_the_home_and_its_imports_each_once_and_never_a_secret() {
        let t = tree();
        let home = t.root.join("home");
        let ws = t.root.join("repo");
        fs::create_dir_all(ws.join(".git")).unwrap();
        put(
            &home.join(".claude/CLAUDE.md"),
            "home rules, see @~/notes/style.md.\nkey @~/.ssh/id_ed25519 and @/etc/shadow\n",
        );
        put(
            &home.join("notes/style.md"),
            "STYLE from home @../notes/style.md\n",
        );
        put(&home.join(".ssh/id_ed25519"), "PRIVATE KEY MATERIAL\n");
        put(
            &ws.join("CLAUDE.md"),
            "project @docs/a.md and `@docs/not-code.md` and mail me@example.com\n\
             ```\n@docs/fenced.md\n```\n@CLAUDE.md @~/outside.md @~/.claude/shared.md @.env\n",
        );
        put(&ws.join("docs/a.md"), "A imports @b.md\n");
        put(&ws.join("docs/b.md"), "B imports @a.md back\n");
        put(&ws.join("docs/not-code.md"), "CODE SPAN\n");
        put(&ws.join("docs/fenced.md"), "FENCED\n");
        put(&ws.join(".env"), "API=x\n");
        put(&home.join("outside.md"), "OUTSIDE THE REPO\n");
        put(&home.join(".claude/shared.md"), "SHARED from ~/.claude\n");
        let sources = InstructionSources {
            home: Some(home.clone()),
            ..Default::default()
        };
        let got = load(&sources, &ws);
        let b = &got.block;
        for want in [
            "home rules",
            "STYLE from home",
            "A imports",
            "B imports",
            "SHARED from ~/.claude",
            "(imported by docs/a.md)",
        ] {
            assert!(b.contains(want), "{want}: {b}");
        }
        for never in [
            "PRIVATE KEY",
            "CODE SPAN",
            "FENCED",
            "OUTSIDE THE REPO",
            "API=x",
        ] {
            assert!(!b.contains(never), "{never}: {b}");
        }
        assert!(b.contains("holds secrets"), "{b}");
        assert!(b.contains("imports only from the repository"), "{b}");
        // Each file once: the cycle a → b → a and CLAUDE.md importing itself end.
        assert_eq!(b.matches("B imports").count(), 1, "{b}");
        assert_eq!(b.matches("project @docs").count(), 1, "{b}");
        assert_eq!(b.matches("STYLE from home").count(), 1, "{b}");
    }

    #[test]
    fn imports_go_at_most_five_deep() {
        let t = tree();
        let ws = t.root.join("ws");
        fs::create_dir_all(&ws).unwrap();
        put(&ws.join("AGENTS.md"), "root @1.md\n");
        for i in 1..=7 {
            put(
                &ws.join(format!("{i}.md")),
                &format!("LEVEL{i} @{}.md\n", i + 1),
            );
        }
        let got = load(&InstructionSources::default(), &ws);
        assert!(got.block.contains("LEVEL5"), "{}", got.block);
        assert!(!got.block.contains("LEVEL6"), "{}", got.block);
        assert!(
            got.block.contains("imports go at most 5 deep"),
            "{}",
            got.block
        );
    }
}
