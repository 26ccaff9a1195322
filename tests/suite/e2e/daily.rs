//! End to end, the daily driver: typing while a reply streams, an approval prompt with
//! typed-ahead text, and what quitting prints. The real binary in a pseudo-terminal, the fake
//! behind it (see the parent module).

use std::time::Duration;

use crate::support::check::{assert_contains, assert_lacks};
use crate::support::fake::{Reply, U, anthropic as a};
use crate::support::files::write;
use crate::support::headless::{BLOCKING, flags};
use crate::support::pty::{CTRL_C, ENTER, Pty, READY, last_user_text, rfind, served};

/// A reply streamed slowly: its deltas `delay` apart.
fn slow(text: &str, delay: Duration) -> Reply {
    Reply::Sse {
        chunks: a::Stream::new(U::new(1_000, 10)).text(text).events(),
        delay: Some(delay),
    }
}

#[test]
fn a_message_typed_during_a_stream_waits_and_follows_the_reply() {
    let (_rt, server) = served();
    let first = "The first answer streams in slowly, word by word, so there is time to type \
                 another message while it arrives, and it ends here.";
    server.push(slow(first, Duration::from_millis(60)));
    server.script().at(1_200).text("The second answer.");
    let mut t = Pty::open(&server, &["--yes"]);
    t.ask("first question");
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
    // The reply goes on streaming above the queued line, never around it.
    let screen = t.wait("more of the reply with the message still queued", |s| {
        s.contains("while it arrives") && s.contains("⋯ queued")
    });
    let reply = screen.find("while it arrives").unwrap_or(usize::MAX);
    let queued = screen.find("⋯ queued  second message").unwrap_or(0);
    assert!(
        reply < queued,
        "the queued line is below the reply:\n{screen}"
    );
    assert_lacks(&screen, "› second message");
    let screen = t.wait_for("The second answer.");
    assert_lacks(&screen, "⋯ queued");
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
    assert_contains(&history, "it ends here.");
}

#[test]
fn text_typed_ahead_of_an_approval_stays_in_the_input() {
    let (_rt, server) = served();
    server.push(
        a::tool_use(
            "b1",
            "bash",
            r#"{"command":"echo approved > typed.txt"}"#,
            U::new(1_000, 10),
        )
        .with_delay(Duration::from_millis(300)),
    );
    server.script().at(1_200).text("Done: the file is written.");
    // Without the sandbox a command is asked for (a sandboxed one in the workspace runs unasked).
    let mut t = Pty::start(&server, &["--sandbox", "off"]);
    let ws = t.workspace();
    t.wait_for(READY);
    t.ask("write the file");
    // Typing goes on as the prompt appears: "a" (always) and "y" (once) are in these words.
    for c in "can you also say yes".chars() {
        t.keys(&c.to_string());
        std::thread::sleep(Duration::from_millis(40));
    }
    let screen = t.wait("the prompt waiting for the typed text", |s| {
        s.contains("Allow bash?") && s.contains("can you also say yes")
    });
    assert_contains(&screen, "your text stays in the input");
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
    let (_rt, server) = served();
    server.script().a_number_to_remember();
    let mut t = Pty::open(&server, &["--yes"]);
    t.keys("pick a number");
    t.keys(ENTER);
    t.wait_for("Remember the number 7431.");
    // While the turn still runs Ctrl-C interrupts it; on an idle empty input twice quits.
    t.wait("the turn to end", |s| !s.contains("to interrupt"));
    assert!(t.quit().success());
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
    again.ask("what was it?");
    again.wait_for("It was 7431.");
    let reqs = server.requests();
    let history = reqs[1]["messages"].to_string();
    assert_contains(&history, "Remember the number 7431.");
}

/// A five-section handoff document.
const DOC: &str =
    "## Doing\nWork.\n\n## Decided\n- a\n\n## Dead ends\n- b\n\n## Next\nGo on.\n\n## Scene\n- f\n";

/// Wait until no turn runs (the spinner's interrupt hint is gone).
fn idle(t: &mut Pty) {
    t.wait("the turn to end", |s| !s.contains("to interrupt"));
}

