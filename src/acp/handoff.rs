//! The handoff in the editor: a tool call of its own, `handoff-N`. "Writing handoff…" while the
//! document is written (again, when it is rescued or retried); completed with the document as
//! its content and its file as its location once frozen; its title names the next generation
//! once the successor runs. The review window is a permission request on that call: "continue
//! from this document" or "wait, I am editing it" — the user edits the file in the editor, saves
//! it, and the successor reads it as saved. A plan presented by plan mode is shown the same way.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    ContentBlock, PermissionOption, PermissionOptionKind, SessionUpdate, TextContent, ToolCall,
    ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    ToolKind,
};

use super::tool_calls::{agent_text, tool_update};
use crate::engine::protocol::{HandoffId, HandoffPhase};

/// The option that ends the review.
pub(super) const CONTINUE: &str = "continue";
/// The option that holds the review open while the user edits.
pub(super) const WAIT: &str = "wait";

/// The tool call id of a handoff.
pub(super) fn call_id(handoff: HandoffId) -> String {
    format!("handoff-{}", handoff.0)
}

/// The updates a handoff phase makes.
pub(super) fn updates(phase: &HandoffPhase) -> Vec<SessionUpdate> {
    let title = |h: &HandoffId, t: &str| {
        tool_update(
            &call_id(*h),
            ToolCallUpdateFields::new().title(t.to_string()),
        )
    };
    match phase {
        HandoffPhase::Writing { handoff, focus, .. } => {
            let mut call = ToolCall::new(call_id(*handoff), "Writing handoff…")
                .kind(ToolKind::Think)
                .status(ToolCallStatus::InProgress);
            if let Some(focus) = focus {
                call = call.content(vec![text(&format!("Focus: {focus}"))]);
            }
            vec![SessionUpdate::ToolCall(call)]
        }
        HandoffPhase::Rescuing {
            handoff, reason, ..
        } => vec![title(
            handoff,
            &format!("Writing handoff… (again, on a reduced history: {reason})"),
        )],
        HandoffPhase::Retrying {
            handoff, reason, ..
        } => vec![title(
            handoff,
            &format!("Writing handoff… (again: {reason})"),
        )],
        HandoffPhase::Waiting { handoff, .. } => vec![title(
            handoff,
            "Writing handoff… (the context is full: work waits for it)",
        )],
        HandoffPhase::Frozen {
            handoff,
            path,
            degraded_reason,
            markdown,
            ..
        } => {
            let title = match degraded_reason {
                Some(reason) => format!("Handoff written mechanically ({reason})"),
                None => "Handoff written".to_string(),
            };
            vec![tool_update(
                &call_id(*handoff),
                ToolCallUpdateFields::new()
                    .title(title)
                    .status(ToolCallStatus::Completed)
                    .content(vec![text(markdown)])
                    .locations(located(path.as_deref())),
            )]
        }
        HandoffPhase::Reopened { handoff, path, .. } => vec![SessionUpdate::ToolCall(
            ToolCall::new(
                call_id(*handoff),
                "Handoff of an earlier run, not yet taken over",
            )
            .kind(ToolKind::Think)
            .status(ToolCallStatus::InProgress)
            .locations(located(path.as_deref())),
        )],
        HandoffPhase::Done {
            handoff,
            generation,
            path,
            ..
        } => vec![
            tool_update(
                &call_id(*handoff),
                ToolCallUpdateFields::new()
                    .title(format!("Handoff → generation {generation}"))
                    .status(ToolCallStatus::Completed)
                    .locations(located(path.as_deref())),
            ),
            agent_text(&format!("\n\n— generation {generation} —\n\n")),
        ],
        HandoffPhase::Cancelled { handoff } => vec![tool_update(
            &call_id(*handoff),
            ToolCallUpdateFields::new()
                .title("Handoff cancelled".to_string())
                .status(ToolCallStatus::Failed),
        )],
        HandoffPhase::Failed { handoff, message } => vec![tool_update(
            &call_id(*handoff),
            ToolCallUpdateFields::new()
                .title("Handoff failed".to_string())
                .status(ToolCallStatus::Failed)
                .content(vec![text(message)]),
        )],
        HandoffPhase::Refused { message, .. } => vec![agent_text(message)],
        HandoffPhase::Near { .. } => Vec::new(),
    }
}

/// The review window's question on the handoff's tool call. `first`: the window has just opened
/// (later rounds follow "wait").
pub(super) fn review_question(
    handoff: HandoffId,
    path: Option<&Path>,
    first: bool,
) -> (ToolCallUpdate, Vec<PermissionOption>) {
    let title = if first {
        "Review the handoff: the next generation starts from this file"
    } else {
        "Save the handoff file, then continue: the next generation reads it as saved"
    };
    let call = ToolCallUpdate::new(
        call_id(handoff),
        ToolCallUpdateFields::new()
            .title(title.to_string())
            .locations(located(path)),
    );
    let options = vec![
        PermissionOption::new(
            CONTINUE,
            "Continue from this document",
            PermissionOptionKind::AllowOnce,
        ),
        PermissionOption::new(
            WAIT,
            "Wait, I am editing it",
            PermissionOptionKind::RejectOnce,
        ),
    ];
    (call, options)
}

/// Plan mode presented its plan (`path`): a completed tool call with the document.
pub(super) fn presented_plan(path: &Path, markdown: &str) -> Vec<SessionUpdate> {
    vec![SessionUpdate::ToolCall(
        ToolCall::new(format!("plan-{}", path.display()), "Plan")
            .kind(ToolKind::Think)
            .status(ToolCallStatus::Completed)
            .content(vec![text(markdown)])
            .locations(located(Some(path))),
    )]
}

fn located(path: Option<&Path>) -> Vec<ToolCallLocation> {
    path.map(ToolCallLocation::new).into_iter().collect()
}

fn text(s: &str) -> ToolCallContent {
    ToolCallContent::from(ContentBlock::Text(TextContent::new(s)))
}
