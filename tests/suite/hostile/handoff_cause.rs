//! A handoff says why it happens, to the model that writes the document and to the successor
//! that reads it: the user asked for it (`/handoff [focus]`), the context is nearly full, or a
//! request overflowed the window. Checked on the request bodies the fake records.

use serde_json::Value;

use crate::support::check::{assert_contains, assert_lacks, assert_starts_with, assert_success};
use crate::support::fake::{FakeServer, is_writing};
use crate::support::harness::{Harness, start};
use crate::support::headless::{bin_for, lines, run};
use crate::support::pty::{Pty, last_user_text, served};

/// A complete handoff document.
const DOC: &str =
    "## Doing\nWork.\n\n## Decided\n- a\n\n## Dead ends\n- b\n\n## Next\nGo on.\n\n## Scene\n- f\n";

/// The first text block of the first message: the successor's briefing.
fn briefing(body: &Value) -> String {
    body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn say(t: &mut Pty, text: &str) {
    t.ask(text);
}

#[test]
fn a_manual_handoff_says_the_user_asked_for_it() {
    let (_rt, server) = served();
    server
        .script()
        .at(5_000)
        .text("first answer here")
        .at(6_000)
        .text("second answer here")
        .at(6_500)
        .text(DOC)
        .at(2_000)
        .text("the successor answers");
    let args = ["--yes", "--review", "off", "--window", "60000"];
    let mut t = Pty::open(&server, &args);
    say(&mut t, "first question");
    t.wait_for("first answer here");
    say(&mut t, "second question");
    t.wait_for("second answer here");
    t.wait("the turn to end", |s| !s.contains("to interrupt"));
    say(&mut t, "/handoff keep the parser notes");
    t.wait_for("generation 2");
    t.wait("the handoff to end", |s| !s.contains("to interrupt"));
    say(&mut t, "go on");
    t.wait_for("the successor answers");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4);
    // The writing turn: the user asked, at 6K of 60K; nothing says the context is full.
    let prompt = last_user_text(&reqs[2]);
    assert_starts_with(
        &prompt,
        "The user asked for a handoff now, so this session ends here (your context window \
             is at 6.0K of 60K). Stop the work you were doing and write a handoff document now. \
             Give the document the focus asked for at the end of this message.\n\n",
    );
    assert!(prompt.ends_with("\n\nAdditional focus: keep the parser notes"));
    assert_lacks(&prompt, "nearly full");
    // The successor is told the same.
    let brief = briefing(&reqs[3]);
    assert_starts_with(
        &brief,
        "You are taking over this work from your previous generation. The user asked for a \
             handoff with the focus \"keep the parser notes\", so it stopped and wrote the \
             handoff document below for you.",
    );
    assert!(!brief.contains("ran out") && !brief.contains("long context"));
}

/// `flower-tui -p TASK ARGS` against `server`; its JSON lines.
async fn headless(server: &FakeServer, args: &[&str]) -> Vec<Value> {
    let home = tempfile::tempdir().unwrap();
    let mut c = bin_for(home.path(), server);
    c.args(["-p", "the task", "--yes", "--window", "40000"])
        .args(args);
    let out = run(c).await.output;
    assert_success(&out);
    lines(&out)
}

#[tokio::test]
async fn an_automatic_handoff_says_the_context_is_nearly_full() {
    let server = FakeServer::start().await;
    server.script().over_the_line(DOC).at(3_000).text("listed");
    let args = ["--headroom", "10000", "--handoff-mode", "blocking"];
    let ev = headless(&server, &args).await;
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "{ev:?}");
    assert_eq!(reqs[1]["tool_choice"]["type"], "none");
    let prompt = last_user_text(&reqs[1]);
    assert_starts_with(
        &prompt,
        "Your context window is at 31.0K of 40K. It is nearly full, so this session ends \
             here. Stop the work you were doing and write a handoff document now.\n\n",
    );
    let brief = briefing(&reqs[2]);
    assert_contains(&brief, "Its context window was nearly full, so it stopped");
}

#[tokio::test]
async fn a_handoff_after_an_overflow_says_the_request_did_not_fit() {
    let h = Harness::new().await;
    // A history the rescue can shorten: one big tool result.
    h.big_log("a.log");
    h.script()
        .at(12_000)
        .tool("bash", r#"{"command":"cat a.log"}"#)
        .overflows_then_rescued(DOC, "continued");
    let mut r = start(h.params(40_000, 10_000));
    let ev = r.completed_turn("read a.log").await;
    let reqs = h.server.requests();
    assert_eq!(reqs.len(), 4, "{ev:#?}");
    assert!(is_writing(&reqs[2]));
    let prompt = last_user_text(&reqs[2]);
    assert!(
        prompt.contains(
            "Your last request did not fit in your context window of 40K, so this session ends \
             here."
        ),
        "{prompt}"
    );
    assert!(!prompt.contains("nearly full") && !prompt.contains("The user asked"));
    let brief = briefing(&reqs[3]);
    assert_contains(&brief, "Its context window overflowed, so it stopped");
    r.shutdown().await;
}
