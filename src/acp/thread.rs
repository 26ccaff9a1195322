//! The whole thread of a run, for `session/load`: every generation of the step from the ledger
//! (the retired sessions' transcripts, then the latest one's), as one editor thread. Between two
//! generations the handoff that joined them is its tool call (`handoff-gN`, completed, its
//! document as content and its file as location) and the same divider as live. In each
//! generation: what the user typed, the replies, and each tool call completed with its result
//! (a successor's briefing and compaction summaries are the engine's, not shown).

use std::collections::HashMap;
use std::path::Path;

use agent_client_protocol::v1::schema::{
    ContentBlock, SessionUpdate, TextContent, ToolCall, ToolCallContent, ToolCallLocation,
    ToolCallStatus, ToolCallUpdateFields, ToolKind,
};

use super::tool_calls::{self, agent_text, chunk, tool_update};
use crate::engine::ledger::handoffs::HandoffRecord;
use crate::engine::ledger::manifest::Manifest;
use crate::engine::ledger::run_dir::RunDir;
use crate::engine::ledger::transcript::load_transcript;
use crate::engine::types::{Block, Message, Role};

/// The thread of the step whose latest session is `session`, in the run at `run_root`; None
/// when the ledger or the latest transcript cannot be read (the engine's own replay of the
/// latest generation is shown then).
pub(super) fn replay(
    run_root: &Path,
    session: &str,
    workspace: &Path,
) -> Option<Vec<SessionUpdate>> {
    let run = RunDir::open(run_root);
    let manifest = Manifest::load(&run.manifest_path())
        .inspect_err(|e| tracing::warn!("acp: the ledger cannot be read for the replay: {e}"))
        .ok()?;
    let step = manifest.steps.iter().find(|s| s.session_id == session)?;
    let handoffs: HashMap<&str, &HandoffRecord> = step
        .handoffs
        .iter()
        .map(|h| (h.retired_session.as_str(), h))
        .collect();
    let mut out = Vec::new();
    for retired in &step.retired {
        match load_transcript(&run.transcript_path(retired)) {
            Ok((header, messages)) => generation(
                &mut out,
                &messages,
                header.parent_session.is_some(),
                workspace,
            ),
            Err(e) => {
                tracing::warn!("acp: the transcript of {retired} cannot be read: {e}");
                out.push(agent_text(&format!(
                    "(the generation of session {retired} cannot be shown: {e})\n\n"
                )));
            }
        }
        if let Some(h) = handoffs.get(retired.as_str()) {
            out.extend(handoff(h));
        }
    }
    let (header, messages) = load_transcript(&run.transcript_path(session))
        .inspect_err(|e| tracing::warn!("acp: the latest transcript cannot be read: {e}"))
        .ok()?;
    generation(
        &mut out,
        &messages,
        header.parent_session.is_some(),
        workspace,
    );
    Some(out)
}

/// One generation's conversation. `successor`: its first message is the briefing.
fn generation(out: &mut Vec<SessionUpdate>, messages: &[Message], successor: bool, ws: &Path) {
    for (i, m) in messages.iter().enumerate() {
        match m.role {
            Role::User => {
                let typed: String = m
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        Block::Text { text }
                            if !text.starts_with(crate::engine::mentions::ATTACHMENT_OPEN) =>
                        {
                            Some(text.as_str())
                        }
                        _ => None,
                    })
                    .collect();
                let engine = (i == 0 && successor)
                    || typed.starts_with(crate::engine::compact::SUMMARY_PREFIX);
                if !typed.trim().is_empty() && !engine {
                    out.push(SessionUpdate::UserMessageChunk(chunk(&typed)));
                }
                for b in &m.content {
                    if let Block::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                    } = b
                    {
                        let status = if *is_error {
                            ToolCallStatus::Failed
                        } else {
                            ToolCallStatus::Completed
                        };
                        out.push(tool_update(
                            tool_use_id,
                            ToolCallUpdateFields::new()
                                .status(status)
                                .content(vec![tool_calls::text_content(content)]),
                        ));
                    }
                }
            }
            Role::Assistant => {
                for b in &m.content {
                    match b {
                        Block::Text { text } if !text.trim().is_empty() => {
                            out.push(agent_text(&format!("{text}\n\n")));
                        }
                        Block::ToolUse {
                            id, name, input, ..
                        } => out.push(SessionUpdate::ToolCall(
                            ToolCall::new(id.clone(), crate::engine::tools::summary(name, input))
                                .kind(tool_calls::kind(name))
                                .status(ToolCallStatus::Completed)
                                .locations(tool_calls::locations(ws, input))
                                .raw_input(input.clone()),
                        )),
                        _ => {}
                    }
                }
            }
        }
    }
}

/// The handoff that ended a generation: its tool call with the document (as the file holds it
/// now), then the divider.
fn handoff(h: &HandoffRecord) -> Vec<SessionUpdate> {
    let document = h
        .path
        .as_deref()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_else(|| "(the handoff document is not on disk)".to_string());
    let title = if h.degraded {
        format!(
            "Handoff (written mechanically) → generation {}",
            h.generation
        )
    } else {
        format!("Handoff → generation {}", h.generation)
    };
    vec![
        SessionUpdate::ToolCall(
            ToolCall::new(format!("handoff-g{}", h.generation), title)
                .kind(ToolKind::Think)
                .status(ToolCallStatus::Completed)
                .content(vec![ToolCallContent::from(ContentBlock::Text(
                    TextContent::new(document),
                ))])
                .locations(h.path.iter().map(ToolCallLocation::new).collect()),
        ),
        agent_text(&format!("\n\n— generation {} —\n\n", h.generation)),
    ]
}
