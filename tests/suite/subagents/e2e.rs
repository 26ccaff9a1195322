//! Subagents on the real binary in a pseudo-terminal: two `task` calls show as live cells (what
//! each was asked, its tool calls, tokens, elapsed), Ctrl-T shows their transcripts, their reports
//! end the cells, `/cost` lists them; a later subagent is stopped by Esc with the turn; a kill -9
//! while two run leaves both calls answered for `--continue`.

use std::time::Duration;

use serde_json::json;

use super::{alpha_and_beta, calls, task};
use crate::support::check::{assert_contains, assert_lacks};
use crate::support::fake::{U, anthropic as a};
use crate::support::pty::{ESC, Pty, READY, served};

const CTRL_T: &str = "\x14";

#[test]
fn two_live_subagent_cells_expand_end_with_their_reports_and_esc_stops_one() {
    let (_rt, server) = served();
    let both = alpha_and_beta("BETA-JOB: grep for beta and report");
    server.push(a::text_then_tools(
        "Splitting the work.",
        &calls(&both),
        U::new(5_000, 100),
    ));
    // Each child calls one tool, then streams its report slowly (the pause is between the
    // chunks): long enough to see them live and to expand them.
    let think = Duration::from_millis(400);
    server.push_for(
        "ALPHA-JOB",
        a::tool_use(
            "ca1",
            "read_file",
            &json!({"path": "a.txt"}).to_string(),
            U::new(30_000, 50),
        ),
    );
    server.push_for(
        "ALPHA-JOB",
        a::text("ALPHA REPORT: a.txt holds one line.", U::new(31_000, 80)).with_delay(think),
    );
    server.push_for(
        "BETA-JOB",
        a::tool_use(
            "cb1",
            "grep",
            &json!({"pattern": "beta"}).to_string(),
            U::new(30_000, 50),
        ),
    );
    server.push_for(
        "BETA-JOB",
        a::text("BETA REPORT: beta is in b.txt:1.", U::new(31_000, 80)).with_delay(think),
    );
    server.script().usage(U::new(5_400, 60)).text("Both done.");

    let mut t = Pty::start(&server, &[]);
    std::fs::write(t.workspace().join("a.txt"), "FILE-A-CONTENT-7781\n").unwrap();
    std::fs::write(t.workspace().join("b.txt"), "beta FILE-B-CONTENT-3302\n").unwrap();
    t.wait_for(READY);
    t.ask("survey the code");
    // Both called their tool and got its result: they think about their reports now.
    t.wait("two live subagent cells", |s| {
        s.contains("2 subagents work…")
            && s.contains("▸ task: alpha survey · 1 tool call · 30.1K tokens")
            && s.contains("▸ task: beta search · 1 tool call · 30.1K tokens")
            && s.matches("thinking…").count() == 2
    });
    t.keys(CTRL_T);
    let open = t.wait("their transcripts", |s| {
        s.contains("▾ task: alpha survey") && s.contains("▸ read_file: a.txt")
    });
    assert_contains(&open, "▸ grep: /beta/");
    assert_contains(&open, "b.txt:1:beta FILE-B-CONTENT-3302");
    assert!(
        open.contains("FILE-A-CONTENT-7781"),
        "the read's output: {open}"
    );
    assert!(
        open.contains("transcript") && open.contains("/sessions/"),
        "{open}"
    );
    let done = t.wait_for("Both done.");
    assert_contains(&done, "ALPHA REPORT: a.txt holds one line.");
    assert_contains(&done, "▾ task: alpha survey · done · 1 tool call");
    // The children's 31K never reached the main gauge.
    assert_lacks(&done, "31.0K/200K");

    t.ask("/cost");
    t.wait_for("subagents (2):");

    // A subagent that would take a minute: Esc stops it with the turn.
    server.push(a::text_then_tools(
        "One more look.",
        &calls(&[task("task_c", "gamma hunt", "GAMMA-JOB: look for gamma")]),
        U::new(6_000, 50),
    ));
    server.push_for(
        "GAMMA-JOB",
        a::text("GAMMA REPORT", U::new(1_000, 10)).with_delay(Duration::from_secs(20)),
    );
    t.ask("and gamma?");
    t.wait("the third subagent live", |s| {
        s.contains("a subagent works…") && s.contains("task: gamma hunt · 0 tool calls")
    });
    t.keys(ESC);
    let stopped = t.wait("the subagent interrupted", |s| {
        s.contains("task: gamma hunt · interrupted")
    });
    assert_lacks(&stopped, "a subagent works…");
}

#[test]
fn kill_9_while_two_subagents_run_then_continue_answers_both_calls() {
    let (_rt, server) = served();
    let both = alpha_and_beta("BETA-JOB: look for beta and report");
    server.push(a::text_then_tools(
        "Splitting the work.",
        &calls(&both),
        U::new(5_000, 100),
    ));
    // Both children stall in their first reply: the process is killed meanwhile.
    let stall = Duration::from_secs(20);
    for key in ["ALPHA-JOB", "BETA-JOB"] {
        server.push_for(
            key,
            a::text("never finished", U::new(1_000, 10)).with_delay(stall),
        );
    }
    let mut t = Pty::open(&server, &[]);
    t.ask("survey the code");
    t.wait("both running", |s| s.contains("2 subagents work…"));
    let home = t.home();
    t.kill_9();
    drop(t);

    // --continue: the next request answers both task calls (as interrupted), nothing dangles.
    server
        .script()
        .usage(U::new(5_500, 20))
        .text("Picking up again.");
    let mut t = Pty::start_in(home, &server, &["--continue"]);
    t.wait_for(READY);
    t.ask("go on");
    t.wait_for("Picking up again.");
    let recorded = server.recorded();
    let last = &recorded.last().unwrap().body;
    let messages = last["messages"].as_array().unwrap();
    let answered: Vec<String> = messages
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .filter_map(|b| b["tool_use_id"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        answered,
        ["task_a", "task_b"],
        "both calls answered: {last:#}"
    );
    assert!(
        !last.to_string().contains("never finished"),
        "nothing of the children reached the parent"
    );
}
