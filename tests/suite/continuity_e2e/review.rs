//! The TUI in a pseudo-terminal: the request in flight reaches the successor verbatim, the
//! successor reads the file as the user left it, and a review killed with `kill -9` reopens.

use super::*;
use crate::support::check::assert_contains;

#[test]
fn case1_an_overflowing_second_message_reaches_the_successor_verbatim() {
    let (_rt, server) = served();
    // "hello" crosses the line: a complete document, then generation 2 answers.
    server
        .script()
        .over_the_line(&doc("greeting"))
        .at(1_000)
        .text("Hello! What shall we do?");
    // The second message overflows: a degraded document, then generation 3 answers.
    server
        .script()
        .reply(a::too_long(45_000, 40_000))
        .at(3_000)
        .text("Successor: renaming parse_all now.");
    let args = flags(&format!("{BLOCKING} --review off --step s1"));
    let mut t = Pty::open(&server, &args);
    t.ask("hello");
    t.wait_for("Hello! What shall we do?");
    let second = "rename parse_all to parse in every file";
    t.ask(second);
    t.wait_for("Successor: renaming parse_all now.");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 5);
    // Generation 2 was briefed with "hello" after the document, generation 3 with the second
    // message after the degraded one: each the request that was cut, verbatim, a block of its own.
    assert_eq!(
        first_blocks(&reqs[2]).last().map(String::as_str),
        Some("hello")
    );
    let blocks = first_blocks(&reqs[4]);
    assert_eq!(reqs[4]["messages"].as_array().map(Vec::len), Some(1));
    assert!(blocks[0].contains("[DEGRADED"), "{blocks:#?}");
    assert_eq!(
        blocks.last().map(String::as_str),
        Some(second),
        "{blocks:#?}"
    );
    let file = read(&t.workspace().join(".flower/notes/handoff-s1.md"));
    assert_contains(
        &file,
        &format!("## Scene\nRequest in progress at the cut:\n{second}"),
    );
    assert_contains(&file, "Original task of this step:\nhello");
    // What the complete document had settled is carried forward, marked.
    let mark = "[carried forward from the generation 1 handoff, not checked since]";
    assert_contains(
        &file,
        &format!("## Decided\n{mark}\n- greeting decided this."),
    );
    assert_contains(&file, &format!("{mark}\n- src/greeting.rs"));
}

#[test]
fn case2_the_successor_reads_the_file_as_the_user_left_it() {
    let (_rt, server) = served();
    server
        .script()
        .at(31_000)
        .tool("list_dir", "{}")
        .at(31_500)
        .text(&format!("Sure, here it is:\n\n{}", doc("parser")))
        .at(5_000)
        .text("Successor on the parser.");
    let args = flags(&format!("{BLOCKING} --review 60 --step s2"));
    let mut t = Pty::open(&server, &args);
    let task = "refactor the parser";
    t.ask(task);
    t.wait("the side editor with its countdown", |s| {
        s.contains("handoff-s2.md") && s.contains("successor in")
    });
    // The header line and a line above the first section, typed in the side editor.
    t.keys(&UP.repeat(60));
    t.keys(HOME);
    t.keys(END);
    t.keys(" [header kept]");
    t.keys(ENTER);
    t.keys("Typed above the sections:   keep   my spacing");
    t.wait("the typed lines", |s| {
        s.contains("[header kept]") && s.contains("keep   my spacing")
    });
    t.keys(CTRL_S);
    t.wait_for("Successor on the parser.");
    let file = read(&t.workspace().join(".flower/notes/handoff-s2.md"));
    let mut lines = file.lines();
    let header = lines.next().unwrap_or_default();
    assert!(
        header.starts_with("# Handoff · step s2 · generation 1 ·")
            && header.ends_with(" [header kept]"),
        "{file}"
    );
    assert_eq!(
        lines.next(),
        Some("Typed above the sections:   keep   my spacing")
    );
    let reqs = server.requests();
    let blocks = first_blocks(&reqs[2]);
    assert!(
        blocks[0].ends_with(&format!("<handoff>\n{file}</handoff>\n")),
        "the file byte for byte:\n{}",
        blocks[0]
    );
    assert_eq!(blocks.last().map(String::as_str), Some(task));
}

#[test]
fn case3_kill_9_in_the_review_reopens_it_at_the_next_plain_start() {
    let (_rt, server) = served();
    server.script().over_the_line(&doc("lexer"));
    let args = flags(&format!("{BLOCKING} --review 60"));
    let mut t = Pty::open(&server, &[&args[..], &["--step", "s3"]].concat());
    let task = "fix the lexer";
    t.keys(task);
    t.keys(ENTER);
    t.wait("the review", |s| {
        s.contains("handoff-s3.md") && s.contains("successor in")
    });
    let home = t.home();
    t.kill_9();
    drop(t);
    let step = &manifest(home.path())["steps"][0];
    assert_eq!(
        step["handoffs"].as_array().map(Vec::len),
        Some(0),
        "{step:#}"
    );
    assert_eq!(step["frozen"]["request"][0], task, "{step:#}");

    // A plain start in the same workspace: the review is reopened, not generation 1 in silence.
    server.script().at(4_000).text("Generation 2 on the lexer.");
    let mut t = Pty::start_in(home, &server, &args);
    t.wait("the reopened review", |s| {
        s.contains("was never turned over")
            && s.contains("handoff-s3.md")
            && s.contains("successor in")
    });
    assert_eq!(
        server.requests().len(),
        2,
        "nothing sent before the review ends"
    );
    t.keys(ESC);
    t.wait_for("send a message");
    t.keys("go on");
    t.keys(ENTER);
    t.wait_for("Generation 2 on the lexer.");
    let reqs = server.requests();
    let blocks = first_blocks(&reqs[2]);
    assert!(blocks[0].contains("Continue lexer."), "{blocks:#?}");
    assert_eq!(&blocks[blocks.len() - 2..], [task, "go on"]);
    let step = &manifest(t.home().path())["steps"][0];
    assert!(step.get("frozen").is_none(), "{step:#}");
    assert_eq!(step["generations"], 2);
    assert_eq!(step["handoffs"][0]["generation"], 2);
}
