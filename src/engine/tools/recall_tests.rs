//! `recall` over real transcripts on disk: searches, pages, calls found by id, and the errors the
//! model is told.

use std::io::Write;
use std::path::Path;

use serde_json::json;

use super::*;
use crate::engine::ledger::{SessionHeader, Transcript, TranscriptLine, now_stamp};
use crate::engine::types::Message;

fn header(id: &str, generation: u32, parent: Option<&str>) -> SessionHeader {
    SessionHeader {
        session_id: id.into(),
        parent_session: parent.map(str::to_string),
        generation,
        step: "s".into(),
        model: "m".into(),
        provider: "p".into(),
        started: now_stamp(),
        workspace: PathBuf::from("/w"),
        subagent: None,
    }
}

fn write(path: &Path, h: &SessionHeader, messages: &[Message]) {
    let mut t = Transcript::create(path.to_path_buf(), h);
    for m in messages {
        t.append(&TranscriptLine::Message { message: m.clone() });
    }
}

fn call(id: &str, command: &str) -> Message {
    Message {
        role: Role::Assistant,
        content: vec![
            Block::text("Let me run the tests."),
            Block::ToolUse {
                id: id.into(),
                name: "bash".into(),
                input: json!({ "command": command }),
                from_text: false,
            },
        ],
    }
}

fn result(id: &str, content: &str, is_error: bool) -> Message {
    Message {
        role: Role::User,
        content: vec![Block::ToolResult {
            tool_use_id: id.into(),
            content: content.into(),
            is_error,
        }],
    }
}

/// Two retired generations: the first with a failing test run, the second a successor.
fn two_generations(dir: &Path) -> Vec<Source> {
    let g1 = dir.join("a.jsonl");
    write(
        &g1,
        &header("a", 1, None),
        &[
            Message::user("Fix the Parser bug in src/parser.rs"),
            call("t1", "cargo test -p parser"),
            result(
                "t1",
                "running 3 tests\ntest lex ... ok\ntest nested_quotes ... FAILED\nerror[E0308]: mismatched types at src/parser.rs:88",
                true,
            ),
            Message::assistant("The nested quotes case fails: the lexer stops at the inner quote."),
        ],
    );
    // A crash left a torn line in the middle of it (a later process appended after it).
    let mut f = std::fs::OpenOptions::new().append(true).open(&g1).unwrap();
    f.write_all(b"{\"type\":\"message\",\"mess\n").unwrap();
    drop(f);
    let mut t = Transcript::open_append(g1.clone());
    t.append(&TranscriptLine::Message {
        message: Message::user("and after that, the lexer docs"),
    });
    let g2 = dir.join("b.jsonl");
    write(
        &g2,
        &header("b", 2, Some("a")),
        &[
            Message::user("You are taking over… <handoff> the parser </handoff>"),
            Message::assistant("Continuing with the lexer."),
        ],
    );
    vec![
        Source {
            generation: 1,
            path: g1,
        },
        Source {
            generation: 2,
            path: g2,
        },
    ]
}

fn recall(sources: &[Source], input: serde_json::Value) -> Result<String, ToolError> {
    let map = input.as_object().cloned().unwrap();
    run(&Args::new(NAME, &map), sources, &AtomicBool::new(false)).map(|o| o.content)
}

#[test]
fn words_find_messages_in_any_case_with_their_generation_role_and_tool() {
    let dir = tempfile::tempdir().unwrap();
    let sources = two_generations(dir.path());
    let out = recall(&sources, json!({"query": "NESTED quotes"})).unwrap();
    assert!(
        out.starts_with("recall: 2 messages match the words \"NESTED quotes\" in generations 1–2; page 1 of 1 (matches 1–2)."),
        "{out}"
    );
    // The tool result names its call, and shows the hit line with a line either side.
    assert!(
        out.contains("[generation 1 · message 4 · tool result (error) · bash: cargo test -p parser]\n     2\ttest lex ... ok\n     3\ttest nested_quotes ... FAILED\n     4\terror[E0308]"),
        "{out}"
    );
    assert!(
        out.contains("[generation 1 · message 5 · assistant]"),
        "{out}"
    );
    // Every word must appear.
    let none = recall(&sources, json!({"query": "nested zebra"})).unwrap();
    assert!(none.starts_with("recall: no message matches"), "{none}");
    assert!(none.contains("(8 messages searched)"), "{none}");
    // The torn line is skipped and said.
    assert!(
        out.contains("Note: generation 1's transcript has 1 unreadable line (skipped)."),
        "{out}"
    );
    // The message after the torn line is still found.
    let after = recall(&sources, json!({"query": "lexer docs"})).unwrap();
    assert!(
        after.contains("[generation 1 · message 6 · user]"),
        "{after}"
    );
}

