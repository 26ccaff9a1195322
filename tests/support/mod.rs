//! Shared test support: the fake model server and its reply builders.
// Each test module uses a different part of the support code.
#![allow(dead_code)]

pub mod fake;
