//! One model request, streamed, abortable by `Op::Abort`, with retries surfaced as events: what
//! it offers (the built-in tools, the step's own, `task`, the skills, the ready MCP servers', as
//! the mode allows), what it sends (the history with old tool output masked), and what its reply
//! stands for — a main-thread reply teaches the model's token ratio, a reply cut off because the
//! window filled is the overflow it stands for (streamed text it showed is taken back), and a
//! reply whose text was read as tool calls ([`crate::engine::provider::text_calls`]) is said as
//! such. Also the other waits that keep answering ops: a future run beside the op queue, the
//! user's answer to an approval, and the MCP servers still starting.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::Engine;
use super::counters::Counters;
use super::input::InputRoom;
use crate::engine::context;
use crate::engine::protocol::{Event, StreamState};
use crate::engine::provider::retry::{StreamNotice, stream_with_retry};
use crate::engine::provider::{ProviderError, length};
use crate::engine::types::{Block, Delta, Message, ModelRequest, ModelResponse, ToolChoice};

/// How a request ended.
pub(super) enum Outcome {
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

/// What a model request is for (its text reaches the user only for `Main`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Purpose {
    /// A main-thread request of a turn.
    Main,
    /// The handoff writing turn.
    Handoff,
    /// A compaction summary.
    Summary,
}

impl Purpose {
    fn as_str(self) -> &'static str {
        match self {
            Purpose::Main => "main",
            Purpose::Handoff => "handoff",
            Purpose::Summary => "summary",
        }
    }
}

/// An op that stops the work in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    /// `Op::Abort` of the running turn.
    Abort,
    /// `Op::Shutdown`, or the front end is gone (remembered in `Engine::shutdown`).
    Shutdown,
}

impl Engine {
    /// Whether the model in use may be sent images (not a text-only model by name, not one
    /// whose server refused an image this run).
    pub(in crate::engine::session) fn takes_images(&self) -> bool {
        self.run.provider.client.takes_images(&self.settings.model)
    }

