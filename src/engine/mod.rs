//! The agent engine: everything flower-tui does without a terminal. Nothing below this module
//! imports ratatui, crossterm or the textarea crate, nor anything of the crate outside
//! `src/engine`; headless mode and the TUI drive it through the queue pair in [`protocol`].
//!
//! The engine is built in layers, listed bottom-up in [`LAYERS`]: a module imports only modules
//! of its own layer or of the layers below it, and the top-level modules import each other in no
//! circle. `tests/suite/layers.rs` reads the engine's source and fails on an import that goes up,
//! naming the file and the module it imports, and on a top-level module missing from the table.

pub(crate) mod approvals;
pub mod checkpoint;
pub mod commands;
pub(crate) mod compact;
pub mod context;
pub mod demo;
pub mod diff;
pub(crate) mod error;
pub mod files;
pub mod frontmatter;
pub mod fsutil;
pub mod handoff;
pub mod hooks;
pub mod images;
pub mod instructions;
pub(crate) mod jobs;
pub(crate) mod learned_windows;
pub mod ledger;
pub mod lsp;
pub mod mask;
pub mod mcp;
pub(crate) mod mentions;
pub(crate) mod permissions;
pub mod policy;
pub mod pricing;
pub(crate) mod prompt_style;
pub mod protocol;
pub mod provider;
pub(crate) mod replace;
pub mod secrets;
pub mod session;
pub mod skills;
pub mod step_memory;
pub mod subagent;
pub(crate) mod sysprompt;
pub(crate) mod text;
pub(crate) mod text_files;
pub(crate) mod tokens;
pub mod tools;
pub mod types;

/// The engine's top-level modules in layers, bottom-up. A module may import modules of its own
/// layer (without a circle) and of every layer below; never one above. A new top-level module
/// goes into the lowest layer its imports allow.
///
/// 0. Leaf helpers: the conversation types and the images they show (scaled and stored), files
///    and atomic writes, key masking, text and diff helpers, prices, the workspace's file walk
///    and instruction files, the system prompt, the replace generation, the step memory (pins,
///    plan, focus), the windows learned from overflow messages and front matter, the full or
///    lean prompt, the calibrated token estimates and where the file tools read and write text
///    (the disk, or a front end's own access).
/// 1. Providers: the `Provider` trait, Anthropic, OpenAI-compatible, SSE, retries, overflow
///    messages and the known-window table.
/// 2. Context accounting and thresholds, the context-strategy trait and when each strategy is
///    due; the policies the engine is started with.
/// 3. Compaction (the summary that replaces history in place) and the one engine error enum.
/// 4. The ledger: manifest, transcripts, run directories and the list of runs, one concept;
///    the workspace's checkpoints (whose undo stack the ledger keeps in the step's record).
/// 5. The model's tools (their names are `tools::names`), background jobs, the approval rules
///    over their calls, the settings files' permission rules, the offline demo model (which calls
///    them), MCP servers, language servers, `@` mentions, hooks, custom commands and skills.
/// 6. The handoff: its document, prompts, the check that it does not restate them, store, locks,
///    briefing and the reduced history.
/// 7. Subagents: child sessions, reporting on a channel of their own.
/// 8. The protocol: `Op` and `Event`, the queue pair to the front ends.
/// 9. The session: the turn loop, the only module that builds an `Event`.
pub const LAYERS: &[&[&str]] = &[
    &[
        "types",
        "fsutil",
        "secrets",
        "text",
        "diff",
        "pricing",
        "files",
        "instructions",
        "sysprompt",
        "replace",
        "step_memory",
        "learned_windows",
        "frontmatter",
        "prompt_style",
        "tokens",
        "text_files",
        "images",
    ],
    &["provider"],
    &["context", "policy", "mask"],
    &["compact", "error"],
    &["ledger", "checkpoint"],
    &[
        "tools",
        "jobs",
        "approvals",
        "permissions",
        "demo",
        "mcp",
        "lsp",
        "mentions",
        "hooks",
        "commands",
        "skills",
    ],
    &["handoff"],
    &["subagent"],
    &["protocol"],
    &["session"],
];
