//! Custom commands and skills in the TUI, on the real binary in a pseudo-terminal: the `/`
//! popup lists a custom command with its argument hint and description, running it shows the
//! line the user typed and a tool cell for its `!` line while the model gets the expanded text,
//! and `/skills` lists the skills (`/help` is longer than the screen: its reducer test reads it);
//! without `--yes` each `!` line asks, and a denied one is a note in the message, never run.

use std::sync::Arc;

use crate::support::check::{assert_contains, assert_lacks, assert_starts_with};
use crate::support::files::write;
use crate::support::pty::{ENTER, Pty, READY, last_user_text, served};

#[test]
fn the_popup_help_and_skills_list_what_the_files_define_and_a_command_runs() {
    let (_rt, server) = served();
    server.script().text("Reviewed it.");
    let home = Arc::new(tempfile::tempdir().unwrap());
    let ws = home.path().join("ws");
    let commands = ws.join(".claude/commands");
    write(
        &commands.join("review.md"),
        "---\ndescription: Review a change\nargument-hint: <what>\n---\nReview $1 now.\n!`echo from-bang`\n",
    );
    let skill = ws.join(".claude/skills/pdf");
    write(
        &skill.join("SKILL.md"),
        "---\nname: pdf\ndescription: Fill in PDF forms\n---\nSteps.\n",
    );

    let mut t = Pty::start_in(home, &server, &["--yes", "--sandbox", "off"]);
    t.wait_for(READY);
    t.keys("/rev");
    t.wait("the custom command in the popup", |s| {
        s.contains("/review <what>") && s.contains("Review a change (project)")
    });
    t.keys("iew parser.rs");
    t.wait_for("/review parser.rs");
    t.keys(ENTER);
    let requests = t.wait_requests(&server, 1);
    assert_eq!(
        last_user_text(&requests[0]),
        "Review parser.rs now.\nfrom-bang\n"
    );
    t.wait_for("Reviewed it.");
    let screen = t.screen();
    assert_contains(&screen, "/review parser.rs");
    assert_contains(&screen, "echo from-bang");
    assert_lacks(&screen, "Review parser.rs now.");

    t.ask("/skills");
    t.wait_for("pdf — Fill in PDF forms");
}

#[test]
fn bang_lines_ask_in_the_tui_one_approved_one_denied() {
    let (_rt, server) = served();
    server.script().text("Checked.");
    let home = Arc::new(tempfile::tempdir().unwrap());
    let commands = home.path().join("ws/.flower/commands");
    write(
        &commands.join("check.md"),
        "Allowed:\n!`echo yes-ran`\nDenied:\n!`echo no-ran > denied.txt`\n",
    );
    // No --yes, no sandbox: every command is asked for.
    let mut t = Pty::start_in(home, &server, &["--sandbox", "off"]);
    let ws = t.workspace();
    t.wait_for(READY);
    t.ask("/check");
    t.wait_for("Allow bash?");
    assert!(
        server.requests().is_empty(),
        "nothing is sent before the commands ran"
    );
    // A prompt ignores its keys for 400 ms after it appears.
    std::thread::sleep(std::time::Duration::from_millis(450));
    t.keys("y");
    t.wait("the second prompt", |s| {
        s.contains("Allow bash?") && s.contains("denied.txt")
    });
    std::thread::sleep(std::time::Duration::from_millis(450));
    t.keys("n");
    let requests = t.wait_requests(&server, 1);
    let text = last_user_text(&requests[0]);
    assert_starts_with(
        &text,
        "Allowed:\nyes-ran\nDenied:\n[`echo no-ran > denied.txt` was not run: denied",
    );
    assert!(!ws.join("denied.txt").exists());
    t.wait_for("Checked.");
}
