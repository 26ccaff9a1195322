//! A background handoff's writing request and what follows its answer: the document is frozen;
//! a failed request (an error after its retries, a stall, an overflow, a reply without the
//! required sections) runs once more on a reduced copy of the history; a document that restated
//! its instructions ([`crate::engine::handoff::echo`]) is asked for once more with the short
//! prompt, on the same history, the request kept ready beside the first (its answer comes back as
//! the same attempt's); only when that fails too is the degraded document frozen.

use tokio::task::AbortHandle;

use super::background_freeze::freeze;
use super::context::HandoffCx;
use super::degraded::degraded_doc;
use super::freeze::Produced;
use super::phases::{BgState, ShortRetry};
use super::tasks::{Attempt, Written, spawn_writing};
use super::writing::{
    WriteFailure, document_from, reduced_writing_request, retry_failed, short_request,
    writing_request,
};
use crate::engine::handoff::echo::Restated;
use crate::engine::handoff::prompt::WritingPrompt;
use crate::engine::ledger::{HandoffCause, HandoffReason};
use crate::engine::protocol::{Event, HandoffId, HandoffPhase};
use crate::engine::provider::ErrorKind;
use crate::engine::types::{Message, ModelRequest};

/// The writing request of the background handoff `id` starts on `prefix`, with `focus`.
pub(super) fn writing_state(
    cx: &mut impl HandoffCx,
    id: HandoffId,
    prefix: Vec<Message>,
    used: u64,
    focus: Option<String>,
) -> BgState {
    let short = short_request(cx, &prefix, used, focus.as_deref());
    let req = writing_request(cx, prefix, used, HandoffCause::Pressure, focus.as_deref());
    let task = send(cx, id, Attempt::Full, req);
    BgState::Writing {
        attempt: Attempt::Full,
        task,
        failure: None,
        reduced: false,
        short: ShortRetry::Ready(Box::new(short)),
    }
}

/// Send a writing request from a task of its own; its answer comes back on the runner's channel.
fn send(
    cx: &mut impl HandoffCx,
    id: HandoffId,
    attempt: Attempt,
    req: ModelRequest,
) -> AbortHandle {
    let requester = cx.requester();
    tracing::debug!(
        request = requester.number,
        purpose = "handoff",
        background = true,
        ?attempt,
        session = %cx.conv().id,
        messages = req.messages.len(),
        "request sent"
    );
    spawn_writing(cx.handoffs().replies(), requester, id, attempt, req)
}

/// A writing request's result: freeze the document, or rescue, or degrade. Stale results (a
/// cancelled handoff's, an earlier attempt's) are dropped.
pub(super) fn on_written(cx: &mut impl HandoffCx, w: Written) {
    let current = cx.handoffs().background().and_then(|bg| match &bg.state {
        BgState::Writing {
            attempt,
            failure,
            reduced,
            short,
            ..
        } if bg.id == w.id && *attempt == w.attempt => {
            Some((bg.ctx_at_cut, failure.clone(), *reduced, short.prompt()))
        }
        _ => None,
    });
    let Some((used, failure, reduced, prompt)) = current else {
        tracing::debug!(handoff = w.id.0, "stale background writing result dropped");
        return;
    };
    match &w.result {
        Ok(resp) => tracing::info!(
            request = w.number,
            purpose = "handoff",
            background = true,
            ms = w.ms,
            input = resp.usage.input_tokens,
            cache_read = resp.usage.cache_read_input_tokens,
            cache_write = resp.usage.cache_creation_input_tokens,
            output = resp.usage.output_tokens,
            "request done"
        ),
        Err(e) => tracing::warn!(
            request = w.number,
            purpose = "handoff",
            background = true,
            ms = w.ms,
            kind = e.kind.as_str(),
            "request failed: {}",
            e.message
        ),
    }
    let outcome = match w.result {
        Ok(resp) => document_from(cx, &resp, used),
        Err(e) => Err(WriteFailure::Provider(e)),
    };
    match (outcome, w.attempt) {
        (Err(WriteFailure::Restated(r)), _) if prompt == WritingPrompt::Full => retry(cx, r),
        (Err(f), _) if prompt == WritingPrompt::Short => {
            degrade(cx, retry_failed(&failure.unwrap_or_default(), &f))
        }
        (Ok(doc), Attempt::Full) => freeze(
            cx,
            doc,
            Produced::WRITTEN,
            HandoffReason::clean(HandoffCause::Pressure),
        ),
        (Ok(doc), Attempt::Rescue) => freeze(
            cx,
            doc,
            Produced::rescued(reduced),
            HandoffReason::after(HandoffCause::Pressure, failure.unwrap_or_default()),
        ),
        (Err(f), Attempt::Full) => rescue(cx, f),
        (Err(f), Attempt::Rescue) => {
            let first = failure.unwrap_or_default();
            degrade(
                cx,
                format!("{first}; the rescue on a reduced history failed too: {f}"),
            );
        }
    }
}

