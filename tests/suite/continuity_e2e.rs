//! Continuity on the real binary: the TUI in a pseudo-terminal for the
//! request in flight, the verbatim briefing and the signals; two headless processes at once in
//! one workspace for the documents.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use serde_json::Value;

use crate::support::fake::{FakeServer, Reply, U, anthropic as a};
use crate::support::harness::{KEY, all_files};
use crate::support::pty::{CTRL_S, END, ENTER, ESC, Pty, READY, kept_beside, runtime};

const UP: &str = "\x1b[A";
const HOME: &str = "\x1b[H";

fn u(input: u64) -> U {
    U {
        input,
        output: 10,
        cache_creation: 0,
        cache_read: 0,
    }
}

/// A five-section document with a marker that says whose it is.
fn doc(marker: &str) -> String {
    format!(
        "## Doing\nWork of {marker}.\n## Decided\n- {marker} decided this.\n## Dead ends\n(empty)\n\
         ## Next\nContinue {marker}.\n## Scene\n- src/{marker}.rs\n"
    )
}

/// The text blocks of the first message of a request body.
fn first_blocks(body: &Value) -> Vec<String> {
    body["messages"][0]["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The last run's manifest under `<home>/data`.
fn manifest(home: &Path) -> Value {
    let runs = home.join("data/flower/runs");
    let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
    for e in std::fs::read_dir(&runs).unwrap().flatten() {
        let m = e.path().join("manifest.json");
        if let Ok(t) = std::fs::metadata(&m).and_then(|md| md.modified())
            && newest.as_ref().is_none_or(|(n, _)| t > *n)
        {
            newest = Some((t, m));
        }
    }
    let path = newest.expect("a run").1;
    serde_json::from_str(&read(&path)).unwrap()
}

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

fn bin(home: &Path, server: &FakeServer) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_flower-tui"));
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .current_dir(home);
    c
}

fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// One process's script: two handoffs, each document marked with `who` and its generation.
fn script(server: &FakeServer, who: &str) {
    let slow = std::time::Duration::from_millis(300);
    server.push(a::tool_use("t1", "list_dir", "{}", u(31_000)).with_delay(slow));
    server.push(a::text(&doc(&format!("{who}-g1")), u(31_500)));
    server.push(a::tool_use("t2", "list_dir", "{}", u(31_000)));
    server.push(a::text(&doc(&format!("{who}-g2")), u(31_500)));
    server.push(a::text(&format!("{who} finished"), u(5_000)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn case4_two_processes_on_one_step_never_lose_or_swap_documents() {
    for pair in 0..10 {
        let home = Arc::new(tempfile::tempdir().unwrap());
        let ws = home.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let servers = [FakeServer::start().await, FakeServer::start().await];
        let names = ["alpha", "beta"];
        for (s, who) in servers.iter().zip(names) {
            script(s, who);
        }
        let runs: Vec<_> = servers
            .iter()
            .zip(names)
            .map(|(s, who)| {
                let mut c = bin(home.path(), s);
                c.args([
                    "--yes",
                    // The blocking flow: these cases script the replies in order.
                    "--handoff-mode",
                    "blocking",
                    "--window",
                    "40000",
                    "--headroom",
                    "10000",
                    "--step",
                    "same",
                ])
                .arg("--workspace")
                .arg(&ws)
                .args(["-p", &format!("task of {who}")]);
                let child = c
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap();
                tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
            })
            .collect();
        let mut outs = Vec::new();
        for r in runs {
            outs.push(r.await.unwrap());
        }
        for (out, who) in outs.iter().zip(names) {
            assert_eq!(
                out.status.code(),
                Some(0),
                "pair {pair} {who}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        // Exactly one of the two says it took another name.
        let renamed: Vec<bool> = outs
            .iter()
            .map(|o| {
                json_lines(o).iter().any(|e| {
                    e["type"] == "notice"
                        && e["message"]
                            .as_str()
                            .is_some_and(|m| m.contains("works as step same-2"))
                })
            })
            .collect();
        assert_eq!(renamed.iter().filter(|r| **r).count(), 1, "pair {pair}");
        // Every document on disk: both processes' two generations, live or archived.
        let notes = ws.join(".flower/notes");
        let docs: Vec<String> = all_files(&notes)
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .map(|p| read(p))
            .collect();
        for who in names {
            for g in ["g1", "g2"] {
                let marker = format!("Work of {who}-{g}.");
                assert_eq!(
                    docs.iter().filter(|d| d.contains(&marker)).count(),
                    1,
                    "pair {pair}: {marker} in {docs:#?}"
                );
            }
        }
        assert_eq!(docs.len(), 4, "pair {pair}: {docs:#?}");
        // Each successor was briefed with its own process's document.
        for (s, who) in servers.iter().zip(names) {
            let reqs = s.requests();
            assert_eq!(reqs.len(), 5, "pair {pair} {who}");
            for (i, g) in [(2, "g1"), (4, "g2")] {
                let first = first_blocks(&reqs[i]).join("");
                assert!(
                    first.contains(&format!("Work of {who}-{g}.")),
                    "pair {pair} {who} {g}"
                );
                let other = names
                    .iter()
                    .find(|n| **n != who)
                    .copied()
                    .unwrap_or_default();
                assert!(
                    !first.contains(&format!("Work of {other}")),
                    "pair {pair}: {who} got {other}'s"
                );
            }
        }
        assert!(
            !ws.join(".flower/locks").exists()
                || std::fs::read_dir(ws.join(".flower/locks"))
                    .unwrap()
                    .next()
                    .is_none(),
            "no lock file left behind"
        );
    }
}

/// Start a review in a fresh home, type a line into the side editor without saving, send
/// `signal`; the program exits cleanly. Returns the home and the path of the frozen file.
fn review_then_signal(
    server: &FakeServer,
    step: &str,
    signal: &str,
    typed: &str,
) -> (Arc<tempfile::TempDir>, PathBuf) {
    server.push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    server.push(a::text(&doc("signals"), u(31_500)));
    let mut t = Pty::start(
        server,
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
            step,
        ],
    );
    t.wait_for(READY);
    t.keys("handle the signals");
    t.keys(ENTER);
    let file = format!("handoff-{step}.md");
    t.wait("the review", |s| {
        s.contains(&file) && s.contains("successor in")
    });
    t.keys(&"\x1b[B".repeat(40));
    t.keys(END);
    t.keys(ENTER);
    t.keys(typed);
    t.wait("the typed line, unsaved", |s| {
        s.contains(typed) && s.contains("paused")
    });
    let sent = Command::new("kill")
        .args([signal, &t.pid().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = t.wait_exit();
    assert!(
        status.success(),
        "{signal}: {status}; screen:\n{}",
        t.screen()
    );
    let raw = String::from_utf8_lossy(&t.raw()).into_owned();
    assert!(
        raw.contains("are kept in"),
        "the way out says where: {raw:?}"
    );
    assert_eq!(server.requests().len(), 2, "no successor was started");
    let home = t.home();
    let notes = t.workspace().join(".flower/notes");
    (home, notes.join(file))
}

#[test]
fn case3_sigterm_keeps_the_edits_commits_nothing_and_continue_restores_them() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    let typed = "- typed before SIGTERM";
    let (home, file) = review_then_signal(&server, "s3t", "-TERM", typed);
    let kept = kept_beside(&file);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(read(&kept[0]).contains(typed));
    assert!(!read(&file).contains(typed), "the file itself is as frozen");
    let m = manifest(home.path());
    let step = &m["steps"][0];
    assert_eq!(
        step["handoffs"].as_array().map(Vec::len),
        Some(0),
        "{step:#}"
    );
    assert_eq!(step["retired"].as_array().map(Vec::len), Some(0));
    assert_eq!(
        step["frozen"]["unsaved"],
        kept[0].to_string_lossy().as_ref()
    );

    // --continue: the review reopens and offers the edits; r restores, Ctrl-S hands them over.
    server.push(a::text("Successor with the restored edits.", u(4_000)));
    let mut t = Pty::start_in(home, &server, &["--continue", "--review", "60"]);
    t.wait("the restore offer", |s| s.contains("r restore / d discard"));
    assert!(
        t.screen().contains("was never turned over"),
        "{}",
        t.screen()
    );
    assert_eq!(server.requests().len(), 2);
    t.keys("r");
    t.wait_for(typed);
    t.keys(CTRL_S);
    t.wait_for("send a message");
    assert!(read(&file).contains(typed));
    t.keys("go on");
    t.keys(ENTER);
    t.wait_for("Successor with the restored edits.");
    let reqs = server.requests();
    let blocks = first_blocks(&reqs[2]);
    assert!(blocks[0].contains(typed), "{blocks:#?}");
    assert_eq!(&blocks[blocks.len() - 2..], ["handle the signals", "go on"]);
}

#[test]
fn case3_sighup_keeps_the_edits_and_a_plain_start_can_discard_them() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    let typed = "- typed before the terminal closed";
    let (home, file) = review_then_signal(&server, "s3h", "-HUP", typed);
    let kept = kept_beside(&file);
    assert_eq!(kept.len(), 1, "{kept:?}");
    server.push(a::text("Successor with the frozen file.", u(4_000)));
    let mut t = Pty::start_in(home, &server, &["--review", "60"]);
    t.wait("the restore offer", |s| s.contains("r restore / d discard"));
    t.keys("d");
    t.wait_for("discarded the unsaved edits");
    assert!(
        kept_beside(&file).is_empty(),
        "discard removes the kept file"
    );
    t.keys(ESC);
    t.wait_for("send a message");
    t.keys("go on");
    t.keys(ENTER);
    t.wait_for("Successor with the frozen file.");
    let blocks = first_blocks(&server.requests()[2]);
    assert!(blocks[0].contains("Continue signals.") && !blocks[0].contains(typed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn case4_a_tui_in_review_keeps_its_document_while_another_process_hands_off() {
    let tui_server = FakeServer::start().await;
    tui_server.push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    tui_server.push(a::text(&doc("tui"), u(31_500)));
    tui_server.push(a::text("TUI successor here.", u(4_000)));
    let mut t = Pty::start(
        &tui_server,
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
            "same",
        ],
    );
    t.wait_for(READY);
    t.keys("the tui's task");
    t.keys(ENTER);
    t.wait("the review", |s| {
        s.contains("handoff-same.md") && s.contains("successor in")
    });

    // A headless process on the same step, in the same workspace and data dir, hands off twice.
    let other = FakeServer::start().await;
    script(&other, "headless");
    let home = t.home();
    let mut c = bin(home.path(), &other);
    c.args([
        "--yes",
        // The blocking flow: these cases script the replies in order.
        "--handoff-mode",
        "blocking",
        "--window",
        "40000",
        "--headroom",
        "10000",
        "--step",
        "same",
    ])
    .arg("--workspace")
    .arg(t.workspace())
    .args(["-p", "the headless task"]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        json_lines(&out).iter().any(|e| e["message"]
            .as_str()
            .is_some_and(|m| m.contains("works as step same-2"))),
        "the second process says it took another name"
    );
    let notes = t.workspace().join(".flower/notes");
    assert!(read(&notes.join("handoff-same-2.md")).contains("Work of headless-g2."));
    // The review still shows (and the TUI's file still holds) the TUI's own document.
    let screen = t.wait_for("Work of tui.");
    assert!(!screen.contains("headless"), "{screen}");
    assert!(read(&notes.join("handoff-same.md")).contains("Work of tui."));
    t.keys(ESC);
    t.wait_for("TUI successor here.");
    let first = first_blocks(&tui_server.requests()[2]).join("");
    assert!(
        first.contains("Work of tui.") && !first.contains("headless"),
        "{first}"
    );
    let first = first_blocks(&other.requests()[4]).join("");
    assert!(first.contains("Work of headless-g2.") && !first.contains("Work of tui."));
}

#[test]
fn case3_a_closed_terminal_keeps_the_edits_records_them_and_exits_cleanly() {
    // The terminal itself goes (a closed window, `tmux kill-session`): SIGHUP, and every write to
    // the terminal fails from then on. The edits must be kept, the ledger must say where (so the
    // next start offers them), and nothing may panic on the way out.
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    server.push(a::tool_use("t1", "list_dir", "{}", u(31_000)));
    server.push(a::text(&doc("signals"), u(31_500)));
    let step = "s3gone";
    let typed = "- typed before the window closed";
    let mut t = Pty::start(
        &server,
        &[
            "--yes",
            "--handoff-mode",
            "blocking",
            "--window",
            "40000",
            "--headroom",
            "10000",
            "--review",
            "60",
            "--step",
            step,
        ],
    );
    t.wait_for(READY);
    t.keys("handle the signals");
    t.keys(ENTER);
    let file = format!("handoff-{step}.md");
    t.wait("the review", |s| {
        s.contains(&file) && s.contains("successor in")
    });
    t.keys(&"\x1b[B".repeat(40));
    t.keys(END);
    t.keys(ENTER);
    t.keys(typed);
    t.wait("the typed line, unsaved", |s| {
        s.contains(typed) && s.contains("paused")
    });
    t.hang_up(" ");
    let status = t.wait_exit();
    assert!(status.success(), "{status}");
    let home = t.home();
    let file = t.workspace().join(".flower/notes").join(file);
    let kept = kept_beside(&file);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(read(&kept[0]).contains(typed));
    let m = manifest(home.path());
    let step = &m["steps"][0];
    assert_eq!(step["handoffs"].as_array().map(Vec::len), Some(0));
    assert_eq!(
        step["frozen"]["unsaved"],
        kept[0].to_string_lossy().as_ref(),
        "{step:#}"
    );
    // Nothing panicked on the way out.
    let logs = all_files(&home.path().join("data/flower/logs"));
    for log in logs {
        let text = read(&log);
        assert!(!text.contains("panicked"), "{text}");
    }
}
