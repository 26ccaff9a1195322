//! A background writing request's one retry with the short prompt: its document restated its
//! instructions ([`crate::engine::handoff::echo`]), so the request ready beside it (the same
//! history, the short prompt; [`super::writing_request::ShortRetry`]) is sent, and its result
//! comes back as the same attempt's. Its failure degrades the handoff
//! ([`super::background`]'s `on_written`).

use super::Engine;
use super::lifecycle::BgState;
use super::writing_request::ShortRetry;
use crate::engine::handoff::echo::Restated;
use crate::engine::protocol::{Event, HandoffPhase};

impl Engine {
    /// A background document restated its instructions: send its retry with the short prompt
    /// (its result comes back to `on_written` as the same attempt's). When none is ready, the
    /// writing failed.
    pub(super) fn retry_background(&mut self, restated: Restated) {
        let Some(bg) = self.handoff.background_mut() else {
            return;
        };
        let id = bg.id;
        let BgState::Writing {
            attempt,
            failure,
            reduced,
            short,
            ..
        } = &mut bg.state
        else {
            return;
        };
        let (attempt, reduced) = (*attempt, *reduced);
        // What failed before, for the ledger: the first request's failure for a rescue.
        let why = match failure.take() {
            Some(first) => format!("{first}; the rescue: {restated}"),
            None => restated.to_string(),
        };
        let ShortRetry::Ready(req) = std::mem::replace(short, ShortRetry::Sent) else {
            self.degrade_background(why);
            return;
        };
        self.emit_logged(Event::Handoff(HandoffPhase::Retrying {
            handoff: id,
            reason: restated.to_string(),
            background: true,
        }));
        let task = self.spawn_writing(id, attempt, *req);
        if let Some(bg) = self.handoff.background_mut() {
            bg.state = BgState::Writing {
                attempt,
                task,
                failure: Some(why),
                reduced,
                short: ShortRetry::Sent,
            };
        }
    }
}
