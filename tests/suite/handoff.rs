//! Handoff end to end against the fake provider: scripted usage crosses the lines.

use flower_tui::engine::protocol::{
    CompactionTrigger, ErrorKind, Event, ExitReason, HandoffPhase, HandoffRefusal, Op, TurnKind,
};
use flower_tui::engine::provider::ErrorKind as P;
use serde_json::Value;

use crate::support::check::{assert_event, assert_starts_with};
use crate::support::fake::{Reply, anthropic as a};
use crate::support::harness::{Harness, exit_reason, phases, start, turn_end};
use crate::support::requests::{first_text, last_user_text};
use crate::support::script::DOC;

/// window 40k, headroom 10k → at 30k, warn 10k.
#[tokio::test]
async fn automatic_handoff_full_path() {
    let h = Harness::new().await;
    // Crosses warn, then the line; the writing turn; the successor.
    let successor = "Continuing from next: tests pass.";
    h.script()
        .at(12_000)
        .tool("list_dir", "{}")
        .over_the_line(DOC);
    h.script().at(5_000).text(successor);
    let mut r = start(h.params(40_000, 10_000));
    let ev = r.completed_turn("refactor the parser").await;

    let ph = phases(&ev);
    assert_eq!(
        ph.iter()
            .filter(|p| matches!(p, HandoffPhase::Near { .. }))
            .count(),
        1,
        "near once"
    );
    assert_event!(ph, HandoffPhase::Writing { manual: false, .. });
    let done = ph.iter().find_map(|p| match p {
        HandoffPhase::Done {
            generation,
            degraded,
            path,
            sections,
            ..
        } => Some((*generation, *degraded, path.clone(), sections.clone())),
        _ => None,
    });
    let (generation, degraded, path, sections) = done.expect("done phase");
    assert_eq!(generation, 2);
    assert!(!degraded);
    // The model's five, then the engine's `touched`.
    assert_eq!(sections.len(), 6, "{sections:?}");
    assert_eq!(sections.last().map(String::as_str), Some("touched"));

    let reqs = h.server.requests();
    assert_eq!(reqs.len(), 4);
    // The writing request: tool use off, same tools and system, the prompt last.
    let w = &reqs[2];
    assert_eq!(w["tool_choice"]["type"], "none");
    assert_eq!(w["tools"], reqs[1]["tools"]);
    assert_eq!(w["system"], reqs[1]["system"]);
    assert!(last_user_text(w).contains("Dead ends"));
    // The file has the five sections.
    let path = path.expect("a workbench path");
    assert_eq!(path, h.workbench().join("notes/handoff-test-step.md"));
    let file = std::fs::read_to_string(&path).unwrap();
    for s in [
        "## Doing",
        "## Decided",
        "## Dead ends",
        "## Next",
        "## Scene",
        "## Touched",
    ] {
        assert!(file.contains(s), "{s} in {file}");
    }
    assert_starts_with(&file, "# Handoff · step test-step · generation 1 ·");
    // The successor's first request starts with the document, in a new conversation.
    let s = &reqs[3];
    assert_eq!(s["messages"].as_array().unwrap().len(), 1);
    assert!(first_text(s).contains("Run the parser tests."));
    assert!(first_text(s).contains("Regex parsing: breaks on nested quotes."));
    // Ledger: one retired id, two generations, lineage.
    let m = r.manifest();
    let st = &m.steps[0];
    assert_eq!(st.retired.len(), 1);
    assert_eq!(st.generations, 2);
    assert_ne!(st.session_id, st.retired[0]);
    assert_eq!(st.per_generation.len(), 2);
    assert_eq!(st.handoffs.len(), 1);
    assert_eq!(st.attempts, 0, "a handoff is not an attempt");
    assert!(!st.handoffs[0].degraded);
    let header =
        std::fs::read_to_string(r.run_root.join(format!("sessions/{}.jsonl", st.session_id)))
            .unwrap();
    let first: Value = serde_json::from_str(header.lines().next().unwrap()).unwrap();
    assert_eq!(first["parent_session"], st.retired[0].as_str());
    assert_eq!(first["generation"], 2);
    r.shutdown().await;
}

#[tokio::test]
async fn an_edit_between_freeze_and_successor_reaches_the_successor() {
    let h = Harness::new().await;
    let (mut r, handoff, path, text) = h.in_review(DOC).await;
    let edited = text.replace(
        "Run the parser tests.",
        "Run the parser tests.\nUSER EDIT: also check the Windows paths.",
    );
    std::fs::write(path, edited).unwrap();
    r.send(Op::ReviewDone { handoff }).await;
    let ev = r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    assert_eq!(turn_end(&ev), "completed");
    let reqs = h.server.requests();
    assert!(first_text(&reqs[2]).contains("USER EDIT: also check the Windows paths."));
    r.shutdown().await;
}

