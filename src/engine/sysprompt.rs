//! The system prompt of a session: the base prompt (`assets/system_prompt.md`, guidance on tools,
//! verification and git safety), an environment block (date, OS, shell, workspace, git branch and
//! a short status), and the project instructions. Built once when a session starts and never
//! changed during it, so the provider's prompt cache holds; a successor builds its own, so it
//! reads the instructions (and the git state) fresh. A start whose first session begins at once
//! (headless) looks at the environment beside its other start-up work ([`Environment::look_early`]);
//! that first session takes what was seen.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::thread::JoinHandle;

use super::fsutil::{civil, now_unix};
use super::instructions::{self, InstructionFile, InstructionSources};

mod git_query;
mod repo_files;

use git_query::git;
pub(crate) use git_query::stop_looking;

/// The environment being looked at by [`Environment::look_early`], for the first session in that
/// workspace.
static EARLY: Mutex<Option<(PathBuf, JoinHandle<Environment>)>> = Mutex::new(None);

/// A status line of flower-tui's own workbench being made beside the look: the folder, or its
/// `.gitignore` before its bytes are in (once written, everything in it is ignored).
fn workbench_appearing(line: &str) -> bool {
    matches!(line, "?? .flower/" | "?? .flower/.gitignore")
}

/// Lines of `git status --short` shown; the rest are counted.
const STATUS_LINES: usize = 20;

/// What the environment block says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    /// `2026-11-29` (UTC).
    pub date: String,
    /// `linux x86_64`, with the distribution when known.
    pub os: String,
    /// The user's login shell (`$SHELL`), when set.
    pub user_shell: Option<String>,
    pub workspace: String,
    pub git: Option<GitState>,
}

/// The repository at the start of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GitState {
    /// The branch, `detached at <sha>`, or None when git could not say.
    pub branch: Option<String>,
    /// `git status --short` lines (None: git could not be run).
    pub status: Option<Vec<String>>,
}

impl Environment {
    /// Look at the machine and the workspace now.
    pub fn detect(workspace: &Path) -> Environment {
        let (y, mo, d, ..) = civil(now_unix().0);
        Environment {
            date: format!("{y:04}-{mo:02}-{d:02}"),
            os: os_description(),
            user_shell: std::env::var("SHELL").ok().filter(|s| !s.is_empty()),
            workspace: workspace.display().to_string(),
            git: instructions::git_root(workspace).map(|root| {
                // The branch is read beside the status: it runs no filter, and only the status
                // (which may re-read a file) needs the filters switched off.
                std::thread::scope(|scope| {
                    let branch = scope.spawn(|| branch(workspace, &root));
                    let off = filters_off(workspace);
                    let status = git(
                        workspace,
                        &off,
                        &[
                            "status",
                            "--short",
                            "--untracked-files=normal",
                            "--ignore-submodules=all",
                        ],
                    );
                    GitState {
                        branch: branch.join().ok().flatten(),
                        status: status.map(|s| {
                            s.lines()
                                .filter(|l| !workbench_appearing(l))
                                .map(str::to_string)
                                .collect()
                        }),
                    }
                })
            }),
        }
    }

    /// Start looking at the machine and `workspace` now, on a thread of its own, for a session
    /// about to start there: the first [`build`] for that workspace takes what it saw. Only for a
    /// start whose first session begins at once, so the snapshot is of the session's start.
    pub fn look_early(workspace: &Path) {
        let dir = workspace.to_path_buf();
        let Ok(thread) = std::thread::Builder::new()
            .name("environment".into())
            .spawn(move || Environment::detect(&dir))
        else {
            return;
        };
        if let Ok(mut early) = EARLY.lock() {
            *early = Some((workspace.to_path_buf(), thread));
        }
    }

    /// What [`Environment::look_early`] saw of `workspace` (waited for), once; else a look now.
    fn for_session(workspace: &Path) -> Environment {
        let early = EARLY.lock().ok().and_then(|mut early| match early.take() {
            Some((dir, thread)) if dir == workspace => Some(thread),
            other => {
                *early = other;
                None
            }
        });
        early
            .and_then(|thread| thread.join().ok())
            .unwrap_or_else(|| Environment::detect(workspace))
    }

