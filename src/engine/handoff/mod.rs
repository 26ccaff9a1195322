//! The handoff document, its writing prompt and its store on disk (SPEC §6).

pub mod document;
pub mod prompt;
pub mod store;
mod syntax;

pub use document::{DEGRADED_MARKER, DegradedParams, HandoffDoc, HandoffMeta};
pub use prompt::{handoff_prompt, successor_task_note};
pub use store::{ReadBack, freeze, live_path, read_back, safe_step_name};
