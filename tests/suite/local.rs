//! A local model server, as a local-model user runs one: headless runs of the real binary against
//! the fake acting as llama.cpp with an 8K context. The window comes from `/props` (a given
//! `--window` still wins), the small window gets the lean prompt and a scaled handoff line, a
//! pressure handoff writes its document before any request overflows, a tool call the model wrote
//! as text is run, a reply cut off by the full window hands off instead of ending the turn, and
//! a message too large for the window (counted in bytes, as tokenizers see it) is spilled before it
//! is sent.
//! At the engine level: the token estimates learn a denser tokenizer from the usage reports.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::check::{assert_contains, assert_success, handoff_phases, of, picked};
use crate::support::fake::local::{self, LocalServer};
use crate::support::fake::openai as o;
use crate::support::fake::{FakeServer, Reply, U};
use crate::support::files::write;
use crate::support::harness::{Harness, start};
use crate::support::headless::{lines, stderr};

const MODEL: &str = "qwen2.5-coder-0.5b-instruct";
const DOC: &str = "## Doing\nReading the four notes files one by one.\n\n## Decided\n- Read them in order: the task says so.\n\n## Dead ends\n(empty)\n\n## Next\nRead notes/d.txt and summarise all four.\n\n## Scene\n- notes/\n";

/// The binary against `server` as a keyless local OpenAI-compatible endpoint (`…/v1`), in
/// `home/ws`, headless, approving its own calls, no review pause.
fn bin(home: &Path, server: &FakeServer, args: &[&str]) -> Command {
    let ws = home.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let mut c = crate::support::headless::bin(home);
    c.env("OPENAI_BASE_URL", format!("{}/v1", server.base_url()))
        .env("OPENAI_MODEL", MODEL)
        .current_dir(&ws)
        .args(["--provider", "openai", "--yes", "--review", "off"])
        .args(args);
    c
}

async fn output(c: Command) -> Output {
    crate::support::headless::run(c).await.success().output
}

/// The chat requests the server received (not the questions about itself).
fn chats(server: &FakeServer) -> Vec<crate::support::fake::Recorded> {
    server
        .recorded()
        .into_iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .collect()
}

/// Scripts one reply of `text`, OpenAI-style, reporting `usage`.
fn openai_text(server: &FakeServer, usage: U, text: &str) {
    server.script().openai().usage(usage).text(text);
}

/// The fake model acting as a llama.cpp server with an 8K window.
async fn llama_8k() -> FakeServer {
    let server = FakeServer::start().await;
    server.act_as(LocalServer::llama(8_192));
    server
}

#[tokio::test]
async fn the_window_comes_from_props_and_a_given_window_wins() {
    let server = llama_8k().await;
    openai_text(&server, U::new(900, 3), "Hello.");
    let home = tempfile::tempdir().unwrap();
    let out = output(bin(home.path(), &server, &["-p", "hi", "-v"])).await;
    let err = stderr(&out);
    for want in [
        "window: 8192 (the server (llama.cpp /props))",
        "\nat: 5120\n",
        "\nwarn_at: 4096\n",
        "\nprompt: lean",
    ] {
        assert_contains(&err, want);
    }
    assert!(
        server
            .probes()
            .contains(&("GET".to_string(), "/props".to_string())),
        "{:?}",
        server.probes()
    );
    // The request: the output cap of an 8K window, the lean prompt and tool descriptions.
    let body = &chats(&server)[0].body;
    assert_eq!(body["max_tokens"], 2_048);
    let system = body["messages"][0]["content"].as_str().unwrap_or_default();
    assert!(system.len() < 2_000, "{system}");
    let read = body["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["function"]["name"] == "read_file"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        read["function"]["description"],
        "Read a text file as numbered lines (`offset`, `limit` page through it)."
    );
    assert_eq!(lines(&out).last().unwrap()["text"], "Hello.");

    // `--window` is the user's word: the server is not asked.
    let server = llama_8k().await;
    openai_text(&server, U::new(900, 3), "Hello.");
    let home = tempfile::tempdir().unwrap();
    let out = output(bin(
        home.path(),
        &server,
        &["-p", "hi", "-v", "--window", "100000"],
    ))
    .await;
    let err = stderr(&out);
    assert!(
        err.contains("window: 100000 (--window)") && err.contains("prompt: full"),
        "{err}"
    );
    assert!(server.probes().is_empty(), "{:?}", server.probes());
}

