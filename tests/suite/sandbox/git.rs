//! A workspace that is a git repository: confined commands write its files but not its `.git`
//! (no config, hook or filter planted for a git that runs outside the sandbox), cannot move
//! `.git` away, and the note says why; reading git works. Where user namespaces work, `.git` is a
//! read-only mount and the top level is open (new files, `target/`, `sed -i`, `rm`), and a
//! command cannot undo the mount; without them (forced here in a process of its own through
//! `NO_NAMESPACES_VAR`) the top level is closed instead.

use std::path::Path;
use std::process::Command;

use flower_tui::engine::tools::sandbox::{self, GitRoute, NO_NAMESPACES_VAR, SandboxPolicy};

use super::{bash, confines_writes, place, ran};
use crate::support::check::{assert_contains, assert_file, assert_lacks, assert_starts_with};
use crate::support::files::git;
use crate::support::headless::flags;

/// A repository with one commit: `Cargo.toml` and `src/lib.rs`.
fn repository(ws: &Path) {
    git(ws, &["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("Cargo.toml"), "[package]\n").unwrap();
    std::fs::write(ws.join("src/lib.rs"), "").unwrap();
    git(ws, &["add", "."]);
    git(ws, &["commit", "-q", "-m", "one"]);
}

fn snapshot(git_dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = walk(git_dir)
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(git_dir).unwrap().display().to_string();
            (rel, std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[tokio::test]
async fn git_metadata_cannot_be_planted_and_the_note_says_why() {
    let p = place();
    repository(&p.ws);
    let policy = SandboxPolicy::default();
    if !confines_writes(&policy, &p.ws) {
        return;
    }
    let before = snapshot(&p.ws.join(".git"));
    let attempts = [
        "git config core.fsmonitor 'touch /tmp/pwned'",
        "echo 'touch /tmp/pwned' > .git/hooks/pre-commit",
        "printf '[filter \"x\"]\\n\\tclean = evil\\n' >> .git/config",
        "echo '* filter=x' >> .git/info/attributes",
        "rm -f .git/HEAD",
        "mv .git .git-old",
        "mkdir -p fake && mv fake .git",
        "ln -s ../src .git/hooks/post-checkout",
    ];
    for attempt in attempts {
        let out = bash(&p.ws, &policy, attempt).await;
        assert!(out.is_error, "{attempt}: {}", out.content);
        assert_eq!(snapshot(&p.ws.join(".git")), before, "{attempt}");
    }
    // A commit fails, and the note names the protection and the way out.
    let out = bash(
        &p.ws,
        &policy,
        "echo more >> src/lib.rs && git -c user.name=t -c user.email=t@e commit -qam two",
    )
    .await;
    assert!(out.is_error, "{}", out.content);
    assert_eq!(snapshot(&p.ws.join(".git")), before);
    let git_dir = p.ws.join(".git");
    assert!(
        out.content.contains(&format!(
            "[sandbox: the sandbox refused the write to `{}",
            git_dir.display()
        )) && out
            .content
            .contains("keeps the repository's `.git` read-only")
            && out
                .content
                .contains("the user can run a git command outside the sandbox"),
        "{}",
        out.content
    );
    assert_eq!(
        out.sandbox
            .as_ref()
            .map(|s| serde_json::to_value(s).unwrap()["kind"].clone()),
        Some(serde_json::json!("protected"))
    );
}

/// Without user namespaces (the fallback), run in a process of its own by
/// [`the_fallback_without_namespaces_closes_the_top_level_and_still_protects_git`].
#[tokio::test]
#[ignore = "run in a process of its own with the namespaces switched off"]
async fn fallback_entry_by_entry() {
    assert!(std::env::var_os(NO_NAMESPACES_VAR).is_some());
    assert!(!sandbox::namespaces_available());
    let p = place();
    repository(&p.ws);
    let policy = SandboxPolicy::default();
    if !confines_writes(&policy, &p.ws) {
        return;
    }
    let route = policy.writable_set(&p.ws).guard.map(|g| g.route);
    assert_eq!(route, Some(GitRoute::EntryByEntry));
    assert!(
        sandbox::start_notice(&policy, &p.ws).is_some_and(|n| n.contains("cannot create")),
        "the start notice names the cost"
    );
    let out = ran(
        &p.ws,
        &policy,
        "echo '[dependencies]' >> Cargo.toml && echo 'fn a() {}' > src/lib.rs && \
         mkdir -p src/deep && echo x > src/deep/new.rs && mv src/deep/new.rs src/moved.rs && \
         git status --short && git log --format=%s && git diff --stat | tail -1",
    )
    .await;
    assert_starts_with(&out, " M Cargo.toml\n M src/lib.rs\n?? src/moved.rs\none\n");
    assert_lacks(&out, "[sandbox");
    // A new entry at the top level is refused, with the way around it.
    let out = bash(&p.ws, &policy, "touch notes.txt").await;
    assert!(out.is_error, "{}", out.content);
    assert!(!p.ws.join("notes.txt").exists());
    assert!(
        out.content.contains(
            "commands cannot create, rename or delete entries at the workspace's top level"
        ) && out.content.contains("write_file"),
        "{}",
        out.content
    );
    // Once it exists (made by write_file, or by the user), the next command may write it.
    std::fs::write(p.ws.join("notes.txt"), "").unwrap();
    ran(&p.ws, &policy, "echo kept > notes.txt").await;
    assert_file(p.ws.join("notes.txt"), "kept\n");
}

#[test]
fn the_fallback_without_namespaces_closes_the_top_level_and_still_protects_git() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(flags(
            "suite::sandbox::git::fallback_entry_by_entry --exact --ignored --test-threads=1",
        ))
        .env(NO_NAMESPACES_VAR, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether this machine takes the namespace route; when it does not, this says so and checks
/// that the fallback is the one in force.
fn namespaces(policy: &SandboxPolicy, ws: &Path) -> bool {
    let route = policy.writable_set(ws).guard.map(|g| g.route);
    if sandbox::namespaces_available() {
        assert_eq!(route, Some(GitRoute::ReadOnlyMount));
        assert_eq!(sandbox::start_notice(policy, ws), None);
        true
    } else {
        eprintln!("NOT RUN: user namespaces are not available; .git is protected entry by entry");
        assert_eq!(route, Some(GitRoute::EntryByEntry));
        false
    }
}

#[tokio::test]
async fn with_namespaces_the_top_level_is_open_and_git_stays_read_only() {
    let p = place();
    repository(&p.ws);
    std::fs::write(p.ws.join("README"), "old\n").unwrap();
    std::fs::write(p.ws.join("gone.txt"), "x").unwrap();
    let policy = SandboxPolicy::default();
    if !confines_writes(&policy, &p.ws) || !namespaces(&policy, &p.ws) {
        return;
    }
    let before = snapshot(&p.ws.join(".git"));
    let out = ran(
        &p.ws,
        &policy,
        "touch new.txt && mkdir target && echo built > target/out && sed -i s/old/new/ README \
         && rm gone.txt && git status --short && git log --format=%s && git diff --stat | tail -1",
    )
    .await;
    assert!(p.ws.join("new.txt").exists());
    assert!(p.ws.join("target/out").exists());
    assert!(!p.ws.join("gone.txt").exists());
    assert_file(p.ws.join("README"), "new\n");
    assert_contains(&out, "?? new.txt\n");
    assert_contains(&out, "one\n");
    assert_lacks(&out, "[sandbox");
    let attempts = [
        "echo '[core]' >> .git/config",
        "echo 'touch /tmp/pwned' > .git/hooks/x",
        "mv .git x",
        "rm -rf .git",
        "unshare -Urm sh -c 'umount .git; echo x > .git/config'",
        "umount .git; echo x > .git/config",
        "mount -o remount,rw,bind .git; echo x > .git/config",
    ];
    for attempt in attempts {
        let out = bash(&p.ws, &policy, attempt).await;
        assert!(out.is_error, "{attempt}: {}", out.content);
        assert_eq!(snapshot(&p.ws.join(".git")), before, "{attempt}");
    }
    assert!(!p.ws.join("x").exists());
    // A write to `.git` is noted as the protection, without the entry-by-entry clause.
    let out = bash(&p.ws, &policy, "echo x > .git/config").await;
    assert!(
        out.content
            .contains("keeps the repository's `.git` read-only")
            && !out.content.contains("cannot create, rename or delete"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn a_worktrees_git_file_is_mounted_read_only_too() {
    let p = place();
    repository(&p.outside);
    let ws = p.ws.display().to_string();
    git(&p.outside, &["worktree", "add", "-q", "-b", "w", &ws]);
    let policy = SandboxPolicy::default();
    if !confines_writes(&policy, &p.ws) || !namespaces(&policy, &p.ws) {
        return;
    }
    let pointer = std::fs::read(p.ws.join(".git")).unwrap();
    let gitdir = snapshot(&p.outside.join(".git"));
    let out = ran(&p.ws, &policy, "touch new.txt && git status --short").await;
    assert_contains(&out, "?? new.txt");
    for attempt in [
        "printf 'gitdir: /tmp/elsewhere\\n' > .git",
        "rm -f .git",
        "mv .git x",
        "echo 'touch /tmp/pwned' > \"$(git rev-parse --git-common-dir)/hooks/pre-commit\"",
    ] {
        let out = bash(&p.ws, &policy, attempt).await;
        assert!(out.is_error, "{attempt}: {}", out.content);
        assert_eq!(
            std::fs::read(p.ws.join(".git")).unwrap(),
            pointer,
            "{attempt}"
        );
        assert_eq!(snapshot(&p.outside.join(".git")), gitdir, "{attempt}");
    }
}
