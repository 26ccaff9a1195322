//! The mapping of engine events to `session/update`s, compared as the JSON the editor receives.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::*;
use crate::engine::context::Thresholds;
use crate::engine::diff::{DiffLimits, FileDiff};
use crate::engine::protocol::{DocumentSource, HandoffId, HandoffPhase, Held, TurnId};
use crate::engine::types::Usage;

fn mapper() -> Mapper {
    Mapper::new(PathBuf::from("/w"), false)
}

/// The updates of `ev` as JSON.
fn wire(m: &mut Mapper, ev: Event) -> Vec<Value> {
    m.updates(&ev)
        .into_iter()
        .map(|u| serde_json::to_value(u).unwrap())
        .collect()
}

#[test]
fn text_and_thinking_stream_as_chunks() {
    let mut m = mapper();
    let text = wire(
        &mut m,
        Event::TextDelta {
            turn: Some(TurnId(1)),
            text: "Hel".into(),
        },
    );
    assert_eq!(
        text,
        [
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hel"}})
        ]
    );
    let thought = wire(&mut m, Event::ThinkingDelta { text: "hm".into() });
    assert_eq!(thought[0]["sessionUpdate"], "agent_thought_chunk");
    assert_eq!(thought[0]["content"]["text"], "hm");
}

#[test]
fn a_replayed_conversation_is_the_users_messages_and_the_replies() {
    let mut m = mapper();
    let user = wire(
        &mut m,
        Event::UserMessage {
            turn: None,
            origin: Origin::User,
            text: "fix it".into(),
        },
    );
    assert_eq!(user[0]["sessionUpdate"], "user_message_chunk");
    assert_eq!(user[0]["content"]["text"], "fix it");
    let reply = wire(
        &mut m,
        Event::AssistantDone {
            turn: None,
            text: "done".into(),
            interrupted: false,
        },
    );
    assert_eq!(reply[0]["sessionUpdate"], "agent_message_chunk");
    // Live messages are the editor's own prompt and the reply it streamed.
    let live = Event::UserMessage {
        turn: Some(TurnId(2)),
        origin: Origin::User,
        text: "x".into(),
    };
    assert!(m.updates(&live).is_empty());
    let briefing = Event::UserMessage {
        turn: None,
        origin: Origin::Engine,
        text: "briefing".into(),
    };
    assert!(m.updates(&briefing).is_empty());
}

#[test]
fn an_edit_is_a_tool_call_with_its_location_then_its_diff() {
    let mut m = mapper();
    let input = json!({"path": "src/a.rs", "old_string": "a", "new_string": "b"});
    let call = wire(
        &mut m,
        Event::ToolCall {
            turn: Some(TurnId(1)),
            id: "t1".into(),
            name: "edit_file".into(),
            input: input.clone(),
            summary: "edit_file: src/a.rs".into(),
            changes_files: true,
        },
    );
    assert_eq!(
        call,
        [json!({
            "sessionUpdate": "tool_call",
            "toolCallId": "t1",
            "title": "edit_file: src/a.rs",
            "kind": "edit",
            "status": "in_progress",
            "locations": [{"path": "/w/src/a.rs"}],
            "rawInput": input,
        })]
    );
    let diff = FileDiff::new("src/a.rs", Some("a\n"), "b\n", DiffLimits::RESULT);
    let result = wire(
        &mut m,
        Event::ToolResult {
            turn: Some(TurnId(1)),
            id: "t1".into(),
            name: "edit_file".into(),
            output: "Edited src/a.rs".into(),
            is_error: false,
            spilled: None,
            diff: Some(Box::new(diff)),
            exit: None,
            sandbox: None,
        },
    );
    assert_eq!(result[0]["sessionUpdate"], "tool_call_update");
    assert_eq!(result[0]["status"], "completed");
    assert_eq!(
        result[0]["content"],
        json!([{"type": "diff", "path": "/w/src/a.rs", "oldText": "a\n", "newText": "b\n"}])
    );
}

