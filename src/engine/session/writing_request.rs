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

use super::Engine;
use super::handoff_run::WriteFailure;
use super::request::{Outcome, Purpose};
use crate::engine::handoff::prompt::WritingPrompt;
use crate::engine::handoff::reduced_history::{self, Reduced};
use crate::engine::handoff::{HandoffDoc, prompt};
use crate::engine::ledger::HandoffCause;
use crate::engine::protocol::{Event, HandoffId, HandoffPhase};
use crate::engine::provider::ProviderError;
use crate::engine::provider::error::overflow_limit;
use crate::engine::types::{Message, ModelRequest, ModelResponse, ToolChoice};

/// The estimated tokens of anything serialisable, as a provider would receive it.
fn json_tokens<T: serde::Serialize + ?Sized>(v: &T) -> u64 {
    serde_json::to_string(v)
        .map_or(0, |s| s.len() as u64)
        .div_ceil(4)
}

impl Engine {
    /// The writing turn's request on `history`: the same system prompt and tools as the main
    /// thread's, tool use off, the handoff prompt for `cause` last (joined to the last user
    /// message, so the history before it is byte for byte the main thread's prefix).
    pub(super) fn writing_request(
        &self,
        history: Vec<Message>,
        used: u64,
        cause: HandoffCause,
        focus: Option<&str>,
    ) -> ModelRequest {
        self.prompted_writing_request(history, used, cause, focus, WritingPrompt::Full)
    }

    /// [`Engine::writing_request`] with the prompt `kind`.
    fn prompted_writing_request(
        &self,
        history: Vec<Message>,
        used: u64,
        cause: HandoffCause,
        focus: Option<&str>,
        kind: WritingPrompt,
    ) -> ModelRequest {
        let text =
            prompt::handoff_prompt(kind, used, self.settings.thresholds.window, cause, focus);
        let mut history = self.masked_as_sent(history);
        crate::engine::types::append_message(&mut history, Message::user(text));
        ModelRequest {
            model: self.settings.model.clone(),
            system: self.s.system_prompt.clone(),
            messages: history,
            tools: self.tool_specs(),
            tool_choice: ToolChoice::None,
            max_tokens: self.output_cap(),
            effort: self.settings.effort,
        }
    }

    /// The writing request on a reduced copy of `history` that fits, or None when none does.
    /// `error`: the overflow that calls for it (None: another failure; the copy is then reduced
    /// only as far as the estimate asks).
    pub(super) fn reduced_writing_request(
        &self,
        history: &[Message],
        used: u64,
        cause: HandoffCause,
        focus: Option<&str>,
        error: Option<&ProviderError>,
    ) -> Option<(ModelRequest, Reduced)> {
        let empty = self.writing_request(Vec::new(), used, cause, focus);
        let fixed = json_tokens(&empty.system)
            + json_tokens(&empty.tools)
            + json_tokens(&empty.messages)
            + 16;
        let full = fixed + history.iter().map(json_tokens).sum::<u64>();
        let stated_limit = error.and_then(|e| overflow_limit(&e.message));
        let window = stated_limit.map_or(self.settings.thresholds.window, |l| {
            l.min(self.settings.thresholds.window)
        });
        let budget = window.saturating_sub(u64::from(self.output_cap()));
        let count = error.and_then(|e| reduced_history::stated_count(&e.message, stated_limit));
        let measured = count.unwrap_or_else(|| self.ctx_estimate());
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
        let req = self.writing_request(reduced.messages.clone(), used, cause, focus);
        Some((req, reduced))
    }

    /// The document in a writing reply: its cost booked, parsed, checked (its required sections,
    /// and against the wording of every instruction the writer has seen), its header filled.
    pub(super) fn document_from(
        &mut self,
        resp: &ModelResponse,
        used: u64,
    ) -> Result<HandoffDoc, WriteFailure> {
        // The writing turn's cost is the session's; its ctx is not a new main-thread reading.
        self.add_cost(crate::engine::pricing::cost_usd(
            &self.settings.model,
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
        let texts = prompt::instruction_texts(&self.s.system_prompt, &self.tool_specs());
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        doc.echo_check(&texts).map_err(WriteFailure::Restated)?;
        doc.meta = Some(self.meta(used));
        Ok(doc)
    }

    /// The rescue in the main thread (blocking mode, or an overflow with no background handoff):
    /// the writing turn on a reduced copy of the session's history. `reason`: what failed.
    pub(super) async fn rescue_turn(
        &mut self,
        handoff: HandoffId,
        used: u64,
        cause: HandoffCause,
        focus: Option<&str>,
        reason: &str,
        error: Option<&ProviderError>,
    ) -> Result<(HandoffDoc, bool), WriteFailure> {
        let Some((_, reduced)) =
            self.reduced_writing_request(&self.s.messages.clone(), used, cause, focus, error)
        else {
            return Err(WriteFailure::NoFit);
        };
        self.emit_logged(Event::Handoff(HandoffPhase::Rescuing {
            handoff,
            reason: reason.to_string(),
            stubbed: reduced.stubbed,
            dropped: reduced.dropped,
            background: false,
        }));
        self.write_document(handoff, &reduced.messages, used, cause, focus)
            .await
            .map(|d| (d, !reduced.is_whole()))
    }

    /// The writing turn on `history` in the main thread: the writing request, and once more with
    /// the short prompt if its document restated its instructions.
    pub(super) async fn write_document(
        &mut self,
        handoff: HandoffId,
        history: &[Message],
        used: u64,
        cause: HandoffCause,
        focus: Option<&str>,
    ) -> Result<HandoffDoc, WriteFailure> {
        let first = self
            .write_once(history, used, cause, focus, WritingPrompt::Full)
            .await;
        let Err(WriteFailure::Restated(restated)) = first else {
            return first;
        };
        self.emit_logged(Event::Handoff(HandoffPhase::Retrying {
            handoff,
            reason: restated.to_string(),
            background: false,
        }));
        match self
            .write_once(history, used, cause, focus, WritingPrompt::Short)
            .await
        {
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
        &mut self,
        history: &[Message],
        used: u64,
        cause: HandoffCause,
        focus: Option<&str>,
        kind: WritingPrompt,
    ) -> Result<HandoffDoc, WriteFailure> {
        let req = self.prompted_writing_request(history.to_vec(), used, cause, focus, kind);
        match self.stream(req, Purpose::Handoff).await {
            Outcome::Done(resp) => self.document_from(&resp, used),
            Outcome::Aborted { .. } => Err(WriteFailure::Aborted),
            Outcome::Failed { error, .. } => Err(WriteFailure::Provider(error)),
        }
    }

    /// The retry a background writing request keeps ready: the same history with the short
    /// prompt (a background handoff's cause is the context's pressure).
    pub(super) fn short_retry(
        &self,
        history: &[Message],
        used: u64,
        focus: Option<&str>,
    ) -> ShortRetry {
        ShortRetry::Ready(Box::new(self.prompted_writing_request(
            history.to_vec(),
            used,
            HandoffCause::Pressure,
            focus,
            WritingPrompt::Short,
        )))
    }
}

/// A background writing request's retry with the short prompt.
pub(super) enum ShortRetry {
    /// Not sent yet: the request, ready.
    Ready(Box<ModelRequest>),
    /// The request running is the retry (its document answers the short prompt).
    Sent,
}

impl ShortRetry {
    /// The prompt of the request running.
    pub(super) fn prompt(&self) -> WritingPrompt {
        match self {
            ShortRetry::Ready(_) => WritingPrompt::Full,
            ShortRetry::Sent => WritingPrompt::Short,
        }
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
