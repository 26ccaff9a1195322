//! Drawing: chat cells and markdown, the context gauge, the spinner, the status line, the side
//! editor's look, and themes. Every function here draws into a `Buffer` area of any size (0×0
//! included) without panicking and without touching the terminal.

pub mod cell;
pub mod chat;
pub mod editor_view;
pub mod gauge;
pub mod highlight;
pub mod markdown;
pub mod plan_view;
pub mod spinner;
pub mod status;
pub mod stream;
pub mod stream_view;
mod table;
pub mod theme;
pub mod wrap;

pub use cell::{AssistantState, Cell, ToolStatus};
pub use chat::{ChatScroll, ChatView, RenderStats, Transcript, render_chat};
pub use editor_view::{TextAreaStyles, editor_block, editor_title, style_editor, style_input};
pub use gauge::{GaugeMode, GaugeModel, Zone, gauge_label, render_gauge};
pub use spinner::{render_spinner, spinner_text};
pub use status::{StatusModel, render_status};
pub use theme::Theme;
