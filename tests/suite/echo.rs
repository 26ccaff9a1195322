//! A document that restated its instructions (the writing prompt's own words under its headings)
//! is no document: the writing turn is asked once more with the short prompt, and only when that
//! fails too is the mechanical document written (automatic) or the handoff failed (manual). In
//! blocking mode, on the rescue's reduced history, and in the background; the fake records every
//! request, so the retry's body is checked.

use std::time::Duration;

use flower_tui::engine::policy::HandoffMode;
use flower_tui::engine::protocol::{DocumentSource, Event, ExitReason, HandoffPhase};
use serde_json::Value;

use crate::support::check::assert_contains;
use crate::support::fake::{Gate, is_writing};
use crate::support::harness::{Harness, exit_reason, phases, start, turn_end};
use crate::support::requests::{last_user_text, unmarked};

/// The long prompt's descriptions under its headings, word for word.
const VERBATIM: &str = include_str!("../fixtures/echo/verbatim.md");
/// The same with case, punctuation and a few words changed.
const EDITED: &str = include_str!("../fixtures/echo/lightly_edited.md");
/// The short prompt's example, copied.
const EXAMPLE_COPIED: &str = include_str!("../fixtures/echo/short_example_copied.md");
/// What a real small model (Qwen2.5-Coder-0.5B on llama.cpp) wrote for a manual handoff with the
/// long prompt, and on the retry with the short one.
const REAL_LONG: &str = include_str!("../fixtures/echo/real_05b_long_prompt.md");
const REAL_SHORT: &str = include_str!("../fixtures/echo/real_05b_short_prompt.md");
/// A good document that quotes a few words of the prompt.
const GOOD: &str = include_str!("../fixtures/echo/good_quoting.md");

/// A phrase of the long prompt only, and one of the short prompt only.
const LONG_ONLY: &str = "What is being done right now, at the moment of the cut";
const SHORT_ONLY: &str = "Here is a handoff from another task, to show the form.";

fn retrying(events: &[Event]) -> Vec<String> {
    phases(events)
        .into_iter()
        .filter_map(|p| match p {
            HandoffPhase::Retrying { reason, .. } => Some(reason),
            _ => None,
        })
        .collect()
}

/// The degraded reasons of the `Frozen` and the `Done` phases.
fn degraded_reasons(events: &[Event]) -> (Option<String>, Option<String>) {
    let mut out = (None, None);
    for p in phases(events) {
        match p {
            HandoffPhase::Frozen {
                degraded_reason, ..
            } => out.0 = degraded_reason,
            HandoffPhase::Done {
                degraded_reason, ..
            } => out.1 = degraded_reason,
            _ => {}
        }
    }
    out
}

/// A body's messages without the writing prompt: the last message's last text block dropped,
/// `cache_control` markers removed (they move from request to request).
fn without_prompt(body: &Value) -> Value {
    let mut messages = unmarked(&body["messages"]);
    if let Some(last) = messages.as_array_mut().and_then(|m| m.last_mut())
        && let Some(blocks) = last["content"].as_array_mut()
    {
        blocks.pop();
    }
    messages
}

/// The two writing requests: the first with the long prompt, the retry with the short one on
/// the same history, system prompt and tools, tool use off.
fn assert_retry_body(first: &Value, retry: &Value) {
    let (long, short) = (last_user_text(first), last_user_text(retry));
    assert!(long.contains(LONG_ONLY), "{long}");
    assert!(short.contains(SHORT_ONLY), "{short}");
    assert!(
        !short.contains(LONG_ONLY),
        "the short prompt replaces the long one: {short}"
    );
    assert!(
        short.len() * 3 < long.len(),
        "{} vs {}",
        short.len(),
        long.len()
    );
    assert_eq!(retry["tool_choice"]["type"], "none");
    assert_eq!(retry["system"], first["system"]);
    assert_eq!(retry["tools"], first["tools"]);
    assert_eq!(without_prompt(retry), without_prompt(first));
}

