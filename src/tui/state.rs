//! The app's model (Elm style): everything the view draws and the reducer changes. No I/O here.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use ratatui_textarea::TextArea;

use crate::engine::context::Thresholds;
use crate::engine::protocol::{HandoffId, TurnId};

use super::editor::SideEditor;
use super::input::{History, Pastes};
use super::keymap::{Action, label_for, short_label_for};
use super::render::cell::{AssistantState, Cell};
use super::render::chat::Transcript;
use super::render::editor_view::{TextAreaStyles, style_editor, style_input};
use super::render::gauge::{GaugeMode, GaugeModel};
use super::step_memory::MemoryView;

/// A second Ctrl-C within this long quits.
pub const QUIT_WINDOW: Duration = Duration::from_secs(1);
/// An approval prompt ignores its keys this long after it appears: keys typed for something else
/// (a message being sent, a double `y`) must not answer it.
pub const APPROVAL_GUARD: Duration = Duration::from_millis(400);

/// Where keys go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// The input box.
    Input,
    /// The side editor.
    Editor,
    /// An approval prompt is waiting; it takes every key until answered.
    Approval,
}

/// What the engine is doing, as far as the UI knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Running {
    /// Nothing runs.
    Idle,
    /// A request is in flight or streaming.
    Streaming {
        /// When it started.
        since: Instant,
    },
    /// A tool runs.
    Tool {
        /// The tool.
        name: String,
        /// When it started.
        since: Instant,
    },
    /// The handoff's writing turn runs (Esc cancels it).
    WritingHandoff {
        /// When the writing turn started.
        since: Instant,
    },
}

/// A handoff written beside the main thread (SPEC §6.16), as far as the UI knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackgroundHandoff {
    /// The engine's id for it (`Op::CancelHandoff` names it).
    pub handoff: HandoffId,
    /// When its current stage began.
    pub since: Instant,
    pub stage: BackgroundStage,
    /// Since when the main thread waits for it: its context reached the window minus the
    /// writing reserve.
    pub main_waits: Option<Instant>,
}

/// Where a background handoff stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackgroundStage {
    /// The writing request runs.
    Writing,
    /// It runs again, on a reduced history, after the first one failed.
    Rescuing,
    /// The document is frozen; its review decides when the successor starts.
    Review,
}

impl BackgroundHandoff {
    /// Its document is still being written (Esc / Ctrl-G cancels that).
    pub fn writing(&self) -> bool {
        matches!(
            self.stage,
            BackgroundStage::Writing | BackgroundStage::Rescuing
        )
    }
}

/// How a handoff in progress was started: decides the notice when it completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandoffKind {
    /// `/handoff`.
    Manual,
    /// The context reached the handoff line.
    Automatic,
}

/// A tool call waiting for the user's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingApproval {
    /// The tool call id the answer goes to.
    pub id: String,
    /// The tool.
    pub name: String,
    /// What it would do.
    pub summary: String,
    /// The index of its chat cell, to record the answer there.
    pub cell: usize,
}

/// Whether the slash popup may show for the current input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Popup {
    /// Shown while the input is a command word being typed; `selected` indexes the matches.
    Auto {
        /// The highlighted match.
        selected: usize,
    },
    /// Esc closed it; it comes back when the input changes.
    Dismissed,
}

/// Whether the engine's event channel is still open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineLink {
    /// Events arrive.
    Connected,
    /// The engine is gone.
    Closed,
}

/// Cost and turns of one session (a generation of the step).
#[derive(Debug, Clone, PartialEq)]
pub struct GenerationCost {
    /// The session.
    pub session_id: String,
    /// Its generation in the step.
    pub generation: u32,
    /// Cumulative for the session, as the engine reports it.
    pub cost_usd: f64,
    /// Turns ended in it.
    pub turns: u32,
    /// Model responses in it (estimates not counted).
    pub requests: u32,
}

/// Labels for the status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Labels {
    /// The model name.
    pub model: String,
    /// The provider label.
    pub provider: String,
    /// The built-in demo model runs.
    pub demo: bool,
    /// Where the context window came from (`-v` says the same), for `/window`.
    pub window_source: String,
}

/// Settings fixed for the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The review window; `None` = `--review off`.
    pub review: Option<Duration>,
    /// `$EDITOR`, if set.
    pub editor_cmd: Option<String>,
}

