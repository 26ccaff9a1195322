//! The settings in the real TUI, in a pseudo-terminal: `/permissions` lists the settings files'
//! rules with the file each came from; a hook that ran quietly is folded (a count in the status
//! line) and Alt-H shows it; a workspace command file's `allowed-tools` is asked about once, the
//! answer kept for the next start.

use std::sync::Arc;
use std::time::Duration;

use crate::support::check::assert_lacks;
use crate::support::files::write;
use crate::support::pty::{Pty, READY, served};

/// A prompt ignores its keys for 400 ms after it appears.
const GUARD: Duration = Duration::from_millis(450);

#[test]
fn permissions_lists_the_settings_rules_with_their_files() {
    let (_rt, server) = served();
    let home = Arc::new(tempfile::tempdir().unwrap());
    let user = home.path().join(".claude/settings.json");
    write(
        &user,
        r#"{"permissions": {"deny": ["Read(./.env)"], "allow": ["Bash(git status:*)"]}}"#,
    );
    let ws_file = home.path().join("ws/.claude/settings.json");
    write(&ws_file, r#"{"permissions": {"ask": ["WebFetch"]}}"#);
    let mut t = Pty::start_in(home, &server, &[]);
    t.wait_for(READY);
    t.ask("/permissions");
    let screen = t.wait_for("Permission rules of the settings files");
    for want in [
        format!("deny  Read(./.env)  ({})", user.display()),
        format!("ask   WebFetch  ({})", ws_file.display()),
        format!("allow Bash(git status:*)  ({})", user.display()),
    ] {
        assert!(screen.contains(&want), "{want}:\n{screen}");
    }
}

#[test]
fn a_quiet_hook_is_folded_and_alt_h_shows_it() {
    let (_rt, server) = served();
    server.script().text("hello back");
    let home = Arc::new(tempfile::tempdir().unwrap());
    write(
        &home.path().join("config/flower/config.toml"),
        "[[hooks.UserPromptSubmit]]\ncommand = \"true\"\n",
    );
    let mut t = Pty::start_in(home, &server, &[]);
    t.wait_for(READY);
    t.ask("hi");
    t.wait_for("hello back");
    // The count is in the status line, the hook's cell is not in the chat.
    let screen = t.wait_for("1 hook(s) ran quietly");
    assert_lacks(&screen, "UserPromptSubmit hook");
    t.keys("\x1bh");
    let shown = t.wait_for("UserPromptSubmit hook");
    assert!(
        shown.contains("1 hook(s) ran quietly (succeeded, gave the model nothing)"),
        "{shown}"
    );
}

#[test]
fn a_workspace_commands_allowed_tools_are_asked_once_and_the_answer_kept() {
    let (_rt, server) = served();
    let home = Arc::new(tempfile::tempdir().unwrap());
    write(
        &home.path().join("ws/.claude/commands/mk.md"),
        "---\nallowed-tools: Bash(mkdir:*)\n---\nMake the folder.\n",
    );
    let ws = home.path().join("ws");
    // No --yes and no sandbox: every command is asked for unless something grants it.
    let args = ["--sandbox", "off"];
    server
        .script()
        .tool("bash", r#"{"command":"mkdir made-one"}"#)
        .text("made one");
    let mut t = Pty::start_in(home.clone(), &server, &args);
    let asked = t.wait_for("command /mk: Bash(mkdir:*)");
    assert!(
        asked.contains("Let this workspace's commands use the tools they name"),
        "{asked}"
    );
    std::thread::sleep(GUARD);
    t.keys("y");
    t.wait_for("approved for this workspace");
    t.ask("/mk");
    let screen = t.wait_for("made one");
    assert_lacks(&screen, "Allow bash?");
    assert!(ws.join("made-one").is_dir());
    assert!(t.quit().success());

    // The next start asks nothing and the grant holds.
    server
        .script()
        .tool("bash", r#"{"command":"mkdir made-two"}"#)
        .text("made two");
    let mut t = Pty::start_in(home, &server, &args);
    t.wait_for(READY);
    t.ask("/mk");
    let screen = t.wait_for("made two");
    assert_lacks(&screen, "Let this workspace's commands");
    assert_lacks(&screen, "Allow bash?");
    assert!(ws.join("made-two").is_dir());
}
