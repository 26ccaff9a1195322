//! Drawing: chat cells and markdown, the context gauge, the spinner, the status line, the side
//! editor's look, and themes. Every function here draws into a `Buffer` area of any size (0×0
//! included) without panicking and without touching the terminal.

pub(crate) mod agent_cell;
pub(crate) mod cell;
pub(crate) mod chat;
pub(crate) mod diagnostics_cell;
pub(crate) mod diff_view;
pub(crate) mod editor_view;
pub(crate) mod gauge;
pub mod highlight;
pub(crate) mod hook_cell;
pub(crate) mod live_output;
pub(crate) mod markdown;
pub(crate) mod mcp_cell;
pub(crate) mod plan_view;
pub(crate) mod prompt_view;
pub(crate) mod safe_cells;
pub(crate) mod spinner;
pub(crate) mod status;
pub(crate) mod stream;
pub(crate) mod stream_view;
mod table;
pub(crate) mod theme;
pub(crate) mod tool_cell;
pub(crate) mod transcript;
pub(crate) mod wrap;

pub use cell::{AssistantState, Cell};
pub use chat::{ChatView, render_chat};
pub use theme::Theme;
pub use tool_cell::ToolStatus;
pub use transcript::Transcript;