#[test]
fn a_regex_and_one_generation() {
    let dir = tempfile::tempdir().unwrap();
    let sources = two_generations(dir.path());
    let out = recall(
        &sources,
        json!({"query": r"E0\d{3}", "regex": true, "generation": 1}),
    )
    .unwrap();
    assert!(
        out.contains("1 message matches /E0\\d{3}/ in generation 1;"),
        "{out}"
    );
    assert!(out.contains("E0308"), "{out}");
    // The briefing of a successor is labelled as such.
    let b = recall(&sources, json!({"query": "taking over", "generation": "2"})).unwrap();
    assert!(
        b.contains("[generation 2 · message 1 · user · the handoff briefing]"),
        "{b}"
    );
    // A tool call is searchable by its arguments.
    let c = recall(&sources, json!({"query": "-p parser"})).unwrap();
    assert!(c.contains("tool call · bash: cargo test -p parser]"), "{c}");
    let missing = recall(&sources, json!({"query": "x", "generation": 7}))
        .unwrap_err()
        .0;
    assert!(
        missing.contains("no earlier generation 7") && missing.contains("generations 1–2"),
        "{missing}"
    );
}

#[test]
fn a_regex_that_does_not_compile_is_a_tool_error() {
    let dir = tempfile::tempdir().unwrap();
    let sources = two_generations(dir.path());
    let e = recall(&sources, json!({"query": "(unclosed", "regex": true}))
        .unwrap_err()
        .0;
    assert!(
        e.starts_with("`recall`: `(unclosed` is not a valid regular expression:"),
        "{e}"
    );
    assert!(e.contains("\"regex\": false"), "{e}");
    // The same text as words is fine.
    assert!(recall(&sources, json!({"query": "(unclosed"})).is_ok());
    let e = recall(&sources, json!({"query": "  "})).unwrap_err().0;
    assert!(e.contains("needs a `query`"), "{e}");
    let e = recall(&[], json!({"query": "x"})).unwrap_err().0;
    assert!(e.contains("first generation"), "{e}");
}

#[test]
fn many_matches_page_and_a_long_message_reads_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.jsonl");
    let mut messages: Vec<Message> = (1..=25)
        .map(|i| Message::assistant(format!("note {i}: the cache key")))
        .collect();
    let long: Vec<String> = (1..=450)
        .map(|i| {
            if i == 300 {
                "here is the cache key bug".to_string()
            } else {
                format!("line {i}")
            }
        })
        .collect();
    messages.push(Message::user(long.join("\n")));
    write(&path, &header("c", 1, None), &messages);
    let sources = vec![Source {
        generation: 1,
        path,
    }];
    let p1 = recall(&sources, json!({"query": "cache key"})).unwrap();
    assert!(p1.contains("26 messages match"), "{p1}");
    assert!(p1.contains("page 1 of 3 (matches 1–10)"), "{p1}");
    assert!(p1.contains("the same call with `\"page\": 2`"), "{p1}");
    assert_eq!(p1.matches("[generation 1 · message").count(), 10);
    let p3 = recall(&sources, json!({"query": "cache key", "page": 3})).unwrap();
    assert!(p3.contains("page 3 of 3 (matches 21–26)"), "{p3}");
    assert!(!p3.contains("More matches"), "{p3}");
    // The long one shows its hit in context and how to read it whole.
    assert!(
        p3.contains("   299\tline 299\n   300\there is the cache key bug\n   301\tline 301\n"),
        "{p3}"
    );
    assert!(
        p3.contains(
            "(message 26 has 450 lines: {\"generation\": 1, \"message\": 26} reads it whole)"
        ),
        "{p3}"
    );
    // Past the last page: the last page.
    let p9 = recall(&sources, json!({"query": "cache key", "page": 9})).unwrap();
    assert!(p9.contains("page 3 of 3"), "{p9}");
    // Read whole, a page at a time, like read_file.
    let whole = recall(&sources, json!({"generation": 1, "message": 26})).unwrap();
    assert!(
        whole.starts_with("[generation 1 · message 26 · user]\n     1\tline 1\n"),
        "{whole}"
    );
    assert!(
        whole.ends_with("(lines 1–200 of 450; the rest: the same call with `\"offset\": 201`)\n"),
        "{whole}"
    );
    let rest = recall(
        &sources,
        json!({"generation": 1, "message": 26, "offset": 401, "limit": 100}),
    )
    .unwrap();
    assert!(rest.contains("   450\tline 450\n"), "{rest}");
    assert!(!rest.contains("the rest:"), "{rest}");
    // The only generation needs no `generation`.
    assert!(recall(&sources, json!({"message": 1})).is_ok());
    let e = recall(&sources, json!({"message": 99})).unwrap_err().0;
    assert!(e.contains("has no message 99 (it has 26)"), "{e}");
    let e = recall(&sources, json!({"message": 26, "offset": 999}))
        .unwrap_err()
        .0;
    assert!(e.contains("past its end"), "{e}");
}

#[test]
fn long_lines_are_cut_around_the_hit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.jsonl");
    let line = format!("{}NEEDLE{}", "a".repeat(5_000), "b".repeat(5_000));
    write(&path, &header("d", 1, None), &[Message::assistant(line)]);
    let sources = vec![Source {
        generation: 1,
        path,
    }];
    let out = recall(&sources, json!({"query": "needle"})).unwrap();
    assert!(out.contains("…aaaa") && out.contains("NEEDLEbbbb"), "{out}");
    assert!(out.len() < 1_000, "{}", out.len());
    assert!(out.contains("reads it whole"), "{out}");
}

