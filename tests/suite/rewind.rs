//! `/rewind` on the engine, in process, with real files and the loopback fake: the picker's list
//! (newest first, with each turn's files), a rewind in the current generation (files back, the
//! history cut before the message, the transcript keeping it, the message returned), and one to
//! a message of an earlier generation (files back across handoffs, a successor briefed with the
//! handoff document that began that generation); the handoff's `## Touched` section without
//! the turns undone; a custom command offered as typed and the plan carried out offered as a
//! prompt (both seen by the `UserPromptSubmit` hook).

use std::path::PathBuf;

use flower_tui::engine::checkpoint::{OnConflict, UndoAction};
use flower_tui::engine::ledger::{RewindMode, RewindPoint};
use flower_tui::engine::protocol::{Event, Op};
use serde_json::json;

use crate::support::check::assert_file;
use crate::support::harness::{Harness, Running, start};
use crate::support::requests::sent;

/// What a rewind did (the fields of `Event::Rewound` these tests check).
struct Rewound {
    files: Vec<String>,
    kept: Vec<String>,
    text: Option<String>,
    generation: Option<u32>,
}

/// The engine in process against the fake, with the steps these scenarios take.
struct Session {
    h: Harness,
    r: Running,
}

impl Session {
    async fn start() -> Session {
        let h = Harness::new().await;
        let r = start(h.params(200_000, 50_000));
        Session { h, r }
    }

    /// A turn: the user sends `message`; the model writes `files` (path, content) in one reply,
    /// then answers `answer`.
    async fn writing(&mut self, message: &str, files: &[(&str, &str)], answer: &str) {
        let calls: Vec<(&str, String)> = files
            .iter()
            .map(|(path, content)| ("write_file", json!({"path": path, "content": content})))
            .map(|(name, input)| (name, input.to_string()))
            .collect();
        let mut script = self.h.script();
        if !calls.is_empty() {
            script.tools(&calls);
        }
        script.text(answer);
        self.r.turn(message).await;
    }

    /// A manual handoff whose document is `doc`, to its end.
    async fn handoff(&mut self, doc: &str) {
        self.h.script().text(doc);
        let t = self.r.send_handoff(None).await;
        self.r.until_end(t).await;
    }

    /// Ask for a rewind to the message of `turn`; the engine's answer (`Rewound`, or
    /// `RewindConflict` when it asks first).
    async fn rewind(&mut self, turn: u64, mode: RewindMode, on_conflict: OnConflict) -> Event {
        let op = Op::Rewind {
            turn,
            mode,
            on_conflict,
        };
        self.r.send(op).await;
        let ev = self
            .r
            .until(|e| matches!(e, Event::RewindConflict { .. } | Event::Rewound { .. }))
            .await;
        ev.last().unwrap().clone()
    }

    /// A rewind that is done at once: what it did.
    async fn rewound(&mut self, turn: u64, mode: RewindMode, on_conflict: OnConflict) -> Rewound {
        match self.rewind(turn, mode, on_conflict).await {
            Event::Rewound {
                files,
                kept,
                text,
                generation,
                ..
            } => Rewound {
                files,
                kept,
                text,
                generation,
            },
            other => panic!("not rewound: {other:?}"),
        }
    }

    /// `/undo` or `/redo`, to the engine's report.
    async fn restore(&mut self, action: UndoAction) {
        let on_conflict = OnConflict::Stop;
        self.r
            .send(Op::Restore {
                action,
                on_conflict,
            })
            .await;
        self.r.until(|e| matches!(e, Event::Restore(_))).await;
    }

    /// The picker's list.
    async fn points(&mut self) -> Vec<RewindPoint> {
        self.r.send(Op::RewindPoints).await;
        self.r
            .until_some(|e| match e {
                Event::RewindPoints { points } => Some(points.clone()),
                _ => None,
            })
            .await
    }

    /// A file of the workspace.
    fn file(&self, name: &str) -> PathBuf {
        self.h.workspace.join(name)
    }