/// window 40k, headroom 10k: the handoff line at 30k.
#[tokio::test]
async fn an_echo_is_written_again_with_the_short_prompt_and_the_second_document_is_kept() {
    let h = Harness::new().await;
    h.script()
        .over_the_line(VERBATIM)
        .at(31_200)
        .text(GOOD)
        .at(5_000)
        .text("Continuing: the test passes.");
    let mut r = start(h.params(40_000, 10_000));
    let ev = r.completed_turn("divide() in calc.py crashes on 0").await;

    let reasons = retrying(&ev);
    assert_eq!(reasons.len(), 1, "{ev:#?}");
    assert!(
        reasons[0].starts_with(
            "the document restated its instructions (words from the prompt: doing 100%"
        ),
        "{}",
        reasons[0]
    );
    let reqs = h.server.requests();
    assert_eq!(reqs.len(), 4);
    assert!(is_writing(&reqs[1]) && is_writing(&reqs[2]));
    assert_retry_body(&reqs[1], &reqs[2]);
    // The second document is the successor's briefing, and nothing is degraded.
    assert_eq!(degraded_reasons(&ev), (None, None));
    let m = r.manifest();
    let st = &m.steps[0];
    assert_eq!(st.handoffs.len(), 1);
    assert!(!st.handoffs[0].degraded);
    assert_eq!(st.handoffs[0].source, DocumentSource::Written);
    assert!(st.errors.is_empty(), "{:?}", st.errors);
    let file = std::fs::read_to_string(h.workbench().join("notes/handoff-test-step.md")).unwrap();
    assert_contains(&file, "Add `test_divide_by_zero` to test_calc.py");
    assert!(!file.contains(LONG_ONLY), "{file}");
    let briefing = reqs[3]["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(briefing.contains("Keep the public API: `divide` keeps its two arguments"));
    r.shutdown().await;
}

#[tokio::test]
async fn two_echoes_degrade_an_automatic_handoff_with_the_reason_everywhere() {
    let h = Harness::new().await;
    h.script()
        .over_the_line(EDITED)
        .at(31_200)
        .text(EXAMPLE_COPIED)
        .at(5_000)
        .text("Inspecting the workspace.");
    let mut r = start(h.params(40_000, 10_000));
    let ev = r.completed_turn("divide() in calc.py crashes on 0").await;

    let reqs = h.server.requests();
    assert_eq!(reqs.len(), 4, "two writing requests, then the successor");
    assert_retry_body(&reqs[1], &reqs[2]);
    let (frozen, done) = degraded_reasons(&ev);
    let reason = frozen.expect("the frozen document says why it is degraded");
    assert!(
        reason.starts_with("the document restated its instructions (words from the prompt: doing ")
            && reason.contains(", and again with the short prompt (words from the prompt: doing "),
        "{reason}"
    );
    assert_eq!(done.as_deref(), Some(reason.as_str()));
    // The ledger: the handoff's reason, the step's error.
    let m = r.manifest();
    let st = &m.steps[0];
    assert!(st.handoffs[0].degraded);
    assert_eq!(st.handoffs[0].source, DocumentSource::Degraded);
    assert_eq!(st.handoffs[0].reason.failure_or_trigger(), reason);
    assert_eq!(st.errors, [format!("handoff degraded ({reason})")]);
    // The mechanical document says it too.
    let file = std::fs::read_to_string(h.workbench().join("notes/handoff-test-step.md")).unwrap();
    assert_contains(&file, &format!("[DEGRADED: handoff not written] {reason}"));
    r.shutdown().await;
}

#[tokio::test]
async fn a_manual_handoff_that_restates_twice_fails_and_the_session_goes_on() {
    let h = Harness::new().await;
    h.script()
        .at(2_000)
        .text("divide() needs a zero check.")
        .at(2_500)
        .text(REAL_LONG)
        .at(2_400)
        .text(REAL_SHORT)
        .at(2_600)
        .text("Still here.");
    let mut r = start(h.params(40_000, 10_000));
    r.turn("divide() in calc.py crashes on 0").await;
    let turn = r.send_handoff(None).await;
    let ev = r.until_end(turn).await;
    assert_eq!(exit_reason(&ev), Some(ExitReason::Unchanged), "{ev:#?}");
    let failed = phases(&ev).into_iter().find_map(|p| match p {
        HandoffPhase::Failed { message, .. } => Some(message),
        _ => None,
    });
    let failed = failed.expect("Handoff failed");
    let all = "doing 100%, decided 100%, deadends 100%, next 100%, scene 100%";
    assert_eq!(
        failed,
        format!(
            "the document restated its instructions (words from the prompt: {all}), and again with the short prompt (words from the prompt: {all})"
        )
    );
    assert_eq!(retrying(&ev).len(), 1);
    assert!(
        !phases(&ev)
            .iter()
            .any(|p| matches!(p, HandoffPhase::Frozen { .. } | HandoffPhase::Done { .. }))
    );
    // The same session answers the next message: nothing was handed off, nothing degraded.
    r.completed_turn("go on").await;
    let reqs = h.server.requests();
    assert_eq!(reqs.len(), 4);
    assert!(!is_writing(&reqs[3]));
    assert!(reqs[3]["messages"].as_array().unwrap().len() >= 3);
    let m = r.manifest();
    assert!(m.steps[0].handoffs.is_empty() && m.steps[0].errors.is_empty());
    r.shutdown().await;
}

#[tokio::test]
async fn a_good_document_quoting_the_prompt_passes_the_first_time() {
    let h = Harness::new().await;
    h.script().over_the_line(GOOD).at(5_000).text("Continuing.");
    let mut r = start(h.params(40_000, 10_000));
    let ev = r.completed_turn("divide() in calc.py crashes on 0").await;
    assert!(retrying(&ev).is_empty(), "{ev:#?}");
    let reqs = h.server.requests();
    assert_eq!(
        reqs.iter().filter(|b| is_writing(b)).count(),
        1,
        "one writing request"
    );
    assert!(!r.manifest().steps[0].handoffs[0].degraded);
    r.shutdown().await;
}

#[tokio::test]
async fn a_rescued_document_is_checked_too_and_its_retry_keeps_the_reduced_history() {
    let h = Harness::new().await;
    h.big_log("a.log");
    // The writing request overflows; the rescue on a reduced copy restates its instructions;
    // the retry with the short prompt on that same copy writes the document.
    h.script()
        .writing_overflows()
        .at(9_000)
        .text(VERBATIM)
        .at(8_800)
        .text(GOOD)
        .at(4_000)
        .text("generation 2");
    let mut r = start(h.params(40_000, 10_000));
    let ev = r.completed_turn("read a.log").await;
    assert_eq!(retrying(&ev).len(), 1, "{ev:#?}");
    let reqs = h.server.requests();
    assert_eq!(reqs.len(), 5);
    // The rescue's copy has the big result as a stub; the retry sends the same copy.
    assert_retry_body(&reqs[2], &reqs[3]);
    assert!(reqs[3].to_string().len() < reqs[1].to_string().len() / 2);
    let st = &r.manifest().steps[0];
    assert_eq!(st.handoffs[0].source, DocumentSource::Rescued);
    assert!(!st.handoffs[0].degraded);
    r.shutdown().await;
}

/// What a background handoff left: the turn's events, the writing requests' bodies, and the
/// ledger's record of the handoff (its source and reason).
struct BackgroundRun {
    events: Vec<Event>,
    writes: Vec<Value>,
    source: DocumentSource,
    reason: String,
}

/// A background handoff whose writing replies are `first` then `retry` (the short prompt's):
/// the main thread's second request waits until the document is frozen, then the turnover comes
/// at its boundary.
async fn background_run(h: &Harness, first: &str, retry: &str) -> BackgroundRun {
    let gate = Gate::new();
    h.script().at(31_000).tool("list_dir", "{}");
    h.script().at(31_500).held(&gate).tool("list_dir", "{}");
    h.script().at(5_000).text("successor goes on");
    h.script()
        .at(31_000)
        .writing()
        .text(first)
        .writing()
        .after(Duration::from_millis(50))
        .text(retry);
    let mut p = h.params(40_000, 10_000);
    p.handoff.mode = HandoffMode::Background;
    let mut r = start(p);
    r.send_turn("divide() in calc.py crashes on 0").await;
    let mut events = r
        .until(|e| matches!(e, Event::Handoff(HandoffPhase::Frozen { .. })))
        .await;
    gate.open();
    events.extend(r.until(|e| matches!(e, Event::TurnEnd { .. })).await);
    assert_eq!(turn_end(&events), "completed", "{events:#?}");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Handoff(HandoffPhase::Done { .. }))),
        "{events:#?}"
    );
    let writes = h.server.requests().into_iter().filter(is_writing).collect();
    let mut step = r.manifest().steps.remove(0);
    assert_eq!(step.handoffs.len(), 1);
    let record = step.handoffs.remove(0);
    r.shutdown().await;
    BackgroundRun {
        events,
        writes,
        source: record.source,
        reason: record.reason.failure_or_trigger(),
    }
}

