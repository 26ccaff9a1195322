//! One model request, streamed, abortable by `Op::Abort`, with retries surfaced as events.

use super::Engine;
use crate::engine::protocol::{Event, Op};
use crate::engine::provider::ProviderError;
use crate::engine::provider::retry::{RetryNotice, stream_with_retry};
use crate::engine::types::{Delta, ModelRequest, ModelResponse, ToolChoice};

/// How a request ended.
pub(crate) enum Outcome {
    Done(ModelResponse),
    /// The request failed; `partial` is the text that had already streamed to the user.
    Failed {
        error: ProviderError,
        partial: String,
    },
    /// Esc (or shutdown): the request was dropped; `partial` is the text streamed so far.
    Aborted {
        partial: String,
    },
}

impl Engine {
    /// Run `fut` while listening for ops: `Abort` drops it (None), as does shutdown (which is
    /// remembered); any other op waits in `pending` for the engine's loop.
    pub(crate) async fn abortable<F: std::future::Future>(&mut self, fut: F) -> Option<F::Output> {
        tokio::pin!(fut);
        loop {
            tokio::select! {
                out = &mut fut => return Some(out),
                op = self.ops.recv() => match op {
                    Some(Op::Abort) => return None,
                    Some(Op::Shutdown) | None => {
                        self.shutdown = true;
                        return None;
                    }
                    Some(other) => self.pending.push_back(other),
                },
            }
        }
    }

    /// Build a request on the current session's history.
    pub(crate) fn build_request(&self, tool_choice: ToolChoice) -> ModelRequest {
        ModelRequest {
            model: self.p.model.clone(),
            system: self.p.system_prompt.clone(),
            messages: self.s.messages.clone(),
            tools: crate::engine::tools::specs(),
            tool_choice,
            max_tokens: self.p.max_tokens,
        }
    }

    /// Stream `req`. `visible`: forward text to the front end (the handoff writing turn is not).
    pub(crate) async fn stream(&mut self, req: ModelRequest, visible: bool) -> Outcome {
        let provider = self.p.provider.clone();
        let policy = self.p.retry;
        let events = self.events.clone();
        let retry_events = self.events.clone();
        let mut partial = String::new();
        let mut sink = |d: Delta| match d {
            Delta::Text(t) => {
                partial.push_str(&t);
                if visible {
                    let _ = events.send(Event::TextDelta { text: t });
                }
            }
            Delta::Thinking(t) => {
                if visible {
                    let _ = events.send(Event::ThinkingDelta { text: t });
                }
            }
            Delta::ToolUseStart { .. } => {}
        };
        let mut on_retry = |n: RetryNotice| {
            let _ = retry_events.send(Event::Retry {
                attempt: n.attempt,
                max: n.max,
                reason: n.reason,
                delay_ms: n.delay.as_millis() as u64,
            });
        };
        let result = self
            .abortable(stream_with_retry(
                &*provider,
                &req,
                &mut sink,
                &policy,
                &mut on_retry,
            ))
            .await;
        match result {
            Some(Ok(resp)) => Outcome::Done(resp),
            Some(Err(error)) => Outcome::Failed { error, partial },
            None => Outcome::Aborted { partial },
        }
    }
}
