//! Retrying a model request: exponential backoff with jitter, `retry-after` honoured, at most
//! [`RetryPolicy::max_tries`] tries, and never once the user has seen part of the answer.

use std::time::Duration;

use super::error::ProviderError;
use super::{DeltaSink, Provider};
use crate::engine::fsutil::jitter;
use crate::engine::types::{Delta, ModelRequest, ModelResponse};

/// A server's `retry-after` is followed up to this long.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// How often and how patiently to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries in all, the first included (SPEC §3: 5).
    pub max_tries: u32,
    /// The delay before the first retry, doubled for each further one.
    pub base_delay: Duration,
    /// The cap of the computed delay (not of a server's `retry-after`).
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_tries: 5,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
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
    /// Why the last try failed, e.g. `overloaded: Overloaded (HTTP 529)`.
    pub reason: String,
    /// How long we wait before the next try.
    pub delay: Duration,
}

fn reason(e: &ProviderError) -> String {
    match e.status {
        Some(s) => format!("{e} (HTTP {s})"),
        None => e.to_string(),
    }
}

/// Stream `req` through `p`, retrying retryable errors with backoff. `on_retry` is called before each
/// wait. An attempt that already sent a delta to `sink` is not retried: its error is returned, since
/// the user has seen part of that answer.
pub async fn stream_with_retry(
    p: &dyn Provider,
    req: &ModelRequest,
    sink: DeltaSink<'_>,
    policy: &RetryPolicy,
    on_retry: &mut (dyn FnMut(RetryNotice) + Send),
) -> Result<ModelResponse, ProviderError> {
    let max = policy.max_tries.max(1);
    let mut attempt = 1;
    loop {
        let mut emitted = false;
        let result = {
            let mut counting = |d: Delta| {
                emitted = true;
                sink(d);
            };
            p.stream(req, &mut counting).await
        };
        let err = match result {
            Ok(r) => return Ok(r),
            Err(e) => e,
        };
        if !err.retryable || emitted || attempt >= max {
            return Err(err);
        }
        attempt += 1;
        let delay = policy.delay(attempt, err.retry_after);
        on_retry(RetryNotice {
            attempt,
            max,
            reason: reason(&err),
            delay,
        });
        tokio::time::sleep(delay).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_are_capped_and_jittered_within_bounds() {
        let p = RetryPolicy::default();
        for _ in 0..50 {
            let d2 = p.delay(2, None);
            assert!(
                d2 >= Duration::from_millis(500) && d2 <= Duration::from_secs(1),
                "{d2:?}"
            );
            let d4 = p.delay(4, None);
            assert!(
                d4 >= Duration::from_secs(2) && d4 <= Duration::from_secs(4),
                "{d4:?}"
            );
            let d20 = p.delay(20, None);
            assert!(
                d20 >= Duration::from_secs(15) && d20 <= Duration::from_secs(30),
                "{d20:?}"
            );
        }
        assert_eq!(
            p.delay(3, Some(Duration::from_secs(7))),
            Duration::from_secs(7)
        );
        assert_eq!(p.delay(3, Some(Duration::from_secs(600))), MAX_RETRY_AFTER);
        assert!(p.delay(u32::MAX, None) <= p.max_delay);
    }
}
