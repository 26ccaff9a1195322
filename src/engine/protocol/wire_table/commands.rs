//! The answers to the user's commands and questions: `/cost`, `/resume`, `/init`, `/permissions`, the
//! step's memory (pins, focus, `todo`), `/undo` and `/redo`, `/rewind`, the mode and a presented plan.

use std::path::PathBuf;

use crate::engine::protocol::*;

/// The commands events and their lines.
pub(super) fn entries() -> Vec<(Event, &'static str)> {
    let job = JobInfo {
        id: 2,
        command: "npm run dev".into(),
        state: JobState::Exited { code: 1 },
        started_unix: 1_700_000_000,
        ended_unix: Some(1_700_000_060),
        bytes: 2048,
        lines: 40,
        url: Some("http://localhost:5173/".into()),
        ports: vec![5173],
        log: PathBuf::from("/r/jobs/2.log"),
        last_lines: vec!["error: port taken".into()],
    };
    vec![
        (
            Event::Jobs {
                jobs: vec![JobInfo {
                    state: JobState::Running,
                    ended_unix: None,
                    ..job.clone()
                }],
            },
            r#"{"type":"jobs","jobs":[{"id":2,"command":"npm run dev","state":"running","started_unix":1700000000,"ended_unix":null,"bytes":2048,"lines":40,"url":"http://localhost:5173/","ports":[5173],"log":"/r/jobs/2.log","last_lines":["error: port taken"]}]}"#,
        ),
        (
            Event::JobEnded { job },
            r#"{"type":"job_ended","job":{"id":2,"command":"npm run dev","state":"exited","code":1,"started_unix":1700000000,"ended_unix":1700000060,"bytes":2048,"lines":40,"url":"http://localhost:5173/","ports":[5173],"log":"/r/jobs/2.log","last_lines":["error: port taken"]}}"#,
        ),
        (
            Event::JobOutput {
                id: 2,
                text: "ready".into(),
            },
            r#"{"type":"job_output","id":2,"text":"ready"}"#,
        ),
        (
            Event::Cost {
                web_searches: 2,
                step: "fix".into(),
                rows: vec![CostRow {
                    generation: 2,
                    start: GenerationStart::New,
                    label: "gen 2 · /new".into(),
                    session_id: "s2".into(),
                    cost_usd: 0.5,
                    num_turns: 3,
                    context: 12_000,
                    current: true,
                    subagents_usd: 0.125,
                }],
                subagents: vec![SubagentRecord {
                    session_id: "c1".into(),
                    parent_session: "s2".into(),
                    call_id: "t7".into(),
                    description: "find loaders".into(),
                    model: "m".into(),
                    started: "2026-11-29T10:00:00Z".into(),
                    outcome: "completed".into(),
                    usage: Usage {
                        input_tokens: 9_000,
                        output_tokens: 300,
                        ..Default::default()
                    },
                    context: 4_800,
                    cost_usd: 0.125,
                    tool_calls: 6,
                    elapsed_ms: 4_200,
                    transcript: PathBuf::from("sessions/c1.jsonl"),
                }],
                total_usd: 1.25,
                num_turns: 7,
            },
            r#"{"type":"cost","step":"fix","rows":[{"generation":2,"start":"new","label":"gen 2 · /new","session_id":"s2","cost_usd":0.5,"num_turns":3,"context":12000,"current":true,"subagents_usd":0.125}],"subagents":[{"session_id":"c1","parent_session":"s2","call_id":"t7","description":"find loaders","model":"m","started":"2026-11-29T10:00:00Z","outcome":"completed","usage":{"input_tokens":9000,"output_tokens":300,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},"context":4800,"cost_usd":0.125,"tool_calls":6,"elapsed_ms":4200,"transcript":"sessions/c1.jsonl"}],"total_usd":1.25,"num_turns":7,"web_searches":2}"#,
        ),
        (
            Event::Sessions {
                current_run: "r2".into(),
                sessions: vec![crate::engine::ledger::SessionSummary {
                    run_id: "r1".into(),
                    run_dir: PathBuf::from("/d/runs/r1"),
                    created: "2026-11-29T10:00:00Z".into(),
                    updated: "2026-11-29T11:00:00Z".into(),
                    updated_unix_ms: 1_795_950_000_000,
                    step: "fix-add".into(),
                    first_message: "fix add".into(),
                    generations: 2,
                    num_turns: 4,
                    cost_usd: 0.75,
                    model: "m".into(),
                    session_id: "s9".into(),
                }],
            },
            r#"{"type":"sessions","current_run":"r2","sessions":[{"run_id":"r1","run_dir":"/d/runs/r1","created":"2026-11-29T10:00:00Z","updated":"2026-11-29T11:00:00Z","updated_unix_ms":1795950000000,"step":"fix-add","first_message":"fix add","generations":2,"num_turns":4,"cost_usd":0.75,"model":"m","session_id":"s9"}]}"#,
        ),
        (
            Event::Models {
                models: vec!["claude-a".into(), "claude-b".into()],
                error: None,
            },
            r#"{"type":"models","models":["claude-a","claude-b"]}"#,
        ),
        (
            Event::Models {
                models: vec![],
                error: Some("not found".into()),
            },
            r#"{"type":"models","models":[],"error":"not found"}"#,
        ),
        (
            Event::Resumed {
                run_id: "r1".into(),
                session_id: "s9".into(),
                generation: 2,
                messages: 6,
                latest_handoff: Some("/w/.flower/notes/handoff-fix.md".into()),
            },
            r#"{"type":"resumed","run_id":"r1","session_id":"s9","generation":2,"messages":6,"latest_handoff":"/w/.flower/notes/handoff-fix.md"}"#,
        ),
        (
            Event::InitExists {
                turn: TurnId(4),
                path: PathBuf::from("/w/AGENTS.md"),
            },
            r#"{"type":"init_exists","turn":4,"path":"/w/AGENTS.md"}"#,
        ),
        (
            Event::Permissions {
                policy: ApprovalPolicy::Ask,
                allowances: vec![Allowance::from(AllowRule::BashPrefix {
                    prefix: "cargo test".into(),
                })],
                sandbox: "workspace-write, network off (Landlock ABI 7 and a seccomp filter)"
                    .into(),
                rules: Vec::new(),
            },
            r#"{"type":"permissions","policy":"ask","allowances":[{"rule":{"kind":"bash_prefix","prefix":"cargo test"},"label":"bash: `cargo test …`"}],"sandbox":"workspace-write, network off (Landlock ABI 7 and a seccomp filter)"}"#,
        ),
        (
            Event::Permissions {
                policy: ApprovalPolicy::Auto,
                allowances: Vec::new(),
                sandbox: "off".into(),
                rules: vec![ListedRule {
                    kind: "deny",
                    rule: "Read(./.env)".into(),
                    source: Some(PathBuf::from("/home/u/.claude/settings.json")),
                }],
            },
            r#"{"type":"permissions","policy":"auto","allowances":[],"sandbox":"off","rules":[{"kind":"deny","rule":"Read(./.env)","source":"/home/u/.claude/settings.json"}]}"#,
        ),
        (
            Event::Pins {
                pins: vec!["never push to main".into(), "run the tests".into()],
                change: PinChange::Added,
                changed: vec!["run the tests".into()],
                step: Some("fix-it".into()),
            },
            r#"{"type":"pins","pins":["never push to main","run the tests"],"change":"added","changed":["run the tests"],"step":"fix-it"}"#,
        ),
        (
            Event::Focus {
                focus: Some("the parser".into()),
                step: None,
            },
            r#"{"type":"focus","focus":"the parser","step":null}"#,
        ),
        (
            Event::Todo {
                items: vec![
                    TodoItem {
                        text: "read".into(),
                        status: TodoStatus::Done,
                    },
                    TodoItem {
                        text: "fix".into(),
                        status: TodoStatus::InProgress,
                    },
                    TodoItem {
                        text: "test".into(),
                        status: TodoStatus::Pending,
                    },
                ],
            },
            r#"{"type":"todo","items":[{"text":"read","status":"done"},{"text":"fix","status":"in_progress"},{"text":"test","status":"pending"}]}"#,
        ),
        (
            Event::MemoryRefused {
                reason: MemoryRefusal::PinTooLong,
                message: "Not pinned".into(),
            },
            r#"{"type":"memory_refused","reason":"pin_too_long","message":"Not pinned"}"#,
        ),
        (
            Event::Restore(crate::engine::checkpoint::RestoreReport::Conflict {
                action: crate::engine::checkpoint::UndoAction::Undo,
                of: crate::engine::checkpoint::TurnRef {
                    generation: 2,
                    turn: 3,
                    at: 1_800_000_000,
                },
                files: vec![crate::engine::checkpoint::RelPath::parse("src/a.rs").unwrap()],
            }),
            r#"{"type":"restore","outcome":"conflict","action":"undo","of":{"generation":2,"turn":3,"at":1800000000},"files":["src/a.rs"]}"#,
        ),
        (
            Event::RewindPoints {
                points: vec![RewindPoint {
                    turn: 3,
                    generation: 2,
                    at: 1_800_000_000,
                    text: "fix the parser".into(),
                    files: vec!["src/a.rs".into()],
                    current: true,
                    undone: false,
                    sent_as: Some(4),
                }],
            },
            r#"{"type":"rewind_points","points":[{"turn":3,"generation":2,"at":1800000000,"text":"fix the parser","files":["src/a.rs"],"current":true,"sent_as":4}]}"#,
        ),
        (
            Event::Rewound {
                turn: 3,
                mode: RewindMode::Both,
                files: vec!["src/a.rs".into()],
                kept: Vec::new(),
                text: Some("fix the parser".into()),
                generation: None,
            },
            r#"{"type":"rewound","turn":3,"mode":"both","files":["src/a.rs"],"kept":[],"text":"fix the parser","generation":null}"#,
        ),
        (
            Event::RewindConflict {
                turn: 3,
                mode: RewindMode::Code,
                files: vec!["src/a.rs".into()],
            },
            r#"{"type":"rewind_conflict","turn":3,"mode":"code","files":["src/a.rs"]}"#,
        ),
        (
            Event::Mode {
                mode: crate::engine::policy::Mode::AcceptEdits,
            },
            r#"{"type":"mode","mode":"accept-edits"}"#,
        ),
        (
            Event::Plan {
                turn: Some(TurnId(2)),
                path: PathBuf::from("/w/.flower/notes/plan-fix.md"),
                markdown: "# Plan\n".into(),
            },
            r##"{"type":"plan","turn":2,"path":"/w/.flower/notes/plan-fix.md","markdown":"# Plan\n"}"##,
        ),
    ]
}
