//! The same faults through the TUI in a pseudo-terminal: a 10 MB paste, and `--continue` over a
//! damaged newest run.

use std::sync::Arc;

use super::input::big_message;
use crate::support::check::assert_file;
use crate::support::fake::{U, anthropic as a};
use crate::support::headless::newest_run;
use crate::support::pty::{ENTER, Pty, READY, last_user_text, served};

#[test]
fn a_ten_megabyte_paste_is_spilled_and_the_user_is_told() {
    let (_rt, server) = served();
    server
        .script()
        .usage(U::new(2_000, 20))
        .text("I will read the file in pages.");
    let mut t = Pty::open(&server, &["--yes"]);
    let paste = big_message(10_000_000);
    t.keys(&format!("\x1b[200~{paste}\x1b[201~"));
    t.keys(ENTER);
    let reqs = t.wait_requests(&server, 1);
    let sent = last_user_text(&reqs[0]);
    assert!(sent.len() < 3_000, "{} characters sent", sent.len());
    assert!(
        sent.contains(".flower/spill/input-1.txt") && sent.contains("BEGIN-MARKER"),
        "{}",
        &sent[..sent.len().min(400)]
    );
    let spilled = t.workspace().join(".flower/spill/input-1.txt");
    assert_file(&spilled, paste);
    // The user sees the notice, and the reply.
    t.wait_for("saved in full to");
    t.wait_for("I will read the file in pages.");
}

#[test]
fn continue_in_the_tui_names_the_damaged_newest_run_then_goes_on_with_the_older() {
    let (_rt, server) = served();
    let home = Arc::new(tempfile::tempdir().unwrap());
    // Two runs in the workspace; the newer one's ledger is torn afterwards.
    for (task, answer) in [
        ("older task", "older answer"),
        ("newer task", "newer answer"),
    ] {
        server.script().text(answer);
        let mut t = Pty::start_in(home.clone(), &server, &["--yes"]);
        t.wait_for(READY);
        t.ask(task);
        t.wait_for(answer);
        drop(t);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let newest = newest_run(home.path()).join("manifest.json");
    let text = std::fs::read(&newest).unwrap();
    std::fs::write(&newest, &text[..text.len() / 2]).unwrap();

    server
        .script()
        .at(1_100)
        .text("going on with the older run");
    let mut t = Pty::start_in(home.clone(), &server, &["--yes", "--continue"]);
    // The warning names the file (the screen wraps long lines: look for its parts).
    let want = format!(
        "warning: the newest run's manifest {} is unreadable",
        newest.display()
    );
    t.wait(&want, |s| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains(&want)
    });
    t.wait_for("older answer");
    t.keys("and now?");
    t.keys(ENTER);
    let reqs = t.wait_requests(&server, 3);
    let body = reqs.last().unwrap()["messages"].to_string();
    assert!(
        body.contains("older answer") && !body.contains("newer answer"),
        "{body}"
    );
    t.wait_for("going on with the older run");
}

#[test]
fn a_message_still_queued_when_sigterm_arrives_is_named_on_the_way_out() {
    let (_rt, server) = served();
    // A reply that streams for a long while: the second message waits in the queue.
    server.push(
        a::text("A long answer that is still streaming.", U::new(1_000, 10))
            .with_delay(std::time::Duration::from_secs(5)),
    );
    let mut t = Pty::open(&server, &["--yes"]);
    t.keys("first question");
    t.keys(ENTER);
    t.wait_requests(&server, 1);
    t.keys("the second thing I asked");
    t.keys(ENTER);
    t.wait("the message queued", |s| {
        s.contains("the second thing I asked")
    });
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(t.pid() as i32, libc::SIGTERM) };
    t.wait_exit();
    let raw = String::from_utf8_lossy(&t.raw()).into_owned();
    assert!(
        raw.contains(
            "a queued message was not sent (Up recalls it from the input history): the second thing I asked"
        ),
        "{raw:?}"
    );
    assert_eq!(server.requests().len(), 1, "it was never sent");
}
