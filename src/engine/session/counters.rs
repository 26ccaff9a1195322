//! What the run counts and learns across sessions: the model requests sent (they number the
//! log's lines), the main thread's responses (the `--handoff-after` test hook counts them), the
//! overflow retries in a row, and the token estimates calibrated for the model from every
//! main-thread response's usage (a new model loads its own).

use std::path::Path;

use crate::engine::tokens::Estimator;
use crate::engine::types::Usage;

/// The run's counters and the model's token ratio.
#[derive(Debug)]
pub(super) struct Counters {
    /// Model requests sent.
    requests: u64,
    /// Main-thread responses.
    responses: u32,
    /// Overflow retries in a row (reset by a response).
    overflow_retries: u32,
    /// Token estimates calibrated for the model.
    tokens: Estimator,
}

impl Counters {
    /// Nothing counted yet; token estimates start from what `tokens` knows.
    pub(super) fn new(tokens: Estimator) -> Counters {
        Counters {
            requests: 0,
            responses: 0,
            overflow_retries: 0,
            tokens,
        }
    }

    /// A request is sent: its number in the run.
    pub(super) fn next_request(&mut self) -> u64 {
        self.requests += 1;
        self.requests
    }

    /// A main-thread response came: counted, and the overflow retries start over.
    pub(super) fn responded(&mut self) {
        self.overflow_retries = 0;
        self.responses += 1;
    }

    /// Main-thread responses so far.
    pub(super) fn responses(&self) -> u32 {
        self.responses
    }

    /// Overflow retries in a row so far.
    pub(super) fn overflow_retries(&self) -> u32 {
        self.overflow_retries
    }

    /// One more overflow retry.
    pub(super) fn retry_overflow(&mut self) {
        self.overflow_retries += 1;
    }

    /// Another session's requests follow (a resumed run): no retries in a row yet.
    pub(super) fn reset_overflow(&mut self) {
        self.overflow_retries = 0;
    }

    /// The tokens of `chars` characters, estimated with the model's calibrated ratio.
    pub(super) fn estimate(&self, chars: usize) -> u64 {
        self.tokens.estimate(chars)
    }

    /// A main-thread response to a request of `chars` characters teaches the ratio.
    pub(super) fn observe(&mut self, chars: usize, usage: &Usage) {
        let prompt =
            usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens;
        if let Err(e) = self.tokens.observe(chars, prompt) {
            tracing::warn!("could not record the token ratio: {e}");
        }
    }

    /// The model changed: its own calibrated ratio (kept in `data_dir`) from now on.
    pub(super) fn model_changed(&mut self, data_dir: &Path, model: &str) {
        self.tokens = Estimator::load(data_dir, model);
    }
}
