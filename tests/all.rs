//! The one integration-test binary: engine, handoff, CLI and end-to-end suites.

// Test code: a failed unwrap, expect or index is a failed assertion, which is what a test should do.
// The deny lints of Cargo.toml (`[lints.clippy]`) are for the product's code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod suite;
mod support;