/// Type a line and send it.
fn say(t: &mut Pty, text: &str) {
    t.ask(text);
}

/// The system prompt of a request body, all its text blocks.
fn system(body: &serde_json::Value) -> String {
    match &body["system"] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The one run's manifest under `<home>/data`.
fn only_manifest(home: &std::path::Path) -> flower_tui::engine::ledger::Manifest {
    let runs: Vec<_> = std::fs::read_dir(home.join("data/flower/runs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    flower_tui::engine::ledger::Manifest::load(&runs[0].join("manifest.json")).unwrap()
}

#[test]
fn cost_equals_the_ledger_after_three_generations_and_a_continue() {
    let (_rt, server) = served();
    let usage = |input, output| crate::support::fake::U::new(input, output);
    server.push(a::text("Generation one answers.", usage(10_000, 500)));
    server.push(a::text(DOC, usage(11_000, 400)));
    server.push(a::text("Generation two answers.", usage(3_000, 300)));
    server.push(a::text(DOC, usage(4_000, 400)));
    server.push(a::text("Generation three answers.", usage(2_000, 200)));
    let mut t = Pty::open(&server, &["--yes", "--review", "off"]);
    say(&mut t, "start");
    t.wait_for("Generation one answers.");
    for (next, question, answer) in [
        ("generation 2", "continue", "Generation two answers."),
        ("generation 3", "and on", "Generation three answers."),
    ] {
        idle(&mut t);
        say(&mut t, "/handoff");
        t.wait_for(next);
        idle(&mut t);
        say(&mut t, question);
        t.wait_for(answer);
    }
    idle(&mut t);
    assert!(t.quit().success());

    // A later process continues the run: /cost has every generation, the earlier process's too.
    server.push(a::text("After the restart.", usage(5_000, 100)));
    let mut t2 = Pty::start_in(
        t.home(),
        &server,
        &["--yes", "--continue", "--review", "off"],
    );
    t2.wait_for(READY);
    say(&mut t2, "after the restart");
    t2.wait_for("After the restart.");
    idle(&mut t2);
    say(&mut t2, "/cost");
    let screen = t2.wait_for("  total ");
    let m = only_manifest(t.home().path());
    let step = &m.steps[0];
    assert_eq!(step.per_generation.len(), 3, "{:#?}", step.per_generation);
    let row = |label: &str| -> String {
        screen
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no {label:?} row:\n{screen}"))
            .to_string()
    };
    for (label, g) in ["gen 1", "gen 2 · handoff", "gen 3 · handoff"]
        .iter()
        .zip(&step.per_generation)
    {
        let line = row(label);
        assert!(
            line.contains(&format!("${:.4}", g.cost_usd)),
            "{line}\n{:#?}",
            g
        );
        let turns = format!("{} turn", g.num_turns);
        assert_contains(&line, &turns);
    }
    let total = row("total");
    assert_contains(&total, &format!("${:.4}", step.figures.cost_usd));
    let sum: f64 = step.per_generation.iter().map(|g| g.cost_usd).sum();
    assert!((sum - step.figures.cost_usd).abs() < 1e-9);
    assert!(step.figures.cost_usd > 0.0);
    assert!(
        row("gen 3 · handoff").contains("(now)"),
        "the continued generation"
    );
}

#[test]
fn resume_picks_an_older_session_and_continues_it() {
    let (_rt, server) = served();
    server
        .script()
        .text("Alpha is done.")
        .text("Beta is done.")
        .at(1_500)
        .text("The task was alpha.");
    let mut t = Pty::open(&server, &["--yes"]);
    say(&mut t, "the alpha task");
    t.wait_for("Alpha is done.");
    idle(&mut t);
    assert!(t.quit().success());
    // Runs are named by the second they start: the next one must not share it.
    std::thread::sleep(Duration::from_millis(1_100));
    let mut b = Pty::start_in(t.home(), &server, &["--yes"]);
    b.wait_for(READY);
    say(&mut b, "the beta task");
    b.wait_for("Beta is done.");
    idle(&mut b);
    assert!(b.quit().success());

    let mut c = Pty::start_in(t.home(), &server, &["--yes", "--resume"]);
    let screen = c.wait("the picker with both runs", |s| {
        s.contains("sessions of this workspace") && s.contains("the alpha task")
    });
    let beta = screen.find("the beta task").expect("beta listed");
    let alpha = screen.find("the alpha task").expect("alpha listed");
    assert!(beta < alpha, "newest first:\n{screen}");
    // The newest is highlighted; Down goes to the older one.
    c.keys("\x1b[B");
    std::thread::sleep(Duration::from_millis(200));
    c.keys(ENTER);
    c.wait("alpha's conversation replayed", |s| {
        s.contains("Alpha is done.") && !s.contains("sessions of this workspace")
    });
    c.wait_for(READY);
    say(&mut c, "what was the task?");
    c.wait_for("The task was alpha.");
    let reqs = server.requests();
    let last = reqs.last().expect("a request");
    let history = last["messages"].to_string();
    assert_contains(&history, "the alpha task");
    assert_lacks(&history, "the beta task");
}

#[test]
fn at_completes_a_workspace_path_and_attaches_the_file() {
    let (_rt, server) = served();
    server.script().text("The parser reads tokens.");
    let home = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let ws = home.path().join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::create_dir_all(ws.join("target")).unwrap();
    std::fs::write(
        ws.join("src/parser.rs"),
        "// PARSER-MARKER\nfn parse() {}\n",
    )
    .unwrap();
    std::fs::write(ws.join("src/lexer.rs"), "fn lex() {}\n").unwrap();
    std::fs::write(ws.join("target/parsed_junk.rs"), "junk\n").unwrap();
    std::fs::write(ws.join(".gitignore"), "target/\n").unwrap();
    let mut t = Pty::start_in(home, &server, &["--yes"]);
    t.wait_for(READY);
    t.keys("explain @pars");
    let screen = t.wait("the @ popup", |s| {
        s.contains("src/parser.rs") && s.contains("files ·")
    });
    assert!(
        !screen.contains("parsed_junk"),
        ".gitignore is respected:\n{screen}"
    );
    t.keys("\t");
    t.wait_for("explain @src/parser.rs");
    t.keys("please");
    t.keys(ENTER);
    t.wait_for("The parser reads tokens.");
    let screen = t.wait_for("attached src/parser.rs");
    assert_contains(&screen, "› explain @src/parser.rs please");
    let reqs = server.requests();
    let sent = last_user_text(&reqs[0]);
    assert!(
        sent.contains("PARSER-MARKER"),
        "the file travels with the message: {sent}"
    );
}

#[test]
fn agents_md_is_in_the_first_request_and_the_successor_reads_it_again() {
    let (_rt, server) = served();
    server.script().at(31_000).tool("list_dir", "{}"); // crosses at = 30000
    server.script().at(31_500).text(DOC); // the writing turn
    server.script().at(5_000).text("Successor here.");
    let home = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let ws = home.path().join("ws");
    write(
        &ws.join("AGENTS.md"),
        "WS-MARKER-ONE: run the tests first.\n",
    );
    let user = home.path().join("config/flower");
    write(&user.join("AGENTS.md"), "USER-MARKER: answer tersely.\n");
    // The script answers the writing turn in line with the main thread's replies.
    let args = flags(&format!("{BLOCKING} --review 60 --step e2e"));
    let mut t = Pty::start_in(home, &server, &args);
    t.wait_for(READY);
    say(&mut t, "refactor the parser");
    t.wait("the review of the frozen document", |s| {
        s.contains("successor in")
    });
    t.wait_for("Project instructions:");
    // Edited while the document is reviewed: the successor reads the file as it is now.
    std::fs::write(ws.join("AGENTS.md"), "WS-MARKER-TWO: and lint.\n").unwrap();
    t.keys(crate::support::pty::CTRL_S);
    t.wait_for("Successor here.");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let first = system(&reqs[0]);
    assert!(
        first.contains("WS-MARKER-ONE") && first.contains("USER-MARKER"),
        "{first}"
    );
    let successor = system(&reqs[2]);
    assert!(
        successor.contains("WS-MARKER-TWO")
            && !successor.contains("WS-MARKER-ONE")
            && successor.contains("USER-MARKER"),
        "{successor}"
    );
}

#[test]
fn esc_on_a_running_command_keeps_its_partial_output_on_screen_and_for_the_model() {
    let (_rt, server) = served();
    let command =
        "echo PARTIAL-$((0 + 1)); echo PARTIAL-$((1 + 1)); sleep 30; echo AFTER-$((40 + 2))";
    server
        .script()
        .tool(
            "bash",
            serde_json::json!({ "command": command }).to_string(),
        )
        .at(1_200)
        .text("I see the command was stopped.");
    let mut t = Pty::open(&server, &["--yes"]);
    say(&mut t, "build it");
    // Live: the lines are in the cell while the command still runs. The command computes them,
    // so the command line shown in the cell's header cannot satisfy the wait.
    let screen = t.wait("the live output", |s| {
        s.contains("PARTIAL-2") && s.contains("to interrupt")
    });
    assert_lacks(&screen, "exit code");
    t.keys(crate::support::pty::ESC);
    let screen = t.wait("the command marked interrupted", |s| {
        s.contains("interrupted") && !s.contains("to interrupt")
    });
    assert!(
        screen.contains("PARTIAL-1") && screen.contains("PARTIAL-2"),
        "the partial output stays in the cell:\n{screen}"
    );
    assert_lacks(&screen, "AFTER-42");
    assert_eq!(server.requests().len(), 1, "Esc ends the turn");
    say(&mut t, "what happened?");
    t.wait_for("I see the command was stopped.");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let result = reqs[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "tool_result")
        .unwrap_or_else(|| panic!("no tool result in {}", reqs[1]["messages"]));
    let content = result["content"].to_string();
    assert!(
        content.contains("PARTIAL-1") && content.contains("PARTIAL-2"),
        "{content}"
    );
    assert_contains(&content, "the user stopped the command");
    assert_lacks(&content, "AFTER-42");
    assert_eq!(result["is_error"], true);
    assert_eq!(last_user_text(&reqs[1]), "what happened?");
}

#[test]
fn esc_drops_a_queued_message_then_interrupts_and_the_partial_reply_is_drawn_once() {
    let (_rt, server) = served();
    let words: Vec<String> = (1..=80).map(|i| format!("w{i:02}")).collect();
    server.push(slow(&words.join(" "), Duration::from_millis(100)));
    server.script().at(1_200).text("Answer to the follow-up.");
    let mut t = Pty::open(&server, &["--yes"]);
    say(&mut t, "count slowly");
    t.wait_for("w06");
    say(&mut t, "queued then dropped");
    t.wait_for("⋯ queued  queued then dropped");
    // Esc on an empty input drops the queued message first; the reply goes on.
    t.keys(crate::support::pty::ESC);
    let screen = t.wait("the queued message dropped", |s| !s.contains("⋯ queued"));
    assert!(
        screen.contains("to interrupt"),
        "still streaming:
{screen}"
    );
    // The next Esc interrupts the turn.
    t.keys(crate::support::pty::ESC);
    let screen = t.wait("the turn interrupted", |s| {
        s.contains("[interrupted]") && !s.contains("to interrupt")
    });
    // The partial reply once, the rest never streamed.
    assert_eq!(screen.matches("w01").count(), 1, "{screen}");
    assert_eq!(screen.matches("w06").count(), 1, "{screen}");
    assert_eq!(screen.matches("[interrupted]").count(), 1, "{screen}");
    assert_lacks(&screen, "w80");
    assert_lacks(&screen, "queued then dropped");
    assert_eq!(server.requests().len(), 1);
    say(&mut t, "follow-up question");
    let screen = t.wait_for("Answer to the follow-up.");
    assert_eq!(screen.matches("w01").count(), 1, "{screen}");
    let at = |s: &str| screen.find(s).unwrap_or(usize::MAX);
    assert!(at("w06") < at("› follow-up question"), "{screen}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(last_user_text(&reqs[1]), "follow-up question");
    let history = reqs[1]["messages"].to_string();
    assert!(
        history.contains("w06") && !history.contains("w80"),
        "{history}"
    );
    assert_lacks(&history, "queued then dropped");
}
