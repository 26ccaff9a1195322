//! Sessions and models: the workspace's runs, `/resume` of an older one, `/model`, `/effort`.

use flower_tui::engine::context::WindowSource;
use flower_tui::engine::ledger::RunDir;
use flower_tui::engine::policy::FrontEnd;
use flower_tui::engine::protocol::{Effort, Event, Op, Origin};
use serde_json::Value;

use crate::support::fake::{U, anthropic as a};
use crate::support::harness::{Harness, start};

/// A finished run with one turn; returns its id.
async fn a_run(h: &Harness, task: &str, answer: &str) -> String {
    h.script().usage(U::new(1000, 20)).text(answer);
    let mut r = start(h.params(200_000, 50_000));
    r.completed_turn(task).await;
    let id = RunDir::open(&r.run_root).run_id;
    r.shutdown().await;
    id
}

fn texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter_map(|b| b["text"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn resume_lists_the_runs_and_continues_an_older_one_at_its_latest_session() {
    let h = Harness::new().await;
    let older = a_run(&h, "fix the add bug", "Fixed add.").await;
    let newer = a_run(&h, "write the docs", "Docs written.").await;

    let mut p = h.params(200_000, 50_000);
    p.front_end = FrontEnd::Interactive { review: false };
    let mut r = start(p);
    let fresh_root = r.run_root.clone();
    r.send(Op::ListSessions).await;
    let ev = r.until(|e| matches!(e, Event::Sessions { .. })).await;
    let Some(Event::Sessions {
        sessions,
        current_run,
    }) = ev.last()
    else {
        unreachable!()
    };
    let ids: Vec<&str> = sessions.iter().map(|s| s.run_id.as_str()).collect();
    assert_eq!(
        ids,
        [newer.as_str(), older.as_str()],
        "newest first, this run has no step yet"
    );
    assert_eq!(*current_run, RunDir::open(&fresh_root).run_id);
    assert_eq!(sessions[1].first_message, "fix the add bug");
    assert_eq!((sessions[1].generations, sessions[1].num_turns), (1, 1));

    // Continue the older one by a prefix of its id.
    let prefix = older.get(..older.len() - 2).unwrap().to_string();
    r.send(Op::Resume { run_id: prefix }).await;
    let ev = r
        .until(
            |e| matches!(e, Event::Notice { message } if message.starts_with("continuing session")),
        )
        .await;
    assert!(
        matches!(&ev[0], Event::Resumed { run_id, messages: 2, .. } if *run_id == older),
        "{ev:?}"
    );
    let replayed: Vec<(Option<Origin>, String)> = ev
        .iter()
        .filter_map(|e| match e {
            Event::UserMessage {
                turn: None,
                origin,
                text,
            } => Some((Some(*origin), text.clone())),
            Event::AssistantDone { text, .. } => Some((None, text.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        replayed,
        [
            (Some(Origin::User), "fix the add bug".to_string()),
            (None, "Fixed add.".to_string())
        ]
    );
    assert!(
        !fresh_root.exists(),
        "the run left behind recorded nothing: removed"
    );

    h.script().usage(U::new(1200, 20)).text("Add still works.");
    r.turn("check it again").await;
    let body = h.server.requests().last().cloned().unwrap();
    assert_eq!(
        texts(&body),
        ["fix the add bug", "Fixed add.", "check it again"]
    );
    let m = flower_tui::engine::ledger::Manifest::load(
        &h.data.join("runs").join(&older).join("manifest.json"),
    )
    .unwrap();
    assert_eq!(
        m.steps[0].figures.num_turns, 2,
        "the older run's ledger goes on"
    );

    // The run already running is not resumed again.
    r.send(Op::Resume {
        run_id: older.clone(),
    })
    .await;
    let ev = r.until(|e| matches!(e, Event::Error { .. })).await;
    assert!(
        matches!(ev.last(), Some(Event::Error { message, .. }) if message.contains("is the one running now")),
        "{ev:?}"
    );
    // An unknown id is an error, and the session stays where it is.
    r.send(Op::Resume {
        run_id: "nope".into(),
    })
    .await;
    let ev = r.until(|e| matches!(e, Event::Error { .. })).await;
    assert!(
        matches!(ev.last(), Some(Event::Error { message, .. }) if message.contains("\"nope\"")),
        "{ev:?}"
    );
    r.shutdown().await;
}

#[tokio::test]
async fn model_switches_for_the_next_request_with_its_window_and_the_ledger_notes_it() {
    let h = Harness::new().await;
    h.script().usage(U::new(1000, 20)).text("one").text("two");
    let mut p = h.params(1_000_000, 50_000);
    p.settings.model = "unknown-model".into();
    let mut r = start(p);
    r.turn("first").await;
    r.send(Op::SetModel {
        model: "claude-haiku-4-5".into(),
    })
    .await;
    let ev = r.until(|e| matches!(e, Event::Model { .. })).await;
    let Some(Event::Model {
        model, thresholds, ..
    }) = ev.last()
    else {
        unreachable!()
    };
    assert_eq!(model, "claude-haiku-4-5");
    assert_eq!(thresholds.window, 200_000, "the window follows the model");
    r.turn("second").await;
    let reqs = h.server.requests();
    assert_eq!(reqs[0]["model"], "unknown-model");
    assert_eq!(reqs[1]["model"], "claude-haiku-4-5");
    let m = r.manifest();
    let changes = &m.steps[0].settings;
    assert_eq!(changes.len(), 1);
    assert_eq!(
        (changes[0].model.as_str(), changes[0].window),
        ("claude-haiku-4-5", 200_000)
    );
    r.shutdown().await;

    // A window given with --window stays.
    h.script().usage(U::new(1000, 20)).text("three");
    let mut p = h.params(300_000, 50_000);
    p.settings.window_source = WindowSource::Flag;
    let mut r = start(p);
    r.send(Op::SetModel {
        model: "claude-haiku-4-5".into(),
    })
    .await;
    let ev = r.until(|e| matches!(e, Event::Model { .. })).await;
    assert!(
        matches!(ev.last(), Some(Event::Model { thresholds, .. }) if thresholds.window == 300_000)
    );
    r.shutdown().await;
}

#[tokio::test]
async fn effort_asks_anthropic_for_thinking_and_openai_for_reasoning_effort() {
    let h = Harness::new().await;
    // The signed thinking block of the first reply goes back with the second request.
    h.server.push(a::thinking_then_text(
        "let me think",
        "sig-abc",
        "Thought about it.",
        U::new(1000, 20),
    ));
    h.script()
        .usage(U::new(1100, 20))
        .text("ok")
        .usage(U::new(1200, 20))
        .text("no thinking");
    let mut p = h.params(200_000, 50_000);
    p.settings.effort = Some(Effort::High);
    p.provider.max_tokens = 8_000;
    let mut r = start(p);
    r.turn("hard question").await;
    r.turn("follow-up").await;
    r.send(Op::SetEffort { effort: None }).await;
    let ev = r.until(|e| matches!(e, Event::Model { .. })).await;
    assert!(matches!(ev.last(), Some(Event::Model { effort: None, .. })));
    r.turn("easy").await;
    let reqs = h.server.requests();
    assert_eq!(
        reqs[0]["thinking"],
        serde_json::json!({"type": "enabled", "budget_tokens": 20_000})
    );
    assert_eq!(reqs[0]["max_tokens"], 24_096, "max_tokens above the budget");
    assert!(reqs[0].get("temperature").is_none());
    let back = &reqs[1]["messages"][1]["content"][0];
    assert_eq!(
        (back["type"].as_str(), back["signature"].as_str()),
        (Some("thinking"), Some("sig-abc"))
    );
    assert!(reqs[2].get("thinking").is_none(), "off after /effort off");
    assert_eq!(reqs[2]["max_tokens"], 8_000);
    r.shutdown().await;

    let h = Harness::new().await;
    h.script().openai().usage(U::new(100, 5)).text("fine");
    let mut p = h.params(200_000, 50_000);
    p.provider.client = h.openai();
    p.settings.effort = Some(Effort::Low);
    let mut r = start(p);
    r.turn("q").await;
    assert_eq!(h.server.requests()[0]["reasoning_effort"], "low");
    r.shutdown().await;
}

#[tokio::test]
async fn resume_is_refused_while_another_live_process_works_on_that_step() {
    let h = Harness::new().await;
    let older = a_run(&h, "fix the add bug", "Fixed add.").await;
    let root = h.data.join("runs").join(&older);
    // Someone else continues it and is still running.
    let p = h.resumed(200_000, 50_000, &root);
    let mut other = start(p);
    other
        .until(|e| matches!(e, Event::Notice { message } if message.starts_with("continuing")))
        .await;
    let mut r = start(h.params(200_000, 50_000));
    r.send(Op::Resume {
        run_id: older.clone(),
    })
    .await;
    let ev = r.until(|e| matches!(e, Event::Error { .. })).await;
    assert!(
        matches!(ev.last(), Some(Event::Error { message, .. }) if message.contains("in use by another flower-tui")),
        "{ev:?}"
    );
    other.shutdown().await;
    // Once it is gone, the run can be continued.
    r.send(Op::Resume { run_id: older }).await;
    r.until(|e| matches!(e, Event::Resumed { .. })).await;
    r.shutdown().await;
}

/// The context of the first `Usage` event in `events`.
fn first_usage(events: &[Event]) -> Option<(u64, bool)> {
    events.iter().find_map(|e| match e {
        Event::Usage {
            context, estimated, ..
        } => Some((*context, *estimated)),
        _ => None,
    })
}

#[tokio::test]
async fn continue_and_resume_show_the_last_context_of_the_session_at_once() {
    let h = Harness::new().await;
    h.script()
        .usage(U::new(140_000, 500))
        .text("read everything");
    let mut r = start(h.params(200_000, 50_000));
    let ev = r.completed_turn("read the whole tree").await;
    let reported = ev.iter().rev().find_map(|e| match e {
        Event::Usage {
            context,
            estimated: false,
            ..
        } => Some(*context),
        _ => None,
    });
    let Some(last) = reported else {
        panic!("no reported usage")
    };
    assert!(last >= 140_000, "{last}");
    let root = r.run_root.clone();
    let id = RunDir::open(&root).run_id;
    r.shutdown().await;

    // `--continue`: the gauge shows the session's last reading before anything is sent.
    let mut r = start(h.resumed(200_000, 50_000, &root));
    r.until(|e| matches!(e, Event::Resumed { .. })).await;
    let ev = r.until(|e| matches!(e, Event::Usage { .. })).await;
    assert_eq!(first_usage(&ev), Some((last, true)));
    r.shutdown().await;

    // `/resume` from another run: the same.
    let mut p = h.params(200_000, 50_000);
    p.front_end = FrontEnd::Interactive { review: false };
    let mut r = start(p);
    r.send(Op::Resume { run_id: id }).await;
    r.until(|e| matches!(e, Event::Resumed { .. })).await;
    let ev = r.until(|e| matches!(e, Event::Usage { .. })).await;
    assert_eq!(first_usage(&ev), Some((last, true)));
    assert_eq!(h.server.requests().len(), 1, "nothing was sent meanwhile");
    r.shutdown().await;
}
