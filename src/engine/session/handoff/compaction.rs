//! In-place compaction, the other context strategy (`--no-handoff`, or both when the config asks
//! for both): the head of the history is summarised by the model and replaced by the summary in
//! the same session, through the same narrow context a handoff works through.

use super::context::HandoffCx;
use crate::engine::compact::{self, CompactError};
use crate::engine::context;
use crate::engine::error::Error;
use crate::engine::protocol::{CompactionTrigger, Event};
use crate::engine::session::model_request::{Outcome, Purpose};
use crate::engine::types::{Message, ModelRequest, ToolChoice};

/// Why a compaction did not replace the history.
#[derive(Debug)]
pub(in crate::engine::session) enum CompactFailure {
    /// Esc or shutdown: the turn stops.
    Aborted,
    Failed(Error),
}

impl From<CompactError> for CompactFailure {
    fn from(e: CompactError) -> Self {
        CompactFailure::Failed(e.into())
    }
}

/// In-place compaction. Ok(true) when the history was replaced.
pub(in crate::engine::session) async fn compact(
    cx: &mut impl HandoffCx,
    trigger: CompactionTrigger,
) -> Result<bool, CompactFailure> {
    let before = cx.ctx();
    let first = cx.ledger().compactions == 0;
    let messages = &cx.conv().messages;
    let total_chars: usize = messages.iter().map(Message::char_len).sum();
    // Scale per-message estimates so they add up to the reported ctx.
    let scale = if total_chars == 0 {
        1.0
    } else {
        before.max(1) as f64 / context::estimate_tokens(total_chars).max(1) as f64
    };
    let token_of =
        |m: &Message| (context::estimate_tokens(m.char_len()) as f64 * scale).ceil() as u64;
    let Some(plan) = compact::plan(messages, token_of, compact::KEEP_FRACTION, first) else {
        return Err(CompactError::NothingToSummarise.into());
    };
    let request =
        compact::summary_request(messages.get(plan.summarize.clone()).unwrap_or_default());
    let req = ModelRequest {
        model: cx.settings().model.clone(),
        system: compact::SUMMARY_SYSTEM.to_string(),
        messages: vec![Message::user(request)],
        tools: Vec::new(),
        tool_choice: ToolChoice::Auto,
        max_tokens: cx.output_cap(),
        effort: None,
    };
    let resp = match cx.stream(req, Purpose::Summary).await {
        Outcome::Done(r) => r,
        Outcome::Aborted { .. } => return Err(CompactFailure::Aborted),
        Outcome::Failed { error, .. } => return Err(CompactFailure::Failed(error.into())),
    };
    cx.add_cost(crate::engine::pricing::cost_usd(
        &cx.settings().model,
        &resp.usage,
    ));
    let summary = compact::summary_message(&resp.text())?;
    if !compact::apply(&mut cx.conv().messages, &plan, summary) {
        return Err(CompactError::HistoryChanged.into());
    }
    cx.conv().replaced();
    cx.ledger().compactions += 1;
    cx.ledger().record(|rec| rec.compactions += 1);
    cx.save_manifest();
    cx.ledger().replace.advance();
    let after = cx.ctx();
    cx.emit_logged(Event::Compaction {
        before,
        after,
        trigger,
    });
    cx.emit_usage_estimate();
    Ok(true)
}