/// The whole UI state.
pub struct AppState {
    /// The transcript.
    pub chat: Transcript,
    /// The input box.
    pub input: TextArea<'static>,
    /// Where keys go.
    pub focus: Focus,
    /// Where focus returns after an approval.
    pub focus_before_approval: Focus,
    /// When the approval prompt now shown appeared (its keys are ignored for a moment after).
    pub approval_shown_at: Option<Instant>,
    /// What the engine is doing.
    pub running: Running,
    /// The context gauge.
    pub gauge: GaugeModel,
    /// The thresholds of the window in force.
    pub thresholds: Thresholds,
    /// Status-line labels.
    pub labels: Labels,
    /// Run settings.
    pub settings: Settings,
    /// Tool calls waiting for an answer, oldest first.
    pub approvals: VecDeque<PendingApproval>,
    /// The side editor, when open.
    pub editor: Option<SideEditor>,
    /// Sent messages, for Up/Down.
    pub history: History,
    /// Big pastes held as chips.
    pub pastes: Pastes,
    /// The slash popup.
    pub popup: Popup,
    /// The first Ctrl-C of a possible double press.
    pub ctrl_c_at: Option<Instant>,
    /// The side editor's unsaved text a quit was warned about: the next quit with the same text
    /// discards it.
    pub quit_warned: Option<String>,
    /// Whether the engine still talks to us.
    pub link: EngineLink,
    /// The current generation.
    pub generation: u32,
    /// The generation whose near-handoff notice was shown.
    pub near_noticed: Option<u32>,
    /// The handoff in progress, if any.
    pub handoff: Option<HandoffKind>,
    /// The handoff running beside the main thread, if any.
    pub background: Option<BackgroundHandoff>,
    /// Notices held while a reply streams (a background handoff's news must not cut the reply's
    /// cell in two); shown when it is done.
    pub deferred: Vec<String>,
    /// The latest handoff document on disk (for `/edit-handoff` and Ctrl-E).
    pub latest_handoff: Option<PathBuf>,
    /// Text deltas arrived since the last `AssistantDone`.
    pub streamed: bool,
    /// Since when the provider has sent nothing, once that passed 15 s (the spinner says so).
    pub silent_since: Option<Instant>,
    /// Cost and turns per session.
    pub tally: Vec<GenerationCost>,
    /// How the textareas look (from the theme); applied when the focus moves.
    pub styles: TextAreaStyles,
    /// The last turn id this front end gave out.
    pub last_turn: TurnId,
    /// The turn the engine works on (`TurnStarted` until its `TurnEnd`).
    pub engine_turn: Option<TurnId>,
    /// The handoff whose document the review window holds.
    pub review_handoff: Option<HandoffId>,
    /// A reopened review's unsaved edits, offered once its document is in the editor.
    pub unsaved_offer: Option<(HandoffId, PathBuf)>,
    /// The step's pins, plan and standing focus, as the engine last said.
    pub memory: MemoryView,
    /// The MCP servers as their last status events described them, in the order they came.
    pub mcp_servers: Vec<crate::engine::mcp::ServerStatus>,
}

/// What the state is built from.
#[derive(Debug, Clone)]
pub struct StateParams {
    /// Status-line labels.
    pub labels: Labels,
    /// Run settings.
    pub settings: Settings,
    /// The thresholds the gauge starts with.
    pub thresholds: Thresholds,
    /// A first chat line (the demo banner).
    pub banner: Option<String>,
    /// How the textareas look.
    pub styles: TextAreaStyles,
}

/// The input box, empty, with the placeholder.
pub fn new_input() -> TextArea<'static> {
    let mut t = TextArea::default();
    t.set_placeholder_text(format!(
        "Ask anything · / for commands · {} for a newline",
        label_for(Action::Newline)
    ));
    t.set_cursor_line_style(ratatui::style::Style::default());
    t.set_wrap_mode(ratatui_textarea::WrapMode::WordOrGlyph);
    t
}

impl AppState {
    /// A fresh state: empty chat (plus the banner), idle, focus in the input.
    pub fn new(p: StateParams) -> Self {
        let mut chat = Transcript::new();
        if let Some(banner) = p.banner {
            chat.push(Cell::Notice { message: banner });
        }
        let t = p.thresholds;
        let mut state = AppState {
            chat,
            input: new_input(),
            focus: Focus::Input,
            focus_before_approval: Focus::Input,
            approval_shown_at: None,
            running: Running::Idle,
            gauge: GaugeModel {
                context: 0,
                window: t.window,
                at: t.at,
                warn_at: t.warn_at,
                estimated: false,
                mode: GaugeMode::Normal,
            },
            thresholds: t,
            labels: p.labels,
            settings: p.settings,
            approvals: VecDeque::new(),
            editor: None,
            history: History::default(),
            pastes: Pastes::default(),
            popup: Popup::Auto { selected: 0 },
            ctrl_c_at: None,
            quit_warned: None,
            link: EngineLink::Connected,
            generation: 1,
            near_noticed: None,
            handoff: None,
            background: None,
            deferred: Vec::new(),
            latest_handoff: None,
            streamed: false,
            silent_since: None,
            tally: Vec::new(),
            styles: p.styles,
            last_turn: TurnId(0),
            engine_turn: None,
            review_handoff: None,
            unsaved_offer: None,
            memory: MemoryView::default(),
            mcp_servers: Vec::new(),
        };
        state.sync_styles();
        state
    }

    /// Styles the textareas for where the focus is: the focused one shows its cursor. The input
    /// is cheap to style and is restyled every time (it is replaced after each send); the side
    /// editor only when its focus or its buffer changed (its heading pattern is compiled then).
    pub fn sync_styles(&mut self) {
        style_input(&mut self.input, &self.styles, self.focus == Focus::Input);
        let focused = self.focus == Focus::Editor;
        if let Some(ed) = self.editor.as_mut()
            && ed.styled_focus != Some(focused)
        {
            style_editor(&mut ed.area, &self.styles, focused);
            ed.styled_focus = Some(focused);
        }
    }