    /// What a user message is measured against (the handoff line of a fresh session) and
    /// where it is saved when it is too large.
    pub(in crate::engine::session) fn input_room(&self) -> InputRoom<'_> {
        InputRoom {
            dir: self.spill_dir(),
            workspace: &self.run.places.workspace,
            thresholds: self.settings.thresholds,
            floor: self.counters.estimate(self.floor_chars()),
            counters: &self.counters,
            out: self.run.outbox(),
        }
    }

    /// Said at start and when the window changes: a floor over a third of the window.
    pub(in crate::engine::session) fn warn_about_the_floor(&self) {
        let floor = self.counters.estimate(self.floor_chars());
        if let Some(message) = context::floor_warning(
            floor,
            self.settings.thresholds.window,
            self.run.prompt.style.is_lean(),
        ) {
            self.emit(Event::Warning { message });
        }
    }
    /// Build a request on the current session's history (old tool output masked).
    pub(in crate::engine::session) fn build_request(
        &mut self,
        tool_choice: ToolChoice,
    ) -> ModelRequest {
        let at = self.history_at();
        let window = self.settings.thresholds.window;
        let messages = self.conversation.mask.request_messages(
            &self.conversation.messages,
            at,
            &self.run.masking,
            window,
        );
        ModelRequest {
            messages,
            model: self.settings.model.clone(),
            system: self.system_prompt(),
            tools: self.tool_specs(),
            tool_choice,
            max_tokens: self.settings.output_cap(self.run.provider.max_tokens),
            effort: self.settings.effort,
        }
    }

    /// Stream `req`; only a main request's text goes to the front end. Logged with its number,
    /// purpose, retries, outcome and duration.
    pub(in crate::engine::session) async fn stream(
        &mut self,
        req: ModelRequest,
        purpose: Purpose,
    ) -> Outcome {
        let number = self.counters.next_request();
        let started = std::time::Instant::now();
        tracing::debug!(
            request = number,
            purpose = purpose.as_str(),
            session = %self.conversation.id,
            messages = req.messages.len(),
            tool_choice = ?req.tool_choice,
            "request sent"
        );
        let sent = (purpose == Purpose::Main).then(|| request_chars(&req));
        let outcome = self
            .stream_inner(req, purpose == Purpose::Main, number)
            .await;
        let window = self.settings.thresholds.window;
        let (outcome, notice) = stands_for(outcome, sent, purpose, &mut self.counters, window);
        if let Some(message) = notice {
            self.emit_logged(Event::Notice { message });
        }
        let ms = started.elapsed().as_millis();
        match &outcome {
            Outcome::Done(resp) => tracing::info!(
                request = number,
                purpose = purpose.as_str(),
                ms,
                input = resp.usage.input_tokens,
                cache_read = resp.usage.cache_read_input_tokens,
                cache_write = resp.usage.cache_creation_input_tokens,
                output = resp.usage.output_tokens,
                stop = resp.stop_reason.as_deref().unwrap_or("-"),
                "request done"
            ),
            Outcome::Failed { error, partial } => tracing::warn!(
                request = number,
                purpose = purpose.as_str(),
                ms,
                kind = error.kind.as_str(),
                status = error.status.unwrap_or(0),
                streamed_chars = partial.len(),
                "request failed: {}",
                error.message
            ),
            Outcome::Aborted { partial } => tracing::info!(
                request = number,
                purpose = purpose.as_str(),
                ms,
                streamed_chars = partial.len(),
                "request aborted"
            ),
        }
        outcome
    }

    /// A try that broke after showing text is replayed: the front end is told to drop what it
    /// showed, and `partial` only ever holds the text of the latest try.
    async fn stream_inner(&mut self, req: ModelRequest, visible: bool, number: u64) -> Outcome {
        let provider = self.run.provider.client.clone();
        let policy = self.run.provider.retry;
        let events = self.run.events.clone();
        let turn = self.turn_id();
        let notice_events = self.run.events.clone();
        // The sink and the notice handler both reach the text of the current try.
        let partial = Mutex::new(String::new());
        let shown = AtomicBool::new(false);
        let silent = AtomicBool::new(false);
        let mut sink = |d: Delta| match d {
            Delta::Text(t) => {
                lock(&partial).push_str(&t);
                if visible {
                    shown.store(true, Ordering::Relaxed);
                    let _ = events.send(Event::TextDelta { turn, text: t });
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
                n.log(&number);
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
                tracing::info!(
                    request = number,
                    silent_ms = d.as_millis(),
                    "provider silent"
                );
                silent.store(true, Ordering::Relaxed);
                let _ = notice_events.send(Event::Stream(StreamState::Silent {
                    silent_ms: u64::try_from(d.as_millis()).unwrap_or(u64::MAX),
                }));
            }
            StreamNotice::Resumed => {
                silent.store(false, Ordering::Relaxed);
                let _ = notice_events.send(Event::Stream(StreamState::Resumed));
            }
            StreamNotice::ImagesLeftOut { reason } => {
                let _ = notice_events.send(Event::Notice {
                    message: format!(
                        "images left out: {reason}; the conversation goes on without them (each \
                         is named in its place, and the transcript keeps it)"
                    ),
                });
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
            Some(Ok(resp)) => {
                // Streamed text the reply does not stand for is taken back.
                if shown.load(Ordering::Relaxed) && replaced(&resp, self.settings.thresholds.window)
                {
                    let chars = partial.chars().count();
                    self.emit(Event::Stream(StreamState::Discarded { chars }));
                }
                Outcome::Done(resp)
            }
            Some(Err(error)) => Outcome::Failed { error, partial },
            None => Outcome::Aborted { partial },
        }
    }
}

/// A reply in, what it stands for out: a main-thread reply teaches the model's token ratio
/// (`sent`: the characters its request sent); a reply cut off because the `window` filled is the
/// overflow it stands for; tool calls a main reply wrote as text are said (the notice).
fn stands_for(
    outcome: Outcome,
    sent: Option<usize>,
    purpose: Purpose,
    counters: &mut Counters,
    window: u64,
) -> (Outcome, Option<String>) {
    let Outcome::Done(resp) = outcome else {
        return (outcome, None);
    };
    if let Some(chars) = sent {
        counters.observe(chars, &resp.usage);
    }
    if let Some(error) = length::window_full(&resp, window) {
        tracing::info!(
            used = resp.usage.context(),
            window,
            "the reply stopped at a full window: an overflow"
        );
        let failed = Outcome::Failed {
            error,
            partial: String::new(),
        };
        return (failed, None);
    }
    let read = text_calls(&resp);
    let notice = (purpose == Purpose::Main && !read.is_empty()).then(|| {
        let n = read.len();
        format!(
            "the model wrote {} as text; {} run as {}: {}",
            if n == 1 {
                "its tool call"
            } else {
                "its tool calls"
            },
            if n == 1 { "it is" } else { "they are" },
            if n == 1 { "a tool call" } else { "tool calls" },
            read.join(", ")
        )
    });
    (Outcome::Done(resp), notice)
}

/// Whether the text a reply streamed is void: it was read as tool calls, or the `window` filled
/// while it was written (the front end takes it back).
fn replaced(resp: &ModelResponse, window: u64) -> bool {
    !text_calls(resp).is_empty() || length::window_full(resp, window).is_some()
}

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

fn lock(m: &Mutex<String>) -> MutexGuard<'_, String> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The characters a request sends: system prompt, tool specs and messages, counted as the
/// estimates count them (what a response's prompt tokens are compared with).
fn request_chars(req: &ModelRequest) -> usize {
    let tools = serde_json::to_string(&req.tools).map_or(0, |t| t.len());
    req.system.len() + tools + req.messages.iter().map(Message::char_len).sum::<usize>()
}
