//! The wire table: every event kind beside the JSON line headless prints for it, in the order
//! the protocol declares them (split in parts so each stays short).

use std::path::PathBuf;

use serde_json::json;

use super::*;
use crate::engine::provider::ErrorKind as P;
use crate::engine::tools::CommandEnd;

/// Every event kind and its line.
pub(super) fn table() -> Vec<(Event, &'static str)> {
    let t = Thresholds::new(200_000, 50_000);
    let mut all = Vec::new();
    all.extend(table_1(t));
    all.extend(table_2());
    all.extend(table_3());
    all.extend(table_4());
    all.extend(super::wire_table_more::table_5(t));
    all.extend(super::wire_table_more::table_6(t));
    all.extend(super::wire_table_more::table_7());
    all.extend(super::wire_table_more::table_8());
    all
}

fn table_1(t: Thresholds) -> Vec<(Event, &'static str)> {
    vec![
        (
            Event::SessionStarted {
                session_id: "s1".into(),
                parent_session: None,
                generation: 1,
                model: "m".into(),
                provider: "anthropic".into(),
                thresholds: t,
                demo: false,
            },
            r#"{"type":"session_started","session_id":"s1","parent_session":null,"generation":1,"model":"m","provider":"anthropic","window":200000,"headroom":50000,"at":150000,"warn_at":130000,"demo":false}"#,
        ),
        (
            Event::SessionPrompt {
                session_id: "s1".into(),
                environment: "# Environment\n".into(),
                instructions: vec![InstructionFile {
                    path: PathBuf::from("/w/AGENTS.md"),
                    bytes: 40_000,
                    included: 32_000,
                    error: None,
                }],
            },
            r##"{"type":"session_prompt","session_id":"s1","environment":"# Environment\n","instructions":[{"path":"/w/AGENTS.md","bytes":40000,"included":32000,"error":null}]}"##,
        ),
        (
            Event::TurnStarted {
                turn: TurnId(3),
                kind: TurnKind::Message,
                origin: Origin::User,
            },
            r#"{"type":"turn_started","turn":3,"kind":"message","origin":"user"}"#,
        ),
        (
            Event::TurnStarted {
                turn: TurnId(5),
                kind: TurnKind::Init,
                origin: Origin::User,
            },
            r#"{"type":"turn_started","turn":5,"kind":"init","origin":"user"}"#,
        ),
        (
            Event::UserMessage {
                turn: Some(TurnId(3)),
                origin: Origin::Engine,
                text: "briefing".into(),
            },
            r#"{"type":"user_message","turn":3,"origin":"engine","text":"briefing"}"#,
        ),
        (
            Event::UserMessage {
                turn: None,
                origin: Origin::User,
                text: "earlier".into(),
            },
            r#"{"type":"user_message","turn":null,"origin":"user","text":"earlier"}"#,
        ),
        (
            Event::Attachment {
                turn: TurnId(3),
                path: "src/main.rs".into(),
                attached: true,
                summary: "src/main.rs: 12 lines attached".into(),
            },
            r#"{"type":"attachment","turn":3,"path":"src/main.rs","attached":true,"summary":"src/main.rs: 12 lines attached"}"#,
        ),
        (
            Event::TextDelta {
                turn: Some(TurnId(3)),
                text: "Hi".into(),
            },
            r#"{"type":"text_delta","turn":3,"text":"Hi"}"#,
        ),
        (
            Event::ThinkingDelta { text: "hm".into() },
            r#"{"type":"thinking_delta","text":"hm"}"#,
        ),
        (
            Event::AssistantDone {
                turn: Some(TurnId(3)),
                text: "Hi".into(),
                interrupted: false,
            },
            r#"{"type":"assistant_done","turn":3,"text":"Hi","interrupted":false}"#,
        ),
        (
            Event::ToolCall {
                turn: Some(TurnId(3)),
                id: "t1".into(),
                name: "bash".into(),
                input: json!({"command": "ls"}),
                summary: "bash: ls".into(),
                changes_files: true,
            },
            r#"{"type":"tool_call","turn":3,"id":"t1","name":"bash","input":{"command":"ls"},"summary":"bash: ls","changes_files":true}"#,
        ),
    ]
}