    /// The `# Environment` block.
    pub fn block(&self) -> String {
        let mut out = String::from("# Environment\n\n");
        out.push_str(&format!("- Date: {} (UTC)\n", self.date));
        out.push_str(&format!("- OS: {}\n", self.os));
        match &self.user_shell {
            Some(sh) => out.push_str(&format!(
                "- Shell: the bash tool runs `bash -c` in the workspace (the user's shell is {sh})\n"
            )),
            None => out.push_str("- Shell: the bash tool runs `bash -c` in the workspace\n"),
        }
        out.push_str(&format!("- Workspace: {}\n", self.workspace));
        match &self.git {
            None => out.push_str("- Git: the workspace is not in a git repository\n"),
            Some(g) => {
                let branch = match g.branch.as_deref() {
                    Some(b) if b.starts_with("detached") => b.to_string(),
                    Some(b) => format!("branch {b}"),
                    None => "unknown branch".to_string(),
                };
                match &g.status {
                    None => out.push_str(&format!(
                        "- Git: a repository, {branch}; its status could not be read\n"
                    )),
                    Some(lines) if lines.is_empty() => out.push_str(&format!(
                        "- Git: a repository, {branch}, clean working tree\n"
                    )),
                    Some(lines) => {
                        out.push_str(&format!(
                            "- Git: a repository, {branch}, {} changed or untracked \
                             file(s) when this session started (a snapshot; it is not kept up to \
                             date):\n",
                            lines.len()
                        ));
                        for l in lines.iter().take(STATUS_LINES) {
                            out.push_str(&format!("    {l}\n"));
                        }
                        if lines.len() > STATUS_LINES {
                            out.push_str(&format!(
                                "    … and {} more (run `git status`)\n",
                                lines.len() - STATUS_LINES
                            ));
                        }
                    }
                }
            }
        }
        out
    }
}

/// A session's prompt and what went into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionPrompt {
    /// The whole system prompt, sent unchanged with every request of the session.
    pub text: String,
    /// The environment block alone (for front ends).
    pub environment: String,
    pub instructions: Vec<InstructionFile>,
}

/// Build the prompt of a session starting now: `base`, the environment, the instructions.
pub fn build(base: &str, workspace: &Path, sources: &InstructionSources) -> SessionPrompt {
    compose(
        base,
        &Environment::for_session(workspace),
        instructions::load(sources, workspace),
    )
}

/// The prompt from its parts (pure: the tests pass the environment in).
pub(crate) fn compose(
    base: &str,
    env: &Environment,
    instructions: instructions::Instructions,
) -> SessionPrompt {
    let environment = env.block();
    let mut text = base.trim_end().to_string();
    text.push_str("\n\n");
    text.push_str(&environment);
    if !instructions.block.is_empty() {
        text.push('\n');
        text.push_str(instructions.block.trim_end());
        text.push('\n');
    }
    SessionPrompt {
        text,
        environment,
        instructions: instructions.files,
    }
}

/// What a session's prompt holds after its base: the environment block and the project
/// instructions (a subagent's prompt puts them after its own base). Empty when `prompt` was not
/// built on `base`.
pub(crate) fn session_context<'a>(prompt: &'a str, base: &str) -> &'a str {
    prompt
        .strip_prefix(base.trim_end())
        .map_or("", |rest| rest.trim_start_matches('\n'))
}

/// The branch of `dir`'s repository (whose root is `root`), or `detached at <sha>`; None when
/// git cannot say. A `.git` folder whose `HEAD` names a branch is read without git.
fn branch(dir: &Path, root: &Path) -> Option<String> {
    if let Some(name) = repo_files::head_branch(root) {
        return Some(name);
    }
    git(dir, &[], &["symbolic-ref", "--short", "-q", "HEAD"])
        .map(|b| b.trim().to_string())
        .filter(|b| !b.is_empty())
        .or_else(|| {
            git(dir, &[], &["rev-parse", "--short", "HEAD"])
                .map(|sha| format!("detached at {}", sha.trim()))
        })
}

fn os_description() -> String {
    let base = format!("{} {}", std::env::consts::OS, std::env::consts::ARCH);
    let pretty = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        });
    match pretty {
        Some(p) if !p.is_empty() => format!("{base} ({p})"),
        _ => base,
    }
}

