//! flower-tui: a terminal coding agent whose context handoffs are visible, editable files.
//!
//! # Layers
//!
//! One crate, read bottom-up. At the bottom is [`engine`], which runs the agent without a
//! terminal; on top of it sit three front ends that drive it through the same queue pair:
//! [`headless`] (JSON lines on stdout), [`tui`] (the full-screen terminal UI, entered through
//! [`tui_main`]) and [`acp`] (the Agent Client Protocol, for editors). [`config`], [`launch`], [`logging`] and [`harden`] set a run up: the
//! configuration (flags beat env, env beats the file), the provider and run directory, the log
//! file, and the process hardening at start-up. [`start`] runs them in that order and picks
//! headless, the editors' protocol or the TUI; `main.rs` only calls it.
//!
//! The engine never imports the front ends, the terminal crates (ratatui, crossterm, the
//! textarea) or the rest of this crate. Inside it, the modules form layers; each imports only its
//! own layer and the layers below (the order is [`engine::LAYERS`], and a test in the integration
//! suite reads the engine's source and fails on an import that goes up):
//!
//! 0. leaf helpers — `types` (messages, blocks, usage), `fsutil`, `secrets` (key masking),
//!    `text`, `diff`, `pricing`, `approvals`, `files`, `instructions`, `sysprompt`, `replace`,
//!    `step_memory` (pins, plan, focus), `learned_windows`, `lean` (the full or lean
//!    prompt), `tokens` (calibrated token estimates), `text_files` (where the file tools read and
//!    write text: the disk, or a front end's own access);
//! 1. `provider/` — the `Provider` trait, Anthropic and OpenAI-compatible streams, SSE, retries,
//!    overflow messages, the known-window table; `demo`, the offline scripted model;
//! 2. `context` — accounting, thresholds and the context-strategy trait (when a handoff or a
//!    compaction is due); `policy`, what the engine is started with;
//! 3. `compact` (summarising in place) and `error` (the one engine error enum);
//! 4. `ledger/` — manifest, transcripts, run directories and the list of runs: one concept;
//! 5. `tools/`, `mcp/`, `mentions` — the model's tools, MCP servers, `@` attachments;
//! 6. `handoff/` — the document, its prompt, store, locks, briefing and the reduced history;
//! 7. `subagent/` — child sessions, which report on a channel of their own;
//! 8. `protocol` — `Op` and `Event`, the queue pair between the engine and a front end;
//! 9. `session/` — the turn loop, the only module that builds an `Event`.
//!
//! Above the engine, `headless.rs`, `acp/` and `tui/` use it; `tui/` follows the Elm shape: a pure
//! reducer (`update.rs` and the files it dispatches to) over `state.rs`, effects run by `app.rs`,
//! and a read-only view (`view.rs`, `render/`).
//!
//! # The path of one message
//!
//! What happens between Enter with a message in the input and the reply on screen, file by file:
//!
//! 1. `tui/app.rs` (`App::run`) is one `select!` loop; a terminal key becomes `Msg::Key` and goes
//!    to the pure reducer `tui/update.rs` (`update` → `on_key`), which looks the key up in the one
//!    key table `tui/keymap.rs`: Enter in the input is `Action::Send`.
//! 2. `tui/commands.rs` (`submit`) tells a message from a `/command` (`tui/slash.rs`) and hands it
//!    to `tui/queue.rs` (`send_or_queue` → `send_now`): the chat gets the user's cell at once, the
//!    state numbers the turn (`TurnId`), and the reducer returns `Effect::SendOp(Op::UserTurn)`.
//! 3. Back in `tui/app.rs` (`execute`), the effect is a `try_send` on the bounded op channel of
//!    `engine/protocol.rs` (the `Op`s are in `engine/protocol/op.rs`; the UI never waits on the
//!    engine).
//! 4. The engine is one task (`engine/session/mod.rs`, `spawn`) that owns the op receiver; its
//!    main loop (`engine/session/main_loop.rs`, `Engine::run`) masks the key of an
//!    `Op::UserTurn` and opens the turn in `engine/session/turn.rs`: `@` mentions are attached
//!    (`engine/mentions.rs`), `Event::TurnStarted` and `Event::UserMessage` go out, the message
//!    joins the session's history and its transcript (`engine/session/conversation.rs`,
//!    `engine/ledger/transcript.rs`), and `turn_loop` begins (`engine/session/turn_loop.rs`).
//! 5. Before each request `before_request` (`engine/session/handoff/pressure.rs`) asks the context
//!    strategies (`engine/context/strategy.rs`) whether a handoff or a compaction is due; then
//!    `engine/session/model_request.rs` (`stream`) sends the request through
//!    `engine/provider/retry.rs` (`stream_with_retry`) to the provider (`engine/provider/anthropic.rs` or `openai.rs`), which
//!    posts it (`engine/provider/http.rs`), decodes the server-sent events
//!    (`engine/provider/sse.rs`, `anthropic/stream.rs`) and calls the sink with each `Delta`.
//! 6. The sink in `engine/session/model_request.rs` turns text into `Event::TextDelta` on the
//!    unbounded event channel as it arrives. When the response is complete, `turn_loop.rs` appends
//!    it and sends `Event::Usage` (context, thresholds, cost; `gauge.rs`) and
//!    `Event::AssistantDone`; tool calls run in
//!    `engine/session/tools_exec.rs` (`ToolCall`, approval, `ToolResult`) and the loop asks
//!    again, until a reply without tools ends the turn with `Event::TurnEnd` (`end_turn`, in
//!    `engine/session/turn.rs`). Each of these events names the turn it belongs to.
//! 7. `tui/app.rs` receives the events (`Wake::Engine`, then `Msg::Engine`), and the reducer
//!    hands each to `tui/events.rs` (`on_event`), which routes a turn's events to
//!    `tui/turn_events.rs` (which drops the events of a turn other than the running one) and the
//!    gauge's to `tui/session_events.rs`: a text delta grows the streaming cell of the chat's
//!    transcript (`tui/render/chat.rs`, `tui/render/cell.rs`), usage moves the gauge, the turn's
//!    end settles the cell and sends the next queued message.
//! 8. When a frame is due (`tui/frame.rs`, at most 60 a second), `tui/view.rs` draws the state:
//!    `tui/render/chat.rs` lays out the visible cells, and the streaming reply is cut into
//!    committed Markdown (`tui/render/stream.rs`, rendered once by `tui/render/stream_view.rs` and
//!    `tui/render/markdown.rs`) and a live tail redrawn each frame.

pub(crate) mod acp;
pub(crate) mod config;
pub mod engine;
pub(crate) mod harden;
pub(crate) mod headless;
pub(crate) mod launch;
pub(crate) mod logging;
pub(crate) mod server_window;
pub mod start;
pub mod tui;
pub(crate) mod tui_main;
