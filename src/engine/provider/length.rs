//! A reply cut off because the context window filled while it was written. A local server (llama.cpp
//! first) takes a prompt that fits and generates until its context is full, then ends the reply
//! with `finish_reason: "length"` and HTTP 200, as if the output cap had been reached; its stream
//! carries no other sign of it (llama.cpp stops when the cached tokens plus the next one reach the
//! context, so prompt and completion add up to the window or one short of it). When the prompt and
//! the output together reach the window, the reply is not a finished answer but a context
//! overflow, to be handled as one: the window is learned and the session hands off. A `length`
//! stop below that is the output cap doing its job and stays what it is.

use super::error::{ErrorKind, ProviderError};
use crate::engine::types::ModelResponse;

/// The stop reason a length stop becomes (`finish_reason: "length"`, Anthropic's `max_tokens`).
pub const LENGTH_STOP: &str = "max_tokens";
/// A length stop this close to the window (in tokens) is the window: servers stop a token or
/// two early, or count a template token the usage leaves out.
pub const FULL_SLACK: u64 = 8;

/// The overflow a reply stands for, if it stopped because `window` was full: a length stop whose
/// prompt and output tokens reach the window (within [`FULL_SLACK`]). The message states the
/// window, so that it is learned like an overflow message's limit.
pub fn window_full(resp: &ModelResponse, window: u64) -> Option<ProviderError> {
    let used = resp.usage.context();
    let full = resp.stop_reason.as_deref() == Some(LENGTH_STOP)
        && window > FULL_SLACK
        && used + FULL_SLACK >= window;
    if !full {
        return None;
    }
    let prompt = used.saturating_sub(resp.usage.output_tokens);
    Some(ProviderError::new(
        ErrorKind::ContextWindowExceeded,
        format!(
            "the reply was cut off because the context filled while it was written: {used} tokens \
             ({prompt} of prompt, {} written) reached the context window of {window} tokens",
            resp.usage.output_tokens
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::provider::overflow::overflow_limit;
    use crate::engine::types::{Block, Usage};

    fn reply(stop: &str, prompt: u64, output: u64) -> ModelResponse {
        ModelResponse {
            content: vec![Block::text("partial")],
            usage: Usage {
                input_tokens: prompt,
                output_tokens: output,
                ..Usage::default()
            },
            stop_reason: Some(stop.into()),
            web_search_requests: 0,
        }
    }

    #[test]
    fn a_length_stop_at_the_window_is_an_overflow() {
        // (stop, prompt, output, window, overflow)
        let table = [
            (LENGTH_STOP, 7_000, 1_192, 8_192, true),  // exactly full
            (LENGTH_STOP, 7_000, 1_191, 8_192, true),  // llama.cpp: one short
            (LENGTH_STOP, 7_000, 1_184, 8_192, true),  // the slack
            (LENGTH_STOP, 7_000, 1_300, 8_192, true),  // a server counting more
            (LENGTH_STOP, 7_000, 1_183, 8_192, false), // beyond the slack: the output cap
            (LENGTH_STOP, 1_000, 2_048, 8_192, false), // max_tokens far below the window
            ("end_turn", 7_000, 1_192, 8_192, false),
            ("tool_use", 8_000, 192, 8_192, false),
            (LENGTH_STOP, 7_000, 1_192, 0, false), // no window known
        ];
        for (stop, prompt, output, window, overflow) in table {
            let got = window_full(&reply(stop, prompt, output), window);
            assert_eq!(
                got.as_ref().map(|e| (e.kind, e.retryable)),
                overflow.then_some((ErrorKind::ContextWindowExceeded, false)),
                "{stop} {prompt}+{output} in {window}"
            );
        }
    }

    #[test]
    fn the_message_states_the_window_for_learning() {
        let e = window_full(&reply(LENGTH_STOP, 7_000, 1_191), 8_192);
        let e = e.unwrap_or_else(|| panic!("an overflow"));
        assert_eq!(overflow_limit(&e.message), Some(8_192), "{}", e.message);
        assert!(
            e.message
                .contains("8191 tokens (7000 of prompt, 1191 written)"),
            "{}",
            e.message
        );
    }
}