#[tokio::test]
async fn a_writing_turn_without_next_is_degraded() {
    let h = Harness::new().await;
    h.script()
        .over_the_line("## Doing\nStuff.\n## Decided\n- x\n")
        .at(5_000)
        .text("ok");
    let mut r = start(h.params(40_000, 10_000));
    let ev = r.completed_turn("the original task text").await;
    let done = phases(&ev).into_iter().find_map(|p| match p {
        HandoffPhase::Done { degraded, .. } => Some(degraded),
        _ => None,
    });
    assert_eq!(done, Some(true));
    let succ = first_text(&h.server.requests()[2]);
    assert!(succ.contains("[DEGRADED: handoff not written]"));
    assert!(
        succ.contains("the original task text"),
        "scene holds the task"
    );
    let st = &r.manifest().steps[0];
    assert!(
        st.errors
            .iter()
            .any(|e| e.starts_with("handoff degraded (")),
        "{:?}",
        st.errors
    );
    assert!(st.handoffs[0].degraded);
    assert!(st.handoffs[0].reason.to_string().contains("next"));
    r.shutdown().await;
}

#[tokio::test]
async fn overflow_goes_to_a_degraded_handoff_and_retries_once_in_the_new_session() {
    let h = Harness::new().await;
    h.script()
        .at(20_000)
        .tool("list_dir", "{}")
        .reply(a::too_long(205_030, 200_000))
        .at(4_000)
        .text("continuing in the new session");
    let mut r = start(h.params(1_000_000, 50_000));
    let ev = r.completed_turn("a long task").await;
    assert_event!(ev, Event::WindowLearned { thresholds, .. } if thresholds.window == 200_000);
    assert!(
        phases(&ev)
            .iter()
            .any(|p| matches!(p, HandoffPhase::Done { degraded: true, .. }))
    );
    assert!(
        !phases(&ev)
            .iter()
            .any(|p| matches!(p, HandoffPhase::Writing { .. })),
        "no writing turn"
    );
    let reqs = h.server.requests();
    assert_eq!(reqs.len(), 3);
    assert!(first_text(&reqs[2]).contains("[DEGRADED"));
    let learned = std::fs::read_to_string(h.data.join("windows.json")).unwrap();
    assert!(learned.contains("200000"));
    assert_eq!(r.manifest().steps[0].figures.window, 200_000);
    r.shutdown().await;
}

#[tokio::test]
async fn overflow_twice_in_a_row_reports_the_original_error() {
    let h = Harness::new().await;
    let overflow = || a::too_long(300_000, 200_000);
    let mut script = h.script();
    script.at(20_000).tool("list_dir", "{}");
    script.reply(overflow()).reply(overflow());
    let mut r = start(h.params(1_000_000, 50_000));
    let ev = r.turn("task").await;
    assert_eq!(
        exit_reason(&ev),
        Some(ExitReason::Error(ErrorKind::Provider(
            P::ContextWindowExceeded
        )))
    );
    assert_eq!(h.server.requests().len(), 3, "exactly one retry");
    r.shutdown().await;
}

#[tokio::test]
async fn compaction_that_changes_nothing_does_not_retry() {
    let h = Harness::new().await;
    h.script().reply(a::too_long(250_000, 200_000));
    let mut r = start(h.compacting(200_000, 50_000));
    // A single message: nothing can be summarised, so the generation does not advance.
    let ev = r.turn("one enormous message").await;
    assert_eq!(
        exit_reason(&ev),
        Some(ExitReason::Error(ErrorKind::Provider(
            P::ContextWindowExceeded
        )))
    );
    assert_eq!(
        h.server.requests().len(),
        1,
        "no retry without a real reduction"
    );
    assert_event!(ev, Event::Error { message, .. } if message.contains("prompt is too long"));
    r.shutdown().await;
}

