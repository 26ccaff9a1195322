//! Plan mode in the engine, in process, for what a front end can do wrong or the disk can do
//! behind its back: implementing with no plan presented, a plan file deleted or emptied during its
//! review, a plan edited down to its own instructions before "fresh session" (refused like a
//! handoff document that restates its prompt), and a switch to plan mode in the middle of a turn
//! (the reply already on its way may not write).

use flower_tui::engine::policy::Mode;
use flower_tui::engine::protocol::{Event, ExitReason, Op, PlanChoice};
use flower_tui::engine::tools::present_plan::PLAN_MODE_PROMPT;

use super::{PLAN, present};
use crate::support::fake::U;
use crate::support::harness::{Harness, Running, exit_reason, start};

/// An engine in plan mode.
async fn planning() -> (Harness, Running) {
    let h = Harness::new().await;
    let mut p = h.params(200_000, 50_000);
    p.tools.mode = Some(Mode::Plan);
    let r = start(p);
    (h, r)
}

/// Send `Op::ImplementPlan` and collect the turn; the notice it ended with, if any.
async fn implement(r: &mut Running, choice: PlanChoice) -> (Vec<Event>, Option<String>) {
    let turn = r.new_turn();
    r.send(Op::ImplementPlan { turn, choice }).await;
    let events = r.until_end(turn).await;
    let notice = events.iter().find_map(|e| match e {
        Event::Notice { message } if message.starts_with("Plan not implemented") => {
            Some(message.clone())
        }
        _ => None,
    });
    (events, notice)
}

fn plan_path(events: &[Event]) -> std::path::PathBuf {
    events
        .iter()
        .find_map(|e| match e {
            Event::Plan { path, .. } => Some(path.clone()),
            _ => None,
        })
        .expect("a plan")
}

#[tokio::test]
async fn nothing_to_implement_leaves_the_session_unchanged_with_a_notice() {
    let (h, mut r) = planning().await;
    let (events, notice) = implement(&mut r, PlanChoice::Here).await;
    assert_eq!(exit_reason(&events), Some(ExitReason::Unchanged));
    assert!(notice.unwrap().contains("no plan was presented"));
    assert!(h.server.requests().is_empty());

    h.server.push(present("p1", PLAN));
    let events = r.turn("plan it").await;
    let path = plan_path(&events);
    // Deleted during the review: refused, nothing sent, still planning.
    std::fs::remove_file(&path).unwrap();
    let (events, notice) = implement(&mut r, PlanChoice::FreshSession).await;
    assert_eq!(exit_reason(&events), Some(ExitReason::Unchanged));
    assert!(notice.unwrap().contains("is gone"));
    // Emptied: the same.
    std::fs::write(&path, "  \n").unwrap();
    let (_, notice) = implement(&mut r, PlanChoice::Here).await;
    assert!(notice.unwrap().contains("is empty"));
    // Edited down to its own instructions: refused like a handoff that restates its prompt.
    std::fs::write(&path, PLAN_MODE_PROMPT).unwrap();
    let (_, notice) = implement(&mut r, PlanChoice::FreshSession).await;
    assert!(notice.unwrap().contains("restates its instructions"));
    assert_eq!(
        h.server.requests().len(),
        1,
        "nothing was sent for a refused plan"
    );
    assert!(r.manifest().steps[0].handoffs.is_empty());
    r.shutdown().await;
}

#[tokio::test]
async fn a_switch_to_plan_mode_mid_turn_refuses_the_writes_of_the_reply_on_its_way() {
    let h = Harness::new().await;
    let mut r = start(h.params(200_000, 50_000));
    let gate = crate::support::fake::Gate::new();
    h.script().usage(U::new(900, 20)).held(&gate).call(
        "w1",
        "write_file",
        r#"{"path":"x.txt","content":"x\n"}"#,
    );
    h.script().text("Stopped.");
    let turn = r.send_turn("write x").await;
    r.until(|e| matches!(e, Event::TurnStarted { .. })).await;
    r.send(Op::SetMode { mode: Mode::Plan }).await;
    r.until(|e| matches!(e, Event::Mode { mode: Mode::Plan }))
        .await;
    gate.open();
    let events = r.until_end(turn).await;
    let refused = events.iter().find_map(|e| match e {
        Event::ToolResult {
            id,
            output,
            is_error,
            ..
        } if id == "w1" => Some((output.clone(), *is_error)),
        _ => None,
    });
    let (output, is_error) = refused.unwrap();
    assert!(
        is_error && output.contains("plan mode changes nothing"),
        "{output}"
    );
    assert!(!h.workspace.join("x.txt").exists());
    // The next request of the turn is a planning one.
    let reqs = h.server.requests();
    assert!(reqs[1]["system"].to_string().contains("# Plan mode"));
    r.shutdown().await;
}
