//! The header every handoff document carries, and the mechanical (degraded) document written
//! without the model when the writing fails: it names the request in progress and carries
//! forward what the document this generation was briefed with had settled.

use super::context::HandoffCx;
use crate::engine::fsutil::{minute_stamp, now_unix};
use crate::engine::handoff::document::DegradedParams;
use crate::engine::handoff::{HandoffDoc, HandoffMeta};

/// The degraded document, for `reason` (why the writing failed); its header says `used`.
pub(super) fn degraded_doc(cx: &mut impl HandoffCx, reason: &str, used: u64) -> HandoffDoc {
    let (task, touched) = cx
        .ledger()
        .rec()
        .map(|r| (r.task.clone(), r.touched.clone()))
        .unwrap_or_default();
    let request = cx.conv().request.in_flight();
    let mut doc = HandoffDoc::degraded_from(DegradedParams {
        reason,
        task: &task,
        request: &request,
        touched: &touched,
        previous: cx.conv().briefed.as_ref(),
        meta: None,
    });
    doc.meta = Some(meta(cx, used));
    doc
}

/// A document's header: the step, the generation, the context `used` of the window, the time.
pub(super) fn meta(cx: &mut impl HandoffCx, used: u64) -> HandoffMeta {
    HandoffMeta {
        step: cx.ledger().step_name(),
        generation: cx.conv().generation,
        used,
        window: cx.settings().thresholds.window,
        time: minute_stamp(now_unix().0),
    }
}
