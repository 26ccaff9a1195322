//! The headless wire format, pinned: every event kind as one JSON line, byte for byte.

use super::*;
use crate::engine::provider::ErrorKind as P;

fn line(ev: &Event) -> String {
    serde_json::to_string(ev).unwrap_or_else(|e| format!("unserialisable: {e}"))
}

#[test]
fn every_event_kind_on_the_wire() {
    let table = super::wire_table::table();
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

const ALL_VARIANTS: [&str; 60] = [
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
    "hook",
    "hooks_approval",
    "mcp_json_approval",
    "mcp_waiting",
    "subagent:start",
    "subagent:text",
    "subagent:tool_call",
    "subagent:tool_result",
    "subagent:usage",
    "subagent:end",
    "cost",
    "models",
    "sessions",
    "resumed",
    "model",
    "init_exists",
    "permissions",
    "pins",
    "focus",
    "todo",
    "memory_refused",
    "restore",
    "rewind_points",
    "rewound",
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
        Event::Diagnostics { .. } => "diagnostics",
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
        Event::Hook(_) => "hook",
        Event::HooksApproval(_) => "hooks_approval",
        Event::Subagent(phase) => match phase {
            SubagentPhase::Start { .. } => "subagent:start",
            SubagentPhase::Text { .. } => "subagent:text",
            SubagentPhase::ToolCall { .. } => "subagent:tool_call",
            SubagentPhase::ToolResult { .. } => "subagent:tool_result",
            SubagentPhase::Usage { .. } => "subagent:usage",
            SubagentPhase::End { .. } => "subagent:end",
        },
        Event::Cost { .. } => "cost",
        Event::Models { .. } => "models",
        Event::Sessions { .. } => "sessions",
        Event::Resumed { .. } => "resumed",
        Event::Model { .. } => "model",
        Event::InitExists { .. } => "init_exists",
        Event::Permissions { .. } => "permissions",
        Event::Pins { .. } => "pins",
        Event::Focus { .. } => "focus",
        Event::Todo { .. } => "todo",
        Event::MemoryRefused { .. } => "memory_refused",
        Event::Restore(_) => "restore",
        Event::RewindPoints { .. } => "rewind_points",
        Event::Rewound { .. } => "rewound",
        Event::RewindConflict { .. } => "rewind_conflict",
        Event::Mode { .. } => "mode",
        Event::Plan { .. } => "plan",
        Event::Notice { .. } => "notice",
        Event::Warning { .. } => "warning",
        Event::Error { .. } => "error",
        Event::TurnEnd { .. } => "turn_end",
        Event::Result { .. } => "result",
        Event::Jobs { .. } => "jobs",
        Event::JobEnded { .. } => "job_ended",
        Event::JobOutput { .. } => "job_output",
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