#[tokio::test]
async fn the_breaker_stops_a_window_below_the_startup_floor() {
    let h = Harness::new().await;
    // Every response reports 12k: above the 10k floor of a tiny window, every session starts over the line.
    h.script().at(12_000).tool("list_dir", "{}");
    for _ in 0..8 {
        // The writing turn, and the successor's first reply.
        h.script()
            .at(12_500)
            .text(DOC)
            .at(12_000)
            .tool("list_dir", "{}");
    }
    let mut r = start(h.params(5_000, 50_000));
    let ev = r.turn("task").await;
    assert_eq!(
        exit_reason(&ev),
        Some(ExitReason::Error(ErrorKind::HandoffBreaker)),
        "{ev:#?}"
    );
    let msg = ev.iter().find_map(|e| match e {
        Event::Error {
            kind: ErrorKind::HandoffBreaker,
            message,
        } => Some(message.clone()),
        _ => None,
    });
    let msg = msg.unwrap();
    assert!(
        msg.contains("startup floor") && msg.contains("--window") && msg.contains("--no-handoff"),
        "{msg}"
    );
    let st = &r.manifest().steps[0];
    assert_eq!(st.handoffs.len(), 8);
    assert_eq!(st.generations, 9);
    assert_eq!(
        st.attempts, 1,
        "the 8 handoffs took no attempt; the breaker's stop is one failed try"
    );
    // Archives: 7 earlier generations, none overwritten.
    let archive = h.workbench().join("notes/archive/handoff");
    assert_eq!(std::fs::read_dir(archive).unwrap().count(), 7);
    r.shutdown().await;
}

#[tokio::test]
async fn no_workbench_still_hands_off_through_the_prompt() {
    let h = Harness::new().await;
    h.script().over_the_line(DOC).at(5_000).text("ok");
    let mut p = h.params(40_000, 10_000);
    p.places.workbench = None;
    let mut r = start(p);
    let ev = r.completed_turn("work").await;
    assert!(!h.workbench().exists());
    assert!(
        phases(&ev)
            .iter()
            .any(|p| matches!(p, HandoffPhase::Done { path: None, .. }))
    );
    assert!(first_text(&h.server.requests()[2]).contains("Run the parser tests."));
    r.shutdown().await;
}

