//! The handoff's writing request, its retry with the short prompt when the document restated its
//! instructions, and its rescue on a reduced history when the full one overflows the window.
//!
//! The retry: a document whose sections are mostly the writing prompt's own wording
//! ([`crate::engine::handoff::echo`]) is no document. The same request is sent once more with the
//! short prompt, which shows a filled-in example instead of describing each section (a small
//! window affords it), on the same history (the whole one, or the rescue's reduced copy). Its
//! document is checked against the short prompt. If it fails too, the writing failed: an
//! automatic handoff writes the degraded document, a manual one fails (`Handoff failed`, the
//! session unchanged), as for a document without its required sections.
//!
//! Sizing the reduced copy: the budget is the window (the one an overflow message states, if it
//! is smaller) minus the writing reserve (`max_tokens`). Sizes are estimated from the request's
//! JSON (≈ 4 bytes a token) and calibrated against what the provider counted: the number an
//! overflow message states for the failed request, else the main thread's ctx. Without a stated
//! count an overflowed history that the estimate says fits is cut to
//! [`reduced_history::BLIND_SHARE`] of it: the provider's word beats the estimate.

use super::context::HandoffCx;
use super::degraded::meta;
use crate::engine::handoff::echo::Restated;
use crate::engine::handoff::prompt::WritingPrompt;
use crate::engine::handoff::reduced_history::{self, Reduced};
use crate::engine::handoff::{HandoffDoc, prompt};
use crate::engine::ledger::HandoffCause;
use crate::engine::protocol::{Event, HandoffId, HandoffPhase};
use crate::engine::provider::ProviderError;
use crate::engine::provider::error::overflow_limit;
use crate::engine::session::model_request::{Outcome, Purpose};
use crate::engine::types::{Message, ModelRequest, ModelResponse};

/// Why the writing turn produced no document.
#[derive(Debug, thiserror::Error)]
pub(in crate::engine::session) enum WriteFailure {
    #[error("aborted")]
    Aborted,
    #[error("no text captured")]
    Empty,
    #[error("missing required sections: {0}")]
    Missing(String),
    /// A section is mostly the prompt's own wording, or a required one has no words of its own.
    #[error(transparent)]
    Restated(Restated),
    /// The retry with the short prompt failed too (both failures, in full).
    #[error("{0}")]
    Retried(String),
    #[error(transparent)]
    Provider(ProviderError),
    /// No reduced copy of the history fits the window.
    #[error("a reduced history does not fit the window either")]
    NoFit,
    /// The rescue after an overflow failed (what happened, in full).
    #[error("{0}")]
    Rescue(String),
}

/// The estimated tokens of anything serialisable, as a provider would receive it.
fn json_tokens<T: serde::Serialize + ?Sized>(v: &T) -> u64 {
    serde_json::to_string(v)
        .map_or(0, |s| s.len() as u64)
        .div_ceil(4)
}

/// The writing turn's request on `history`: the same system prompt and tools as the main
/// thread's, tool use off, the handoff prompt for `cause` last (joined to the last user
/// message, so the history before it is byte for byte the main thread's prefix).
pub(super) fn writing_request(
    cx: &impl HandoffCx,
    history: Vec<Message>,
    used: u64,
    cause: HandoffCause,
    focus: Option<&str>,
) -> ModelRequest {
    prompted_request(cx, history, used, cause, focus, WritingPrompt::Full)
}

/// [`writing_request`] with the prompt `kind`.
fn prompted_request(
    cx: &impl HandoffCx,
    history: Vec<Message>,
    used: u64,
    cause: HandoffCause,
    focus: Option<&str>,
    kind: WritingPrompt,
) -> ModelRequest {
    let text = prompt::handoff_prompt(kind, used, cx.settings().thresholds.window, cause, focus);
    let mut req = cx.prefix_request(history);
    crate::engine::types::append_message(&mut req.messages, Message::user(text));
    req
}

/// The retry a background writing request keeps ready: the same history with the short
/// prompt (a background handoff's cause is the context's pressure).
pub(super) fn short_request(
    cx: &impl HandoffCx,
    history: &[Message],
    used: u64,
    focus: Option<&str>,
) -> ModelRequest {
    prompted_request(
        cx,
        history.to_vec(),
        used,
        HandoffCause::Pressure,
        focus,
        WritingPrompt::Short,
    )
}

