//! The one way out for events: a message's secrets masked, the event logged, then sent to the
//! front end (which may be gone; nothing to do then). Each part of the engine that speaks holds
//! an [`Outbox`] of its own, so it needs no engine to say what it did.

use std::time::Instant;

use tokio::sync::mpsc::UnboundedSender;

use super::log;
use crate::engine::protocol::{Event, HandoffId};

/// A sender of events to the front end.
#[derive(Debug, Clone)]
pub(super) struct Outbox {
    events: UnboundedSender<Event>,
}

impl Outbox {
    pub(super) fn new(events: UnboundedSender<Event>) -> Outbox {
        Outbox { events }
    }

    /// Say `ev`: masked, logged, sent.
    pub(super) fn emit(&self, ev: Event) {
        emit(&self.events, ev, None);
    }
}

/// Say `ev` on `events`: masked, logged (`handoff`: the handoff in progress and when it began,
/// so each of its phases says how long after the start it came), sent.
pub(super) fn emit(
    events: &UnboundedSender<Event>,
    mut ev: Event,
    handoff: Option<(HandoffId, Instant)>,
) {
    // Messages may quote paths, provider bodies or the user's words: never a key.
    if let Event::Notice { message } | Event::Warning { message } | Event::Error { message, .. } =
        &mut ev
        && let std::borrow::Cow::Owned(clean) = crate::engine::secrets::redact(message)
    {
        *message = clean;
    }
    log::event(&ev, handoff);
    let _ = events.send(ev);
}
