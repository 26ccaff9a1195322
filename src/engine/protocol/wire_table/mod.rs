//! The wire table: every event kind beside the JSON line headless prints for it, grouped by what
//! the events are about, one file each.

use crate::engine::context::Thresholds;
use crate::engine::protocol::Event;

mod commands;
mod context;
mod extensions;
mod turn;

/// Every event kind and its line.
pub(super) fn table() -> Vec<(Event, &'static str)> {
    let t = Thresholds::new(200_000, 50_000);
    let mut all = Vec::new();
    all.extend(turn::entries(t));
    all.extend(context::entries(t));
    all.extend(commands::entries());
    all.extend(extensions::entries());
    all
}