#[tokio::test]
async fn a_server_that_is_none_of_them_leaves_the_window_as_it_was() {
    let server = FakeServer::start().await;
    openai_text(&server, U::new(900, 3), "Hello.");
    let home = tempfile::tempdir().unwrap();
    let out = output(bin(home.path(), &server, &["-p", "hi", "-v"])).await;
    let err = stderr(&out);
    // Asked, answered 404 everywhere: the guess from the name (the Qwen family's 32K).
    assert!(!server.probes().is_empty());
    assert!(
        err.lines()
            .any(|l| l.starts_with("window: 32768 (") && !l.contains("server")),
        "{err}"
    );
}

/// Four notes of about 1,000 tokens each.
fn notes(ws: &Path) {
    let dir = ws.join("notes");
    std::fs::create_dir_all(&dir).unwrap();
    for (i, name) in ["a", "b", "c", "d"].iter().enumerate() {
        let line = format!("note {name}: the measurement of run {i} was within bounds.\n");
        std::fs::write(dir.join(format!("{name}.txt")), line.repeat(60)).unwrap();
    }
}

/// A call of `read_file` on `notes/NAME.txt`, usage as counted.
fn read_note(name: &str) -> Reply {
    let args = format!(r#"{{"path": "notes/{name}.txt"}}"#);
    let id = format!("call_{name}");
    local::counted(40, move |s| s.tool(&id, "read_file", &args))
}

#[tokio::test]
async fn a_pressure_handoff_writes_its_document_before_any_overflow() {
    let server = llama_8k().await;
    let home = tempfile::tempdir().unwrap();
    notes(&home.path().join("ws"));
    for name in ["a", "b", "c", "d", "c", "d"] {
        server.push(read_note(name));
    }
    server.push(local::counted(20, |s| {
        s.text("All four notes are within bounds.")
    }));
    server.push_writing(local::counted(300, |s| s.text(DOC)));
    let out = output(bin(
        home.path(),
        &server,
        &[
            "-p",
            "Read the four files in notes/ one by one, then summarise them.",
            "--handoff-mode",
            "blocking",
        ],
    ))
    .await;
    let events = lines(&out);
    let phases = handoff_phases(&events);
    assert!(
        phases.starts_with(&["near", "writing", "frozen", "done"]),
        "{phases:?}"
    );
    let done = of(&events, "handoff")
        .into_iter()
        .find(|e| e["phase"] == "done")
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (&done["source"], &done["degraded"]),
        (&Value::from("written"), &Value::from(false)),
        "{done}"
    );
    // The line was crossed below the window: no request was ever refused.
    let context = done["context"].as_u64().unwrap_or(0);
    assert!((5_120..8_192).contains(&context), "{done}");
    for r in chats(&server) {
        assert!(r.tokens <= 8_192, "{} tokens sent", r.tokens);
    }
    assert!(of(&events, "error").is_empty(), "{events:?}");
    // Native calls are not marked as read from text.
    let calls = of(&events, "tool_call");
    assert!(
        !calls.is_empty()
            && calls.iter().all(|c| c["summary"]
                .as_str()
                .is_some_and(|s| !s.contains("from text"))),
        "{calls:?}"
    );
    let last = events.last().unwrap();
    assert_eq!(
        (&last["type"], &last["is_error"]),
        (&Value::from("result"), &Value::from(false))
    );
    let doc = std::fs::read_to_string(home.path().join("ws/.flower/notes").join(
        done["path"].as_str().map_or("", |p| {
            Path::new(p)
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
        }),
    ))
    .unwrap_or_default();
    assert_contains(&doc, "Read notes/d.txt");
}

