//! The headless wire format, pinned: every event kind as one JSON line, byte for byte.

use std::path::PathBuf;

use serde_json::json;

use super::*;
use crate::engine::provider::ErrorKind as P;

fn line(ev: &Event) -> String {
    serde_json::to_string(ev).unwrap_or_else(|e| format!("unserialisable: {e}"))
}

#[test]
fn every_event_kind_on_the_wire() {
    let t = Thresholds::new(200_000, 50_000);
    let table: Vec<(Event, &str)> = vec![
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
            Event::TextDelta { text: "Hi".into() },
            r#"{"type":"text_delta","text":"Hi"}"#,
        ),
        (
            Event::ThinkingDelta { text: "hm".into() },
            r#"{"type":"thinking_delta","text":"hm"}"#,
        ),
        (
            Event::AssistantDone {
                text: "Hi".into(),
                interrupted: false,
            },
            r#"{"type":"assistant_done","text":"Hi","interrupted":false}"#,
        ),
        (
            Event::ToolCall {
                id: "t1".into(),
                name: "bash".into(),
                input: json!({"command": "ls"}),
                summary: "bash: ls".into(),
            },
            r#"{"type":"tool_call","id":"t1","name":"bash","input":{"command":"ls"},"summary":"bash: ls"}"#,
        ),
        (
            Event::ToolResult {
                id: "t1".into(),
                name: "bash".into(),
                output: "a\n".into(),
                is_error: false,
                spilled: Some(PathBuf::from("/w/.flower/spill/s-1.txt")),
                diff: None,
                exit: Some(CommandExit {
                    code: Some(0),
                    signal: None,
                    timed_out: false,
                    interrupted: false,
                    elapsed_ms: 1250,
                    summary: "exit code 0".into(),
                }),
                sandbox: None,
            },
            r#"{"type":"tool_result","id":"t1","name":"bash","output":"a\n","is_error":false,"spilled":"/w/.flower/spill/s-1.txt","diff":null,"exit":{"code":0,"signal":null,"timed_out":false,"interrupted":false,"elapsed_ms":1250,"summary":"exit code 0"},"sandbox":null}"#,
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
            r#"{"type":"tool_result","id":"t2","name":"edit_file","output":"Edited a.txt","is_error":false,"spilled":null,"diff":{"path":"a.txt","change":"modified","added":1,"removed":1,"hunks":[{"old_start":1,"old_lines":1,"new_start":1,"new_lines":1,"lines":[{"kind":"removed","old":1,"new":null,"text":"x"},{"kind":"added","old":null,"new":1,"text":"y"}]}],"hidden_hunks":0,"hidden_lines":0,"too_large":false},"exit":null,"sandbox":null}"#,
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
        (
            Event::Cost {
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
            r#"{"type":"cost","step":"fix","rows":[{"generation":2,"start":"new","label":"gen 2 · /new","session_id":"s2","cost_usd":0.5,"num_turns":3,"context":12000,"current":true,"subagents_usd":0.125}],"subagents":[{"session_id":"c1","parent_session":"s2","call_id":"t7","description":"find loaders","model":"m","started":"2026-11-29T10:00:00Z","outcome":"completed","usage":{"input_tokens":9000,"output_tokens":300,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},"context":4800,"cost_usd":0.125,"tool_calls":6,"elapsed_ms":4200,"transcript":"sessions/c1.jsonl"}],"total_usd":1.25,"num_turns":7}"#,
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
        (
            Event::Model {
                model: "claude-opus-4-1".into(),
                effort: Some(Effort::High),
                thresholds: t,
                window_source: "model table".into(),
            },
            r#"{"type":"model","model":"claude-opus-4-1","effort":"high","window":200000,"headroom":50000,"at":150000,"warn_at":130000,"window_source":"model table"}"#,
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
            },
            r#"{"type":"permissions","policy":"ask","allowances":[{"rule":{"kind":"bash_prefix","prefix":"cargo test"},"label":"bash: `cargo test …`"}],"sandbox":"workspace-write, network off (Landlock ABI 7 and a seccomp filter)"}"#,
        ),
        (
            Event::Usage {
                context: 1200,
                thresholds: t,
                estimated: false,
                usage: crate::engine::types::Usage {
                    input_tokens: 1000,
                    output_tokens: 200,
                    cache_creation_input_tokens: 0,
                    cache_read_input_tokens: 0,
                },
                cost_usd: 0.5,
                session_cost_usd: 1.25,
                masked_tokens: 48_200,
            },
            r#"{"type":"usage","context":1200,"window":200000,"headroom":50000,"at":150000,"warn_at":130000,"estimated":false,"usage":{"input_tokens":1000,"output_tokens":200,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},"cost_usd":0.5,"session_cost_usd":1.25,"masked_tokens":48200}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Near {
                context: 130_000,
                at: 150_000,
                window: 200_000,
            }),
            r#"{"type":"handoff","phase":"near","context":130000,"at":150000,"window":200000}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Writing {
                handoff: HandoffId(1),
                manual: true,
                focus: Some("parser".into()),
                background: false,
            }),
            r#"{"type":"handoff","phase":"writing","handoff":1,"manual":true,"focus":"parser","background":false}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Rescuing {
                handoff: HandoffId(1),
                reason: "the writing request overflowed".into(),
                stubbed: 3,
                dropped: 0,
                background: true,
            }),
            r#"{"type":"handoff","phase":"rescuing","handoff":1,"reason":"the writing request overflowed","stubbed":3,"dropped":0,"background":true}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Retrying {
                handoff: HandoffId(1),
                reason:
                    "the document restated its instructions (words from the prompt: doing 100%)"
                        .into(),
                background: false,
            }),
            r#"{"type":"handoff","phase":"retrying","handoff":1,"reason":"the document restated its instructions (words from the prompt: doing 100%)","background":false}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Waiting {
                handoff: HandoffId(1),
                context: 183_700,
                limit: 183_616,
            }),
            r#"{"type":"handoff","phase":"waiting","handoff":1,"context":183700,"limit":183616}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Frozen {
                handoff: HandoffId(1),
                path: Some(PathBuf::from("/w/.flower/notes/handoff-s.md")),
                degraded: true,
                degraded_reason: Some("no text captured".into()),
                markdown: "Doing\n".into(),
                awaits_review: true,
                background: false,
            }),
            r#"{"type":"handoff","phase":"frozen","handoff":1,"path":"/w/.flower/notes/handoff-s.md","degraded":true,"degraded_reason":"no text captured","markdown":"Doing\n","awaits_review":true,"background":false}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Reopened {
                handoff: HandoffId(1),
                path: Some(PathBuf::from("/w/.flower/notes/handoff-s.md")),
                frozen_at: "2026-11-29T13:40:05Z".into(),
                unsaved: Some(PathBuf::from(
                    "/w/.flower/notes/handoff-s.md.unsaved-20261129T134100Z.md",
                )),
            }),
            r#"{"type":"handoff","phase":"reopened","handoff":1,"path":"/w/.flower/notes/handoff-s.md","frozen_at":"2026-11-29T13:40:05Z","unsaved":"/w/.flower/notes/handoff-s.md.unsaved-20261129T134100Z.md"}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Done {
                handoff: HandoffId(1),
                context: 152_000,
                window: 200_000,
                degraded: false,
                degraded_reason: None,
                path: None,
                sections: vec!["doing".into(), "next".into()],
                generation: 2,
                source: crate::engine::protocol::DocumentSource::Rescued,
                tail: 4,
                held: Held {
                    messages: 48,
                    tool_calls: 31,
                    tokens: 152_400,
                    transcript: Some(PathBuf::from("/d/runs/r/sessions/s1.jsonl")),
                },
            }),
            r#"{"type":"handoff","phase":"done","handoff":1,"context":152000,"window":200000,"degraded":false,"degraded_reason":null,"path":null,"sections":["doing","next"],"generation":2,"source":"rescued","tail":4,"held":{"messages":48,"tool_calls":31,"tokens":152400,"transcript":"/d/runs/r/sessions/s1.jsonl"}}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Cancelled {
                handoff: HandoffId(2),
            }),
            r#"{"type":"handoff","phase":"cancelled","handoff":2}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Failed {
                handoff: HandoffId(2),
                message: "no text captured".into(),
            }),
            r#"{"type":"handoff","phase":"failed","handoff":2,"message":"no text captured"}"#,
        ),
        (
            Event::Handoff(HandoffPhase::Refused {
                reason: HandoffRefusal::NoMessages,
                message: HandoffRefusal::NoMessages.to_string(),
            }),
            r#"{"type":"handoff","phase":"refused","reason":"no_messages","message":"Nothing to hand off (no messages yet)"}"#,
        ),
        (
            Event::Compaction {
                before: 80_000,
                after: 20_000,
                trigger: CompactionTrigger::Overflow,
            },
            r#"{"type":"compaction","before":80000,"after":20000,"trigger":"overflow"}"#,
        ),
        (
            Event::Retry {
                attempt: 2,
                max: 5,
                reason: "overloaded".into(),
                delay_ms: 1000,
            },
            r#"{"type":"retry","attempt":2,"max":5,"reason":"overloaded","delay_ms":1000}"#,
        ),
        (
            Event::Stream(StreamState::Discarded { chars: 12 }),
            r#"{"type":"stream","state":"discarded","chars":12}"#,
        ),
        (
            Event::Stream(StreamState::Silent { silent_ms: 15_000 }),
            r#"{"type":"stream","state":"silent","silent_ms":15000}"#,
        ),
        (
            Event::Stream(StreamState::Resumed),
            r#"{"type":"stream","state":"resumed"}"#,
        ),
        (
            Event::WindowLearned {
                model: "m".into(),
                thresholds: t,
            },
            r#"{"type":"window_learned","model":"m","window":200000,"headroom":50000,"at":150000,"warn_at":130000}"#,
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
            Event::Notice {
                message: "n".into(),
            },
            r#"{"type":"notice","message":"n"}"#,
        ),
        (
            Event::Warning {
                message: "w".into(),
            },
            r#"{"type":"warning","message":"w"}"#,
        ),
        (
            Event::Error {
                kind: ErrorKind::Provider(P::RateLimited),
                message: "slow down".into(),
            },
            r#"{"type":"error","kind":"rate_limited","message":"slow down"}"#,
        ),
        (
            Event::Error {
                kind: ErrorKind::HandoffBreaker,
                message: "stop".into(),
            },
            r#"{"type":"error","kind":"handoff_breaker","message":"stop"}"#,
        ),
        (
            Event::TurnEnd {
                turn: TurnId(3),
                kind: TurnKind::Message,
                origin: Origin::User,
                reason: ExitReason::Error(ErrorKind::Provider(P::ContextWindowExceeded)),
            },
            r#"{"type":"turn_end","turn":3,"kind":"message","origin":"user","reason":"error:context_window_exceeded"}"#,
        ),
        (
            Event::Result {
                text: "done".into(),
                is_error: false,
                num_turns: 1,
                cost_usd: 0.25,
                session_id: "s1".into(),
            },
            r#"{"type":"result","text":"done","is_error":false,"num_turns":1,"cost_usd":0.25,"session_id":"s1"}"#,
        ),
    ];
    for (ev, want) in &table {
        assert_eq!(line(ev), *want);
        // A subagent keeps its phases in its transcript as the same line, built without `Event`.
        if let Event::Subagent(phase) = ev {
            let kept =
                serde_json::to_string(&crate::engine::subagent::TranscriptEvent::Subagent(phase));
            assert_eq!(kept.ok().as_deref(), Some(*want));
        }
    }
    // Every variant is in the table: a new one fails to compile here until it is pinned above.
    let covered = |name: &str| table.iter().any(|(ev, _)| variant(ev) == name);
    for name in ALL_VARIANTS {
        assert!(covered(name), "{name} is not pinned");
    }
}

