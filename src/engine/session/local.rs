//! What the engine does for small windows and local servers: the output cap a window allows and
//! the thresholds that keep it free, token estimates calibrated for the model from every
//! main-thread response's usage, the warning about a session floor too large for the window, and
//! replies that are not what they seem — a reply cut off because the window filled is an
//! overflow (the window is learned, the session hands off), and a reply whose text was read as
//! tool calls ([`crate::engine::provider::text_calls`]) is said as such.

use super::Engine;
use super::request::{Outcome, Purpose};
use crate::engine::context::{self, Thresholds};
use crate::engine::instructions;
use crate::engine::protocol::{Event, StreamState};
use crate::engine::provider::length;
use crate::engine::types::{Block, ModelResponse};

/// The tool calls of a reply that the model wrote as text.
fn text_calls(resp: &ModelResponse) -> Vec<&str> {
    resp.content
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse {
                name,
                from_text: true,
                ..
            } => Some(name.as_str()),
            _ => None,
        })
        .collect()
}

impl Engine {
    /// The output cap (`max_tokens`) requests ask for in the window in force.
    pub(crate) fn output_cap(&self) -> u32 {
        context::output_cap(
            self.settings.thresholds.window,
            self.run.provider.max_tokens,
        )
    }

    /// The thresholds of `window` with this engine's headroom and output cap.
    pub(crate) fn thresholds_for(&self, window: u64) -> Thresholds {
        Thresholds::with_output(
            window,
            self.settings.thresholds.headroom,
            self.run.provider.max_tokens,
        )
    }

    /// The tokens of `chars` characters, estimated with the model's calibrated ratio.
    pub(crate) fn estimate(&self, chars: usize) -> u64 {
        self.counters.tokens.estimate(chars)
    }

    /// The characters every session starts with: its system prompt (before the first session:
    /// the base prompt and the project instructions it will get) and the tool specs.
    pub(crate) fn floor_chars(&self) -> usize {
        let tools = serde_json::to_string(&self.tool_specs()).map_or(0, |t| t.len());
        let prompt = if self.s.id.is_empty() {
            self.run.prompt.system_prompt.len()
                + instructions::load(&self.run.prompt.instructions, &self.run.places.workspace)
                    .block
                    .len()
        } else {
            self.s.system_prompt.len()
        };
        prompt + tools
    }

    /// Said at start and when the window changes: a floor over a third of the window.
    pub(crate) fn warn_about_the_floor(&self) {
        let floor = self.estimate(self.floor_chars());
        if let Some(message) = context::floor_warning(
            floor,
            self.settings.thresholds.window,
            self.run.prompt.style.is_lean(),
        ) {
            self.emit(Event::Warning { message });
        }
    }

    /// A reply in, what it stands for out: a main-thread reply teaches the model's token ratio
    /// (`sent`: the characters its request sent); a reply cut off because the window filled is
    /// the overflow it stands for; tool calls read from the text are said.
    pub(crate) fn after_reply(
        &mut self,
        outcome: Outcome,
        sent: Option<usize>,
        purpose: Purpose,
    ) -> Outcome {
        let Outcome::Done(resp) = outcome else {
            return outcome;
        };
        if let Some(chars) = sent {
            let u = resp.usage;
            let prompt = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
            if let Err(e) = self.counters.tokens.observe(chars, prompt) {
                tracing::warn!("could not record the token ratio: {e}");
            }
        }
        if let Some(error) = length::window_full(&resp, self.settings.thresholds.window) {
            tracing::info!(
                used = resp.usage.context(),
                window = self.settings.thresholds.window,
                "the reply stopped at a full window: an overflow"
            );
            return Outcome::Failed {
                error,
                partial: String::new(),
            };
        }
        let read = text_calls(&resp);
        if purpose == Purpose::Main && !read.is_empty() {
            let n = read.len();
            self.emit_logged(Event::Notice {
                message: format!(
                    "the model wrote {} as text; {} run as {}: {}",
                    if n == 1 {
                        "its tool call"
                    } else {
                        "its tool calls"
                    },
                    if n == 1 { "it is" } else { "they are" },
                    if n == 1 { "a tool call" } else { "tool calls" },
                    read.join(", ")
                ),
            });
        }
        Outcome::Done(resp)
    }

    /// Whether the text a reply streamed is void: it was read as tool calls, or the window
    /// filled while it was written (the front end takes it back).
    pub(crate) fn reply_replaced(&self, resp: &ModelResponse) -> bool {
        !text_calls(resp).is_empty()
            || length::window_full(resp, self.settings.thresholds.window).is_some()
    }

    /// Take back streamed text the reply does not stand for ([`Engine::reply_replaced`]).
    pub(crate) fn take_back(&self, resp: &ModelResponse, chars: usize) {
        if self.reply_replaced(resp) {
            self.emit(Event::Stream(StreamState::Discarded { chars }));
        }
    }
}
