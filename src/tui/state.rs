//! The app's model (Elm style): everything the view draws and the reducer changes. No I/O here.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use ratatui_textarea::TextArea;

use crate::engine::context::{Thresholds, WindowSource};
use crate::engine::protocol::{
    AllowOffer, Allowance, Effort, FileDiff, HandoffId, SessionSummary, TurnId,
};

pub(crate) use super::handoff_state::{BackgroundHandoff, BackgroundStage, HandoffKind};

use super::editor::SideEditor;
use super::input::{History, Pastes};
use super::keymap::{Action, label_for, short_label_for};
use super::memory_view::MemoryView;
use super::render::cell::{AssistantState, Cell};
use super::render::editor_view::{TextAreaStyles, style_editor, style_input};
use super::render::gauge::{GaugeMode, GaugeModel};
use super::render::transcript::Transcript;
use super::rewind_state::Retry;

/// A second Ctrl-C within this long quits.
pub(crate) const QUIT_WINDOW: Duration = Duration::from_secs(1);
/// An approval prompt takes keys only this long after it appeared and after the user's own input
/// was last changed: keys typed for something else (a message, a double `y`) never answer it.
pub(crate) const APPROVAL_GUARD: Duration = Duration::from_millis(400);
/// A key typed into the input this recently means the user is typing: a handoff document opens
/// beside the chat without taking the focus.
pub(crate) const TYPING_RECENTLY: Duration = Duration::from_millis(1500);
/// A sent message longer than this stays out of the history file (a big paste).
pub(crate) const HISTORY_ENTRY_MAX: usize = 64 * 1024;
/// A turn that took at least this long rings the bell (or notifies) when it ends.
pub(crate) const NOTIFY_AFTER: Duration = Duration::from_secs(10);

/// Where keys go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Focus {
    /// The input box.
    Input,
    /// The side editor.
    Editor,
}

/// What the engine is doing, as far as the UI knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Running {
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

/// What a pending question asks about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Asked {
    /// A tool call; the answer goes to this call id.
    Tool { id: String },
    /// The workspace's `.mcp.json` (this version of it): may its servers start?
    McpJson { sha256: String },
    /// A workspace settings file (this version of it): may its hooks run?
    Hooks { sha256: String },
    /// Files an undo, redo or rewind would write over (changed since): overwrite them, skip
    /// them, or cancel.
    Overwrite { retry: Retry },
}

impl Asked {
    /// What tells this question from another: the call id, or the file's hash.
    pub(crate) fn key(&self) -> &str {
        match self {
            Asked::Tool { id } => id,
            Asked::McpJson { sha256 } | Asked::Hooks { sha256 } => sha256,
            Asked::Overwrite { .. } => "overwrite",
        }
    }
}

/// A question waiting for the user's answer: a tool call, or the workspace's `.mcp.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PendingApproval {
    /// What it asks about.
    pub(crate) asked: Asked,
    /// The tool.
    pub(crate) name: String,
    /// What it would do.
    pub(crate) summary: String,
    /// The index of its chat cell, to record the answer there.
    pub(crate) cell: usize,
    /// The call leaves the workspace ("always" does not cover it).
    pub(crate) outside_workspace: bool,
    /// `bash`: the whole command, exactly as it will run.
    pub(crate) command: Option<String>,
    /// `edit_file` / `write_file`: the change it would make.
    pub(crate) diff: Option<Box<FileDiff>>,
    /// What "always" would grant (None: not offered).
    pub(crate) always: Option<AllowOffer>,
    /// The sandbox stopped this command, for this reason: allowing runs it once outside it.
    pub(crate) unsandboxed: Option<String>,
}

/// Whether the slash popup may show for the current input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Popup {
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
pub(crate) enum EngineLink {
    /// Events arrive.
    Connected,
    /// The engine is gone.
    Closed,
}

