//! Retrying a model request: exponential backoff with jitter, `retry-after` honoured, at
//! most [`RetryPolicy::max_tries`] tries.
//!
//! Every retryable failure is retried inside that one budget: an HTTP error (429, 5xx, 529), a
//! connection that could not be made, and a stream that broke after it started (no terminal event,
//! an event that does not parse, a dropped connection, a mid-stream `overloaded_error`). A broken
//! stream is replayed from scratch: the notice says the output already streamed is void
//! ([`RetryNotice::discarded`]) so the caller can replace it. A try during which the server sends no
//! byte for [`RetryPolicy::idle_timeout`] — waiting for the response headers or between events — is
//! abandoned and retried the same way; a long silence is reported while it lasts.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::error::ProviderError;
use super::{DeltaSink, Provider, vision};
use crate::engine::fsutil::jitter;
use crate::engine::types::{Delta, ModelRequest, ModelResponse};

/// A server's `retry-after` is followed up to this long.
pub(crate) const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// `stream_idle_timeout` when none is configured.
pub(crate) const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// A silence this long is reported (the TUI shows `waiting for the provider… 42s`).
pub(crate) const SILENCE_NOTICE_AFTER: Duration = Duration::from_secs(15);

/// How often and how patiently to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries in all, the first included (5 by default).
    pub max_tries: u32,
    /// The delay before the first retry, doubled for each further one.
    pub base_delay: Duration,
    /// The cap of the computed delay (not of a server's `retry-after`).
    pub max_delay: Duration,
    /// A try that receives no byte for this long is abandoned (and retried).
    pub idle_timeout: Duration,
    /// A silence this long is reported with [`StreamNotice::Silent`].
    pub silence_notice: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_tries: 5,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            silence_notice: SILENCE_NOTICE_AFTER,
        }
    }
}

impl RetryPolicy {
    /// The wait before try number `next_try` (2 for the first retry): the server's `retry-after` (up to
    /// [`MAX_RETRY_AFTER`]) when it sent one, else `base · 2^(next_try-2)` capped at `max_delay`, of
    /// which the upper half is random ("equal jitter").
    pub fn delay(&self, next_try: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(after) = retry_after {
            return after.min(MAX_RETRY_AFTER);
        }
        let exp = next_try.saturating_sub(2).min(30);
        let full = self
            .base_delay
            .saturating_mul(1u32 << exp)
            .min(self.max_delay);
        let half = full / 2;
        let spread = u64::try_from((full - half).as_micros()).unwrap_or(u64::MAX);
        half + Duration::from_micros(jitter(spread.saturating_add(1)))
    }
}

/// What the user is told before each retry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryNotice {
    /// The try about to be made (2 for the first retry).
    pub attempt: u32,
    /// Tries in all.
    pub max: u32,
    /// Why the last try failed, e.g. `overloaded: Overloaded (HTTP 529)` or
    /// `stream broken: ended before message_stop`.
    pub reason: String,
    /// How long we wait before the next try.
    pub delay: Duration,
    /// The failed try had already streamed part of an answer: that part is void, and the next try
    /// replays the request from scratch.
    pub discarded: bool,
}

impl RetryNotice {
    /// The log line of this retry; `request` names the request (`7`, `subagent toolu_01…`).
    pub fn log(&self, request: &dyn std::fmt::Display) {
        tracing::warn!(
            request = %request,
            attempt = self.attempt,
            max = self.max,
            delay_ms = self.delay.as_millis(),
            discarded = self.discarded,
            "retrying: {}",
            self.reason
        );
    }
}

/// What [`stream_with_retry`] reports while it works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamNotice {
    /// A try failed and another follows after `delay`.
    Retry(RetryNotice),
    /// No byte from the server for this long (sent once per silence, after
    /// [`RetryPolicy::silence_notice`]).
    Silent(Duration),
    /// The silence reported last is over (bytes arrived, or the try ended).
    Resumed,
    /// The request goes without its images (replaced by lines saying so): the model takes none.
    /// Sent the first time for a model; `reason` says why, in words.
    ImagesLeftOut { reason: String },
}

/// `120s`, `0.3s`, `0.15s` (to the millisecond).
fn fmt_secs(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        return format!("{}s", d.as_secs());
    }
    let s = format!("{:.3}", d.as_secs_f64());
    format!("{}s", s.trim_end_matches('0'))
}

fn reason(e: &ProviderError) -> String {
    let text = if e.stream_broken {
        let what = e.message.strip_prefix("stream ").unwrap_or(&e.message);
        format!("stream broken: {what}")
    } else {
        e.to_string()
    };
    match e.status {
        Some(s) => format!("{text} (HTTP {s})"),
        None => text,
    }
}

/// The error of a try abandoned for silence. `started`: the response headers had arrived.
fn idle_error(started: bool, timeout: Duration) -> ProviderError {
    let t = fmt_secs(timeout);
    if started {
        ProviderError::broken_stream(format!(
            "stream stalled: no data from the provider for {t} (stream_idle_timeout)"
        ))
    } else {
        ProviderError::network(format!(
            "no response from the provider within {t} (stream_idle_timeout)"
        ))
    }
}

/// `the model` or `` `name` ``, for a sentence.
fn model_words(model: &str) -> String {
    if model.is_empty() {
        "the model".into()
    } else {
        format!("`{model}`")
    }
}