#[test]
fn a_commands_output_streams_whole_and_cleaned_then_ends_with_its_result() {
    let mut m = mapper();
    let delta = |text: &str| Event::ToolOutputDelta {
        id: "b1".into(),
        text: text.into(),
    };
    wire(&mut m, delta("\u{1b}[32mok\u{1b}[0m\n"));
    let second = wire(&mut m, delta("two\n"));
    assert_eq!(second[0]["sessionUpdate"], "tool_call_update");
    assert_eq!(
        second[0]["content"][0]["content"]["text"],
        "```\nok\ntwo\n```"
    );
    let failed = wire(
        &mut m,
        Event::ToolResult {
            turn: Some(TurnId(1)),
            id: "b1".into(),
            name: "bash".into(),
            output: "ok\ntwo\nexit code 1".into(),
            is_error: true,
            spilled: None,
            diff: None,
            exit: None,
            sandbox: None,
        },
    );
    assert_eq!(failed[0]["status"], "failed");
    assert_eq!(
        failed[0]["content"][0]["content"]["text"],
        "```\nok\ntwo\nexit code 1\n```"
    );
}

#[test]
fn the_todo_list_is_the_plan() {
    let mut m = mapper();
    let plan = wire(
        &mut m,
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
            ],
        },
    );
    assert_eq!(
        plan,
        [json!({"sessionUpdate": "plan", "entries": [
            {"content": "read", "priority": "medium", "status": "completed"},
            {"content": "fix", "priority": "medium", "status": "in_progress"},
        ]})]
    );
}

#[test]
fn usage_is_the_context_fill_with_the_handoff_line() {
    let mut m = mapper();
    let usage = wire(
        &mut m,
        Event::Usage {
            turn: None,
            context: 42_000,
            thresholds: Thresholds::new(200_000, 50_000),
            estimated: false,
            usage: Usage::default(),
            cost_usd: 0.01,
            session_cost_usd: 0.25,
            masked_tokens: 0,
        },
    );
    assert_eq!(
        usage,
        [json!({
            "sessionUpdate": "usage_update",
            "used": 42_000,
            "size": 200_000,
            "cost": {"amount": 0.25, "currency": "USD"},
            "_meta": {"flower": {"handoffAt": 150_000, "warnAt": 130_000, "estimated": false}},
        })]
    );
}

#[test]
fn the_handoff_is_a_tool_call_written_then_frozen_with_its_file() {
    let mut m = mapper();
    let h = HandoffId(2);
    let writing = wire(
        &mut m,
        Event::Handoff(HandoffPhase::Writing {
            handoff: h,
            manual: true,
            focus: None,
            background: false,
        }),
    );
    assert_eq!(
        writing,
        [
            json!({"sessionUpdate": "tool_call", "toolCallId": "handoff-2",
                "title": "Writing handoff…", "kind": "think", "status": "in_progress"})
        ]
    );
    let path = PathBuf::from("/w/.flower/notes/handoff-s.md");
    let frozen = wire(
        &mut m,
        Event::Handoff(HandoffPhase::Frozen {
            handoff: h,
            path: Some(path.clone()),
            degraded: false,
            degraded_reason: None,
            markdown: "# Handoff\n## Doing\nx\n".into(),
            awaits_review: true,
            background: false,
        }),
    );
    assert_eq!(
        frozen,
        [
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "handoff-2",
                "title": "Handoff written", "status": "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": "# Handoff\n## Doing\nx\n"}}],
                "locations": [{"path": path}]})
        ]
    );
    let done = wire(
        &mut m,
        Event::Handoff(HandoffPhase::Done {
            handoff: h,
            context: 1000,
            window: 200_000,
            degraded: false,
            degraded_reason: None,
            path: Some(path),
            sections: Vec::new(),
            generation: 2,
            source: DocumentSource::Written,
            tail: 0,
            held: Held::default(),
        }),
    );
    assert_eq!(done[0]["title"], "Handoff → generation 2");
    assert_eq!(done[1]["content"]["text"], "\n\n— generation 2 —\n\n");
    let cancelled = wire(
        &mut m,
        Event::Handoff(HandoffPhase::Cancelled { handoff: h }),
    );
    assert_eq!(cancelled[0]["status"], "failed");
}

#[test]
fn notices_reach_only_an_editor_that_shows_them() {
    let ev = Event::Notice {
        message: "MCP server `x` is ready".into(),
    };
    assert!(mapper().updates(&ev).is_empty());
    let shown = wire(&mut Mapper::new(PathBuf::from("/w"), true), ev);
    assert_eq!(shown[0]["sessionUpdate"], "notice");
    assert_eq!(shown[0]["severity"], "info");
    let err = wire(
        &mut mapper(),
        Event::Error {
            kind: crate::engine::protocol::ErrorKind::Io,
            message: "connection reset".into(),
        },
    );
    assert_eq!(err[0]["content"]["text"], "\n\nError: connection reset\n");
}
