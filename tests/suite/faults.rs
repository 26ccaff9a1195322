//! Issue 9's faults on the real binary: configuration edge cases, secrets, children that die with
//! the agent, `--continue` over damaged runs, oversized input, run directories with several steps.

mod config;
