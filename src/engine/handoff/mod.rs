//! The handoff document, its writing prompt and its store on disk (SPEC §6).

pub mod document;
pub mod prompt;
pub mod store;
