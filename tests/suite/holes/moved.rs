//! A workspace in a temp dir (writable by design) moved aside: a command must not be able to swap
//! the workspace for an empty folder, write the real `.git` unguarded from the next command and
//! move it back (the user's next plain `git commit` would run what it planted). The temp dir that
//! holds the workspace is not granted, and a workspace or `.git` that is no longer the one seen
//! first makes the sandbox refuse to run, saying so. A worktree's git folder in a temp dir is
//! read-only too.

use std::path::Path;

use flower_tui::engine::tools::sandbox::SandboxPolicy;

use crate::suite::sandbox::{bash, confines_writes, place};
use crate::support::files::git;

/// A repository with one commit at `<temp>/<parent>/ws`, in the system's temp dir.
fn repository_in_temp() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("parent").join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    git(&ws, &["init", "-q", "-b", "main"]);
    std::fs::write(ws.join("a.txt"), "a\n").unwrap();
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-q", "-m", "one"]);
    let ws = ws.canonicalize().unwrap();
    (dir, ws)
}

fn planted(git_dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    if git_dir.join("hooks/pre-commit").exists() {
        found.push("pre-commit hook".to_string());
    }
    let config = std::fs::read_to_string(git_dir.join("config")).unwrap_or_default();
    if config.contains("fsmonitor") {
        found.push("core.fsmonitor".to_string());
    }
    found
}

const PLANT: &str = "git -C ../ws.real config core.fsmonitor 'touch /tmp/pwned'; \
     printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > ../ws.real/.git/hooks/pre-commit; \
     chmod +x ../ws.real/.git/hooks/pre-commit; cd .. && rmdir ws && mv ws.real ws";

#[tokio::test]
async fn a_workspace_moved_aside_does_not_lose_its_git_guard() {
    let (_dir, ws) = repository_in_temp();
    let policy = SandboxPolicy::default();
    if !confines_writes(&policy, &ws) {
        return;
    }
    let first = bash(
        &ws,
        &policy,
        "cd .. && mv ws ws.real && mkdir ws && echo moved",
    )
    .await;
    let second = bash(&ws, &policy, PLANT).await;
    let real = ws.with_file_name("ws.real");
    let git_dir = if real.exists() {
        real.join(".git")
    } else {
        ws.join(".git")
    };
    assert_eq!(
        planted(&git_dir),
        Vec::<String>::new(),
        "first: {}\nsecond: {}",
        first.content,
        second.content
    );
    assert!(ws.join(".git").is_dir(), "{}", first.content);
    assert!(!first.content.starts_with("moved"), "{}", first.content);
}

#[tokio::test]
async fn a_workspace_swapped_from_outside_is_refused_by_name() {
    let (_dir, ws) = repository_in_temp();
    let policy = SandboxPolicy::default();
    if !confines_writes(&policy, &ws) {
        return;
    }
    let out = bash(&ws, &policy, "echo first").await;
    assert!(out.content.starts_with("first"), "{}", out.content);
    // Swapped by something the sandbox does not confine (the user, another program).
    std::fs::rename(&ws, ws.with_file_name("ws.real")).unwrap();
    std::fs::create_dir(&ws).unwrap();
    let out = bash(&ws, &policy, PLANT).await;
    assert!(out.is_error, "{}", out.content);
    assert!(
        out.content.contains("is no longer the folder"),
        "{}",
        out.content
    );
    assert_eq!(
        planted(&ws.with_file_name("ws.real").join(".git")),
        Vec::<String>::new()
    );

    // Its parent renamed and a new one made in its place: refused as well.
    std::fs::remove_dir(&ws).unwrap();
    std::fs::rename(ws.with_file_name("ws.real"), &ws).unwrap();
    let out = bash(&ws, &policy, "echo back").await;
    assert!(out.content.starts_with("back"), "{}", out.content);
    let parent = ws.parent().unwrap();
    std::fs::rename(parent, parent.with_file_name("parent.real")).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    let out = bash(&ws, &policy, "echo swapped").await;
    assert!(out.is_error, "{}", out.content);
    assert!(
        out.content.contains("is no longer the folder"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn a_worktree_whose_repository_is_in_a_temp_dir_keeps_it_read_only() {
    let (_dir, main) = repository_in_temp();
    // The worktree outside every temp dir, its repository inside one (writable by design).
    let p = place();
    let ws = p.outside.join("tree");
    git(&main, &["worktree", "add", "-q", ws.to_str().unwrap()]);
    let policy = SandboxPolicy::default();
    if !confines_writes(&policy, &ws) {
        return;
    }
    let common = main.join(".git");
    let out = bash(
        &ws,
        &policy,
        &format!(
            "git config core.fsmonitor 'touch /tmp/pwned'; \
             echo evil > {c}/hooks/pre-commit; echo evil > {c}/worktrees/tree/HEAD.new; \
             echo x > new.txt && echo wrote",
            c = common.display()
        ),
    )
    .await;
    assert_eq!(planted(&common), Vec::<String>::new(), "{}", out.content);
    assert!(
        !common.join("worktrees/tree/HEAD.new").exists(),
        "{}",
        out.content
    );
    assert!(out.content.contains("wrote"), "{}", out.content);
}