#[tokio::test]
async fn a_background_echo_is_written_again_with_the_short_prompt() {
    let h = Harness::new().await;
    let run = background_run(&h, VERBATIM, GOOD).await;
    let retries = phases(&run.events)
        .into_iter()
        .filter_map(|p| match p {
            HandoffPhase::Retrying { background, .. } => Some(background),
            _ => None,
        })
        .collect::<Vec<_>>();
    assert_eq!(retries, [true], "one retry, said as a background one");
    assert_eq!(run.writes.len(), 2);
    assert_retry_body(&run.writes[0], &run.writes[1]);
    assert_eq!(degraded_reasons(&run.events), (None, None));
    assert_eq!(
        (run.source, run.reason.as_str()),
        (DocumentSource::Written, "auto")
    );
}

#[tokio::test]
async fn two_background_echoes_degrade_with_the_reason() {
    let h = Harness::new().await;
    let run = background_run(&h, VERBATIM, EXAMPLE_COPIED).await;
    assert_eq!(
        run.writes.len(),
        2,
        "no rescue after an echo: the short prompt is the one more try"
    );
    let (frozen, done) = degraded_reasons(&run.events);
    let reason = frozen.expect("degraded");
    assert!(
        reason.starts_with("the document restated its instructions")
            && reason.contains(", and again with the short prompt ("),
        "{reason}"
    );
    assert_eq!(done.as_deref(), Some(reason.as_str()));
    assert_eq!((run.source, run.reason), (DocumentSource::Degraded, reason));
}
