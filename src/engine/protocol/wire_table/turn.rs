//! A turn's events: the session it runs in, its start, the messages, streamed text and thinking, the
//! tool calls with their results and approval questions, what it says (notices, warnings, errors) and
//! how it ends (`turn_end`, `result`).

use serde_json::json;
use std::path::PathBuf;

use crate::engine::protocol::*;
use crate::engine::provider::ErrorKind as P;
use crate::engine::tools::CommandEnd;

/// The turn events and their lines.
pub(super) fn entries(t: Thresholds) -> Vec<(Event, &'static str)> {
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
            Event::Diagnostics {
                turn: Some(TurnId(3)),
                id: "t1".into(),
                report: crate::engine::lsp::ChangeReport {
                    checked: vec!["a.py".into()],
                    new: vec![crate::engine::lsp::Finding {
                        path: "a.py".into(),
                        line: 3,
                        col: 1,
                        severity: crate::engine::lsp::Severity::Error,
                        message: "undefined name 'x'".into(),
                        source: Some("pyflakes".into()),
                    }],
                    kept_errors: 1,
                    ..Default::default()
                },
            },
            r#"{"type":"diagnostics","turn":3,"id":"t1","report":{"checked":["a.py"],"new":[{"path":"a.py","line":3,"col":1,"severity":"error","message":"undefined name 'x'","source":"pyflakes"}],"more_errors":0,"more_warnings":0,"gone":[],"more_gone":0,"kept_errors":1,"first_look":[],"notes":[]}}"#,
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
                plan: None,
                jobs: Vec::new(),
            },
            r#"{"type":"result","text":"done","is_error":false,"num_turns":1,"cost_usd":0.25,"session_id":"s1"}"#,
        ),
        (
            Event::Result {
                text: "planned".into(),
                is_error: false,
                num_turns: 1,
                cost_usd: 0.0,
                session_id: "s1".into(),
                plan: Some(PathBuf::from("/w/.flower/notes/plan-fix.md")),
                jobs: Vec::new(),
            },
            r#"{"type":"result","text":"planned","is_error":false,"num_turns":1,"cost_usd":0.0,"session_id":"s1","plan":"/w/.flower/notes/plan-fix.md"}"#,
        ),
    ]
}