/// `-c` arguments that switch off every filter driver the config of `dir`'s repository names
/// (`filter.<driver>.clean`, `.smudge`, `.process`, and `.required`, so that a switched-off
/// required filter is not an error). Reading the config runs nothing. Empty when there is none
/// (told without git when [`repo_files`] can) or git cannot say.
fn filters_off(dir: &Path) -> Vec<String> {
    if instructions::git_root(dir).is_some_and(|root| repo_files::no_filters(&root)) {
        return Vec::new();
    }
    let names = git(
        dir,
        &[],
        &["config", "-z", "--name-only", "--get-regexp", r"^filter\."],
    )
    .unwrap_or_default();
    let mut drivers: Vec<&str> = names
        .split('\0')
        .filter_map(|name| name.strip_prefix("filter."))
        .filter_map(|rest| rest.rsplit_once('.').map(|(driver, _)| driver))
        .collect();
    drivers.sort_unstable();
    drivers.dedup();
    drivers
        .iter()
        .flat_map(|d| {
            ["clean=", "smudge=", "process=", "required=false"]
                .map(|key| ["-c".to_string(), format!("filter.{d}.{key}")])
        })
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use std::process::Command;
    use std::time::Duration;

    use super::*;
    use crate::engine::instructions::Instructions;

    fn env(git: Option<GitState>) -> Environment {
        Environment {
            date: "2026-11-29".into(),
            os: "linux x86_64 (Debian GNU/Linux 13 (trixie))".into(),
            user_shell: Some("/bin/zsh".into()),
            workspace: "/home/u/calc".into(),
            git,
        }
    }

    #[test]
    fn the_environment_block() {
        let status = (0..22).map(|i| format!(" M src/f{i}.rs")).collect();
        let e = env(Some(GitState {
            branch: Some("main".into()),
            status: Some(status),
        }));
        let block = e.block();
        insta::assert_snapshot!("environment_block", block);
        assert!(block.starts_with(
            "# Environment\n\n- Date: 2026-11-29 (UTC)\n- OS: linux x86_64 (Debian GNU/Linux 13 (trixie))\n- Shell: the bash tool runs `bash -c` in the workspace (the user's shell is /bin/zsh)\n- Workspace: /home/u/calc\n- Git: a repository, branch main, 22 changed or untracked file(s) when this session started"
        ), "{block}");
        assert!(block.contains("    M src/f19.rs\n    … and 2 more (run `git status`)\n"));
        assert!(!block.contains("f20"));
        assert!(
            env(None)
                .block()
                .contains("- Git: the workspace is not in a git repository\n")
        );
        let clean = env(Some(GitState {
            branch: Some("feature/x".into()),
            status: Some(Vec::new()),
        }));
        assert!(
            clean
                .block()
                .ends_with("- Git: a repository, branch feature/x, clean working tree\n")
        );
    }

    #[test]
    fn compose_orders_base_environment_instructions() {
        let p = compose(
            "BASE\n",
            &env(None),
            Instructions {
                files: Vec::new(),
                block: "# Project instructions\n\nRULES\n".into(),
            },
        );
        let (b, e, i) = (
            p.text.find("BASE").unwrap(),
            p.text.find("# Environment").unwrap(),
            p.text.find("RULES").unwrap(),
        );
        assert!(b < e && e < i, "{}", p.text);
        assert_eq!(p.environment, env(None).block());
        let none = compose("BASE", &env(None), Instructions::default());
        assert!(!none.text.contains("Project instructions"));
        // What follows the base, for a subagent's prompt: the environment and the instructions.
        let context = session_context(&p.text, "BASE\n");
        assert!(context.starts_with("# Environment") && context.contains("RULES"));
        assert_eq!(session_context(&p.text, "OTHER"), "");
    }

    /// `git <args>` in `dir` with no user or system config (and a fixed author): whether it
    /// succeeded.
    fn plain_git(dir: &Path, args: &[&str]) -> bool {
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap()
            .status
            .success()
    }

    #[test]
    fn the_status_runs_no_program_the_repositorys_config_names() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let marker = tmp.path().join("fsmonitor-ran");
        let run = |args: &[&str]| assert!(plain_git(&ws, args), "git {args:?}");
        run(&["init", "-q", "-b", "main"]);
        std::fs::write(ws.join("a.txt"), "a\n").unwrap();
        // What a confined command can write: the workspace's own `.git/config`.
        let hook = format!("touch '{}'; false", marker.display());
        run(&["config", "core.fsmonitor", &hook]);
        // A plain status runs it (so the check below can fail)...
        // (Its result does not matter: git falls back when the monitor fails.)
        let _ = plain_git(&ws, &["status", "--short"]);
        assert!(marker.exists(), "a plain git status runs core.fsmonitor");
        std::fs::remove_file(&marker).unwrap();
        // ...ours does not.
        let env = Environment::detect(&ws);
        assert!(env.git.is_some());
        assert!(!marker.exists(), "the environment block ran core.fsmonitor");
    }

    #[test]
    fn the_status_runs_no_filter_the_repositorys_config_names() {
        let tmp = tempfile::tempdir().unwrap();
        let marker = tmp.path().join("filter-ran");
        let setup = |dir: &Path| {
            let run = |args: &[&str]| assert!(plain_git(dir, args), "git {args:?}");
            std::fs::create_dir_all(dir).unwrap();
            run(&["init", "-q", "-b", "main"]);
            std::fs::write(dir.join("a.txt"), "a\n").unwrap();
            run(&["add", "a.txt"]);
            run(&["commit", "-q", "-m", "one"]);
            // What a confined command could write before `.git` was kept read-only, and what
            // a cloned repository may carry: a filter named by `.gitattributes`, defined in
            // `.git/config` (a driver name with a dot, and a required one).
            std::fs::write(dir.join(".gitattributes"), "* filter=x.y\n").unwrap();
            let cmd = format!("touch '{}'; cat", marker.display());
            run(&["config", "filter.x.y.clean", &cmd]);
            run(&["config", "filter.x.y.smudge", &cmd]);
            run(&["config", "filter.x.y.required", "true"]);
            // A stale stat makes a status read the file again, through its clean filter.
            let f = std::fs::File::options()
                .write(true)
                .open(dir.join("a.txt"))
                .unwrap();
            f.set_modified(std::time::UNIX_EPOCH + Duration::from_secs(1_000_000))
                .unwrap();
        };
        let plain = tmp.path().join("plain");
        setup(&plain);
        let _ = plain_git(&plain, &["status", "--short"]);
        assert!(marker.exists(), "a plain git status runs the clean filter");
        std::fs::remove_file(&marker).unwrap();
        let ours = tmp.path().join("ours");
        setup(&ours);
        let status = Environment::detect(&ours).git.unwrap().status;
        assert!(
            !marker.exists(),
            "the environment block ran the clean filter"
        );
        assert_eq!(status, Some(vec!["?? .gitattributes".to_string()]));
    }

    #[test]
    fn the_status_leaves_the_users_index_as_it_was() {
        let tmp = tempfile::tempdir().unwrap();
        let setup = |dir: &Path| {
            let run = |args: &[&str]| assert!(plain_git(dir, args), "git {args:?}");
            std::fs::create_dir_all(dir).unwrap();
            run(&["init", "-q", "-b", "main"]);
            std::fs::write(dir.join("a.txt"), "a\n").unwrap();
            run(&["add", "a.txt"]);
            run(&["commit", "-q", "-m", "one"]);
            // The same bytes with another time: the index's stat of the file is stale, which
            // a status that may write refreshes (rewriting the index).
            let f = std::fs::File::options()
                .write(true)
                .open(dir.join("a.txt"))
                .unwrap();
            f.set_modified(std::time::UNIX_EPOCH + Duration::from_secs(1_000_000))
                .unwrap();
        };
        let index = |dir: &Path| {
            let p = dir.join(".git/index");
            let meta = std::fs::metadata(&p).unwrap();
            use std::os::unix::fs::MetadataExt;
            (
                std::fs::read(&p).unwrap(),
                meta.modified().unwrap(),
                meta.ino(),
            )
        };
        let ours = tmp.path().join("ours");
        setup(&ours);
        let before = index(&ours);
        let env = Environment::detect(&ours);
        assert_eq!(env.git.unwrap().status, Some(Vec::new()));
        assert_eq!(index(&ours), before, "bytes, time and inode unchanged");
        // The same repository under a plain `git status` does rewrite its index: the check
        // above would see it.
        let plain = tmp.path().join("plain");
        setup(&plain);
        let untouched = index(&plain);
        assert!(plain_git(&plain, &["status", "--short"]));
        assert_ne!(index(&plain), untouched);
    }

    #[test]
    fn detect_reads_a_real_repository() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(tmp.path()).unwrap();
        let run = |args: &[&str]| assert!(plain_git(&ws, args), "git {args:?}");
        assert_eq!(Environment::detect(&ws).git, None);
        run(&["init", "-q", "-b", "trunk"]);
        std::fs::write(ws.join("new.txt"), "x").unwrap();
        let e = Environment::detect(&ws);
        let git = e.git.unwrap();
        assert_eq!(git.branch.as_deref(), Some("trunk"));
        assert_eq!(git.status, Some(vec!["?? new.txt".to_string()]));
        assert_eq!(e.date.len(), 10);
        // The workbench caught while it is made (its `.gitignore` not written yet) is not the
        // user's change; a file of theirs beside it still is.
        std::fs::create_dir(ws.join(".flower")).unwrap();
        std::fs::write(ws.join(".flower/.gitignore"), "").unwrap();
        let status = |ws: &Path| Environment::detect(ws).git.unwrap().status.unwrap();
        assert_eq!(status(&ws), vec!["?? new.txt".to_string()]);
        run(&["add", "new.txt"]);
        run(&[
            "-c",
            "user.email=t@e",
            "-c",
            "user.name=t",
            "commit",
            "-qm",
            "one",
        ]);
        std::fs::create_dir(ws.join(".flower/commands")).unwrap();
        std::fs::write(ws.join(".flower/commands/mine.md"), "x").unwrap();
        run(&["add", "-f", ".flower/commands/mine.md"]);
        run(&[
            "-c",
            "user.email=t@e",
            "-c",
            "user.name=t",
            "commit",
            "-qm",
            "two",
        ]);
        assert_eq!(status(&ws), Vec::<String>::new());
        std::fs::write(ws.join(".flower/commands/mine.md"), "y").unwrap();
        assert_eq!(status(&ws), vec![" M .flower/commands/mine.md".to_string()]);
    }
}
