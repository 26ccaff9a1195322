//! The demo on the real binary with the defaults (the handoff written in the background, a
//! 15-second review): it plays to its end with no keystroke but its one approval. Its first
//! generation works on beside the review and, if the review outlasts that work, waits at its
//! hard limit; the successor then continues the same turn and finishes the task.

use std::time::Duration;

use crate::support::pty::{Pty, served};

#[test]
fn the_demo_plays_to_its_end_with_no_key_but_the_approval() {
    let (_rt, server) = served();
    let mut t = Pty::start(&server, &["--demo"]);
    t.wait_for("Allow edit_file?");
    // Keys are ignored for 400 ms after the prompt shows.
    std::thread::sleep(Duration::from_millis(450));
    t.keys("y");
    // The document is frozen and its review counts down while the first generation works on.
    t.wait("the review beside the work", |s| s.contains("successor in"));
    t.wait_for("Re-running the checks");
    // However long the review, the successor takes over the turn and finishes it.
    t.wait("the successor continuing the turn", |s| {
        s.contains("Picking up from the handoff")
    });
    let screen = t.wait_for("All three checks pass");
    assert!(
        !screen.contains("That is as far as this generation goes"),
        "the first generation ended its turn before the turnover:\n{screen}"
    );
    assert!(server.requests().is_empty(), "the demo needs no provider");
}
