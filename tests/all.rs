//! The one integration-test binary (SPEC: one link on two cores): support code and the suite.

mod suite;
mod support;
