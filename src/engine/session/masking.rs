//! The engine's side of observation masking ([`crate::engine::mask`]): the boundary of the
//! current session's last main-thread request, the messages each request sends, and where a
//! masked output comes back from (`recall` searches this generation's own transcript too while
//! masking is on, and is offered from the first generation on).

use super::Engine;
use crate::engine::context::estimate_tokens;
use crate::engine::mask::{self, MaskMode};
use crate::engine::tools::recall::{self, Source};
use crate::engine::types::{Message, ToolSpec};

/// Where the current session's masking stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct MaskState {
    /// The session and history (its replace generation) the boundary belongs to.
    session: String,
    replace: u64,
    /// Messages before it are sent with their tool results masked.
    boundary: usize,
    /// What the stubs of the last request saved, in estimated tokens.
    pub saved_tokens: u64,
}

/// A message's size as the engine estimates tokens.
fn tokens(m: &Message) -> u64 {
    estimate_tokens(m.char_len())
}

impl Engine {
    fn mask_on(&self) -> bool {
        self.run.masking.mode == MaskMode::On
    }

    /// The boundary of this session's last request (0 after a new session or a compaction).
    fn mask_boundary(&self) -> usize {
        let m = &self.s.mask;
        if m.session == self.s.id && m.replace == self.ledger.replace.get() {
            m.boundary
        } else {
            0
        }
    }

    /// The messages the next main-thread request sends: the history masked, the boundary moved
    /// when that is worth a step.
    pub(super) fn request_messages(&mut self) -> Vec<Message> {
        let out = mask::mask(
            &self.s.messages,
            &self.run.masking,
            self.settings.thresholds.window,
            self.mask_boundary(),
            tokens,
        );
        if out.stepped {
            tracing::info!(
                session = %self.s.id,
                boundary = out.boundary,
                stubbed = out.stubbed,
                saved_tokens = out.saved_tokens,
                "masking: boundary moved"
            );
        }
        self.s.mask = MaskState {
            session: self.s.id.clone(),
            replace: self.ledger.replace.get(),
            boundary: out.boundary,
            saved_tokens: out.saved_tokens,
        };
        out.messages
    }

    /// `history` masked as the last request masked it, with no step: the writing request sends
    /// the main thread's prefix byte for byte.
    pub(super) fn masked_as_sent(&self, history: Vec<Message>) -> Vec<Message> {
        let boundary = self.mask_boundary();
        if boundary == 0 {
            return history;
        }
        mask::apply(&history, boundary, tokens).messages
    }

    /// What `recall` searches: the retired generations' transcripts and, while masking is on,
    /// this generation's own (a masked output is found there).
    pub(super) fn recall_sources(&self) -> Vec<Source> {
        let mut sources = self.predecessors();
        if self.mask_on() && !self.s.id.is_empty() {
            sources.push(Source {
                generation: self.s.generation,
                path: self.ledger.transcript_path(&self.s.id),
            });
        }
        sources
    }

    /// `recall`, offered to a successor, and from the start while masking is on (then it
    /// searches this generation too).
    pub(super) fn recall_spec(&self) -> Option<ToolSpec> {
        let sources = self.recall_sources();
        if self.mask_on() && !self.s.id.is_empty() {
            Some(recall::spec_with_own(&sources, self.s.generation))
        } else if !sources.is_empty() {
            Some(recall::spec(&sources))
        } else {
            None
        }
    }
}
