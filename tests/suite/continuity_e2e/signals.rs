//! A review ended by a signal or a closed terminal: the unsaved edits are kept beside the file,
//! nothing is committed, and the next start restores or discards them.

use super::*;
use crate::support::check::assert_lacks;

#[test]
fn case3_sigterm_keeps_the_edits_commits_nothing_and_continue_restores_them() {
    let (_rt, server) = served();
    let typed = "- typed before SIGTERM";
    let (home, file) = review_then_signal(&server, "s3t", "-TERM", typed);
    let kept = kept_beside(&file);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(read(&kept[0]).contains(typed));
    assert!(!read(&file).contains(typed), "the file itself is as frozen");
    let step = &manifest(home.path())["steps"][0];
    assert_eq!(
        step["handoffs"].as_array().map(Vec::len),
        Some(0),
        "{step:#}"
    );
    assert_eq!(step["retired"].as_array().map(Vec::len), Some(0));
    assert_eq!(
        step["frozen"]["unsaved"],
        kept[0].to_string_lossy().as_ref()
    );

    // --continue: the review reopens and offers the edits; r restores, Ctrl-S hands them over.
    server
        .script()
        .at(4_000)
        .text("Successor with the restored edits.");
    let mut t = Pty::start_in(home, &server, &["--continue", "--review", "60"]);
    t.wait("the restore offer", |s| s.contains("r restore / d discard"));
    assert!(
        t.screen().contains("was never turned over"),
        "{}",
        t.screen()
    );
    assert_eq!(server.requests().len(), 2);
    t.keys("r");
    t.wait_for(typed);
    t.keys(CTRL_S);
    t.wait_for("send a message");
    assert!(read(&file).contains(typed));
    t.keys("go on");
    t.keys(ENTER);
    t.wait_for("Successor with the restored edits.");
    let reqs = server.requests();
    let blocks = first_blocks(&reqs[2]);
    assert!(blocks[0].contains(typed), "{blocks:#?}");
    assert_eq!(&blocks[blocks.len() - 2..], ["handle the signals", "go on"]);
}

#[test]
fn case3_sighup_keeps_the_edits_and_a_plain_start_can_discard_them() {
    let (_rt, server) = served();
    let typed = "- typed before the terminal closed";
    let (home, file) = review_then_signal(&server, "s3h", "-HUP", typed);
    let kept = kept_beside(&file);
    assert_eq!(kept.len(), 1, "{kept:?}");
    server
        .script()
        .at(4_000)
        .text("Successor with the frozen file.");
    let mut t = Pty::start_in(home, &server, &["--review", "60"]);
    t.wait("the restore offer", |s| s.contains("r restore / d discard"));
    t.keys("d");
    t.wait_for("discarded the unsaved edits");
    assert!(
        kept_beside(&file).is_empty(),
        "discard removes the kept file"
    );
    t.keys(ESC);
    t.wait_for("send a message");
    t.keys("go on");
    t.keys(ENTER);
    t.wait_for("Successor with the frozen file.");
    let blocks = first_blocks(&server.requests()[2]);
    assert!(blocks[0].contains("Continue signals.") && !blocks[0].contains(typed));
}

#[test]
fn case3_a_closed_terminal_keeps_the_edits_records_them_and_exits_cleanly() {
    // The terminal itself goes (a closed window, `tmux kill-session`): SIGHUP, and every write to
    // the terminal fails from then on. The edits must be kept, the ledger must say where (so the
    // next start offers them), and nothing may panic on the way out.
    let (_rt, server) = served();
    let typed = "- typed before the window closed";
    let (mut t, file) = typing_in_review(&server, "s3gone", typed);
    t.hang_up(" ");
    let status = t.wait_exit();
    assert!(status.success(), "{status}");
    let home = t.home();
    let file = t.workspace().join(".flower/notes").join(file);
    let kept = kept_beside(&file);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(read(&kept[0]).contains(typed));
    let step = &manifest(home.path())["steps"][0];
    assert_eq!(step["handoffs"].as_array().map(Vec::len), Some(0));
    assert_eq!(
        step["frozen"]["unsaved"],
        kept[0].to_string_lossy().as_ref(),
        "{step:#}"
    );
    // Nothing panicked on the way out.
    let logs = all_files(&home.path().join("data/flower/logs"));
    for log in logs {
        let text = read(&log);
        assert_lacks(&text, "panicked");
    }
}