/// The first writing request failed: once more on a reduced copy of the prefix, or degraded.
fn rescue(cx: &mut impl HandoffCx, first: WriteFailure) {
    let Some((id, cut, used)) = cx
        .handoffs()
        .background()
        .map(|b| (b.id, b.cut, b.ctx_at_cut))
    else {
        return;
    };
    let error = match &first {
        WriteFailure::Provider(e) if e.kind == ErrorKind::ContextWindowExceeded => {
            if let Some(limit) = crate::engine::provider::error::overflow_limit(&e.message) {
                cx.learn_window(limit);
            }
            Some(e.clone())
        }
        _ => None,
    };
    let first = first.to_string();
    let prefix = cut
        .split(&cx.conv().messages)
        .map(|(p, _)| p)
        .unwrap_or_default();
    let focus = cx.focus(None);
    let Some((req, reduced)) = reduced_writing_request(
        cx,
        &prefix,
        used,
        HandoffCause::Pressure,
        focus.as_deref(),
        error.as_ref(),
    ) else {
        degrade(
            cx,
            format!("{first}; a reduced history does not fit the window either"),
        );
        return;
    };
    cx.emit_logged(Event::Handoff(HandoffPhase::Rescuing {
        handoff: id,
        reason: first.clone(),
        stubbed: reduced.stubbed,
        dropped: reduced.dropped,
        background: true,
    }));
    let short = short_request(cx, &reduced.messages, used, focus.as_deref());
    let task = send(cx, id, Attempt::Rescue, req);
    if let Some(bg) = cx.handoffs().background_mut() {
        bg.state = BgState::Writing {
            attempt: Attempt::Rescue,
            task,
            failure: Some(first),
            reduced: !reduced.is_whole(),
            short: ShortRetry::Ready(Box::new(short)),
        };
    }
}

/// A background document restated its instructions: send its retry with the short prompt
/// (its result comes back to [`on_written`] as the same attempt's). When none is ready, the
/// writing failed.
fn retry(cx: &mut impl HandoffCx, restated: Restated) {
    let Some(bg) = cx.handoffs().background_mut() else {
        return;
    };
    let id = bg.id;
    let BgState::Writing {
        attempt,
        failure,
        reduced,
        short,
        ..
    } = &mut bg.state
    else {
        return;
    };
    let (attempt, reduced) = (*attempt, *reduced);
    // What failed before, for the ledger: the first request's failure for a rescue.
    let why = match failure.take() {
        Some(first) => format!("{first}; the rescue: {restated}"),
        None => restated.to_string(),
    };
    let ShortRetry::Ready(req) = std::mem::replace(short, ShortRetry::Sent) else {
        degrade(cx, why);
        return;
    };
    cx.emit_logged(Event::Handoff(HandoffPhase::Retrying {
        handoff: id,
        reason: restated.to_string(),
        background: true,
    }));
    let task = send(cx, id, attempt, *req);
    if let Some(bg) = cx.handoffs().background_mut() {
        bg.state = BgState::Writing {
            attempt,
            task,
            failure: Some(why),
            reduced,
            short: ShortRetry::Sent,
        };
    }
}

/// The writing failed for `reason`: the degraded document is frozen instead.
fn degrade(cx: &mut impl HandoffCx, reason: String) {
    let used = cx.handoffs().background().map_or(0, |b| b.ctx_at_cut);
    let doc = degraded_doc(cx, &reason, used);
    let why = HandoffReason::after(HandoffCause::Pressure, reason);
    freeze(cx, doc, Produced::DEGRADED, why);
}