#[tokio::test]
async fn a_tool_call_written_as_text_is_run() {
    let server = llama_8k().await;
    let home = tempfile::tempdir().unwrap();
    let ws = home.path().join("ws");
    write(&ws.join("notes.txt"), "the build broke on Tuesday\n");
    // What Qwen2.5-Coder 0.5B writes through llama.cpp when asked to read a file.
    let call = "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"notes.txt\"}}\n```";
    server
        .script()
        .openai()
        .usage(U::new(1_200, 30))
        .text(call)
        .usage(U::new(1_300, 12))
        .text("The notes say the build broke on Tuesday.");
    let out = output(bin(home.path(), &server, &["-p", "What do my notes say?"])).await;
    let events = lines(&out);
    let calls = of(&events, "tool_call");
    assert_eq!(calls.len(), 1, "{events:?}");
    assert_eq!(calls[0]["name"], "read_file");
    // The call says it was read from the text (the TUI's tool cell shows the summary).
    assert!(
        calls[0]["summary"]
            .as_str()
            .is_some_and(|s| s.ends_with(" · read from text")),
        "{calls:?}"
    );
    let results = of(&events, "tool_result");
    assert!(
        results[0]["output"]
            .as_str()
            .is_some_and(|o| o.contains("the build broke on Tuesday")),
        "{results:?}"
    );
    assert!(
        of(&events, "notice").iter().any(|n| n["message"]
            .as_str()
            .is_some_and(|m| m.contains("as text") && m.contains("read_file"))),
        "{events:?}"
    );
    // The second request answers a native call with a tool message.
    let second = &chats(&server)[1].body;
    let msgs = second["messages"].as_array().cloned().unwrap_or_default();
    let assistant = msgs.iter().find(|m| m["role"] == "assistant").cloned();
    let assistant = assistant.unwrap_or_default();
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "read_file");
    assert_eq!(assistant["content"], Value::Null);
    assert!(msgs.iter().any(|m| m["role"] == "tool"));
    assert_eq!(
        events.last().unwrap()["text"],
        "The notes say the build broke on Tuesday."
    );
    // The transcript keeps that the call was read from text.
    let sessions = crate::support::harness::all_files(&home.path().join("data"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .collect::<String>();
    assert!(sessions.contains(r#""from_text":true"#), "{sessions}");
}

#[tokio::test]
async fn a_reply_cut_off_by_the_full_window_hands_off() {
    let server = llama_8k().await;
    let home = tempfile::tempdir().unwrap();
    notes(&home.path().join("ws"));
    server.push(read_note("a"));
    // The model writes until the context is full: HTTP 200, `finish_reason: "length"`.
    server.push(local::fills(
        8_192,
        "The first note says the measurement of run 0 was",
    ));
    server.push_writing(local::counted(300, |s| s.text(DOC)));
    server.push(local::counted(20, |s| s.text("Note a is within bounds.")));
    let out = output(bin(
        home.path(),
        &server,
        &["-p", "Read notes/a.txt and tell me what it says."],
    ))
    .await;
    let events = lines(&out);
    let done = of(&events, "handoff")
        .into_iter()
        .find(|e| e["phase"] == "done")
        .cloned()
        .unwrap_or_default();
    assert_eq!(done["generation"], 2, "{events:?}");
    assert!(of(&events, "error").is_empty(), "{events:?}");
    // The cut-off text was taken back, not kept as the answer.
    assert!(
        of(&events, "stream")
            .iter()
            .any(|s| s["state"] == "discarded"),
        "{events:?}"
    );
    let last = events.last().unwrap();
    assert_eq!(last["text"], "Note a is within bounds.");
    assert_eq!(last["is_error"], false);
}

/// A reply whose usage counts the request's JSON at `chars_per_token` (a tokenizer denser than
/// four characters a token, as on code and JSON), calling `read_file` on `path` or answering.
fn dense(chars_per_token: f64, call: Option<&str>) -> Reply {
    let call = call.map(|p| format!(r#"{{"path": "{p}"}}"#));
    Reply::lazy(move |body, _| {
        let prompt = (body.to_string().len() as f64 / chars_per_token) as u64;
        let s = o::Stream::new(U::new(prompt, 30));
        match &call {
            Some(args) => s.tool("call_1", "read_file", args).reply(),
            None => s.text("done").reply(),
        }
    })
}

#[tokio::test]
async fn estimates_learn_the_models_tokens_per_character() {
    use flower_tui::engine::protocol::Event;
    let h = Harness::new().await;
    h.file("big.json", "{\"k\": [1, 2, 3]}\n".repeat(600));
    h.server.push(dense(2.5, Some("big.json")));
    h.server.push(dense(2.5, None));
    let mut p = h.params(200_000, 50_000);
    p.provider.client = h.openai();
    p.settings.model = "dense-model".into();
    let mut r = start(p);
    let events = r.turn("read big.json").await;
    // After the first response: its context, then the estimate once the result is appended.
    let contexts: Vec<(u64, bool)> = picked!(
        events,
        Event::Usage { context, estimated, .. } => (*context, *estimated)
    );
    let reported = contexts
        .iter()
        .position(|(_, estimated)| !estimated)
        .unwrap();
    let (after, estimated) = contexts[reported + 1];
    assert!(estimated, "{contexts:?}");
    let grown = after - contexts[reported].0;
    // The result is 600 numbered lines, about 14,400 characters: four characters a token would
    // say 3,600; the ratio learned from the first response's usage (about 2.3 characters a
    // token, the request's JSON keys and escapes counted at 2.5) says over 6,000.
    assert!((5_000..8_000).contains(&grown), "{grown} ({contexts:?})");
    r.shutdown().await;
    // Kept for the model, for the next run.
    let store = std::fs::read_to_string(h.data.join("tokens.json")).unwrap();
    let saved: serde_json::Value = serde_json::from_str(&store).unwrap();
    let ratio = saved["dense-model"]["chars_per_token"]
        .as_f64()
        .unwrap_or(0.0);
    assert!((1.8..3.0).contains(&ratio), "{store}");
}

#[tokio::test]
async fn a_message_the_window_cannot_hold_is_spilled_before_it_is_sent() {
    let server = llama_8k().await;
    openai_text(&server, U::new(1_500, 6), "I will read the file.");
    let home = tempfile::tempdir().unwrap();
    // 9,000 characters, 27,000 bytes: over 6,000 tokens as a tokenizer counts them (a quarter of
    // that by characters), so the message cannot go whole into an 8K window.
    let task = format!("Translate this: {}", "数".repeat(9_000));
    let mut c = bin(home.path(), &server, &["-p", "-"]);
    c.stdin(std::process::Stdio::piped());
    let out = tokio::task::spawn_blocking(move || {
        let mut child = c
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        if let Some(mut stdin) = child.stdin.take() {
            use std::io::Write;
            stdin.write_all(task.as_bytes()).unwrap();
        }
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    assert_success(&out);
    let events = lines(&out);
    assert!(
        of(&events, "notice").iter().any(|n| n["message"]
            .as_str()
            .is_some_and(|m| m.contains("saved in full to"))),
        "{events:?}"
    );
    let sent = chats(&server);
    assert_eq!(sent.len(), 1);
    assert!(sent[0].tokens <= 8_192, "{} tokens sent", sent[0].tokens);
    assert!(of(&events, "error").is_empty(), "{events:?}");
}
