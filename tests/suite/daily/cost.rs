//! `/cost`: every response of every generation, earlier processes included, as the ledger says.

use flower_tui::engine::ledger::GenerationStart;
use flower_tui::engine::protocol::{CostRow, Event, Op};

use crate::support::fake::{U, anthropic as a};
use crate::support::harness::{Harness, Running, start};

const MODEL: &str = "claude-sonnet-test";
const DOC: &str =
    "## Doing\nx\n\n## Decided\n- a\n\n## Dead ends\n- b\n\n## Next\nGo on.\n\n## Scene\n- f\n";

/// What a scripted reply with these numbers costs.
fn price(input: u64, output: u64) -> f64 {
    crate::support::harness::price(MODEL, input, output)
}

async fn cost(r: &mut Running) -> (Vec<CostRow>, f64) {
    r.send(Op::Cost).await;
    let ev = r.until(|e| matches!(e, Event::Cost { .. })).await;
    match ev.last() {
        Some(Event::Cost {
            rows, total_usd, ..
        }) => (rows.clone(), *total_usd),
        _ => unreachable!(),
    }
}

async fn handoff(r: &mut Running) {
    let turn = r.send_handoff(None).await;
    r.until_end(turn).await;
}

#[tokio::test]
async fn cost_sums_every_generation_across_a_continue_and_labels_new_apart() {
    let h = Harness::new().await;
    let mut spent = 0.0;
    let mut reply = |text: &str, input: u64, output: u64| {
        spent += price(input, output);
        a::text(text, U::new(input, output))
    };
    h.server.push(reply("gen one", 10_000, 500));
    h.server.push(reply(DOC, 11_000, 400)); // writing turn, booked to gen 1
    h.server.push(reply("gen two", 3_000, 300));
    h.server.push(reply(DOC, 4_000, 400));
    h.server.push(reply("gen three", 2_000, 200));
    let mut p = h.params(200_000, 50_000);
    p.settings.model = MODEL.into();
    let mut r = start(p);
    r.completed_turn("start").await;
    handoff(&mut r).await;
    r.turn("continue").await;
    handoff(&mut r).await;
    r.turn("and on").await;
    let root = r.run_root.clone();
    r.shutdown().await;

    // A later process continues the run: its /cost still has every generation.
    h.server.push(reply("gen three again", 5_000, 100));
    h.server.push(reply("gen four", 1_000, 50));
    let mut p = h.resumed(200_000, 50_000, &root);
    p.settings.model = MODEL.into();
    let mut r = start(p);
    r.turn("after the restart").await;
    r.send(Op::NewSession).await;
    r.until(|e| matches!(e, Event::Notice { message } if message.starts_with("new session")))
        .await;
    r.turn("fresh").await;
    let (rows, total) = cost(&mut r).await;

    let labels: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "gen 1",
            "gen 2 · handoff",
            "gen 3 · handoff",
            "gen 4 · /new"
        ]
    );
    assert_eq!(rows[3].start, GenerationStart::New);
    assert_eq!(
        rows.iter().map(|r| r.current).collect::<Vec<_>>(),
        [false, false, false, true]
    );
    let m = r.manifest();
    let step = &m.steps[0];
    assert_eq!(total, step.figures.cost_usd, "the ledger's total");
    for (row, g) in rows.iter().zip(&step.per_generation) {
        assert_eq!((row.cost_usd, row.num_turns), (g.cost_usd, g.num_turns));
    }
    let sum: f64 = rows.iter().map(|r| r.cost_usd).sum();
    assert!((sum - total).abs() < 1e-9, "{sum} vs {total}");
    assert!(
        (total - spent).abs() < 1e-9,
        "every response counted: {total} vs {spent}"
    );
    assert!((rows[0].cost_usd - price(10_000, 500) - price(11_000, 400)).abs() < 1e-12);
    assert!(
        (rows[2].cost_usd - price(2_000, 200) - price(5_000, 100)).abs() < 1e-12,
        "gen 3 spans both processes"
    );
    r.shutdown().await;
}
