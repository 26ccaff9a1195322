//! The record after the cut: what the successor of a background handoff is given last.

use super::*;
use crate::support::check::{assert_contains, assert_lacks};

#[tokio::test]
async fn a_pair_straddling_the_cut_is_held_whole_in_the_tail() {
    let h = Harness::new().await;
    // The crossing response asks for two tools: the cut comes before it, the pair after.
    h.server.push(a::text_then_tools(
        "Two listings.",
        &[
            ("ta", "list_dir", "{}"),
            ("tb", "glob", r#"{"pattern":"*.rs"}"#),
        ],
        U::new(31_000, 10),
    ));
    h.script().at(31_200).text("done");
    let gw = Gate::new();
    h.script().at(31_000).writing().held(&gw).text(DOC);
    let mut r = start(bg(&h));
    r.completed_turn("list twice").await;
    // The document comes after the turn: the turnover happens at once, idle.
    gw.open();
    until_phase(&mut r, |p| matches!(p, HandoffPhase::Done { .. })).await;
    let rec = h.server.recorded();
    let w = &writing_requests(&rec)[0].body;
    // The writing request holds no call without its result (the fake would refuse it anyway).
    assert!(!w.to_string().contains("\"ta\""));
    h.script().at(5_000).text("gen 2");
    r.turn("and now?").await;
    let rec = h.server.recorded();
    let blocks = first_blocks(&rec.last().unwrap().body);
    let call = blocks
        .iter()
        .find(|b| b.starts_with("[assistant]\nTwo listings."))
        .unwrap_or_else(|| panic!("the calls: {blocks:#?}"));
    assert!(
        call.contains("[tool call ta: list_dir {}]")
            && call.contains("[tool call tb: glob {\"pattern\":\"*.rs\"}]")
    );
    let results = blocks
        .iter()
        .find(|b| b.contains("[tool result ta (list_dir)]"))
        .expect("the results");
    assert!(results.contains("[tool result tb (glob)]"));
    r.shutdown().await;
}

#[tokio::test]
async fn a_large_result_after_the_cut_is_capped_in_the_tail_and_kept_whole_in_a_spill_file() {
    let h = Harness::new().await;
    // 9,000+ characters whose last line only the spill file may hold.
    let big: String = (0..900)
        .map(|i| format!("row {i:04}\n"))
        .chain(std::iter::once("END-OF-BIG-FILE\n".to_string()))
        .collect();
    h.file("big.txt", &big);
    let gw = Gate::new();
    h.script().at(31_000).tool("list_dir", "{}");
    // After the cut, while the document is written: the big read.
    h.script()
        .at(31_200)
        .tool("read_file", r#"{"path":"big.txt"}"#)
        .at(34_000)
        .text("read it");
    h.script().at(31_000).writing().held(&gw).text(DOC);
    let mut r = start(bg(&h));
    r.completed_turn("read the big file").await;
    gw.open();
    until_phase(&mut r, |p| matches!(p, HandoffPhase::Done { .. })).await;
    h.script().at(5_000).text("gen 2");
    r.turn("go on").await;
    let rec = h.server.recorded();
    let blocks = first_blocks(&rec.last().unwrap().body);
    let result = blocks
        .iter()
        .find(|b| b.contains("[tool result t2 (read_file)]"))
        .unwrap_or_else(|| panic!("the big result in the tail: {blocks:#?}"));
    // Capped: the start is there, the end is not, and the record says where the whole is.
    assert_contains(result, "row 0000");
    assert_lacks(result, "END-OF-BIG-FILE");
    let (_, after) = result
        .split_once("the whole result is in ")
        .unwrap_or_else(|| panic!("no spill path: {result}"));
    let path = after.split(']').next().unwrap().trim();
    assert_contains(path, "spill");
    let spilled = std::fs::read_to_string(h.workspace.join(path)).unwrap();
    assert!(spilled.contains("row 0000") && spilled.contains("END-OF-BIG-FILE"));
    assert!(result.len() < spilled.len() / 2, "the record is capped");
    r.shutdown().await;
}

#[tokio::test]
async fn pins_focus_and_plan_reach_the_successor_of_a_background_handoff_with_the_tail_last() {
    const PLAN: &str = r#"{"items": [{"text": "read the parser", "status": "done"}, {"text": "fix nested quotes", "status": "in_progress"}]}"#;
    let h = Harness::new().await;
    let gw = Gate::new();
    let mut r = start(bg(&h));
    r.send(Op::Pin {
        text: "never push to `main`".into(),
    })
    .await;
    r.until(|e| matches!(e, Event::Pins { .. })).await;
    r.send(Op::SetFocus {
        focus: Some("the parser bug".into()),
    })
    .await;
    r.until(|e| matches!(e, Event::Focus { .. })).await;
    // The plan crosses the line; the work after the cut goes on while the document is written,
    // and the turn is still running when it is ready: the request is in flight at the turnover.
    let gm = Gate::new();
    h.script().at(31_000).tool("todo", PLAN);
    h.script().at(31_200).held(&gm).tool("list_dir", "{}");
    h.script().at(5_000).text("listed, in generation 2");
    h.script().at(31_000).writing().held(&gw).text(DOC);
    let turn = r.send_turn("refactor the parser").await;
    until_phase(&mut r, |p| matches!(p, HandoffPhase::Writing { .. })).await;
    gw.open();
    until_phase(&mut r, |p| matches!(p, HandoffPhase::Frozen { .. })).await;
    gm.open();
    let ev = r.until_end(turn).await;
    assert_eq!(turn_end(&ev), "completed", "{ev:#?}");
    let rec = h.server.recorded();
    // The background writing carries the standing focus (and the same prefix as always).
    let w = &writing_requests(&rec)[0].body;
    let prompt = w["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| m.to_string())
        .unwrap_or_default();
    assert_contains(&prompt, "Additional focus: the parser bug");
    let mains = main_requests(&rec);
    let blocks = first_blocks(&mains.last().unwrap().body);
    // briefing, the engine's part, the request note, the request, the tail note, then the
    // record: the assistant's call and its result, the reply.
    let carried = blocks
        .iter()
        .position(|b| b.contains("## Pinned\n- never push to `main`\n"))
        .unwrap_or_else(|| panic!("no pins: {blocks:#?}"));
    assert_eq!(carried, 1, "{blocks:#?}");
    assert!(blocks[1].contains("fix nested quotes"), "{}", blocks[1]);
    assert!(blocks[1].contains("the parser bug"), "{}", blocks[1]);
    assert_eq!(blocks[3], "refactor the parser");
    assert_eq!(blocks[4], TAIL_NOTE);
    assert!(
        blocks[5..]
            .iter()
            .any(|b| b.contains("[tool call t2: list_dir {}]")),
        "{blocks:#?}"
    );
    assert!(
        blocks
            .last()
            .unwrap()
            .contains("[tool result t2 (list_dir)]"),
        "{blocks:#?}"
    );
    let m = r.manifest();
    let st = &m.steps[0];
    assert_eq!(st.memory.pins.len(), 1);
    assert_eq!(st.handoffs[0].source, DocumentSource::Written);
    assert!(st.handoffs[0].tail >= 2, "{}", st.handoffs[0].tail);
    // What the retired generation held is recorded for the background path too.
    assert!(
        st.handoffs[0].held.messages >= 4,
        "{:?}",
        st.handoffs[0].held
    );
    assert!(
        st.handoffs[0].held.tool_calls >= 2,
        "{:?}",
        st.handoffs[0].held
    );
    r.shutdown().await;
}
