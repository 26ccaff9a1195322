//! The engine's side of `/context` (what fills the window), `/hooks` (what runs), and `/clear`
//! (`Op::NewSession`) sent while a handoff is being written.

use flower_tui::engine::protocol::{Event, HandoffPhase, Op};

use crate::support::fake::{Reply, U, anthropic as a};
use crate::support::harness::{Harness, start, text_prefix};

async fn notice(r: &mut crate::support::harness::Running, op: Op) -> String {
    r.send(op).await;
    let ev = r.until(|e| matches!(e, Event::Notice { .. })).await;
    match ev.last() {
        Some(Event::Notice { message }) => message.clone(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn context_counts_what_fills_the_window_and_hooks_lists_none() {
    let h = Harness::new().await;
    h.server.push(a::text(
        "a reply of some forty characters, or so",
        U::new(3_000, 20),
    ));
    let mut r = start(h.params(200_000, 50_000));
    let before = notice(&mut r, Op::Context).await;
    assert!(
        before.starts_with("Context: no reading yet of a 200K window"),
        "{before}"
    );
    r.turn("count me please").await;
    let after = notice(&mut r, Op::Context).await;
    assert!(
        after.starts_with("Context: 3.0K by the last reading"),
        "{after}"
    );
    assert!(
        after.contains("your messages           15 chars"),
        "the typed message counted:\n{after}"
    );
    assert!(
        after.contains("replies                 39 chars"),
        "{after}"
    );
    assert!(
        after
            .lines()
            .any(|l| l.trim_start().starts_with("tool specs")),
        "{after}"
    );
    let hooks = notice(&mut r, Op::Hooks).await;
    assert!(hooks.starts_with("No hooks run"), "{hooks}");
    r.shutdown().await;
}

#[tokio::test]
async fn clear_while_a_handoff_is_written_waits_for_it_then_starts_fresh() {
    let h = Harness::new().await;
    h.server.push(a::text("hello", U::new(1_000, 20)));
    // Blocking, as the harness runs it: the writing turn holds the main thread.
    let mut r = start(h.params(200_000, 50_000));
    r.turn("hi").await;
    h.server.push(Reply::Stall {
        prefix: text_prefix("## Doing"),
    });
    let turn = r.send_handoff(None).await;
    r.until(|e| matches!(e, Event::Handoff(HandoffPhase::Writing { .. })))
        .await;
    for _ in 0..500 {
        if h.server.requests().len() >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    r.send(Op::NewSession).await;
    r.send(Op::Abort { turn }).await;
    let ev = r
        .until(|e| matches!(e, Event::Notice { message } if message.starts_with("new session")))
        .await;
    let cancelled = ev
        .iter()
        .position(|e| matches!(e, Event::Handoff(HandoffPhase::Cancelled { .. })));
    let started = ev
        .iter()
        .position(|e| matches!(e, Event::SessionStarted { generation: 2, .. }));
    assert!(
        cancelled.is_some() && cancelled < started,
        "the handoff ends first, then the fresh session: {ev:#?}"
    );
    h.server.push(a::text("fresh", U::new(500, 20)));
    r.turn("again").await;
    let reqs = h.server.requests();
    let last = reqs.last().cloned().unwrap_or_default();
    assert_eq!(
        last["messages"].as_array().map(Vec::len),
        Some(1),
        "a fresh history"
    );
    r.shutdown().await;
}
