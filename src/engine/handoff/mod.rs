//! The handoff document, its writing prompts, the check that it does not restate them, and its
//! store on disk.

pub mod briefing;
pub(crate) mod document;
pub(crate) mod echo;
pub(crate) mod prompt;
pub(crate) mod reduced_history;
pub(crate) mod reopen;
pub mod store;
mod syntax;
pub mod touched;
pub mod workbench_locks;

pub use document::{CARRIED_MARKER, HandoffDoc};

pub(crate) use briefing::Briefing;
pub(crate) use document::HandoffMeta;
pub(crate) use store::live_path;