    /// Everything the model was sent in the last request, as text.
    fn last_request(&self) -> String {
        sent(self.h.server.requests().last().unwrap())
    }
}

#[tokio::test]
async fn rewinding_in_the_current_generation_cuts_the_history_and_restores_the_files() {
    let mut s = Session::start().await;
    s.writing("first message", &[("a.txt", "A1")], "first done")
        .await;
    let files = [("a.txt", "A2"), ("b.txt", "B")];
    s.writing("second message", &files, "second done").await;
    assert_file(s.file("a.txt"), "A2");

    let points = s.points().await;
    let listed: Vec<(u64, &str, Vec<String>)> = points
        .iter()
        .map(|p| (p.turn, p.text.as_str(), p.files.clone()))
        .collect();
    assert_eq!(
        listed,
        [
            (2, "second message", vec!["a.txt".into(), "b.txt".into()]),
            (1, "first message", vec!["a.txt".into()]),
        ]
    );
    assert!(points.iter().all(|p| p.current && p.generation == 1));

    let done = s.rewound(2, RewindMode::Both, OnConflict::Stop).await;
    assert_eq!(done.files, ["a.txt", "b.txt"]);
    assert_eq!(done.text.as_deref(), Some("second message"));
    assert_eq!(done.generation, None, "the same session goes on");
    assert_file(s.file("a.txt"), "A1");
    assert!(!s.file("b.txt").exists());

    s.writing("third message", &[], "third done").await;
    let sent = s.last_request();
    assert!(
        sent.contains("first done") && sent.contains("third message"),
        "{sent}"
    );
    assert!(
        !sent.contains("second"),
        "the history is cut before the message: {sent}"
    );
    let m = s.r.manifest();
    let step = &m.steps[0];
    assert_eq!(step.history.rewinds.len(), 1);
    let rewound = &step.history.rewinds[0];
    assert_eq!((rewound.turn, rewound.conversation), (2, true));
    let transcript =
        s.r.run_root
            .join(format!("sessions/{}.jsonl", step.session_id));
    let transcript = std::fs::read_to_string(transcript).unwrap();
    assert!(
        transcript.contains("second message"),
        "the transcript keeps what was there"
    );
    // /redo brings the rewound turn's files back.
    s.restore(UndoAction::Redo).await;
    assert_file(s.file("b.txt"), "B");
    s.r.shutdown().await;
}

#[tokio::test]
async fn rewinding_to_an_earlier_generation_starts_a_successor_from_its_handoff() {
    let mut s = Session::start().await;
    s.writing("message one", &[("a.txt", "A")], "one done")
        .await;
    s.handoff("## Doing\nMARKER-DOC-ONE\n## Next\nGo on.\n")
        .await;
    s.writing("message two", &[("b.txt", "B")], "two done")
        .await;
    s.handoff("## Doing\nMARKER-DOC-TWO\n## Next\nGo on.\n")
        .await;
    s.writing("message three", &[("c.txt", "C")], "three done")
        .await;
    assert_eq!(s.r.manifest().steps[0].generations, 3);

    let done = s.rewound(2, RewindMode::Both, OnConflict::Stop).await;
    assert_eq!(done.files, ["b.txt", "c.txt"]);
    assert_eq!(done.text.as_deref(), Some("message two"));
    assert_eq!(done.generation, Some(4));
    assert!(s.file("a.txt").exists() && !s.file("b.txt").exists() && !s.file("c.txt").exists());

    s.writing("message two, again", &[], "again").await;
    let sent = s.last_request();
    assert!(
        sent.contains("MARKER-DOC-ONE"),
        "briefed with generation 2's document: {sent}"
    );
    assert!(
        !sent.contains("MARKER-DOC-TWO") && !sent.contains("three done"),
        "{sent}"
    );
    let step = &s.r.manifest().steps[0];
    assert_eq!(step.generations, 4);
    let rewound = &step.history.rewinds[0];
    assert_eq!((rewound.to_generation, rewound.from_generation), (2, 3));
    s.r.shutdown().await;
}

