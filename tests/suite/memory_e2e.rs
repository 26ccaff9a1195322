//! The step's memory on the real binary in a pseudo-terminal: `/pin` and `/focus` before the
//! first message, the plan above the input, the focus in the editor's title, a `## Pinned`
//! section typed during the review, and all of it in the successor's first request.

use crate::support::check::assert_contains;
use crate::support::headless::{BLOCKING, flags};
use crate::support::pty::{CTRL_S, ENTER, Pty, last_user_text, served};

const DOC: &str = "## Doing\nRefactoring the parser.\n\n## Next\nRun the parser tests.\n\n## Scene\n- src/parser.rs\n";

const PLAN: &str = r#"{"items": [{"text": "read the parser", "status": "done"}, {"text": "fix nested quotes", "status": "in_progress"}, {"text": "run the tests", "status": "pending"}]}"#;

#[test]
fn pins_focus_and_plan_on_screen_and_in_the_successor() {
    let (_rt, server) = served();
    server.script().at(31_000).tool("todo", PLAN); // crosses at = 30000
    server.script().at(31_500).text(DOC); // the writing turn
    server.script().at(5_000).text("Successor here.");
    // The writing turn is scripted in line with the main thread's replies.
    let args = flags(&format!("{BLOCKING} --review 60 --step mem"));
    let mut t = Pty::open(&server, &args);
    // Before any session: kept for the step the first message starts.
    t.ask("/pin keep the public API");
    t.wait_for("Pinned #1 for the step your first message starts: keep the public API");
    t.ask("/focus the parser");
    t.wait_for("Standing focus (for the step your first message starts): the parser");

    t.ask("refactor the parser");
    // The plan above the input, the review with the focus in its title.
    t.wait("the plan and the review's title with the focus", |s| {
        s.contains("Plan · 1/3 done")
            && s.contains("▸ fix nested quotes")
            && s.contains("successor in")
            && s.contains("focus: the parser")
    });
    // A pinned section typed in the editor.
    t.new_line_at_end();
    t.keys("## Pinned");
    t.keys(ENTER);
    t.keys("- typed in the review");
    t.wait_for("- typed in the review");
    t.keys(CTRL_S);
    let screen = t.wait_for("Successor here.");
    assert_contains(
        &screen,
        "Pinned from the handoff document (1): typed in the review",
    );
    assert_contains(&screen, "generation 1 held");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let first = last_user_text(&reqs[2]);
    for fact in [
        "## Pinned\n- keep the public API\n- typed in the review\n",
        "## Plan\n- [done] read the parser\n- [in progress] fix nested quotes\n- [pending] run the tests\n",
        "## Focus\nthe parser\n",
    ] {
        assert!(first.contains(fact), "{fact}: {first}");
    }
    let writing = last_user_text(&reqs[1]);
    assert!(
        writing.ends_with("Additional focus: the parser"),
        "{writing}"
    );
}
