//! One model request, streamed, abortable by `Op::Abort`, with retries surfaced as events.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::Engine;
use crate::engine::protocol::{Event, Op, StreamState};
use crate::engine::provider::ProviderError;
use crate::engine::provider::retry::{StreamNotice, stream_with_retry};
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
    /// A try that broke after showing text is replayed: the front end is told to drop what it
    /// showed, and `partial` only ever holds the text of the latest try.
    pub(crate) async fn stream(&mut self, req: ModelRequest, visible: bool) -> Outcome {
        let provider = self.p.provider.clone();
        let policy = self.p.retry;
        let events = self.events.clone();
        let notice_events = self.events.clone();
        // The sink and the notice handler both reach the text of the current try.
        let partial = Mutex::new(String::new());
        let shown = AtomicBool::new(false);
        let silent = AtomicBool::new(false);
        let mut sink = |d: Delta| match d {
            Delta::Text(t) => {
                lock(&partial).push_str(&t);
                if visible {
                    shown.store(true, Ordering::Relaxed);
                    let _ = events.send(Event::TextDelta { text: t });
                }
            }
            Delta::Thinking(t) => {
                if visible {
                    shown.store(true, Ordering::Relaxed);
                    let _ = events.send(Event::ThinkingDelta { text: t });
                }
            }
            Delta::ToolUseStart { .. } | Delta::Alive => {}
        };
        let mut on_notice = |n: StreamNotice| match n {
            StreamNotice::Retry(n) => {
                if n.discarded {
                    let chars = std::mem::take(&mut *lock(&partial)).chars().count();
                    if shown.swap(false, Ordering::Relaxed) {
                        let _ = notice_events.send(Event::Stream(StreamState::Discarded { chars }));
                    }
                }
                let _ = notice_events.send(Event::Retry {
                    attempt: n.attempt,
                    max: n.max,
                    reason: n.reason,
                    delay_ms: u64::try_from(n.delay.as_millis()).unwrap_or(u64::MAX),
                });
            }
            StreamNotice::Silent(d) => {
                silent.store(true, Ordering::Relaxed);
                let _ = notice_events.send(Event::Stream(StreamState::Silent {
                    silent_ms: u64::try_from(d.as_millis()).unwrap_or(u64::MAX),
                }));
            }
            StreamNotice::Resumed => {
                silent.store(false, Ordering::Relaxed);
                let _ = notice_events.send(Event::Stream(StreamState::Resumed));
            }
        };
        let result = self
            .abortable(stream_with_retry(
                &*provider,
                &req,
                &mut sink,
                &policy,
                &mut on_notice,
            ))
            .await;
        if silent.load(Ordering::Relaxed) {
            // Aborted while silent: nothing else would close the silence.
            self.emit(Event::Stream(StreamState::Resumed));
        }
        let partial = partial.into_inner().unwrap_or_else(|p| p.into_inner());
        match result {
            Some(Ok(resp)) => Outcome::Done(resp),
            Some(Err(error)) => Outcome::Failed { error, partial },
            None => Outcome::Aborted { partial },
        }
    }
}

fn lock(m: &Mutex<String>) -> MutexGuard<'_, String> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
