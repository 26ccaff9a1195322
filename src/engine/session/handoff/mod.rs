//! The handoff as one unit: a runner that owns every handoff of the run ([`phases`]) and does its
//! work through the narrow context the engine lends it ([`context::HandoffCx`]): the
//! conversation, the ledger, the event sink, the provider, the hooks' gates and the op queue.
//!
//! A handoff in the main thread ([`blocking`]) writes its document ([`writing`], or the degraded
//! one, [`degraded`]), freezes it ([`freeze`]), waits for its review and starts the successor
//! ([`turnover`], reading the file back: [`read_back`]). A handoff in the background
//! ([`background`]) runs its hooks ([`vetting`], [`background_freeze`]) and its writing request
//! ([`background_writing`]) as tasks ([`tasks`], one channel for every answer), and meets the main
//! thread at message boundaries ([`boundary`]); its successor also gets the record of what
//! happened after the cut ([`after_cut`]). Every document gets the `## Touched` section of the
//! tool log ([`touched_section`]). A review an earlier process never finished reopens
//! ([`reopened_review`]). Compaction, the other context strategy, works through the same
//! context ([`compaction`]). The engine's side is in [`engine_side`].

mod after_cut;
mod background;
mod background_freeze;
mod background_writing;
mod blocking;
mod boundary;
mod compaction;
mod context;
mod degraded;
mod engine_side;
mod freeze;
mod phases;
mod pressure;
mod read_back;
mod reopened_review;
mod tasks;
mod touched_section;
mod turnover;
mod vetting;
mod writing;

pub(super) use blocking::manual;
pub(super) use boundary::settle_before_exit;
pub(super) use phases::Handoffs;
pub(super) use pressure::{Flow, before_request, on_overflow};
pub(super) use touched_section::CallCounts;
pub(super) use turnover::turn_over_plan;
