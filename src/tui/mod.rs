//! The full-screen terminal front end (SPEC §11).

pub mod render;