/// A rewind whose code part would write over files changed since is stopped before anything
/// changes (`RewindConflict`), then done with the answer: `KeepUsers` names the kept file and
/// restores the rest, across two turns; the picker then marks both messages as undone.
#[tokio::test]
async fn a_rewind_over_changed_files_asks_first_and_keeps_them_when_told() {
    let mut s = Session::start().await;
    s.writing("first message", &[("a.txt", "A1")], "first done")
        .await;
    // Between the turns the user edits a.txt; the second turn writes b.txt.
    std::fs::write(s.file("a.txt"), "mine").unwrap();
    s.writing("second message", &[("b.txt", "B")], "second done")
        .await;

    let ev = s.rewind(1, RewindMode::Code, OnConflict::Stop).await;
    let Event::RewindConflict { turn, files, .. } = ev else {
        panic!("not asked: {ev:?}")
    };
    assert_eq!(
        (turn, files.as_slice()),
        (1, ["a.txt".to_string()].as_slice())
    );
    assert_file(s.file("a.txt"), "mine");
    assert!(s.file("b.txt").exists(), "nothing is half done");

    let done = s.rewound(1, RewindMode::Code, OnConflict::KeepUsers).await;
    assert_eq!(done.files, ["b.txt"]);
    assert_eq!(done.kept, ["a.txt"]);
    assert_file(s.file("a.txt"), "mine");
    assert!(!s.file("b.txt").exists());

    let points = s.points().await;
    assert!(points.iter().all(|p| p.undone), "{points:?}");
    s.r.shutdown().await;
}

/// The handoff's `## Touched` section leaves out a turn the user undid, and has a turn redone
/// since; a rewind of the code alone leaves its turns out too.
#[tokio::test]
async fn touched_drops_an_undone_edit_and_a_redo_brings_it_back() {
    let mut s = Session::start().await;
    s.writing("one", &[("a.txt", "A")], "one done").await;
    s.writing("two", &[("b.txt", "B")], "two done").await;
    s.writing("three", &[("c.txt", "C")], "three done").await;
    s.writing("four", &[("d.txt", "D")], "four done").await;
    s.restore(UndoAction::Undo).await;
    s.restore(UndoAction::Undo).await;
    s.restore(UndoAction::Undo).await;
    s.restore(UndoAction::Redo).await;
    assert!(s.file("b.txt").exists() && !s.file("c.txt").exists());
    s.handoff("## Doing\nGoing on.\n## Next\nGo on.\n").await;
    s.writing("go on", &[], "on").await;
    let sent = s.last_request();
    let touched = sent
        .split("## Touched")
        .nth(1)
        .unwrap_or_else(|| panic!("no Touched section: {sent}"));
    assert!(
        touched.contains("`a.txt`") && touched.contains("`b.txt`"),
        "{touched}"
    );
    assert!(
        !touched.contains("`c.txt`") && !touched.contains("`d.txt`"),
        "undone: {touched}"
    );

    // In the successor: a rewind of the code only keeps the conversation but not the change.
    s.writing("five", &[("e.txt", "E")], "five done").await;
    s.writing("six", &[("f.txt", "F")], "six done").await;
    let six = s.points().await[0].turn;
    s.rewound(six, RewindMode::Code, OnConflict::Stop).await;
    s.handoff("## Doing\nGoing on.\n## Next\nGo on.\n").await;
    s.writing("again", &[], "ok").await;
    let sent = s.last_request();
    let touched = sent.split("## Touched").nth(1).unwrap_or_default();
    assert!(touched.contains("`e.txt`"), "{touched}");
    assert!(!touched.contains("`f.txt`"), "rewound: {touched}");
    s.r.shutdown().await;
}