    /// The input box as one string (lines joined).
    pub fn input_text(&self) -> String {
        self.input.lines().join("\n")
    }

    /// A new turn id for an op that starts a turn.
    pub fn new_turn(&mut self) -> TurnId {
        self.last_turn = self.last_turn.next();
        self.last_turn
    }

    /// The turn Esc aborts: the one the engine works on, else the last one sent.
    pub fn abort_turn(&self) -> TurnId {
        self.engine_turn.unwrap_or(self.last_turn)
    }

    /// True while something runs that Esc can abort.
    pub fn is_running(&self) -> bool {
        !matches!(self.running, Running::Idle)
    }

    /// The background handoff's spinner line, while its document is written.
    pub fn background_spinner(&self) -> Option<(String, Instant, String)> {
        let bg = self.background.filter(BackgroundHandoff::writing)?;
        let label = match bg.stage {
            BackgroundStage::Rescuing => "rewriting the handoff from a reduced history…",
            _ => "writing the handoff in the background…",
        };
        let key = if self.is_running() {
            short_label_for(Action::CancelHandoff)
        } else {
            short_label_for(Action::Abort)
        };
        Some((label.into(), bg.since, format!("{key} to cancel it")))
    }

    /// A notice now, or after the reply that streams (so the reply stays one cell).
    pub fn notice_soon(&mut self, message: impl Into<String>) {
        if self.chat.last().is_some_and(Cell::is_streaming) {
            self.deferred.push(message.into());
        } else {
            self.notice(message);
        }
    }

    /// Show the notices held while a reply streamed.
    pub fn flush_deferred(&mut self) {
        for m in std::mem::take(&mut self.deferred) {
            self.notice(m);
        }
    }

    /// The spinner line, if one shows: `(label, since, hint)`.
    pub fn spinner(&self) -> Option<(String, Instant, String)> {
        if let (Some(p), Running::Tool { since, .. }) = (self.approvals.front(), &self.running) {
            return Some((
                format!("{} waits for your answer…", p.name),
                *since,
                String::new(),
            ));
        }
        let esc = short_label_for(Action::Abort);
        // A silence that began during what runs now (a stale one from an aborted try is ignored).
        let silent = |since: &Instant| self.silent_since.filter(|s| s >= since);
        match &self.running {
            Running::Idle => None,
            Running::Streaming { since } => {
                let hint = format!("{esc} to interrupt");
                if let Some(t) = self.background.and_then(|b| b.main_waits) {
                    return Some(("waiting for the handoff document…".into(), t, hint));
                }
                Some(match silent(since) {
                    Some(s) => ("waiting for the provider…".into(), s, hint),
                    None => ("working…".into(), *since, hint),
                })
            }
            Running::Tool { name, since } => Some((
                format!("running {name}…"),
                *since,
                format!("{esc} to interrupt"),
            )),
            Running::WritingHandoff { since } => {
                let hint = format!("{esc} to cancel");
                Some(match silent(since) {
                    Some(s) => ("writing handoff… waiting for the provider…".into(), s, hint),
                    None => ("writing handoff…".into(), *since, hint),
                })
            }
        }
    }

    /// Set the thresholds for a (possibly new) window and keep the gauge in step.
    pub fn set_thresholds(&mut self, t: Thresholds) {
        self.thresholds = t;
        self.gauge.window = t.window;
        self.gauge.at = t.at;
        self.gauge.warn_at = t.warn_at;
    }

    /// The gauge mode follows the running state.
    pub fn sync_gauge_mode(&mut self) {
        let background = self.background.is_some_and(|b| b.writing());
        self.gauge.mode = match self.running {
            Running::WritingHandoff { .. } => GaugeMode::Writing,
            _ if background => GaugeMode::Writing,
            _ => GaugeMode::Normal,
        };
    }

    /// The streaming assistant cell (if it is the last cell) stops streaming.
    pub fn finish_streaming(&mut self) {
        if self.chat.last().is_some_and(Cell::is_streaming)
            && let Some(Cell::Assistant { state, .. }) = self.chat.last_mut()
        {
            *state = AssistantState::Done;
        }
    }

    /// Push a cell after closing the streaming one.
    pub fn push_cell(&mut self, cell: Cell) {
        self.finish_streaming();
        self.chat.push(cell);
    }

    /// A notice line in the chat.
    pub fn notice(&mut self, message: impl Into<String>) {
        self.push_cell(Cell::Notice {
            message: message.into(),
        });
    }

    /// An error line in the chat.
    pub fn error(&mut self, message: impl Into<String>) {
        self.push_cell(Cell::Error {
            message: message.into(),
        });
    }

    /// The tally entry of the current session, if a session started.
    pub fn current_cost_mut(&mut self) -> Option<&mut GenerationCost> {
        self.tally.last_mut()
    }
}