#[tokio::test]
async fn manual_handoff_guard_focus_abort_and_failure() {
    let h = Harness::new().await;
    let mut r = start(h.params(200_000, 50_000));
    // Guard: nothing yet.
    let turn = r.send_handoff(None).await;
    let ev = r.until_end(turn).await;
    assert!(
        ev.iter().any(|e| matches!(e, Event::Handoff(HandoffPhase::Refused { reason: HandoffRefusal::NoMessages, message })
            if message == "Nothing to hand off (no messages yet)")),
        "{ev:#?}"
    );
    assert!(matches!(
        ev.last(),
        Some(Event::TurnEnd {
            kind: TurnKind::Handoff,
            reason: ExitReason::Unchanged,
            ..
        })
    ));
    h.script().text("hello");
    r.turn("hi").await;

    // Abort while writing: cancelled, session unchanged.
    h.server.push(Reply::Stall {
        prefix: crate::support::harness::text_prefix("## Doing"),
    });
    let turn = r.send_handoff(Some("the {used} parser")).await;
    r.until(|e| matches!(e, Event::Handoff(HandoffPhase::Writing { .. })))
        .await;
    // Abort once the writing request is on the wire.
    for _ in 0..500 {
        if h.server.requests().len() >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    r.send(Op::Abort { turn }).await;
    let ev = r
        .until(|e| {
            matches!(
                e,
                Event::Handoff(HandoffPhase::Cancelled { .. } | HandoffPhase::Failed { .. })
            )
        })
        .await;
    assert!(matches!(
        ev.last(),
        Some(Event::Handoff(HandoffPhase::Cancelled { .. }))
    ));
    let ev = r.until_end(turn).await;
    assert_eq!(turn_end(&ev), "interrupted");
    let body = h.server.requests().last().unwrap().clone();
    assert!(
        last_user_text(&body).contains("Additional focus: the {used} parser"),
        "focus verbatim"
    );
    let sid = r.manifest().steps[0].session_id.clone();

    // Failure: empty text.
    h.script().text("");
    let turn = r.send_handoff(None).await;
    let ev = r
        .until(|e| {
            matches!(
                e,
                Event::Handoff(HandoffPhase::Cancelled { .. } | HandoffPhase::Failed { .. })
            )
        })
        .await;
    assert!(
        matches!(ev.last(), Some(Event::Handoff(HandoffPhase::Failed { message, .. })) if message.contains("no text"))
    );
    let ev = r.until_end(turn).await;
    assert_eq!(turn_end(&ev), "unchanged");
    assert_eq!(r.manifest().steps[0].session_id, sid, "unchanged");

    // Still usable, and the history has no trace of the aborted writing turn.
    h.script().at(1_200).text("still here");
    r.turn("are you there").await;
    let body = h.server.requests().last().unwrap().clone();
    assert_eq!(body["messages"].as_array().unwrap().len(), 3);

    // Success.
    h.script().at(1_300).text(DOC);
    let turn = r.send_handoff(None).await;
    let ev = r
        .until(|e| matches!(e, Event::Handoff(HandoffPhase::Done { .. })))
        .await;
    assert!(matches!(
        ev.last(),
        Some(Event::Handoff(HandoffPhase::Done { generation: 2, .. }))
    ));
    let ev = r.until_end(turn).await;
    assert_eq!(turn_end(&ev), "handoff");
    assert_ne!(r.manifest().steps[0].session_id, sid);
    r.shutdown().await;
}

#[tokio::test]
async fn compaction_pressure_path_keeps_pairs_and_last_user_message() {
    let h = Harness::new().await;
    let mut r = start(h.compacting(100_000, 50_000));
    h.script()
        .listings(4, 10_000, 20_000)
        .at(79_000)
        .text("first done");
    r.turn("first task").await;
    // ctx 79k + the new message ≥ 0.8 × 100k → compaction before the next request.
    h.script()
        .at(2_000)
        .text("Summary of the earlier work: listed the directory four times.")
        .at(20_000)
        .text("second done");
    let ev = r.completed_turn(&"second task ".repeat(400)).await;
    assert_event!(ev, Event::Compaction { trigger, .. } if *trigger == CompactionTrigger::Pressure);
    let reqs = h.server.requests();
    let last = reqs.last().unwrap();
    let msgs = last["messages"].as_array().unwrap();
    let all = serde_json::to_string(msgs).unwrap();
    assert!(all.contains("Summary of the earlier work"));
    assert!(all.contains("second task"), "the last user message is kept");
    // Pair integrity: every tool_use id has its tool_result in the next message.
    for (i, m) in msgs.iter().enumerate() {
        for b in m["content"].as_array().into_iter().flatten() {
            if b["type"] == "tool_use" {
                let id = &b["id"];
                let next = &msgs[i + 1]["content"];
                assert!(
                    next.as_array()
                        .unwrap()
                        .iter()
                        .any(|x| x["tool_use_id"] == *id)
                );
            }
        }
    }
    r.shutdown().await;
}

#[tokio::test]
async fn compaction_overflow_path_reduces_and_retries_once() {
    let h = Harness::new().await;
    let mut r = start(h.compacting(200_000, 50_000));
    h.script().listings(3, 20_000, 10_000);
    h.script()
        .reply(a::too_long(210_000, 200_000))
        .text("Summary: listed the directory three times.")
        .at(8_000)
        .text("done after compaction");
    let ev = r.completed_turn("list things").await;
    assert_event!(ev, Event::Compaction { trigger, .. } if *trigger == CompactionTrigger::Overflow);
    let reqs = h.server.requests();
    assert_eq!(
        reqs.len(),
        6,
        "3 tool turns, the overflow, the summary, one retry"
    );
    assert!(
        reqs[4]["tools"].as_array().is_none_or(|t| t.is_empty()),
        "the summariser gets no tools"
    );
    let retry = serde_json::to_string(&reqs[5]["messages"]).unwrap();
    assert!(retry.contains("Summary: listed the directory three times."));
    assert!(
        retry.contains("reference"),
        "framed as reference-only background"
    );
    assert!(
        !reqs[5]["tools"].as_array().unwrap().is_empty(),
        "tools remain usable"
    );
    assert_eq!(r.manifest().steps[0].compactions, 1);
    r.shutdown().await;
}

#[tokio::test]
async fn esc_during_an_automatic_writing_turn_cancels_and_keeps_the_session() {
    let h = Harness::new().await;
    h.script().at(31_000).tool("list_dir", "{}");
    h.server.push(Reply::Stall {
        prefix: crate::support::harness::text_prefix("## Doing"),
    });
    let mut r = start(h.params(40_000, 10_000));
    let turn = r.send_turn("work").await;
    r.until(|e| {
        matches!(
            e,
            Event::Handoff(HandoffPhase::Writing { manual: false, .. })
        )
    })
    .await;
    for _ in 0..500 {
        if h.server.requests().len() >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let sid = r.manifest().steps[0].session_id.clone();
    r.send(Op::Abort { turn }).await;
    let ev = r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    assert_eq!(turn_end(&ev), "interrupted");
    assert!(
        phases(&ev)
            .iter()
            .any(|p| matches!(p, HandoffPhase::Cancelled { .. }))
    );
    assert!(
        !phases(&ev)
            .iter()
            .any(|p| matches!(p, HandoffPhase::Done { .. }))
    );
    let st = &r.manifest().steps[0];
    assert_eq!(st.session_id, sid, "no successor");
    assert!(st.handoffs.is_empty());
    assert!(!h.workbench().join("notes/handoff-test-step.md").exists());
    r.shutdown().await;
}
