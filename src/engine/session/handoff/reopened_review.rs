//! The review of a handoff an earlier process froze but never turned over (it was killed, or
//! quit during the review): at a resumed start the frozen record in the ledger is reviewed again
//! and then turned over, never skipped in silence; a record another session froze is left alone.

use std::path::Path;

use super::context::HandoffCx;
use super::freeze::write_frozen;
use super::phases::BlockingStage;
use super::turnover::{Turnover, review_and_commit};
use crate::engine::protocol::{Event, HandoffPhase};

/// At a resumed start: a handoff the ledger holds as frozen but not turned over is reviewed
/// again (and then turned over).
pub(in crate::engine::session) async fn reopen_frozen(cx: &mut impl HandoffCx) {
    let Some(frozen) = cx.ledger().rec().and_then(|r| r.frozen.clone()) else {
        return;
    };
    if frozen.retired_session != cx.conv().id {
        // Only the session that froze it can hand it over; the ledger moved on since.
        let message = format!(
            "the ledger holds a handoff frozen by session {} but continues session {}: \
             it is left as it is ({})",
            frozen.retired_session,
            cx.conv().id,
            frozen
                .file
                .path()
                .map_or("not on disk".to_string(), |p| p.display().to_string())
        );
        cx.emit(Event::Warning { message });
        cx.ledger().record(|rec| rec.frozen = None);
        cx.save_manifest();
        return;
    }
    let id = cx.handoffs().begin_blocking(BlockingStage::Turnover);
    // Killed before the file was written: write it now (the user has not seen it yet).
    let frozen = if frozen.file.written() {
        frozen
    } else {
        write_frozen(cx, frozen)
    };
    let unsaved = frozen.unsaved.clone().filter(|p| p.is_file());
    let what = match frozen.file.path() {
        Some(p) => p.display().to_string(),
        None => "(not on disk)".to_string(),
    };
    let mut message = format!(
        "The handoff of step {} to generation {} ({what}), frozen at {}, was never turned \
         over: the process reviewing it ended. Reviewing it again.",
        cx.ledger().step_name(),
        frozen.generation,
        frozen.time
    );
    if let Some(u) = &unsaved {
        message.push_str(&format!(
            " Unsaved edits from that review were kept in {}.",
            u.display()
        ));
    }
    cx.emit(Event::Notice { message });
    cx.emit_logged(Event::Handoff(HandoffPhase::Reopened {
        handoff: id,
        path: frozen.file.path().map(Path::to_path_buf),
        frozen_at: frozen.time.clone(),
        unsaved,
    }));
    let request = frozen.request.len();
    let turnover = review_and_commit(cx, id, frozen).await;
    cx.handoffs().end();
    if turnover == Turnover::Done && request > 0 {
        cx.emit(Event::Notice {
            message: format!(
                "The successor has the request that was in progress ({request} message{}): \
                 send a message (e.g. \"go on\") to continue it.",
                if request == 1 { "" } else { "s" }
            ),
        });
    }
}
