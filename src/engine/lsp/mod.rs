//! Language servers: the model sees what its edit broke. After a call that changed files, each
//! changed file of a language with a server is sent to it (`didOpen`, `didChange`, `didSave`)
//! and the problems the change introduced join the tool result; the `diagnostics` tool asks
//! again; the handoff's `Touched` section ends with the errors still open.
//!
//! - [`spec`]: which servers exist (found on `PATH`, or `[lsp.NAME]` in config.toml).
//! - `manager`: one server per language and root, started on the first file of its language;
//!   syncing files and waiting (bounded) for their diagnostics.
//! - `server`: one server's process and its life (restarts, at most a few), `rpc` and `framing`:
//!   JSON-RPC with `Content-Length` framing over its stdio.
//! - `report`: problems as lines, and what a change introduced and fixed.
//! - `tool`, `status`: the `diagnostics` tool, `/lsp` and `-v`.
//!
//! Servers run as the user, outside the command sandbox (as an editor's do), each in a process
//! group of its own that dies with flower-tui (`shutdown`/`exit` when it leaves, the kernel's
//! parent-death signal and the lifeline watcher when it is killed).

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

mod framing;
mod manager;
mod report;
mod rpc;
mod server;
pub mod spec;
mod status;
mod tool;
mod uri;

pub use manager::{CallWatch, DEFAULT_INIT_TIMEOUT, DEFAULT_WAIT, LspManager, LspParams};
pub use report::{ChangeReport, Finding, OpenProblems, Severity};
pub use spec::{LspConfigError, ServerSpec};
pub use status::describe;
pub use tool::spec as tool_spec;