const ALL_VARIANTS: [&str; 54] = [
    "session_started",
    "session_prompt",
    "turn_started",
    "user_message",
    "attachment",
    "text_delta",
    "thinking_delta",
    "assistant_done",
    "tool_call",
    "tool_result",
    "tool_output_delta",
    "approval_request",
    "usage",
    "handoff:near",
    "handoff:writing",
    "handoff:rescuing",
    "handoff:retrying",
    "handoff:waiting",
    "handoff:frozen",
    "handoff:reopened",
    "handoff:done",
    "handoff:cancelled",
    "handoff:failed",
    "handoff:refused",
    "compaction",
    "retry",
    "stream:discarded",
    "stream:silent",
    "stream:resumed",
    "window_learned",
    "mcp_status",
    "mcp_json_approval",
    "mcp_waiting",
    "subagent:start",
    "subagent:text",
    "subagent:tool_call",
    "subagent:tool_result",
    "subagent:usage",
    "subagent:end",
    "cost",
    "sessions",
    "resumed",
    "model",
    "init_exists",
    "permissions",
    "pins",
    "focus",
    "todo",
    "memory_refused",
    "notice",
    "warning",
    "error",
    "turn_end",
    "result",
];

/// The wire name of each variant (exhaustive: no `_` arm).
fn variant(ev: &Event) -> &'static str {
    match ev {
        Event::SessionStarted { .. } => "session_started",
        Event::SessionPrompt { .. } => "session_prompt",
        Event::TurnStarted { .. } => "turn_started",
        Event::UserMessage { .. } => "user_message",
        Event::Attachment { .. } => "attachment",
        Event::TextDelta { .. } => "text_delta",
        Event::ThinkingDelta { .. } => "thinking_delta",
        Event::AssistantDone { .. } => "assistant_done",
        Event::ToolCall { .. } => "tool_call",
        Event::ToolResult { .. } => "tool_result",
        Event::ToolOutputDelta { .. } => "tool_output_delta",
        Event::ApprovalRequest { .. } => "approval_request",
        Event::Usage { .. } => "usage",
        Event::Handoff(phase) => match phase {
            HandoffPhase::Near { .. } => "handoff:near",
            HandoffPhase::Writing { .. } => "handoff:writing",
            HandoffPhase::Rescuing { .. } => "handoff:rescuing",
            HandoffPhase::Retrying { .. } => "handoff:retrying",
            HandoffPhase::Waiting { .. } => "handoff:waiting",
            HandoffPhase::Frozen { .. } => "handoff:frozen",
            HandoffPhase::Reopened { .. } => "handoff:reopened",
            HandoffPhase::Done { .. } => "handoff:done",
            HandoffPhase::Cancelled { .. } => "handoff:cancelled",
            HandoffPhase::Failed { .. } => "handoff:failed",
            HandoffPhase::Refused { .. } => "handoff:refused",
        },
        Event::Compaction { .. } => "compaction",
        Event::Retry { .. } => "retry",
        Event::Stream(s) => match s {
            StreamState::Discarded { .. } => "stream:discarded",
            StreamState::Silent { .. } => "stream:silent",
            StreamState::Resumed => "stream:resumed",
        },
        Event::WindowLearned { .. } => "window_learned",
        Event::McpStatus(_) => "mcp_status",
        Event::McpJsonApproval { .. } => "mcp_json_approval",
        Event::McpWaiting { .. } => "mcp_waiting",
        Event::Subagent(phase) => match phase {
            SubagentPhase::Start { .. } => "subagent:start",
            SubagentPhase::Text { .. } => "subagent:text",
            SubagentPhase::ToolCall { .. } => "subagent:tool_call",
            SubagentPhase::ToolResult { .. } => "subagent:tool_result",
            SubagentPhase::Usage { .. } => "subagent:usage",
            SubagentPhase::End { .. } => "subagent:end",
        },
        Event::Cost { .. } => "cost",
        Event::Sessions { .. } => "sessions",
        Event::Resumed { .. } => "resumed",
        Event::Model { .. } => "model",
        Event::InitExists { .. } => "init_exists",
        Event::Permissions { .. } => "permissions",
        Event::Pins { .. } => "pins",
        Event::Focus { .. } => "focus",
        Event::Todo { .. } => "todo",
        Event::MemoryRefused { .. } => "memory_refused",
        Event::Notice { .. } => "notice",
        Event::Warning { .. } => "warning",
        Event::Error { .. } => "error",
        Event::TurnEnd { .. } => "turn_end",
        Event::Result { .. } => "result",
    }
}

