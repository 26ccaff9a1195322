//! End to end, the daily driver (issue 10): typing while a reply streams, an approval prompt with
//! typed-ahead text, and what quitting prints. The real binary in a pseudo-terminal, the fake
//! behind it (see the parent module).

use std::time::Duration;

use crate::support::fake::{Reply, anthropic as a};

use crate::support::pty::{CTRL_C, ENTER, Pty, READY, last_user_text, rfind, runtime};

use super::u;

/// A reply streamed slowly: its deltas `delay` apart.
fn slow(text: &str, delay: Duration) -> Reply {
    Reply::Sse {
        chunks: a::Stream::new(u(1_000)).text(text).events(),
        delay: Some(delay),
    }
}

#[test]
fn a_message_typed_during_a_stream_waits_and_follows_the_reply() {
    let rt = runtime();
    let server = rt.block_on(crate::support::fake::FakeServer::start());
    let first = "The first answer streams in slowly, word by word, so there is time to type \
                 another message while it arrives, and it ends here.";
    server.push(slow(first, Duration::from_millis(60)));
    server.push(a::text("The second answer.", u(1_200)));
    let mut t = Pty::start(&server, &["--yes"]);
    t.wait_for(READY);
    t.keys("first question");
    t.wait_for("first question");
    t.keys(ENTER);
    t.wait_for("The first answer");
    t.keys("second message");
    t.keys(ENTER);
    let screen = t.wait_for("⋯ queued  second message");
    assert!(
        !screen.contains("› second message"),
        "queued, not in the chat yet:\n{screen}"
    );
    assert_eq!(
        server.requests().len(),
        1,
        "nothing sent while the turn runs"
    );
    let screen = t.wait_for("The second answer.");
    assert!(!screen.contains("⋯ queued"), "{screen}");
    // On screen in the order the model reads: question, whole reply, queued message, answer.
    let at = |s: &str| {
        screen
            .find(s)
            .unwrap_or_else(|| panic!("{s:?} in:\n{screen}"))
    };
    assert!(at("› first question") < at("The first answer"));
    assert!(at("here.") < at("› second message"), "{screen}");
    assert!(at("› second message") < at("The second answer."));
    assert_eq!(screen.matches("The first answer").count(), 1, "{screen}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(last_user_text(&reqs[1]), "second message");
    let history = reqs[1]["messages"].to_string();
    assert!(history.contains("it ends here."), "{history}");
}

#[test]
fn text_typed_ahead_of_an_approval_stays_in_the_input() {
    let rt = runtime();
    let server = rt.block_on(crate::support::fake::FakeServer::start());
    server.push(
        a::tool_use(
            "b1",
            "bash",
            r#"{"command":"echo approved > typed.txt"}"#,
            u(1_000),
        )
        .with_delay(Duration::from_millis(300)),
    );
    server.push(a::text("Done: the file is written.", u(1_200)));
    let mut t = Pty::start(&server, &[]);
    let ws = t.workspace();
    t.wait_for(READY);
    t.keys("write the file");
    t.wait_for("write the file");
    t.keys(ENTER);
    // Typing goes on as the prompt appears: "a" (always) and "y" (once) are in these words.
    for c in "can you also say yes".chars() {
        t.keys(&c.to_string());
        std::thread::sleep(Duration::from_millis(40));
    }
    let screen = t.wait("the prompt waiting for the typed text", |s| {
        s.contains("Allow bash?") && s.contains("can you also say yes")
    });
    assert!(screen.contains("your text stays in the input"), "{screen}");
    std::thread::sleep(Duration::from_millis(600));
    assert!(
        !ws.join("typed.txt").exists(),
        "typed text answered nothing"
    );
    assert_eq!(server.requests().len(), 1);
    // Clear the input, let the prompt settle, answer it.
    t.keys(CTRL_C);
    t.wait("the prompt taking keys", |s| s.contains("n/esc deny"));
    std::thread::sleep(Duration::from_millis(450));
    t.keys("y");
    t.wait_for("Done: the file is written.");
    assert_eq!(
        std::fs::read_to_string(ws.join("typed.txt")).unwrap_or_default(),
        "approved\n"
    );
}

#[test]
fn quitting_prints_the_session_and_how_to_continue_it() {
    let rt = runtime();
    let server = rt.block_on(crate::support::fake::FakeServer::start());
    server.push(a::text("Remember the number 7431.", u(1_000)));
    server.push(a::text("It was 7431.", u(1_500)));
    let mut t = Pty::start(&server, &["--yes"]);
    t.wait_for(READY);
    t.keys("pick a number");
    t.keys(ENTER);
    t.wait_for("Remember the number 7431.");
    // While the turn still runs Ctrl-C interrupts it; on an idle empty input twice quits.
    t.wait("the turn to end", |s| !s.contains("to interrupt"));
    t.keys(CTRL_C);
    t.keys(CTRL_C);
    assert!(t.wait_exit().success());
    let raw = t.raw();
    let left = rfind(&raw, b"\x1b[?1049l").expect("left the alternate screen");
    let after = String::from_utf8_lossy(&raw[left..]).into_owned();
    assert!(after.contains("flower-tui: session "), "{after:?}");
    let ws = t.workspace().canonicalize().unwrap();
    let line = after
        .lines()
        .find_map(|l| l.trim().strip_prefix("continue it: flower-tui --resume "))
        .unwrap_or_else(|| panic!("no command to continue: {after:?}"));
    let (run_id, rest) = line.split_once(' ').unwrap_or((line, ""));
    assert_eq!(rest, format!("--workspace {}", ws.display()), "{after:?}");
    assert!(
        after.contains("pick another: flower-tui --resume --workspace"),
        "{after:?}"
    );
    // The printed command continues the conversation.
    let mut again = Pty::start_in(t.home(), &server, &["--yes", "--resume", run_id]);
    again.wait_for("pick a number");
    again.wait_for(READY);
    again.keys("what was it?");
    again.keys(ENTER);
    again.wait_for("It was 7431.");
    let reqs = server.requests();
    let history = reqs[1]["messages"].to_string();
    assert!(history.contains("Remember the number 7431."), "{history}");
}