/// When the server last sent bytes during one try, shared between the provider's sink (which
/// touches it) and the watch loop (which reads it). Both run on the same task.
struct Wire {
    start: Instant,
    /// Microseconds after `start` of the last byte (0: none yet).
    last_us: AtomicU64,
    /// Any byte arrived (the headers at least).
    started: AtomicBool,
    /// A silence was reported: the next byte wakes `resumed`.
    waiting: AtomicBool,
    resumed: Notify,
}

impl Wire {
    fn new() -> Wire {
        Wire {
            start: Instant::now(),
            last_us: AtomicU64::new(0),
            started: AtomicBool::new(false),
            waiting: AtomicBool::new(false),
            resumed: Notify::new(),
        }
    }

    fn touch(&self) {
        let us = u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.last_us.store(us, Ordering::Relaxed);
        self.started.store(true, Ordering::Relaxed);
        if self.waiting.swap(false, Ordering::Relaxed) {
            self.resumed.notify_one();
        }
    }

    fn last(&self) -> Instant {
        self.start + Duration::from_micros(self.last_us.load(Ordering::Relaxed))
    }
}

/// Drive one try's future while watching the wire: abandon it after `idle_timeout` of silence,
/// report a silence longer than `silence_notice` and its end.
async fn watch<F>(
    fut: F,
    wire: &Wire,
    policy: &RetryPolicy,
    on_notice: &mut (dyn FnMut(StreamNotice) + Send),
) -> Result<ModelResponse, ProviderError>
where
    F: Future<Output = Result<ModelResponse, ProviderError>>,
{
    tokio::pin!(fut);
    let mut silent = false;
    let result = loop {
        let last = wire.last();
        let notice = !silent && policy.silence_notice < policy.idle_timeout;
        tokio::select! {
            biased;
            r = &mut fut => break r,
            () = wire.resumed.notified(), if silent => {
                silent = false;
                on_notice(StreamNotice::Resumed);
            }
            () = tokio::time::sleep_until(last + policy.silence_notice), if notice => {
                if wire.last() == last {
                    silent = true;
                    wire.waiting.store(true, Ordering::Relaxed);
                    on_notice(StreamNotice::Silent(last.elapsed()));
                }
            }
            () = tokio::time::sleep_until(last + policy.idle_timeout) => {
                if wire.last() == last {
                    break Err(idle_error(
                        wire.started.load(Ordering::Relaxed),
                        policy.idle_timeout,
                    ));
                }
            }
        }
    };
    if silent {
        on_notice(StreamNotice::Resumed);
    }
    result
}

/// One try: its result, and whether it streamed anything to `sink`.
async fn one_try(
    p: &dyn Provider,
    req: &ModelRequest,
    sink: DeltaSink<'_>,
    policy: &RetryPolicy,
    on_notice: &mut (dyn FnMut(StreamNotice) + Send),
) -> (Result<ModelResponse, ProviderError>, bool) {
    let wire = Wire::new();
    let mut emitted = false;
    let result = {
        let mut watched = |d: Delta| {
            wire.touch();
            if !matches!(d, Delta::Alive) {
                emitted = true;
                sink(d);
            }
        };
        watch(p.stream(req, &mut watched), &wire, policy, on_notice).await
    };
    (result, emitted)
}

/// Stream `req` through `p`, retrying retryable errors with backoff; `on_notice` hears of each retry
/// (before its wait) and of long silences. A try that broke after streaming part of its answer is
/// replayed like any other retryable failure: its notice says the part already streamed is void.
/// When the last try fails, its error is returned (and what it streamed stays with the caller).
pub async fn stream_with_retry(
    p: &dyn Provider,
    req: &ModelRequest,
    sink: DeltaSink<'_>,
    policy: &RetryPolicy,
    on_notice: &mut (dyn FnMut(StreamNotice) + Send),
) -> Result<ModelResponse, ProviderError> {
    let max = policy.max_tries.max(1);
    let mut attempt = 1;
    let model = req.model.as_str();
    let mut blind: Option<ModelRequest> = None;
    if vision::has_images(req) && !p.takes_images(model) {
        let why = format!("not sent: {} takes no images", model_words(model));
        blind = Some(vision::without_images(req, &why));
        if p.images_left_out(model, false) {
            on_notice(StreamNotice::ImagesLeftOut {
                reason: format!("{} is a text-only model", model_words(model)),
            });
        }
    }
    loop {
        let current = blind.as_ref().unwrap_or(req);
        let (result, emitted) = one_try(p, current, &mut *sink, policy, &mut *on_notice).await;
        let err = match result {
            Ok(r) => return Ok(r),
            Err(e) => e,
        };
        // A server that takes no images: the same request without them, at once (no try spent).
        if blind.is_none() && vision::has_images(req) && vision::refuses_images(&err) {
            let why = format!("not sent: {} takes no images", model_words(model));
            blind = Some(vision::without_images(req, &why));
            if p.images_left_out(model, true) {
                on_notice(StreamNotice::ImagesLeftOut {
                    reason: format!("the server refused an image ({})", reason(&err)),
                });
            }
            continue;
        }
        if !err.retryable || attempt >= max {
            return Err(err);
        }
        attempt += 1;
        let delay = policy.delay(attempt, err.retry_after);
        on_notice(StreamNotice::Retry(RetryNotice {
            attempt,
            max,
            reason: reason(&err),
            delay,
            discarded: emitted,
        }));
        tokio::time::sleep(delay).await;
    }
}

#[cfg(test)]
#[path = "retry_tests.rs"]
mod tests;