#[test]
fn secrets_stay_masked_and_a_missing_transcript_is_said() {
    let secret = "sk-recall-test-SECRET-77aa11";
    crate::engine::secrets::register(secret);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.jsonl");
    write(
        &path,
        &header("e", 1, None),
        &[Message::user(format!("my key is {secret}"))],
    );
    let sources = vec![
        Source {
            generation: 1,
            path,
        },
        Source {
            generation: 2,
            path: dir.path().join("gone.jsonl"),
        },
    ];
    let out = recall(&sources, json!({"query": "my key"})).unwrap();
    assert!(!out.contains(secret), "{out}");
    assert!(out.contains("sk-r****"), "{out}");
    assert!(
        out.contains("Note: generation 2's transcript cannot be read"),
        "{out}"
    );
}

#[test]
fn spec_and_summary() {
    let s = |g: &[u32]| {
        g.iter()
            .map(|g| Source {
                generation: *g,
                path: PathBuf::new(),
            })
            .collect::<Vec<_>>()
    };
    assert!(
        spec(&s(&[1, 2, 3]))
            .description
            .contains("(generations 1–3)")
    );
    assert!(spec(&s(&[1])).description.contains("(generations 1)"));
    assert!(spec(&s(&[1, 3])).description.contains("(generations 1, 3)"));
    assert_eq!(
        summary(&json!({"query": "parser bug"})),
        "recall: \"parser bug\""
    );
    assert_eq!(
        summary(&json!({"query": "E0\\d+", "regex": true, "generation": 2})),
        "recall: /E0\\d+/ in generation 2"
    );
    assert_eq!(
        summary(&json!({"generation": 1, "message": 12})),
        "recall: generation 1, message 12"
    );
    assert_eq!(summary(&json!({})), "recall");
}

#[tokio::test]
async fn the_async_call_answers_and_bad_arguments_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let sources = two_generations(dir.path());
    let out = run_call(&json!({"query": "lexer"}), sources.clone()).await;
    assert!(!out.is_error && out.content.contains("lexer"), "{out:?}");
    let out = run_call(&json!("not an object"), sources.clone()).await;
    assert!(out.is_error, "{out:?}");
    let out = run_call(&json!({"query": 5}), sources).await;
    assert!(
        out.is_error && out.content.contains("must be a string"),
        "{out:?}"
    );
}

#[test]
fn binary_garbage_and_a_line_without_an_end_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.jsonl");
    write(
        &path,
        &header("f", 1, None),
        &[Message::user("before the garbage")],
    );
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(b"\xff\xfe\x00binary\n\n   \n").unwrap();
    f.write_all(
        serde_json::to_string(&TranscriptLine::Message {
            message: Message::assistant("after the garbage"),
        })
        .unwrap()
        .as_bytes(),
    )
    .unwrap();
    // The last line has no newline (a crash mid-write of the one after would leave it so).
    drop(f);
    let sources = vec![Source {
        generation: 1,
        path,
    }];
    let out = recall(&sources, json!({"query": "garbage"})).unwrap();
    assert!(out.contains("2 messages match"), "{out}");
    assert!(out.contains("1 unreadable line (skipped)"), "{out}");
}

#[test]
fn a_call_id_reads_that_calls_output_whole() {
    let dir = tempfile::tempdir().unwrap();
    let sources = two_generations(dir.path());
    let out = recall(&sources, json!({"call": "t1"})).unwrap();
    assert_eq!(
        out,
        "[generation 1 · message 4 · tool result (error) · bash: cargo test -p parser]\n     \
         1\trunning 3 tests\n     2\ttest lex ... ok\n     3\ttest nested_quotes ... FAILED\n     \
         4\terror[E0308]: mismatched types at src/parser.rs:88\n"
    );
    // Paged like a message.
    let page = recall(&sources, json!({"call": "t1", "offset": 3, "limit": 1})).unwrap();
    assert!(
        page.contains("     3\ttest nested_quotes ... FAILED\n"),
        "{page}"
    );
    assert!(page.contains("(lines 3–3 of 4;"), "{page}");
    let none = recall(&sources, json!({"call": "t9"})).unwrap_err().0;
    assert_eq!(
        none,
        "`recall`: no result of a call `t9` in generations 1–2."
    );
    assert_eq!(
        summary(&json!({"call": "toolu_01"})),
        "recall: the output of call toolu_01"
    );
    // The spec that searches this generation too says so and offers `call`.
    let own = spec_with_own(&sources, 2);
    assert!(
        own.description.starts_with(
            "Search the transcript of this conversation (generation 2) as it really was, and of \
             your predecessors, the earlier generations of this step (generations 1)"
        ),
        "{}",
        own.description
    );
    assert!(own.input_schema["properties"]["call"].is_object());
    let first = spec_with_own(&sources[1..], 2);
    assert!(
        first
            .description
            .starts_with("Search the transcript of this conversation (generation 2) as it really was. Old tool output is masked"),
        "{}",
        first.description
    );
}