/// The writing request on a reduced copy of `history` that fits, or None when none does.
/// `error`: the overflow that calls for it (None: another failure; the copy is then reduced
/// only as far as the estimate asks).
pub(super) fn reduced_writing_request(
    cx: &impl HandoffCx,
    history: &[Message],
    used: u64,
    cause: HandoffCause,
    focus: Option<&str>,
    error: Option<&ProviderError>,
) -> Option<(ModelRequest, Reduced)> {
    let empty = writing_request(cx, Vec::new(), used, cause, focus);
    let fixed =
        json_tokens(&empty.system) + json_tokens(&empty.tools) + json_tokens(&empty.messages) + 16;
    let full = fixed + history.iter().map(json_tokens).sum::<u64>();
    let window = cx.settings().thresholds.window;
    let stated_limit = error.and_then(|e| overflow_limit(&e.message));
    let window = stated_limit.map_or(window, |l| l.min(window));
    let budget = window.saturating_sub(u64::from(cx.output_cap()));
    let count = error.and_then(|e| reduced_history::stated_count(&e.message, stated_limit));
    let measured = count.unwrap_or_else(|| cx.ctx());
    let scale = (measured as f64 / full.max(1) as f64).max(1.0);
    let mut target = (budget as f64 * reduced_history::MARGIN / scale) as u64;
    if error.is_some() && count.is_none() && full <= target {
        target = (full as f64 * reduced_history::BLIND_SHARE) as u64;
    }
    let reduced = reduced_history::reduce(history, fixed, target, json_tokens)?;
    tracing::info!(
        budget,
        scale,
        target,
        full,
        reduced = reduced.size,
        stubbed = reduced.stubbed,
        dropped = reduced.dropped,
        "handoff rescue: reduced history"
    );
    let req = writing_request(cx, reduced.messages.clone(), used, cause, focus);
    Some((req, reduced))
}

/// The document in a writing reply: its cost booked, parsed, checked (its required sections,
/// and against the wording of the prompt `kind` it answers), its header filled.
pub(super) fn document_from(
    cx: &mut impl HandoffCx,
    resp: &ModelResponse,
    used: u64,
) -> Result<HandoffDoc, WriteFailure> {
    // The writing turn's cost is the session's; its ctx is not a new main-thread reading.
    cx.add_cost(crate::engine::pricing::cost_usd(
        &cx.settings().model,
        &resp.usage,
    ));
    // A tool call emitted anyway is ignored: the text is the document.
    let text = resp.text();
    if text.trim().is_empty() {
        return Err(WriteFailure::Empty);
    }
    let mut doc = HandoffDoc::parse(&text);
    let missing = doc.missing();
    if !missing.is_empty() {
        return Err(WriteFailure::Missing(missing.join(", ")));
    }
    // Against every instruction the writer has seen, not only this request's prompt.
    let texts = cx.instruction_texts();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    doc.echo_check(&texts).map_err(WriteFailure::Restated)?;
    doc.meta = Some(meta(cx, used));
    Ok(doc)
}

/// The rescue in the main thread (blocking mode, or an overflow with no background handoff):
/// the writing turn on a reduced copy of the session's history. `reason`: what failed.
pub(super) async fn rescue_turn(
    cx: &mut impl HandoffCx,
    handoff: HandoffId,
    used: u64,
    cause: HandoffCause,
    focus: Option<&str>,
    reason: &str,
    error: Option<&ProviderError>,
) -> Result<(HandoffDoc, bool), WriteFailure> {
    let history = cx.conv().messages.clone();
    let Some((_, reduced)) = reduced_writing_request(cx, &history, used, cause, focus, error)
    else {
        return Err(WriteFailure::NoFit);
    };
    cx.emit_logged(Event::Handoff(HandoffPhase::Rescuing {
        handoff,
        reason: reason.to_string(),
        stubbed: reduced.stubbed,
        dropped: reduced.dropped,
        background: false,
    }));
    write_document(cx, handoff, &reduced.messages, used, cause, focus)
        .await
        .map(|d| (d, !reduced.is_whole()))
}

/// The writing turn on `history` in the main thread: the writing request, and once more with
/// the short prompt if its document restated its instructions.
pub(super) async fn write_document(
    cx: &mut impl HandoffCx,
    handoff: HandoffId,
    history: &[Message],
    used: u64,
    cause: HandoffCause,
    focus: Option<&str>,
) -> Result<HandoffDoc, WriteFailure> {
    let first = write_once(cx, history, used, cause, focus, WritingPrompt::Full).await;
    let Err(WriteFailure::Restated(restated)) = first else {
        return first;
    };
    cx.emit_logged(Event::Handoff(HandoffPhase::Retrying {
        handoff,
        reason: restated.to_string(),
        background: false,
    }));
    match write_once(cx, history, used, cause, focus, WritingPrompt::Short).await {
        Err(WriteFailure::Aborted) => Err(WriteFailure::Aborted),
        Err(then) => Err(WriteFailure::Retried(retry_failed(
            &restated.to_string(),
            &then,
        ))),
        written => written,
    }
}

/// One writing request on `history` with the prompt `kind`, and its document.
async fn write_once(
    cx: &mut impl HandoffCx,
    history: &[Message],
    used: u64,
    cause: HandoffCause,
    focus: Option<&str>,
    kind: WritingPrompt,
) -> Result<HandoffDoc, WriteFailure> {
    let req = prompted_request(cx, history.to_vec(), used, cause, focus, kind);
    match cx.stream(req, Purpose::Handoff).await {
        Outcome::Done(resp) => document_from(cx, &resp, used),
        Outcome::Aborted { .. } => Err(WriteFailure::Aborted),
        Outcome::Failed { error, .. } => Err(WriteFailure::Provider(error)),
    }
}

/// Why the writing failed when the retry with the short prompt failed too: `first`, what the
/// first document restated, then what the retry did.
pub(super) fn retry_failed(first: &str, then: &WriteFailure) -> String {
    match then {
        WriteFailure::Restated(again) => {
            format!(
                "{first}, and again with the short prompt ({})",
                again.detail()
            )
        }
        then => format!("{first}; the retry with the short prompt failed: {then}"),
    }
}