/// Labels for the status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Labels {
    /// The model name.
    pub(crate) model: String,
    /// The provider label.
    pub(crate) provider: String,
    /// The built-in demo model runs.
    pub(crate) demo: bool,
    /// Where the context window came from (`-v` says the same), for `/window`.
    pub(crate) window_source: WindowSource,
    /// The reasoning effort in force (`--effort`, `/effort`).
    pub(crate) effort: Option<Effort>,
}

/// Settings fixed for the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Settings {
    /// The review window; `None` = `--review off`.
    pub(crate) review: Option<Duration>,
    /// `$EDITOR`, if set.
    pub(crate) editor_cmd: Option<String>,
    /// Whether a long turn's end rings the bell (or notifies).
    pub(crate) notify: bool,
    /// This workspace's input history file, when history persists.
    pub(crate) history_file: Option<PathBuf>,
    /// The custom commands (`/help`, the popup) and the skills (`/skills`).
    pub(crate) extensions: crate::engine::session::Extensions,
}

/// A message typed while a turn runs, waiting for the turn to end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Queued {
    /// The text as typed (chips as labels): what the chat and the queue show.
    pub(crate) raw: String,
    /// The pastes behind its chips.
    pub(crate) pastes: Pastes,
}

/// Ctrl-R: the query typed so far and the history entry it found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Search {
    /// What was typed since Ctrl-R.
    pub(crate) query: String,
    /// The history entry shown (an index into the history), if one matches.
    pub(crate) hit: Option<usize>,
}

