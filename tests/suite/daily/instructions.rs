//! Project instructions reach the model in every session, fresh from disk; the prompt holds
//! still within a session (the prompt cache).

use flower_tui::engine::instructions::InstructionSources;
use flower_tui::engine::protocol::{Event, HandoffPhase, Op};
use serde_json::Value;

use crate::support::check::{assert_contains, assert_event, assert_file};
use crate::support::fake::U;
use crate::support::files::write;
use crate::support::harness::{Harness, Running, start, turn_end};

const DOC: &str = "## Doing\nRefactoring.\n\n## Decided\n- x\n\n## Dead ends\n- y\n\n## Next\nGo on.\n\n## Scene\n- a.rs\n";

fn system(body: &Value) -> String {
    body["system"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// `/init` (over an existing file when `overwrite`), through to its turn's end.
async fn init(r: &mut Running, overwrite: bool) -> Vec<Event> {
    let turn = r.new_turn();
    r.send(Op::Init { turn, overwrite }).await;
    r.until_end(turn).await
}

#[tokio::test]
async fn agents_md_reaches_the_first_request_and_the_successor_reads_it_again() {
    let h = Harness::new().await;
    h.file("AGENTS.md", "MARKER-ONE: run `make check`.\n");
    let user_dir = h.dir.path().join("config/flower");
    write(
        &user_dir.join("AGENTS.md"),
        "USER-MARKER: answer tersely.\n",
    );
    h.script()
        .at(12_000)
        .tool("list_dir", "{}")
        .at(31_000)
        .tool("list_dir", "{}");
    h.script().at(31_500).text(DOC); // the writing turn
    h.script().at(5_000).text("Continuing."); // the successor
    let mut p = h.params(40_000, 10_000);
    p.prompt.instructions = InstructionSources {
        user_dir: Some(user_dir),
        ..Default::default()
    };
    let mut r = start(p);
    let turn = r.send_turn("refactor").await;
    // Edited while the first session runs: that session keeps its prompt as it was.
    r.until(|e| matches!(e, Event::ToolResult { .. })).await;
    h.file("AGENTS.md", "MARKER-TWO: run `make test`.\n");
    let ev = r.until_end(turn).await;
    assert_eq!(turn_end(&ev), "completed");
    assert_event!(ev, Event::Handoff(HandoffPhase::Done { .. }));

    let reqs = h.server.requests();
    assert_eq!(reqs.len(), 4);
    let first = system(&reqs[0]);
    assert_contains(&first, "MARKER-ONE");
    let (user, project) = (
        first.find("USER-MARKER").unwrap(),
        first.find("MARKER-ONE").unwrap(),
    );
    assert!(user < project, "the user's file comes first");
    assert!(first.contains("# Environment") && first.contains("- Date: "));
    assert_eq!(system(&reqs[1]), first, "byte-stable within the session");
    assert_eq!(system(&reqs[2]), first, "the writing turn keeps the prefix");
    let successor = system(&reqs[3]);
    assert!(
        successor.contains("MARKER-TWO") && !successor.contains("MARKER-ONE"),
        "{successor}"
    );
    assert!(successor.contains("USER-MARKER"));

    // Each session says what its prompt holds.
    let prompts: Vec<&Event> = r
        .events
        .iter()
        .filter(|e| matches!(e, Event::SessionPrompt { .. }))
        .collect();
    assert_eq!(prompts.len(), 2);
    let Event::SessionPrompt {
        instructions,
        environment,
        ..
    } = prompts[1]
    else {
        unreachable!()
    };
    assert_eq!(instructions.len(), 2);
    assert_eq!(instructions[1].path, h.workspace.join("AGENTS.md"));
    assert!(environment.contains(&h.workspace.display().to_string()));
    r.shutdown().await;
}

#[tokio::test]
async fn claude_md_is_read_where_there_is_no_agents_md() {
    let h = Harness::new().await;
    std::fs::create_dir_all(h.workspace.join(".git")).unwrap();
    let sub = h.workspace.join("app");
    std::fs::create_dir_all(&sub).unwrap();
    h.file("CLAUDE.md", "ROOT-CLAUDE\n");
    std::fs::write(sub.join("AGENTS.md"), "APP-AGENTS\n").unwrap();
    h.script().usage(U::new(100, 5)).text("ok");
    let mut p = h.params(200_000, 50_000);
    p.places.workspace = sub.clone();
    let mut r = start(p);
    r.turn("hi").await;
    let s = system(&h.server.requests()[0]);
    let (root, app) = (
        s.find("ROOT-CLAUDE").unwrap(),
        s.find("APP-AGENTS").unwrap(),
    );
    assert!(root < app, "from the git root down to the workspace");
    assert!(s.contains(&format!("## {}\n", h.workspace.join("CLAUDE.md").display())));
    r.shutdown().await;
}

#[tokio::test]
async fn init_drafts_agents_md_through_the_model_and_asks_before_replacing_one() {
    use flower_tui::engine::protocol::{ExitReason, Origin, TurnKind};
    let h = Harness::new().await;
    let path = h.workspace.join("AGENTS.md");
    let write = |text: &str| serde_json::json!({"path": "AGENTS.md", "content": text}).to_string();
    h.script()
        .usage(U::new(900, 40))
        .tool("write_file", write("# Drafted\nRun `make`.\n"))
        .usage(U::new(1000, 20))
        .text("Wrote AGENTS.md.");
    let mut r = start(h.params(200_000, 50_000));
    let ev = init(&mut r, false).await;
    assert_event!(
        ev,
        Event::TurnStarted {
            kind: TurnKind::Init,
            ..
        }
    );
    let asked = ev
        .iter()
        .find_map(|e| match e {
            Event::UserMessage {
                origin: Origin::Engine,
                text,
                ..
            } => Some(text.clone()),
            _ => None,
        })
        .expect("the engine's prompt is echoed as the engine's");
    assert!(asked.contains(&path.display().to_string()), "{asked}");
    assert_event!(
        ev,
        Event::TurnEnd {
            kind: TurnKind::Init,
            reason: ExitReason::Completed,
            ..
        }
    );
    assert_file(&path, "# Drafted\nRun `make`.\n");

    // It exists now: nothing runs until the user agrees.
    let before = h.server.requests().len();
    let ev = init(&mut r, false).await;
    assert_event!(ev, Event::InitExists { path: p, .. } if *p == path);
    assert_event!(
        ev,
        Event::TurnEnd {
            reason: ExitReason::Unchanged,
            ..
        }
    );
    assert_eq!(h.server.requests().len(), before, "no request");

    h.script()
        .usage(U::new(1200, 40))
        .tool("write_file", write("# Better\n"))
        .usage(U::new(1300, 20))
        .text("Replaced it.");
    let ev = init(&mut r, true).await;
    assert_event!(ev, Event::UserMessage { text, .. } if text.contains("exists already"));
    assert_file(&path, "# Better\n");
    r.shutdown().await;
}
