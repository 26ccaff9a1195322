//! The one integration-test binary: engine, handoff, CLI and end-to-end suites.

mod suite;
mod support;
