//! The TUI in a pseudo-terminal: the request in flight reaches the successor verbatim, the
//! successor reads the file as the user left it, and a review killed with `kill -9` reopens.

use super::*;

#[test]
fn case1_an_overflowing_second_message_reaches_the_successor_verbatim() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    // "hello" crosses the line: a complete document, then generation 2 answers.
    server.push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    server.push(a::text(&doc("greeting"), u(31_500)));
    server.push(a::text("Hello! What shall we do?", u(1_000)));
    // The second message overflows: a degraded document, then generation 3 answers.
    server.push(Reply::Status {
        status: 400,
        headers: vec![],
        body: r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 45000 tokens > 40000 maximum"}}"#.into(),
    });
    server.push(a::text("Successor: renaming parse_all now.", u(3_000)));
    let mut t = Pty::start(
        &server,
        &[
            "--yes",
            // The blocking flow: these cases script the replies in order.
            "--handoff-mode",
            "blocking",
            "--window",
            "40000",
            "--headroom",
            "10000",
            "--review",
            "off",
            "--step",
            "s1",
        ],
    );
    t.wait_for(READY);
    t.keys("hello");
    t.wait_for("hello");
    t.keys(ENTER);
    t.wait_for("Hello! What shall we do?");
    let second = "rename parse_all to parse in every file";
    t.keys(second);
    t.wait_for(second);
    t.keys(ENTER);
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
    assert!(
        file.contains(&format!(
            "## Scene\nRequest in progress at the cut:\n{second}"
        )),
        "{file}"
    );
    assert!(
        file.contains("Original task of this step:\nhello"),
        "{file}"
    );
    // What the complete document had settled is carried forward, marked.
    let mark = "[carried forward from the generation 1 handoff, not checked since]";
    assert!(
        file.contains(&format!("## Decided\n{mark}\n- greeting decided this.")),
        "{file}"
    );
    assert!(
        file.contains(&format!("{mark}\n- src/greeting.rs")),
        "{file}"
    );
}

#[test]
fn case2_the_successor_reads_the_file_as_the_user_left_it() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    server.push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    server.push(a::text(
        &format!("Sure, here it is:\n\n{}", doc("parser")),
        u(31_500),
    ));
    server.push(a::text("Successor on the parser.", u(5_000)));
    let mut t = Pty::start(
        &server,
        &[
            "--yes",
            // The blocking flow: these cases script the replies in order.
            "--handoff-mode",
            "blocking",
            "--window",
            "40000",
            "--headroom",
            "10000",
            "--review",
            "60",
            "--step",
            "s2",
        ],
    );
    t.wait_for(READY);
    let task = "refactor the parser";
    t.keys(task);
    t.wait_for(task);
    t.keys(ENTER);
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
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    server.push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    server.push(a::text(&doc("lexer"), u(31_500)));
    let args = [
        "--yes",
        // The blocking flow: these cases script the replies in order.
        "--handoff-mode",
        "blocking",
        "--window",
        "40000",
        "--headroom",
        "10000",
        "--review",
        "60",
    ];
    let mut t = Pty::start(&server, &[&args[..], &["--step", "s3"]].concat());
    t.wait_for(READY);
    let task = "fix the lexer";
    t.keys(task);
    t.keys(ENTER);
    t.wait("the review", |s| {
        s.contains("handoff-s3.md") && s.contains("successor in")
    });
    let home = t.home();
    let pid = t.pid();
    let killed = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    t.wait_exit();
    drop(t);
    let m = manifest(home.path());
    let step = &m["steps"][0];
    assert_eq!(
        step["handoffs"].as_array().map(Vec::len),
        Some(0),
        "{step:#}"
    );
    assert_eq!(step["frozen"]["request"][0], task, "{step:#}");

    // A plain start in the same workspace: the review is reopened, not generation 1 in silence.
    server.push(a::text("Generation 2 on the lexer.", u(4_000)));
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
    let m = manifest(t.home().path());
    let step = &m["steps"][0];
    assert!(step.get("frozen").is_none(), "{step:#}");
    assert_eq!(step["generations"], 2);
    assert_eq!(step["handoffs"][0]["generation"], 2);
}