/// The whole UI state.
pub(crate) struct AppState {
    /// The transcript.
    pub(crate) chat: Transcript,
    /// The input box.
    pub(crate) input: TextArea<'static>,
    /// Where keys go.
    pub(crate) focus: Focus,
    /// When the approval prompt now shown appeared (it takes keys only a moment after).
    pub(crate) approval_shown_at: Option<Instant>,
    /// When the user last changed the input box (typing, pasting, clearing, sending).
    pub(crate) input_edited_at: Option<Instant>,
    /// When the user last typed or pasted into the input (not cleared by sending): whether they
    /// are in the middle of writing something.
    pub(crate) typed_at: Option<Instant>,
    /// Messages typed while a turn runs, oldest first: sent one by one as turns end.
    pub(crate) queue: Vec<Queued>,
    /// Turns sent to the engine whose `TurnEnd` has not come yet.
    pub(crate) in_flight: Vec<TurnId>,
    /// The chat cell of the reply streaming now (deltas go there until `AssistantDone`).
    pub(crate) reply: Option<usize>,
    /// The tool cell picked with the selection keys or the mouse (Ctrl-T expands it).
    pub(crate) selected_tool: Option<usize>,
    /// Ctrl-R: the reverse search through the input history, while it runs.
    pub(crate) search: Option<Search>,
    /// When the turn the engine works on started (for the end-of-turn notification).
    pub(crate) turn_started_at: Option<Instant>,
    /// The tool call running now: its chat cell and when it started (its cell counts seconds).
    pub(crate) running_tool: Option<(usize, Instant)>,
    /// The "always" grants as the engine last listed them (`/permissions revoke N` names one).
    pub(crate) allowances: Vec<Allowance>,
    /// `/resume`, `--resume`: the picker of this workspace's sessions, while it is open.
    pub(crate) picker: Option<Picker>,
    /// `/rewind`: its picker while open, and the last Esc on an idle empty input.
    pub(crate) rewind: super::rewind_state::Rewind,
    /// The working mode and the plan under review.
    pub(crate) plan: super::plan_state::PlanView,
    /// The run this session belongs to (what `--resume RUN_ID` continues).
    pub(crate) run_id: Option<String>,
    /// `@path` being typed: the completion popup.
    pub(crate) mention: Option<Mention>,
    /// A tool changed files since the @ index last walked.
    pub(crate) files_stale: bool,
    /// Running calls the engine said may change files (their results make the index stale).
    pub(crate) changing_calls: Vec<String>,
    /// The last file query asked of the app (answers to older ones are dropped).
    pub(crate) file_query_seq: u64,
    /// What the engine is doing.
    pub(crate) running: Running,
    /// The context gauge.
    pub(crate) gauge: GaugeModel,
    /// The thresholds of the window in force.
    pub(crate) thresholds: Thresholds,
    /// Status-line labels.
    pub(crate) labels: Labels,
    /// Run settings.
    pub(crate) settings: Settings,
    /// Tool calls waiting for an answer, oldest first.
    pub(crate) approvals: VecDeque<PendingApproval>,
    /// The side editor, when open.
    pub(crate) editor: Option<SideEditor>,
    /// Sent messages, for Up/Down.
    pub(crate) history: History,
    /// Big pastes held as chips.
    pub(crate) pastes: Pastes,
    /// The slash popup.
    pub(crate) popup: Popup,
    /// The first Ctrl-C of a possible double press.
    pub(crate) ctrl_c_at: Option<Instant>,
    /// Whether the engine still talks to us.
    pub(crate) link: EngineLink,
    /// The current generation.
    pub(crate) generation: u32,
    /// The generation whose near-handoff notice was shown.
    pub(crate) near_noticed: Option<u32>,
    /// The handoff in progress, if any.
    pub(crate) handoff: Option<HandoffKind>,
    /// The handoff running beside the main thread, if any.
    pub(crate) background: Option<BackgroundHandoff>,
    /// Notices held while a reply streams (a background handoff's news must not cut the reply's
    /// cell in two); shown when it is done.
    pub(crate) deferred: Vec<String>,
    /// The latest handoff document on disk (for `/edit-handoff` and Ctrl-E).
    pub(crate) latest_handoff: Option<PathBuf>,
    /// Since when the provider has sent nothing, once that passed 15 s (the spinner says so).
    pub(crate) silent_since: Option<Instant>,
    /// The session the engine talks in now (for the line printed on quit).
    pub(crate) session_id: Option<String>,
    /// How the textareas look (from the theme); applied when the focus moves.
    pub(crate) styles: TextAreaStyles,
    /// The last turn id this front end gave out.
    pub(crate) last_turn: TurnId,
    /// The turn the engine works on (`TurnStarted` until its `TurnEnd`).
    pub(crate) engine_turn: Option<TurnId>,
    /// The handoff whose document the review window holds.
    pub(crate) review_handoff: Option<HandoffId>,
    /// A reopened review's unsaved edits, offered once its document is in the editor.
    pub(crate) unsaved_offer: Option<(HandoffId, PathBuf)>,
    /// The step's pins, plan and standing focus, as the engine last said.
    pub(crate) memory: MemoryView,
    /// The MCP servers as their last status events described them, in the order they came.
    pub(crate) mcp_servers: Vec<crate::engine::mcp::ServerStatus>,
    /// The MCP servers the next request waits for, and since when (the spinner says so).
    pub(crate) mcp_waiting: Option<(Vec<String>, Instant)>,
    /// The subagents running now (their `task` call ids) and when each started.
    pub(crate) agents: Vec<(String, Instant)>,
}

/// What the state is built from.
#[derive(Debug, Clone)]
pub(crate) struct StateParams {
    /// Status-line labels.
    pub(crate) labels: Labels,
    /// Run settings.
    pub(crate) settings: Settings,
    /// The thresholds the gauge starts with.
    pub(crate) thresholds: Thresholds,
    /// A first chat line (the demo banner).
    pub(crate) banner: Option<String>,
    /// How the textareas look.
    pub(crate) styles: TextAreaStyles,
    /// The input history of earlier runs in this workspace, oldest first.
    pub(crate) history: Vec<String>,
    /// The run this process records to.
    pub(crate) run_id: Option<String>,
}

/// The session picker: this workspace's runs, newest first.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Picker {
    /// The run open now (marked, not offered).
    pub(crate) current_run: String,
    /// The runs.
    pub(crate) sessions: Vec<SessionSummary>,
    /// The highlighted row.
    pub(crate) selected: usize,
}