#[test]
fn exit_reasons_and_error_kinds_are_words() {
    let table = [
        (ExitReason::Completed, "completed"),
        (ExitReason::Interrupted, "interrupted"),
        (ExitReason::Handoff, "handoff"),
        (ExitReason::Unchanged, "unchanged"),
        (
            ExitReason::MaxIterations { n: 200, max: 200 },
            "max_iterations_reached(200/200)",
        ),
        (
            ExitReason::Error(ErrorKind::Provider(P::ContextWindowExceeded)),
            "error:context_window_exceeded",
        ),
        (
            ExitReason::Error(ErrorKind::Provider(P::Auth)),
            "error:auth",
        ),
        (
            ExitReason::Error(ErrorKind::Provider(P::InvalidRequest)),
            "error:invalid_request",
        ),
        (
            ExitReason::Error(ErrorKind::Provider(P::Overloaded)),
            "error:overloaded",
        ),
        (
            ExitReason::Error(ErrorKind::Provider(P::Network)),
            "error:network",
        ),
        (
            ExitReason::Error(ErrorKind::Provider(P::Other)),
            "error:other",
        ),
        (
            ExitReason::Error(ErrorKind::HandoffBreaker),
            "error:handoff_breaker",
        ),
    ];
    for (reason, want) in table {
        assert_eq!(reason.to_string(), want);
        assert_eq!(
            serde_json::to_value(reason).ok(),
            Some(serde_json::Value::from(want))
        );
    }
}

#[test]
fn turn_ids_count_up_and_ops_name_the_turn_they_start() {
    assert_eq!(TurnId::FIRST.next(), TurnId(2));
    assert_eq!(TurnId(u64::MAX).next(), TurnId(u64::MAX), "never wraps");
    let t = TurnId(4);
    assert_eq!(
        Op::UserTurn {
            turn: t,
            text: "x".into()
        }
        .starts_turn(),
        Some(t)
    );
    assert_eq!(
        Op::Handoff {
            turn: t,
            focus: None
        }
        .starts_turn(),
        Some(t)
    );
    assert_eq!(Op::Abort { turn: t }.starts_turn(), None);
    assert_eq!(Op::NewSession.starts_turn(), None);
}
