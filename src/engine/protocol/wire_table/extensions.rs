//! What runs beside the main thread: MCP servers (their status, the `.mcp.json` question, the wait
//! for their start), subagents' phases, and the user's hooks (a hook that ran, a settings file's
//! hooks awaiting approval).

use std::path::PathBuf;

use crate::engine::protocol::*;
use crate::engine::provider::ErrorKind as P;

/// The extensions events and their lines.
pub(super) fn entries() -> Vec<(Event, &'static str)> {
    vec![
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
            Event::Hook(crate::engine::hooks::HookNote {
                quiet: false,
                event: "PreToolUse".into(),
                name: "./check.sh".into(),
                source: "/w/.claude/settings.json".into(),
                outcome: "blocked",
                exit: "exit code 2".into(),
                elapsed_ms: 12,
                output: "no rm here".into(),
            }),
            r#"{"type":"hook","event":"PreToolUse","name":"./check.sh","source":"/w/.claude/settings.json","outcome":"blocked","exit":"exit code 2","elapsed_ms":12,"output":"no rm here"}"#,
        ),
        (
            Event::HooksApproval(crate::engine::hooks::HooksQuestion {
                path: PathBuf::from("/w/.claude/settings.json"),
                sha256: "ab12".into(),
                hooks: vec!["PreToolUse [Bash]: ./check.sh".into()],
            }),
            r#"{"type":"hooks_approval","path":"/w/.claude/settings.json","sha256":"ab12","hooks":["PreToolUse [Bash]: ./check.sh"]}"#,
        ),
    ]
}
