//! The work a background handoff runs beside the main thread, as tasks of their own: its writing
//! request and its hooks (`PreHandoff` before the writing, `HandoffFrozen` after the freeze). Both
//! kinds are started here and answer on the runner's one channel ([`BgReply`]); the runner
//! handles every answer in one place ([`super::background::on_reply`]), dropping those of a
//! handoff that is no longer the current one.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc::UnboundedSender;
use tokio::task::AbortHandle;

use crate::engine::hooks::{HookBatch, Outcome};
use crate::engine::protocol::{Event, HandoffId};
use crate::engine::provider::retry::{RetryPolicy, StreamNotice, stream_with_retry};
use crate::engine::provider::{Provider, ProviderError};
use crate::engine::types::{Delta, ModelRequest, ModelResponse};

/// What a background handoff's task sends back.
pub(in crate::engine::session) enum BgReply {
    /// A writing request's result.
    Written(Written),
    /// The hooks of `id` (its `PreHandoff` or its `HandoffFrozen`) are done.
    Hooks { id: HandoffId, outcome: Outcome },
}

/// Which writing request a result answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::engine::session) enum Attempt {
    /// On the whole prefix.
    Full,
    /// On a reduced copy, after the first one failed.
    Rescue,
}

/// A writing request's result, sent by its task.
pub(in crate::engine::session) struct Written {
    pub(super) id: HandoffId,
    pub(super) attempt: Attempt,
    pub(super) result: Result<ModelResponse, ProviderError>,
    pub(super) number: u64,
    pub(super) ms: u128,
}

/// What a request sent beside the main thread needs: its number in the log, the provider and
/// its retry policy, and where its retries are said.
pub(in crate::engine::session) struct Requester {
    pub(in crate::engine::session) number: u64,
    pub(in crate::engine::session) provider: Arc<dyn Provider>,
    pub(in crate::engine::session) retry: RetryPolicy,
    pub(in crate::engine::session) events: UnboundedSender<Event>,
}

/// Sends the writing task's result, or, if the task ends without one (a panic), a failure: a
/// wait for the document never hangs on a task that is gone. An aborted task's failure is stale
/// (its handoff is no longer the current one) and dropped.
struct Reply {
    tx: UnboundedSender<BgReply>,
    id: HandoffId,
    attempt: Attempt,
    number: u64,
    started: Instant,
    sent: bool,
}

impl Reply {
    fn send(mut self, result: Result<ModelResponse, ProviderError>) {
        self.sent = true;
        let _ = self.tx.send(BgReply::Written(Written {
            id: self.id,
            attempt: self.attempt,
            result,
            number: self.number,
            ms: self.started.elapsed().as_millis(),
        }));
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if !self.sent {
            let _ = self.tx.send(BgReply::Written(Written {
                id: self.id,
                attempt: self.attempt,
                result: Err(ProviderError::other(
                    "the writing request's task ended without an answer",
                )),
                number: self.number,
                ms: self.started.elapsed().as_millis(),
            }));
        }
    }
}

/// Send the writing request `req` of the handoff `id` from a task of its own; its result comes
/// back on `tx`. Its retries are said as notices (the main stream's `retry` events are the main
/// thread's).
pub(super) fn spawn_writing(
    tx: UnboundedSender<BgReply>,
    requester: Requester,
    id: HandoffId,
    attempt: Attempt,
    req: ModelRequest,
) -> AbortHandle {
    let Requester {
        number,
        provider,
        retry: policy,
        events,
    } = requester;
    let reply = Reply {
        tx,
        id,
        attempt,
        number,
        started: Instant::now(),
        sent: false,
    };
    let task = tokio::spawn(async move {
        let mut sink = |_: Delta| {};
        let mut on_notice = move |n: StreamNotice| match n {
            StreamNotice::Retry(n) => {
                tracing::warn!(
                    request = number,
                    attempt = n.attempt,
                    delay_ms = n.delay.as_millis(),
                    "retrying the background writing request: {}",
                    n.reason
                );
                let _ = events.send(Event::Notice {
                    message: format!(
                        "{id}: the background writing request is retried ({}/{}) in {} ms: {}",
                        n.attempt,
                        n.max,
                        n.delay.as_millis(),
                        n.reason
                    ),
                });
            }
            StreamNotice::Silent(d) => tracing::info!(
                request = number,
                silent_ms = d.as_millis(),
                "background writing request silent"
            ),
            StreamNotice::Resumed | StreamNotice::ImagesLeftOut { .. } => {}
        };
        let result = stream_with_retry(&*provider, &req, &mut sink, &policy, &mut on_notice).await;
        reply.send(result);
    });
    task.abort_handle()
}

/// Run the hooks `batch` of the handoff `id` as a task: their outcome comes back on `tx`.
/// Aborting the task kills them with their process groups.
pub(super) fn spawn_hooks(
    tx: UnboundedSender<BgReply>,
    id: HandoffId,
    batch: HookBatch,
) -> AbortHandle {
    let task = tokio::spawn(async move {
        let outcome = batch.await;
        let _ = tx.send(BgReply::Hooks { id, outcome });
    });
    task.abort_handle()
}
