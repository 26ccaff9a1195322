//! `!command`: the user's own command runs in the sandbox at once, with no model request; its
//! output goes with the next message. A 10 MB output is spilled as a tool's is, a command that
//! never ends is stopped by an abort, one sent while a turn streams waits for it.

use std::time::Duration;

use flower_tui::engine::protocol::{Event, ExitReason, Op, TurnId};

use crate::support::check::{assert_contains, assert_lacks, assert_starts_with};
use crate::support::fake::body::last_user_text;
use crate::support::fake::{Reply, U, anthropic as a};
use crate::support::harness::{Harness, Running, exit_reason, start};

async fn shell(r: &mut Running, command: &str) -> TurnId {
    let turn = r.new_turn();
    let command = command.to_string();
    r.send(Op::Shell { turn, command }).await;
    turn
}

/// A fresh session whose model will answer the next message with `answer`, and the turn of the
/// shell `command` it was sent first.
async fn shell_first(h: &Harness, answer: &str, command: &str) -> (Running, TurnId) {
    h.server.push(a::text(answer, U::new(1_000, 20)));
    let mut r = start(h.params(200_000, 50_000));
    let turn = shell(&mut r, command).await;
    (r, turn)
}

#[tokio::test]
async fn a_shell_line_runs_without_a_request_and_its_output_goes_with_the_next_message() {
    let h = Harness::new().await;
    std::fs::write(h.workspace.join("notes.txt"), "alpha\nbeta\n").unwrap();
    h.server
        .push(a::text("I see alpha and beta.", U::new(1_000, 20)));
    let mut r = start(h.params(200_000, 50_000));
    let turn = shell(&mut r, "cat notes.txt; echo shell-said-$((6*7))").await;
    let ev = r.until_end(turn).await;
    let output = ev.iter().find_map(|e| match e {
        Event::ToolResult { name, output, .. } if name == "bash" => Some(output.clone()),
        _ => None,
    });
    let output = output.unwrap_or_else(|| panic!("no bash result: {ev:#?}"));
    assert_contains(&output, "alpha\nbeta\nshell-said-42");
    assert_eq!(exit_reason(&ev), Some(ExitReason::Completed));
    assert!(
        !ev.iter()
            .any(|e| matches!(e, Event::ApprovalRequest { .. })),
        "the user's own command is not asked for"
    );
    assert!(h.server.requests().is_empty(), "no model request");

    // The next message carries it, after what the user typed.
    let ev = r.turn("what did the file say?").await;
    assert_eq!(exit_reason(&ev), Some(ExitReason::Completed), "{ev:#?}");
    let reqs = h.server.requests();
    assert_eq!(reqs.len(), 1);
    let sent = last_user_text(&reqs[0]);
    assert_starts_with(&sent, "what did the file say?");
    assert_contains(
        &sent,
        "<bash-input>cat notes.txt; echo shell-said-$((6*7))</bash-input>",
    );
    assert_contains(&sent, "shell-said-42");
    // Once only: the message after does not repeat it.
    h.server.push(a::text("ok", U::new(1_100, 20)));
    r.turn("and now?").await;
    let reqs = h.server.requests();
    assert_lacks(&last_user_text(&reqs[1]), "shell-said");
    r.shutdown().await;
}

#[tokio::test]
async fn a_shell_command_that_never_ends_is_stopped_by_an_abort() {
    let h = Harness::new().await;
    let (mut r, turn) = shell_first(&h, "noted", "echo started; sleep 600; echo never").await;
    r.until(|e| matches!(e, Event::ToolOutputDelta { .. }))
        .await;
    r.send(Op::Abort { turn }).await;
    let ev = tokio::time::timeout(Duration::from_secs(10), r.until_end(turn))
        .await
        .expect("the abort stops the command");
    assert_eq!(exit_reason(&ev), Some(ExitReason::Interrupted));
    let output = ev
        .iter()
        .find_map(|e| match e {
            Event::ToolResult { output, .. } => Some(output.clone()),
            _ => None,
        })
        .unwrap_or_default();
    assert_contains(&output, "started");
    assert_lacks(&output, "never");
    assert!(h.server.requests().is_empty());
    // The partial output still goes with the next message, said to be stopped.
    r.turn("go on").await;
    let sent = last_user_text(&h.server.requests()[0]);
    for said in ["stopped by them", "started"] {
        assert_contains(&sent, said);
    }
    r.shutdown().await;
}

#[tokio::test]
async fn a_ten_megabyte_output_is_spilled_not_sent_whole() {
    let h = Harness::new().await;
    let (mut r, turn) =
        shell_first(&h, "big", "head -c 10000000 /dev/zero | tr '\\0' x; echo").await;
    let ev = r.until_end(turn).await;
    assert_eq!(exit_reason(&ev), Some(ExitReason::Completed));
    let (output, spilled) = ev
        .iter()
        .find_map(|e| match e {
            Event::ToolResult {
                output, spilled, ..
            } => Some((output.clone(), spilled.clone())),
            _ => None,
        })
        .unwrap_or_default();
    assert!(spilled.is_some(), "spilled to a file");
    assert!(output.len() < 200_000, "{} bytes", output.len());
    r.turn("what was it?").await;
    let body = h.server.requests()[0].to_string();
    assert!(
        body.len() < 400_000,
        "the request holds a preview: {}",
        body.len()
    );
    r.shutdown().await;
}

#[tokio::test]
async fn a_shell_line_sent_while_a_turn_streams_waits_for_it() {
    let h = Harness::new().await;
    h.server.push(Reply::Sse {
        chunks: a::Stream::new(U::new(1_000, 20))
            .text("a slow reply in several pieces that takes a while")
            .events(),
        delay: Some(Duration::from_millis(50)),
    });
    let mut r = start(h.params(200_000, 50_000));
    let first = r.send_turn("talk slowly").await;
    r.until(|e| matches!(e, Event::TextDelta { .. })).await;
    let second = shell(&mut r, "echo after-the-reply").await;
    let ev = r.until_end(second).await;
    let first_end = ev
        .iter()
        .position(|e| matches!(e, Event::TurnEnd { turn, .. } if *turn == first));
    let shell_start = ev
        .iter()
        .position(|e| matches!(e, Event::TurnStarted { turn, .. } if *turn == second));
    assert!(
        first_end.is_some() && first_end < shell_start,
        "the reply ends first: {ev:#?}"
    );
    assert_eq!(h.server.requests().len(), 1);
    r.shutdown().await;
}