fn table_2() -> Vec<(Event, &'static str)> {
    vec![
        (
            Event::ToolResult {
                turn: Some(TurnId(3)),
                id: "t1".into(),
                name: "bash".into(),
                output: "a\n".into(),
                is_error: false,
                spilled: Some(PathBuf::from("/w/.flower/spill/s-1.txt")),
                diff: None,
                exit: Some(CommandExit {
                    end: CommandEnd::Exited { code: 0 },
                    elapsed_ms: 1250,
                    summary: "exit code 0".into(),
                }),
                sandbox: None,
            },
            r#"{"type":"tool_result","turn":3,"id":"t1","name":"bash","output":"a\n","is_error":false,"spilled":"/w/.flower/spill/s-1.txt","diff":null,"exit":{"ended":"exited","code":0,"signal":null,"timed_out":false,"interrupted":false,"elapsed_ms":1250,"summary":"exit code 0"},"sandbox":null}"#,
        ),
        (
            Event::ToolOutputDelta {
                id: "t1".into(),
                text: "Compiling foo\n".into(),
            },
            r#"{"type":"tool_output_delta","id":"t1","text":"Compiling foo\n"}"#,
        ),
        (
            Event::ToolResult {
                turn: None,
                id: "t2".into(),
                name: "edit_file".into(),
                output: "Edited a.txt".into(),
                is_error: false,
                spilled: None,
                diff: Some(Box::new(FileDiff::new(
                    "a.txt",
                    Some("x\n"),
                    "y\n",
                    crate::engine::diff::DiffLimits::RESULT,
                ))),
                exit: None,
                sandbox: None,
            },
            r#"{"type":"tool_result","turn":null,"id":"t2","name":"edit_file","output":"Edited a.txt","is_error":false,"spilled":null,"diff":{"path":"a.txt","change":"modified","added":1,"removed":1,"hunks":[{"old_start":1,"old_lines":1,"new_start":1,"new_lines":1,"lines":[{"kind":"removed","old":1,"new":null,"text":"x"},{"kind":"added","old":null,"new":1,"text":"y"}]}],"hidden_hunks":0,"hidden_lines":0,"too_large":false},"exit":null,"sandbox":null}"#,
        ),
        (
            Event::ApprovalRequest {
                id: "t1".into(),
                name: "bash".into(),
                summary: "bash: ls".into(),
                outside_workspace: false,
                command: Some("ls".into()),
                diff: None,
                always: crate::engine::approvals::offer("bash", &json!({"command": "ls"}), false),
                unsandboxed: None,
            },
            r#"{"type":"approval_request","id":"t1","name":"bash","summary":"bash: ls","outside_workspace":false,"command":"ls","diff":null,"always":{"rules":[{"kind":"bash_prefix","prefix":"ls"}],"label":"always allow `ls …` this session"},"unsandboxed":null}"#,
        ),
        (
            Event::ApprovalRequest {
                id: "t2".into(),
                name: "write_file".into(),
                summary: "write_file: /etc/x".into(),
                outside_workspace: true,
                command: None,
                diff: Some(Box::new(FileDiff::new(
                    "/etc/x",
                    None,
                    "a\n",
                    crate::engine::diff::DiffLimits::PREVIEW,
                ))),
                always: None,
                unsandboxed: None,
            },
            r#"{"type":"approval_request","id":"t2","name":"write_file","summary":"write_file: /etc/x","outside_workspace":true,"command":null,"diff":{"path":"/etc/x","change":"created","added":1,"removed":0,"hunks":[{"old_start":0,"old_lines":0,"new_start":1,"new_lines":1,"lines":[{"kind":"added","old":null,"new":1,"text":"a"}]}],"hidden_hunks":0,"hidden_lines":0,"too_large":false},"always":null,"unsandboxed":null}"#,
        ),
    ]
}