/// A custom command the user typed and a plan they chose to carry out are both their prompts:
/// the `UserPromptSubmit` hook sees each (the command's expansion, the plan's message), the
/// picker offers each (the command as typed, each with the turn number the front end gave
/// it), and a rewind to the command puts back what was typed, not its expansion.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_picker_shows_a_command_as_typed_and_offers_the_plan_carried_out() {
    use flower_tui::engine::commands::{self, CommandDirs};
    use flower_tui::engine::policy::Mode;
    use flower_tui::engine::protocol::PlanChoice;

    let h = Harness::new().await;
    let ws = h.workspace.clone();
    crate::support::files::write(
        &ws.join(".flower/commands/review.md"),
        "Review change $ARGUMENTS carefully.\n",
    );
    let log = h.dir.path().join("prompts.log");
    let hook = h.dir.path().join("prompt.sh");
    crate::support::files::write(
        &hook,
        format!(
            "#!/bin/bash\ninput=$(cat)\nprintf '%s\\n' \"$input\" >> '{}'\n",
            log.display()
        ),
    );
    {
        use std::os::unix::fs::PermissionsExt;
        let exec = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(&hook, exec).unwrap();
    }
    let mut p = h.params(200_000, 50_000);
    let dirs = CommandDirs {
        config_dir: None,
        home: None,
        workspace: ws.clone(),
    };
    p.extensions.commands = std::sync::Arc::new(commands::load(&dirs, &[]));
    let toml_text = format!(
        "[[hooks.UserPromptSubmit]]\ncommand = '{}'\n",
        hook.display()
    );
    let value: toml::Value = toml::from_str(&toml_text).unwrap();
    p.hooks.hooks =
        flower_tui::engine::hooks::config::from_toml(value.get("hooks").unwrap()).unwrap();
    p.tools.mode = Some(Mode::Plan);
    let mut r = start(p);

    h.script().text("Reviewed: fine.");
    let turn = r.new_turn();
    let op = Op::Command {
        turn,
        name: "review".into(),
        args: "42".into(),
    };
    r.send(op).await;
    r.until_end(turn).await;
    h.server.push(crate::suite::plan_mode::present(
        "p1",
        crate::suite::plan_mode::PLAN,
    ));
    r.turn("plan the rename").await;
    h.script().text("Implemented.");
    let plan_turn = r.new_turn();
    let op = Op::ImplementPlan {
        turn: plan_turn,
        choice: PlanChoice::Here,
    };
    r.send(op).await;
    r.until_end(plan_turn).await;

    let prompts: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["prompt"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(prompts.len(), 3, "{prompts:?}");
    assert_eq!(prompts[0], "Review change 42 carefully.\n");
    assert_eq!(prompts[1], "plan the rename");
    assert!(
        prompts[2].starts_with("Implement this plan.") && prompts[2].contains("parse_all"),
        "{}",
        prompts[2]
    );

    r.send(Op::RewindPoints).await;
    let points = r
        .until_some(|e| match e {
            Event::RewindPoints { points } => Some(points.clone()),
            _ => None,
        })
        .await;
    let listed: Vec<(u64, String)> = points
        .iter()
        .map(|p| (p.turn, p.text.lines().next().unwrap_or("").to_string()))
        .collect();
    assert_eq!(listed.len(), 3, "{listed:?}");
    assert_eq!(listed[1], (2, "plan the rename".to_string()));
    assert_eq!(listed[2], (1, "/review 42".to_string()));
    assert!(
        listed[0].1.starts_with("Implement this plan."),
        "{listed:?}"
    );
    let sent_as: Vec<Option<u64>> = points.iter().map(|p| p.sent_as).collect();
    assert_eq!(sent_as, [Some(plan_turn.0), Some(turn.0 + 1), Some(turn.0)]);

    let op = Op::Rewind {
        turn: 1,
        mode: RewindMode::Conversation,
        on_conflict: OnConflict::Stop,
    };
    r.send(op).await;
    let text = r
        .until_some(|e| match e {
            Event::Rewound { text, .. } => Some(text.clone()),
            _ => None,
        })
        .await;
    assert_eq!(text.as_deref(), Some("/review 42"));
    // The ledger keeps the command as typed beside its expansion.
    let prompt = &r.manifest().steps[0].history.prompts[0];
    assert_eq!(prompt.typed.as_deref(), Some("/review 42"));
    assert_eq!(prompt.text, "Review change 42 carefully.\n");
    r.shutdown().await;
}
