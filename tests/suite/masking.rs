//! Observation masking and the `Touched` section, engine in process against the fake: old tool
//! output masked in large steps with the prefix unchanged between them (on the request bodies
//! the fake logged), `recall` bringing a masked output back, the line still reached and a
//! handoff written on the masked prefix, every document (written, rescued, degraded)
//! carrying the facts of the tool log, and the config keys that set masking reaching the real
//! binary's requests.

use flower_tui::engine::mask::{MaskMode, MaskSettings};
use flower_tui::engine::policy::HandoffMode;
use flower_tui::engine::protocol::{DocumentSource, Event, HandoffPhase};
use flower_tui::engine::session::EngineParams;
use serde_json::{Value, json};

use crate::support::check::{assert_contains, picked};
use crate::support::fake::{Gate, Recorded, U, anthropic as a, is_writing};
use crate::support::files::write;
use crate::support::harness::{Harness, start, turn_end};
use crate::support::headless::run;
use crate::support::requests::{tool_names, unmarked};

fn messages(r: &Recorded) -> Vec<Value> {
    unmarked(&r.body)["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// `a`'s messages start `b`'s: all equal, the last of `a` may have grown by blocks in `b`.
fn extends(a: &[Value], b: &[Value]) -> bool {
    let Some((last, head)) = a.split_last() else {
        return true;
    };
    let (Some(got), Some(want)) = (
        b.get(head.len()).and_then(|m| m["content"].as_array()),
        last["content"].as_array(),
    ) else {
        return false;
    };
    b.len() >= a.len() && b[..head.len()] == *head && got.starts_with(want)
}

/// Every tool result's text in a request, in order.
fn results(r: &Recorded) -> Vec<String> {
    messages(r)
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// `n` files of 101 lines (~4,000 characters), the first line of each naming it.
fn files(h: &Harness, n: usize) {
    for i in 0..n {
        let body: String = std::iter::once(format!("FILE-{i:02} marker line"))
            .chain((0..100).map(|l| format!("{i:02}-{l:03} some text of the file to read")))
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(h.workspace.join(format!("f{i:02}.txt")), body).unwrap();
    }
}

fn read(i: usize) -> String {
    json!({ "path": format!("f{i:02}.txt") }).to_string()
}

/// A 200k window (the line far away); masking keeps the newest ~2,000 tokens and steps when
/// that frees 2% of the window (4,000 tokens, about four reads).
fn masked(h: &Harness) -> EngineParams {
    let mut p = h.params(200_000, 50_000);
    p.masking = MaskSettings {
        mode: MaskMode::On,
        recent_tokens: 2_000,
        step_percent: 2,
    };
    p
}

#[tokio::test]
async fn old_output_is_masked_in_steps_and_the_prefix_holds_between_them() {
    let h = Harness::new().await;
    files(&h, 14);
    for i in 0..14 {
        h.server.push(a::tool_use_counted(
            &format!("t{i:02}"),
            "read_file",
            &read(i),
            20,
        ));
    }
    // The model wants the first file's text back: the stub says how.
    h.server.push(a::tool_use_counted(
        "back",
        "recall",
        r#"{"call": "t00"}"#,
        20,
    ));
    h.server.push(a::text_counted("FILE-00 is back.", 20));
    let mut r = start(masked(&h));
    let ev = r.completed_turn("read the files in order").await;
    let rec = h.server.recorded();
    assert_eq!(rec.len(), 16);
    // recall is offered from the first generation on while masking is on.
    assert!(tool_names(&rec[0].body).contains(&"recall".to_string()));

    // Where the prefix changed: the steps.
    let mut steps = Vec::new();
    for k in 1..rec.len() {
        let (prev, now) = (messages(&rec[k - 1]), messages(&rec[k]));
        if extends(&prev, &now) {
            // Between steps the prompt cache reads everything the last request sent.
            assert_eq!(rec[k].counted.cache_read, rec[k - 1].tokens, "request {k}");
        } else {
            steps.push(k);
        }
    }
    assert!(steps.len() >= 2, "steps at {steps:?}");
    assert!(
        steps.windows(2).all(|w| w[1] - w[0] >= 3),
        "steps are large: {steps:?}"
    );
    // Before the first step nothing is masked; after it the oldest reads are stubs that name
    // the call, its size and how to get it back.
    let before = results(&rec[steps[0] - 1]);
    assert!(before.iter().all(|r| !r.starts_with("[output masked")));
    let after = results(&rec[steps[0]]);
    let first = after.first().unwrap();
    assert!(
        first.starts_with(
            "[output masked to save context: read_file {\"path\":\"f00.txt\"} returned "
        ) && first.ends_with(
            "Get it back with recall {\"call\": \"t00\"}, or read_file again (the file may have changed since)]"
        ),
        "{first}"
    );
    // The newest results are never masked.
    let last = results(rec.last().unwrap());
    assert!(last.last().unwrap().contains("FILE-00 marker line"));
    let masked_now = last
        .iter()
        .filter(|r| r.starts_with("[output masked"))
        .count();
    assert!(masked_now >= 8, "{masked_now} masked");
    // Masking shrank what is sent: the last request is far below the unmasked history.
    let unmasked: usize = last
        .iter()
        .map(|r| {
            if r.starts_with("[output masked") {
                4_500
            } else {
                r.len()
            }
        })
        .sum();
    let sent: usize = last.iter().map(String::len).sum();
    assert!(sent * 3 < unmasked, "{sent} of {unmasked}");
    // The gauge hears what masking saves: nothing before the first step, then about the stubbed
    // outputs' size (each ~4,500 characters, ~1,100 tokens), growing with each step.
    let saved: Vec<u64> = picked!(
        ev,
        Event::Usage { masked_tokens, estimated: false, .. } => *masked_tokens
    );
    assert_eq!(saved.len(), 16, "{saved:?}");
    assert_eq!(saved.first(), Some(&0), "{saved:?}");
    assert!(saved.windows(2).all(|w| w[0] <= w[1]), "{saved:?}");
    let last_saved = saved.last().copied().unwrap_or(0);
    assert!(
        last_saved >= 1_000 * masked_now as u64 && last_saved <= 1_200 * masked_now as u64,
        "{last_saved} for {masked_now} stubs"
    );

    // recall returned the masked output whole, from this generation's own transcript.
    let back = r.events.iter().find_map(|e| match e {
        Event::ToolResult {
            id,
            output,
            is_error,
            ..
        } if id == "back" => Some((output.clone(), *is_error)),
        _ => None,
    });
    let (output, is_error) = back.expect("the recall result");
    assert!(!is_error, "{output}");
    assert_contains(&output, "FILE-00 marker line");
    assert_contains(&output, "00-099 some text of the file to read");
    // The transcript kept every output as it was.
    let transcript = std::fs::read_dir(r.run_root.join("sessions"))
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect::<String>();
    assert!(!transcript.contains("[output masked"));
    r.shutdown().await;
}

#[tokio::test]
async fn masking_off_sends_every_output() {
    let h = Harness::new().await;
    files(&h, 8);
    for i in 0..8 {
        h.server.push(a::tool_use_counted(
            &format!("t{i}"),
            "read_file",
            &read(i),
            20,
        ));
    }
    h.server.push(a::text_counted("done", 20));
    let mut p = masked(&h);
    p.masking = MaskSettings::OFF;
    let mut r = start(p);
    r.completed_turn("read").await;
    let rec = h.server.recorded();
    assert!(!tool_names(&rec[0].body).contains(&"recall".to_string()));
    for k in 1..rec.len() {
        assert!(extends(&messages(&rec[k - 1]), &messages(&rec[k])));
    }
    assert!(
        results(rec.last().unwrap())
            .iter()
            .all(|r| !r.starts_with("[output masked"))
    );
    r.shutdown().await;
}

const DOC: &str = "## Doing\nReading files.\n## Decided\n(empty)\n## Dead ends\n(empty)\n## Next\nRead the rest.\n## Scene\n(empty)\n";

/// A session with known reads, an edit, a new file, a deletion and a failing command, then a
/// reply whose usage crosses the line (30k of a 40k window).
fn facts_session(h: &Harness) {
    files(h, 6);
    let calls: [(&str, Value); 9] = [
        ("read_file", json!({"path": "f00.txt"})),
        (
            "read_file",
            json!({"path": "f01.txt", "offset": 10, "limit": 20}),
        ),
        ("read_file", json!({"path": "f02.txt"})),
        ("read_file", json!({"path": "f03.txt"})),
        (
            "edit_file",
            json!({"path": "f00.txt", "old_string": "FILE-00 marker line", "new_string": "FILE-00 edited\nand one more line"}),
        ),
        (
            "write_file",
            json!({"path": "new.txt", "content": "a\nb\nc\n"}),
        ),
        ("bash", json!({"command": "rm f02.txt"})),
        ("bash", json!({"command": "sh -c 'echo boom; exit 3'"})),
        ("bash", json!({"command": "ls"})),
    ];
    for (name, input) in calls {
        h.script().at(2_000).tool(name, input.to_string());
    }
}

/// The `## Touched` section of a document.
fn touched(doc: &str) -> &str {
    let at = doc.find("## Touched\n").expect("a Touched section");
    &doc[at..]
}

fn assert_facts(doc: &str) {
    let t = touched(doc);
    for line in [
        "From the tool log of generation 1",
        "- `f00.txt`: edited +2 -1; read all 101 lines",
        "- `new.txt`: created +3",
        "- `f02.txt`: deleted -101; read all 101 lines",
        "- `f01.txt`: read 10-29 of 101",
        "- `f03.txt`: read all 101 lines",
        "- `sh -c 'echo boom; exit 3'` → exit 3",
        "- `rm f02.txt` → exit 0",
    ] {
        assert!(t.contains(line), "missing {line:?} in:\n{t}");
    }
    // Failing commands first.
    let (fail, ok) = (t.find("exit 3").unwrap(), t.find("`ls` → exit 0").unwrap());
    assert!(fail < ok, "{t}");
}

#[tokio::test]
async fn a_handoff_is_written_on_the_masked_prefix_when_the_line_is_reached() {
    let h = Harness::new().await;
    facts_session(&h);
    // The tenth reply crosses the line whatever masking saved: the writing starts beside it.
    h.script().at(31_000).tool("read_file", read(4));
    // The order of what runs at once is the test's: the document waits until the main thread's
    // next request is out, that request's reply until the document is frozen; the turnover
    // comes at the boundary after it.
    let (written, frozen) = (Gate::new(), Gate::new());
    h.script().at(31_200).held(&frozen).tool("list_dir", "{}");
    h.script().at(5_000).text("successor: done");
    h.script()
        .usage(U::new(31_000, 300))
        .writing()
        .held(&written)
        .text(DOC);
    let mut p = masked(&h);
    p.settings.thresholds = flower_tui::engine::context::Thresholds::new(40_000, 10_000);
    // Small steps, so this short session is masked when the line is reached.
    p.masking.recent_tokens = 500;
    p.masking.step_percent = 1;
    p.handoff.mode = HandoffMode::Background;
    let mut r = start(p);
    let turn = r.send_turn("work on the files").await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while h
        .server
        .recorded()
        .iter()
        .filter(|r| !is_writing(&r.body))
        .count()
        < 11
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the request after the cut"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    written.open();
    r.until(|e| matches!(e, Event::Handoff(HandoffPhase::Frozen { .. })))
        .await;
    frozen.open();
    let ev = r.until_end(turn).await;
    assert_eq!(turn_end(&ev), "completed", "{ev:#?}");
    let done = r.events.iter().find_map(|e| match e {
        Event::Handoff(HandoffPhase::Done { source, path, .. }) => Some((*source, path.clone())),
        _ => None,
    });
    let (source, path) = done.expect("a handoff");
    assert_eq!(source, DocumentSource::Written);
    let doc = std::fs::read_to_string(path.expect("a file")).unwrap();
    // The model's sections, then the engine's.
    assert!(doc.find("## Scene").unwrap() < doc.find("## Touched").unwrap());
    assert_facts(&doc);
    let rec = h.server.recorded();
    let writing = rec
        .iter()
        .find(|r| is_writing(&r.body))
        .expect("a writing request");
    let crossing = rec
        .iter()
        .filter(|r| !is_writing(&r.body))
        .nth(9)
        .expect("the crossing request");
    // The writing request sends the crossing request's (masked) messages, then the prompt.
    let (w, m) = (messages(writing), messages(crossing));
    assert!(
        extends(&m, &w),
        "the writing request is not on the main prefix"
    );
    assert!(
        results(writing)
            .iter()
            .any(|r| r.starts_with("[output masked")),
        "masked before the line"
    );
    // The successor reads the file as it is: Touched included.
    let succ = rec.last().unwrap();
    let first = succ.body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert_contains(first, "## Touched");
    r.shutdown().await;
}

/// The text of the document a handoff of `source` finished with.
fn done_document(events: &[Event], source: DocumentSource) -> String {
    let path = events.iter().find_map(|e| match e {
        Event::Handoff(HandoffPhase::Done {
            source: s, path, ..
        }) if *s == source => path.clone(),
        _ => None,
    });
    std::fs::read_to_string(path.unwrap_or_else(|| panic!("a {source:?} document"))).unwrap()
}

#[tokio::test]
async fn degraded_and_rescued_documents_carry_the_facts_too() {
    // Degraded: the writing reply lacks the required sections (blocking mode degrades it).
    let h = Harness::new().await;
    facts_session(&h);
    h.script().at(31_000).tool("read_file", read(4));
    h.script().at(31_000).writing().text("I would rather not.");
    h.script().at(5_000).text("successor: done");
    let mut p = h.params(40_000, 10_000);
    p.handoff.mode = HandoffMode::Blocking;
    let mut r = start(p);
    r.completed_turn("work on the files").await;
    let doc = done_document(&r.events, DocumentSource::Degraded);
    assert_contains(&doc, "[DEGRADED");
    assert_facts(&doc);
    r.shutdown().await;

    // Rescued: the writing request overflows, the rescue on a reduced history writes it.
    let h = Harness::new().await;
    facts_session(&h);
    h.script().at(31_000).tool("read_file", read(4));
    h.server.push_writing(a::error_status(
        400,
        "invalid_request_error",
        "prompt is too long: 41000 tokens > 40000 maximum",
    ));
    h.script().usage(U::new(20_000, 300)).writing().text(DOC);
    h.script().at(5_000).text("successor: done");
    let mut p = h.params(40_000, 10_000);
    p.handoff.mode = HandoffMode::Blocking;
    let mut r = start(p);
    r.completed_turn("work on the files").await;
    let doc = done_document(&r.events, DocumentSource::Rescued);
    assert_facts(&doc);
    r.shutdown().await;
}

#[tokio::test]
async fn the_successor_carries_the_earlier_facts_as_the_user_left_them() {
    let h = Harness::new().await;
    facts_session(&h);
    h.script().at(31_000).tool("read_file", read(4));
    h.script().usage(U::new(31_000, 300)).writing().text(DOC);
    // The successor reads one more file, then its own handoff.
    h.script().at(31_500).tool("read_file", read(5));
    h.script().usage(U::new(31_000, 300)).writing().text(DOC);
    h.script().at(5_000).text("third: done");
    let mut p = h.params(40_000, 10_000);
    p.handoff.mode = HandoffMode::Blocking;
    p.front_end = flower_tui::engine::policy::FrontEnd::Interactive { review: true };
    let mut r = start(p);
    r.send_turn("work on the files").await;
    // The first review: the user adds a line to Touched, then ends the review.
    let frozen = r.frozen().await;
    let (handoff, path) = (frozen.handoff, frozen.path.expect("a file"));
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{text}Also edited deploy.yaml by hand.\n")).unwrap();
    r.send(flower_tui::engine::protocol::Op::ReviewDone { handoff })
        .await;
    let frozen = r.frozen().await;
    let (handoff, path) = (frozen.handoff, frozen.path.expect("a file"));
    let second = std::fs::read_to_string(&path).unwrap();
    let t = touched(&second);
    assert_contains(t, "From the tool log of generation 2");
    assert_contains(t, "- `f05.txt`: read all 101 lines");
    assert_contains(t, "Earlier generation 1, in brief:");
    assert!(
        t.contains("- edited: `f00.txt` (+2 -1)") && t.contains("- created: `new.txt` (+3)"),
        "{t}"
    );
    assert_contains(t, "- deleted: `f02.txt` (-101)");
    assert_contains(t, "- read: `f01.txt`, `f03.txt`, `f04.txt`");
    assert_contains(t, "- note: Also edited deploy.yaml by hand.");
    r.send(flower_tui::engine::protocol::Op::ReviewDone { handoff })
        .await;
    r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    r.shutdown().await;
}

/// The real binary, headless, reading six 12,000-character files in a 100k window with
/// `config` as its config file: how many of its requests carry a masked output.
async fn masked_requests_with_config(config: &str) -> usize {
    let server = crate::support::fake::FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let cfg = home.path().join("config/flower");
    write(&cfg.join("config.toml"), config);
    for i in 0..6 {
        std::fs::write(home.path().join(format!("f{i:02}.txt")), read_body(i)).unwrap();
        server
            .script()
            .usage(U::new(5_000, 20))
            .tool("read_file", read(i));
    }
    server.script().at(5_000).text("Read them all.");
    let mut c = crate::support::headless::bin(home.path());
    c.env("ANTHROPIC_API_KEY", crate::support::harness::KEY)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .args(["-p", "read the files", "--yes", "--window", "100000"]);
    let out = run(c).await.output;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::support::headless::stderr(&out)
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 7);
    reqs.iter()
        .filter(|r| r.to_string().contains("[output masked to save context"))
        .count()
}

/// A file of 12,000 characters, its lines numbered by file.
fn read_body(i: usize) -> String {
    (0..200)
        .map(|n| format!("file {i:02} line {n:03} {}\n", "x".repeat(40)))
        .collect()
}

#[tokio::test]
async fn the_config_keys_set_masking_in_the_binary() {
    // On by default: the oldest reads are masked once that frees a tenth of the window.
    assert!(masked_requests_with_config("").await > 0);
    // Off: every output is sent.
    assert_eq!(
        masked_requests_with_config("mask_tool_results = \"off\"\n").await,
        0
    );
    // A recent window larger than the whole session: nothing is old enough to mask.
    assert_eq!(
        masked_requests_with_config("mask_recent_tokens = \"60k\"\n").await,
        0
    );
}