fn table_3() -> Vec<(Event, &'static str)> {
    vec![
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
            Event::McpStatus(crate::engine::mcp::ServerStatus {
                name: "docs".into(),
                origin: crate::engine::mcp::Origin::ConfigFile,
                transport: "https://example.com/mcp".into(),
                state: crate::engine::mcp::ServerState::Ready { tools: 2 },
                tools: vec!["search".into(), "fetch".into()],
                last_error: None,
                warnings: vec![],
            }),
            r#"{"type":"mcp_status","name":"docs","origin":"config.toml","transport":"https://example.com/mcp","state":"ready","tool_count":2,"tools":["search","fetch"],"last_error":null,"warnings":[]}"#,
        ),
        (
            Event::McpJsonApproval {
                path: PathBuf::from("/w/.mcp.json"),
                sha256: "ab12".into(),
                servers: vec![crate::engine::mcp::ServerStatus {
                    name: "tracker".into(),
                    origin: crate::engine::mcp::Origin::McpJson,
                    transport: "npx -y tracker-mcp".into(),
                    state: crate::engine::mcp::ServerState::AwaitingApproval,
                    tools: vec![],
                    last_error: None,
                    warnings: vec![],
                }],
            },
            r#"{"type":"mcp_json_approval","path":"/w/.mcp.json","sha256":"ab12","servers":[{"name":"tracker","origin":".mcp.json","transport":"npx -y tracker-mcp","state":"awaiting_approval","tools":[],"last_error":null,"warnings":[]}]}"#,
        ),
        (
            Event::McpWaiting {
                servers: vec!["docs".into(), "tracker".into()],
            },
            r#"{"type":"mcp_waiting","servers":["docs","tracker"]}"#,
        ),
        (
            Event::Subagent(SubagentPhase::Start {
                id: "t7".into(),
                description: "find loaders".into(),
                session_id: "c1".into(),
                parent_session: "s2".into(),
                model: "m".into(),
                tools: vec!["read_file".into(), "grep".into()],
                window: 200_000,
                transcript: PathBuf::from("/r/sessions/c1.jsonl"),
            }),
            r#"{"type":"subagent","phase":"start","id":"t7","description":"find loaders","session_id":"c1","parent_session":"s2","model":"m","tools":["read_file","grep"],"window":200000,"transcript":"/r/sessions/c1.jsonl"}"#,
        ),
        (
            Event::Subagent(SubagentPhase::Text {
                id: "t7".into(),
                text: "Looking.".into(),
            }),
            r#"{"type":"subagent","phase":"text","id":"t7","text":"Looking."}"#,
        ),
    ]
}

fn table_4() -> Vec<(Event, &'static str)> {
    vec![
        (
            Event::Subagent(SubagentPhase::ToolCall {
                id: "t7".into(),
                call_id: "c1-1".into(),
                name: "grep".into(),
                summary: "grep: /load/".into(),
                calls: 1,
            }),
            r#"{"type":"subagent","phase":"tool_call","id":"t7","call_id":"c1-1","name":"grep","summary":"grep: /load/","calls":1}"#,
        ),
        (
            Event::Subagent(SubagentPhase::ToolResult {
                id: "t7".into(),
                call_id: "c1-1".into(),
                name: "grep".into(),
                is_error: false,
                output: "src/a.rs:3: load()".into(),
                chars: 18,
            }),
            r#"{"type":"subagent","phase":"tool_result","id":"t7","call_id":"c1-1","name":"grep","is_error":false,"output":"src/a.rs:3: load()","chars":18}"#,
        ),
        (
            Event::Subagent(SubagentPhase::Usage {
                id: "t7".into(),
                context: 4_800,
                usage: Usage {
                    input_tokens: 4_500,
                    output_tokens: 300,
                    ..Default::default()
                },
                cost_usd: 0.02,
            }),
            r#"{"type":"subagent","phase":"usage","id":"t7","context":4800,"usage":{"input_tokens":4500,"output_tokens":300,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},"cost_usd":0.02}"#,
        ),
        (
            Event::Subagent(SubagentPhase::End {
                id: "t7".into(),
                session_id: "c1".into(),
                outcome: SubagentOutcome::MaxIterations { n: 50, max: 50 },
                usage: Usage {
                    input_tokens: 9_000,
                    output_tokens: 300,
                    ..Default::default()
                },
                context: 4_800,
                cost_usd: 0.125,
                tool_calls: 6,
                iterations: 50,
                elapsed_ms: 4_200,
                report_chars: 812,
            }),
            r#"{"type":"subagent","phase":"end","id":"t7","session_id":"c1","outcome":"max_iterations_reached(50/50)","usage":{"input_tokens":9000,"output_tokens":300,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},"context":4800,"cost_usd":0.125,"tool_calls":6,"iterations":50,"elapsed_ms":4200,"report_chars":812}"#,
        ),
        (
            Event::Subagent(SubagentPhase::End {
                id: "t8".into(),
                session_id: "c2".into(),
                outcome: SubagentOutcome::Error(ErrorKind::Provider(P::Auth)),
                usage: Usage::default(),
                context: 0,
                cost_usd: 0.0,
                tool_calls: 0,
                iterations: 1,
                elapsed_ms: 12,
                report_chars: 190,
            }),
            r#"{"type":"subagent","phase":"end","id":"t8","session_id":"c2","outcome":"error:auth","usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},"context":0,"cost_usd":0.0,"tool_calls":0,"iterations":1,"elapsed_ms":12,"report_chars":190}"#,
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
            Event::Resumed {
                run_id: "r1".into(),
                session_id: "s9".into(),
                generation: 2,
                messages: 6,
                latest_handoff: Some("/w/.flower/notes/handoff-fix.md".into()),
            },
            r#"{"type":"resumed","run_id":"r1","session_id":"s9","generation":2,"messages":6,"latest_handoff":"/w/.flower/notes/handoff-fix.md"}"#,
        ),
    ]
}