/// `@path` completion: what is typed after the `@` and the files that match it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mention {
    /// Where the `@` is: the input's row and the character column.
    pub(crate) row: usize,
    /// The character column of the `@`.
    pub(crate) col: usize,
    /// What follows the `@` up to the cursor.
    pub(crate) query: String,
    /// Matching workspace paths, best first.
    pub(crate) items: Vec<String>,
    /// The highlighted row.
    pub(crate) selected: usize,
    /// The index was still being built when these matches came (ask again soon).
    pub(crate) partial: bool,
    /// Paths indexed so far.
    pub(crate) indexed: usize,
    /// The `@` was dismissed with Esc: no popup until the token changes.
    pub(crate) dismissed: bool,
}

/// The input box, empty, with the placeholder.
pub(crate) fn new_input() -> TextArea<'static> {
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
    pub(crate) fn new(p: StateParams) -> Self {
        let mut chat = Transcript::new();
        if let Some(banner) = p.banner {
            chat.push(Cell::Notice { message: banner });
        }
        let t = p.thresholds;
        let mut state = AppState {
            chat,
            input: new_input(),
            focus: Focus::Input,
            approval_shown_at: None,
            input_edited_at: None,
            typed_at: None,
            queue: Vec::new(),
            rewind: Default::default(),
            plan: Default::default(),
            in_flight: Vec::new(),
            reply: None,
            selected_tool: None,
            search: None,
            turn_started_at: None,
            running_tool: None,
            allowances: Vec::new(),
            picker: None,
            run_id: p.run_id,
            mention: None,
            files_stale: false,
            changing_calls: Vec::new(),
            file_query_seq: 0,
            running: Running::Idle,
            gauge: GaugeModel {
                context: 0,
                window: t.window,
                at: t.at,
                warn_at: t.warn_at,
                estimated: false,
                mode: GaugeMode::Normal,
                masked: 0,
            },
            thresholds: t,
            labels: p.labels,
            settings: p.settings,
            approvals: VecDeque::new(),
            editor: None,
            history: History::with_entries(p.history),
            pastes: Pastes::default(),
            popup: Popup::Auto { selected: 0 },
            ctrl_c_at: None,
            link: EngineLink::Connected,
            generation: 1,
            near_noticed: None,
            handoff: None,
            background: None,
            deferred: Vec::new(),
            latest_handoff: None,
            silent_since: None,
            session_id: None,
            styles: p.styles,
            last_turn: TurnId(0),
            engine_turn: None,
            review_handoff: None,
            unsaved_offer: None,
            memory: MemoryView::default(),
            mcp_servers: Vec::new(),
            mcp_waiting: None,
            agents: Vec::new(),
        };
        state.sync_styles();
        state
    }

    /// Styles the textareas for where the focus is: the focused one shows its cursor. The input
    /// is cheap to style and is restyled every time (it is replaced after each send); the side
    /// editor only when its focus or its buffer changed (its heading pattern is compiled then).
    pub(crate) fn sync_styles(&mut self) {
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
    pub(crate) fn input_text(&self) -> String {
        self.input.lines().join("\n")
    }

    /// A new turn id for an op that starts a turn.
    pub(crate) fn new_turn(&mut self) -> TurnId {
        self.last_turn = self.last_turn.next();
        self.last_turn
    }

    /// The turn Esc aborts: the one the engine works on, else the last one sent.
    pub(crate) fn abort_turn(&self) -> TurnId {
        self.engine_turn.unwrap_or(self.last_turn)
    }

    /// True while something runs that Esc can abort.
    pub(crate) fn is_running(&self) -> bool {
        !matches!(self.running, Running::Idle)
    }

    /// True while a turn this front end sent has not ended: a message typed now is queued.
    pub(crate) fn busy(&self) -> bool {
        !self.in_flight.is_empty()
    }

    /// True while the user is typing into the input: it holds text, or a key went there lately.
    pub(crate) fn typing(&self, now: Instant) -> bool {
        self.focus == Focus::Input
            && (!self.input.is_empty()
                || self
                    .typed_at
                    .is_some_and(|t| now.saturating_duration_since(t) < TYPING_RECENTLY))
    }

    /// The user changed the input box (its approval guard starts again).
    pub(crate) fn input_edited(&mut self, now: Instant) {
        self.input_edited_at = Some(now);
    }

    /// The background handoff's spinner line, while its document is written.
    pub(crate) fn background_spinner(&self) -> Option<(String, Instant, String)> {
        let bg = self.background.filter(BackgroundHandoff::writing)?;
        let label = match bg.stage {
            BackgroundStage::Rescuing => "rewriting the handoff from a reduced history…",
            _ => "writing the handoff in the background…",
        };
        // Esc cancels it before it interrupts the main turn.
        let key = short_label_for(Action::Abort);
        Some((label.into(), bg.since, format!("{key} to cancel it")))
    }

    /// A notice now, or after the reply that streams (so the reply stays one cell).
    pub(crate) fn notice_soon(&mut self, message: impl Into<String>) {
        if self.chat.last().is_some_and(Cell::is_streaming) {
            self.deferred.push(message.into());
        } else {
            self.notice(message);
        }
    }

    /// Show the notices held while a reply streamed.
    pub(crate) fn flush_deferred(&mut self) {
        for m in std::mem::take(&mut self.deferred) {
            self.notice(m);
        }
    }

    /// The spinner line, if one shows: `(label, since, hint)`.
    pub(crate) fn spinner(&self) -> Option<(String, Instant, String)> {
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
                if let Some(bg) = self.background
                    && let Some(t) = bg.main_waits
                {
                    let label = if bg.stage == BackgroundStage::Review {
                        "waiting for the handoff review to end…"
                    } else {
                        "waiting for the handoff document…"
                    };
                    return Some((label.into(), t, hint));
                }
                if let Some((servers, waiting)) = &self.mcp_waiting {
                    return Some((
                        format!("waiting for MCP servers: {}…", servers.join(", ")),
                        *waiting,
                        hint,
                    ));
                }
                Some(match silent(since) {
                    Some(s) => ("waiting for the provider…".into(), s, hint),
                    None => ("working…".into(), *since, hint),
                })
            }
            Running::Tool { since, .. } if !self.agents.is_empty() => Some((
                match self.agents.len() {
                    1 => "a subagent works…".to_string(),
                    n => format!("{n} subagents work…"),
                },
                *since,
                format!(
                    "{esc} to interrupt · {} shows their work",
                    short_label_for(Action::ToggleTool)
                ),
            )),
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
    pub(crate) fn set_thresholds(&mut self, t: Thresholds) {
        self.thresholds = t;
        self.gauge.window = t.window;
        self.gauge.at = t.at;
        self.gauge.warn_at = t.warn_at;
    }

    /// The gauge mode follows the running state.
    pub(crate) fn sync_gauge_mode(&mut self) {
        let background = self.background.is_some_and(|b| b.writing());
        self.gauge.mode = match self.running {
            Running::WritingHandoff { .. } => GaugeMode::Writing,
            _ if background => GaugeMode::Writing,
            _ => GaugeMode::Normal,
        };
    }

    /// The streaming assistant cell (if it is the last cell) stops streaming.
    pub(crate) fn finish_streaming(&mut self) {
        if self.chat.last().is_some_and(Cell::is_streaming)
            && let Some(Cell::Assistant { state, .. }) = self.chat.last_mut()
        {
            *state = AssistantState::Done;
        }
    }

    /// Push a cell after closing the streaming one.
    pub(crate) fn push_cell(&mut self, cell: Cell) {
        self.finish_streaming();
        self.chat.push(cell);
    }

    /// A notice line in the chat.
    pub(crate) fn notice(&mut self, message: impl Into<String>) {
        self.push_cell(Cell::Notice {
            message: message.into(),
        });
    }

    /// An error line in the chat.
    pub(crate) fn error(&mut self, message: impl Into<String>) {
        self.push_cell(Cell::Error {
            message: message.into(),
        });
    }
}
