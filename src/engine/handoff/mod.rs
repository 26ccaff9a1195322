//! The handoff document, its writing prompt and its store on disk.

pub mod briefing;
pub(crate) mod document;
pub mod lock;
pub(crate) mod prompt;
pub(crate) mod reduced_history;
pub mod reopen;
pub mod store;
mod syntax;

pub use briefing::Briefing;
pub use document::{CARRIED_MARKER, DEGRADED_MARKER, DegradedParams, HandoffDoc, HandoffMeta};
pub use lock::safe_step_name;
pub use prompt::{handoff_prompt, successor_task_note};
pub use store::{ReadBack, freeze, live_path, read_back};
