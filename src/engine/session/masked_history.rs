//! The main thread's history as its requests send it, old tool output masked
//! ([`crate::engine::mask`]): where the boundary of the current session's last main-thread
//! request stands (messages before it are sent with their tool results masked), moved when that
//! is worth a step, and the same masking again, with no step, for the writing request that must
//! send the main thread's prefix byte for byte.

use crate::engine::context::estimate_tokens;
use crate::engine::mask::{self, MaskSettings};
use crate::engine::types::Message;

/// Where the current session's masking stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct MaskState {
    /// The session and history (its replace generation) the boundary belongs to.
    session: String,
    replace: u64,
    /// Messages before it are sent with their tool results masked.
    boundary: usize,
    /// What the stubs of the last request saved, in estimated tokens.
    saved_tokens: u64,
}

/// Which history a boundary belongs to: a session and its replace generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct HistoryAt {
    pub(super) session: String,
    pub(super) replace: u64,
}

/// A message's size as the engine estimates tokens.
fn tokens(m: &Message) -> u64 {
    estimate_tokens(m.char_len())
}

impl MaskState {
    /// What the stubs of the last request saved, in estimated tokens.
    pub(super) fn saved_tokens(&self) -> u64 {
        self.saved_tokens
    }

    /// The boundary of the last request on history `at` (0 after a new session or a compaction).
    fn boundary(&self, at: &HistoryAt) -> usize {
        if self.session == at.session && self.replace == at.replace {
            self.boundary
        } else {
            0
        }
    }

    /// The messages the next main-thread request sends of `history` (at `at`): masked by
    /// `settings` for a window of `window` tokens, the boundary moved when that is worth a step.
    pub(super) fn request_messages(
        &mut self,
        history: &[Message],
        at: HistoryAt,
        settings: &MaskSettings,
        window: u64,
    ) -> Vec<Message> {
        let out = mask::mask(history, settings, window, self.boundary(&at), tokens);
        if out.stepped {
            tracing::info!(
                session = %at.session,
                boundary = out.boundary,
                stubbed = out.stubbed,
                saved_tokens = out.saved_tokens,
                "masking: boundary moved"
            );
        }
        *self = MaskState {
            session: at.session,
            replace: at.replace,
            boundary: out.boundary,
            saved_tokens: out.saved_tokens,
        };
        out.messages
    }

    /// `history` (at `at`) masked as the last request masked it, with no step.
    pub(super) fn as_sent(&self, history: Vec<Message>, at: &HistoryAt) -> Vec<Message> {
        let boundary = self.boundary(at);
        if boundary == 0 {
            return history;
        }
        mask::apply(&history, boundary, tokens).messages
    }
}
