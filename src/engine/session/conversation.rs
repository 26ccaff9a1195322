//! The current session, one generation: its id and lineage, the conversation the model sees, its
//! transcript, its system prompt, what its context holds (the last reading plus an estimate of
//! what was appended since), its cost, the tool-result budget, the document it was briefed with,
//! and the user request in progress (which a successor carries on).

use super::handoff::CallCounts;
use super::masking::MaskState;
use crate::engine::handoff::HandoffDoc;
use crate::engine::ledger::{Held, Transcript, TranscriptLine};
use crate::engine::tools::Spiller;
use crate::engine::types::{Block, Message, append_message};

/// The state of the current session (one generation).
pub(super) struct SessionState {
    pub(super) id: String,
    pub(super) parent: Option<String>,
    pub(super) generation: u32,
    pub(super) messages: Vec<Message>,
    pub(super) transcript: Transcript,
    /// The session's whole system prompt (the base, the environment and the project
    /// instructions read when it started), unchanged for its every request.
    pub(super) system_prompt: String,
    /// Last main-thread ctx the provider reported for this session.
    pub(super) ctx: u64,
    /// Characters appended since that report (estimated into the gauge).
    pub(super) appended_chars: usize,
    /// The near-handoff warning was given.
    pub(super) near_fired: bool,
    /// What this session's requests cost so far.
    pub(super) cost_usd: f64,
    /// The tool-result budget of the session's turns.
    pub(super) spiller: Spiller,
    /// The user request in progress, for the successor and the degraded document.
    pub(super) request: Request,
    /// The document the session was briefed with (a degraded one carries it forward).
    pub(super) briefed: Option<HandoffDoc>,
    /// The line counts of this session's file changes, for the handoff's `Touched` section.
    pub(super) call_counts: CallCounts,
    /// Where masking of this session's requests stands.
    pub(super) mask: MaskState,
}

impl SessionState {
    /// No session yet: the first message starts one. Its prompt is the base prompt until then.
    pub(super) fn none(base_prompt: &str) -> SessionState {
        SessionState::new(
            Identity::default(),
            Vec::new(),
            Transcript::disabled(),
            base_prompt,
        )
    }

    /// A session with `messages` so far, written to `transcript`.
    pub(super) fn new(
        who: Identity,
        messages: Vec<Message>,
        transcript: Transcript,
        system_prompt: &str,
    ) -> SessionState {
        let appended_chars = messages.iter().map(Message::char_len).sum();
        SessionState {
            id: who.id,
            parent: who.parent,
            generation: who.generation,
            messages,
            transcript,
            system_prompt: system_prompt.to_string(),
            ctx: 0,
            appended_chars,
            near_fired: false,
            cost_usd: 0.0,
            spiller: Spiller::new(),
            request: Request::default(),
            briefed: None,
            call_counts: CallCounts::default(),
            mask: MaskState::default(),
        }
    }

    /// No session has started yet (before the first message).
    pub(super) fn is_none(&self) -> bool {
        self.id.is_empty()
    }

    /// Append a message to the conversation and the transcript. Consecutive user messages merge.
    pub(super) fn push(&mut self, msg: Message) {
        self.appended_chars += msg.char_len();
        append_message(&mut self.messages, msg.clone());
        self.transcript
            .append(&TranscriptLine::Message { message: msg });
    }

    /// The history was replaced in place (a compaction): the transcript records it, and the
    /// context is estimated from the new history until the next response.
    pub(super) fn replaced(&mut self) {
        self.transcript.append(&TranscriptLine::Replaced {
            messages: self.messages.clone(),
        });
        self.ctx = 0;
        self.appended_chars = self.messages.iter().map(Message::char_len).sum();
    }

    /// What the session holds now (`tokens`: its context as the gauge estimates it), for the
    /// ledger and the divider when it is retired.
    pub(super) fn held(&self, tokens: u64) -> Held {
        let tool_calls = self
            .messages
            .iter()
            .flat_map(|m| &m.content)
            .filter(|b| matches!(b, Block::ToolUse { .. }))
            .count();
        let path = self.transcript.path();
        Held {
            messages: self.messages.len(),
            tool_calls,
            tokens,
            transcript: (!path.as_os_str().is_empty()).then(|| path.to_path_buf()),
        }
    }
}

/// Which session a state is: its id, its parent (a successor's) and its generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Identity {
    pub(super) id: String,
    pub(super) parent: Option<String>,
    pub(super) generation: u32,
}

impl Default for Identity {
    fn default() -> Self {
        Identity {
            id: String::new(),
            parent: None,
            generation: 1,
        }
    }
}

/// The user request in progress: the running message turn's user messages, kept
/// after the turn when it did not complete (interrupted, failed, out of iterations), so a handoff
/// made then still carries it. A completed turn closes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Request {
    pub(super) messages: Vec<String>,
    pub(super) open: bool,
}

impl Request {
    /// A new request opened by a user turn.
    pub(super) fn opened(text: String) -> Request {
        Request {
            messages: vec![text],
            open: true,
        }
    }

    /// The messages a successor gets after its briefing: none when no request is open.
    pub(super) fn in_flight(&self) -> Vec<String> {
        if self.open {
            self.messages.clone()
        } else {
            Vec::new()
        }
    }
}
