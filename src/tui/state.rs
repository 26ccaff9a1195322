//! The app's model (Elm style): everything the view draws and the reducer changes, in parts that
//! each own their behaviour (the chat, the input box, the turns, what runs, the status line, the
//! questions, the pickers, the side editor's pane, the handoffs, …). No I/O here. `AppState`
//! holds the parts and the little that ties them together (where the focus is, the spinner line
//! they make between them); the reducer calls methods on the parts.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::engine::context::Thresholds;

use super::activity::{Activity, SpinnerLine};
use super::chat::Chat;
use super::editor_pane::EditorPane;
use super::handoff_state::Handoffs;
use super::input_box::InputBox;
use super::jobs_view::JobsView;
use super::mcp_servers::McpServers;
use super::memory_view::MemoryView;
use super::mention::Mentions;
use super::model_picker::ModelPicker;
use super::plan_state::PlanView;
use super::questions::Questions;
use super::quit_arm::QuitArm;
use super::render::editor_view::TextAreaStyles;
use super::render::theme::Theme;
use super::rewind_state::Rewind;
use super::session_info::SessionInfo;
use super::session_picker::SessionPicker;
use super::status_line::{Labels, StatusLine};
use super::turns::Turns;
use super::{TuiParams, history_file};

/// A turn that took at least this long rings the bell (or notifies) when it ends.
pub(crate) const NOTIFY_AFTER: Duration = Duration::from_secs(10);

/// A list over the chat, picked from with Up, Down, Enter and Esc, while open.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Picker {
    /// `/resume`, `--resume`: this workspace's sessions.
    Sessions(SessionPicker),
    /// `/model`: the models.
    Models(ModelPicker),
}

/// Where keys go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Focus {
    /// The input box.
    Input,
    /// The side editor.
    Editor,
}

/// Settings of the run (all fixed but the mouse capture, which a key toggles).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Settings {
    /// The review window; `None` = `--review off`.
    pub(crate) review: Option<Duration>,
    /// `$EDITOR`, if set.
    pub(crate) editor_cmd: Option<String>,
    /// Whether a long turn's end, or an approval waiting, rings the bell (or notifies).
    pub(crate) notify: bool,
    /// This workspace's input history file, when history persists.
    pub(crate) history_file: Option<PathBuf>,
    /// The custom commands (`/help`, the popup) and the skills (`/skills`).
    pub(crate) extensions: crate::engine::session::Extensions,
    /// `/config`: the settings the run started with, one `name: value` a line.
    pub(crate) config_report: String,
    /// The app captures the mouse (config `mouse_capture` at start, Alt-M toggles it; off by
    /// default: the terminal selects).
    pub(crate) mouse_capture: bool,
}

/// The whole UI state: its parts.
pub(crate) struct AppState {
    /// Where keys go.
    pub(crate) focus: Focus,
    /// The chat: its cells, the reply streaming, the selected and running tool cells.
    pub(crate) chat: Chat,
    /// The input box: its text, chips, history, search, slash popup and queued messages.
    pub(crate) input: InputBox,
    /// `@path` being typed: the completion popup and the file queries behind it.
    pub(crate) mention: Mentions,
    /// The turns sent, the one the engine works on, and whether the engine is still there.
    pub(crate) turns: Turns,
    /// What the engine is doing, and what the spinner says about it.
    pub(crate) activity: Activity,
    /// The status line's figures: the context gauge and the labels.
    pub(crate) status: StatusLine,
    /// The questions waiting for the user's answer, and the "always" grants.
    pub(crate) questions: Questions,
    /// `/resume`, `--resume`: the picker of this workspace's sessions, while it is open.
    pub(crate) picker: Option<Picker>,
    /// `/rewind`: its picker while open, and the last Esc on an idle empty input.
    pub(crate) rewind: Rewind,
    /// The side editor's pane: the editor, the review it holds, the latest handoff document.
    pub(crate) editor: EditorPane,
    /// The handoffs: the one in progress, the one beside the main thread, the near notice.
    pub(crate) handoff: Handoffs,
    /// The working mode and the plan under review.
    pub(crate) plan: PlanView,
    /// The step's pins, plan and standing focus, as the engine last said.
    pub(crate) memory: MemoryView,
    /// The MCP servers as their last status events described them.
    pub(crate) mcp: McpServers,
    /// The background jobs as the engine last listed them.
    pub(crate) jobs: JobsView,
    /// The run, the session the engine talks in now, and its generation.
    pub(crate) session: SessionInfo,
    /// The first Ctrl-C of a possible double press.
    pub(crate) quit: QuitArm,
    /// Run settings.
    pub(crate) settings: Settings,
    /// How the textareas look (from the theme); applied when the focus moves.
    pub(crate) styles: TextAreaStyles,
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

impl AppState {
    /// A fresh state: empty chat (plus the banner), idle, focus in the input.
    pub(crate) fn new(p: StateParams) -> Self {
        let mut state = AppState {
            focus: Focus::Input,
            chat: Chat::new(p.banner),
            input: InputBox::new(p.history),
            mention: Mentions::default(),
            turns: Turns::default(),
            activity: Activity::default(),
            status: StatusLine::new(p.thresholds, p.labels),
            questions: Questions::default(),
            picker: None,
            rewind: Rewind::default(),
            editor: EditorPane::default(),
            handoff: Handoffs::default(),
            plan: PlanView::default(),
            memory: MemoryView::default(),
            mcp: McpServers::default(),
            jobs: JobsView::default(),
            session: SessionInfo::new(p.run_id),
            quit: QuitArm::default(),
            settings: p.settings,
            styles: p.styles,
        };
        state.sync_styles();
        state
    }

    /// Styles the textareas for where the focus is: the focused one shows its cursor. The input
    /// is cheap to style and is restyled every time (it is replaced after each send); the side
    /// editor only when its focus or its buffer changed (its heading pattern is compiled then).
    pub(crate) fn sync_styles(&mut self) {
        self.input.style(&self.styles, self.focus == Focus::Input);
        self.editor.style(&self.styles, self.focus == Focus::Editor);
    }

    /// True while the user is typing into the input: it holds text, or a key went there lately.
    pub(crate) fn typing(&self, now: Instant) -> bool {
        self.focus == Focus::Input && self.input.typing(now)
    }

    /// The spinner line, if one shows: `(label, since, hint)`.
    pub(crate) fn spinner(&self) -> Option<SpinnerLine> {
        let asking = self.questions.front().map(|p| p.name.as_str());
        self.activity.spinner(asking, self.handoff.background())
    }

    /// The gauge shows a handoff being written, in the main thread or beside it.
    pub(crate) fn sync_gauge_mode(&mut self) {
        let background = self.handoff.writing_in_background().is_some();
        self.status
            .set_writing(self.activity.writing_handoff() || background);
    }
}

/// Build the state from the params (theme problems become a chat line, not a failure).
pub(super) fn initial_state(params: &TuiParams) -> (AppState, Theme) {
    let (theme, theme_error) = match Theme::load(&params.theme, params.no_color) {
        Ok(t) => (t, None),
        Err(e) => (
            Theme::load("dark", params.no_color).unwrap_or_else(|_| Theme::plain()),
            Some(format!("{e}; using the built-in dark theme")),
        ),
    };
    let mut state = AppState::new(StateParams {
        labels: Labels {
            model: params.model.clone(),
            provider: params.provider.clone(),
            demo: params.demo,
            window_source: params.window_source,
            effort: params.effort,
        },
        settings: Settings {
            review: params.review.map(std::time::Duration::from_secs),
            editor_cmd: params.editor_cmd.clone().filter(|c| !c.trim().is_empty()),
            notify: params.notify != crate::config::Notify::Off,
            history_file: params.history_file.clone(),
            extensions: params.extensions.clone(),
            config_report: params.config_report.clone(),
            mouse_capture: params.mouse_capture,
        },
        thresholds: params.thresholds,
        banner: params.banner.clone(),
        styles: TextAreaStyles::from_theme(&theme),
        history: params
            .history_file
            .as_deref()
            .map(history_file::load)
            .unwrap_or_default(),
        run_id: Some(params.run_id.clone()),
    });
    if let Some(message) = theme_error {
        state.chat.error(message);
    }
    (state, theme)
}

#[cfg(test)]
mod tests {
    /// The most fields `AppState` may hold: new behaviour goes into a part (or a new one), not
    /// into more fields at the top.
    const MOST_FIELDS: usize = 20;

    /// The fields of `struct name` in Rust source `src`: its lines at one indent that declare
    /// a field (`name: Type,`), doc comments and attributes aside.
    fn fields_of(src: &str, name: &str) -> Vec<String> {
        let head = format!("pub(crate) struct {name} {{");
        let Some(start) = src.find(&head) else {
            return Vec::new();
        };
        src[start + head.len()..]
            .lines()
            .take_while(|l| *l != "}")
            .filter(|l| l.starts_with("    ") && !l.starts_with("     "))
            .map(str::trim)
            .filter(|l| !l.starts_with("//") && !l.starts_with("#["))
            .filter_map(|l| {
                let decl = l.strip_prefix("pub(crate) ").unwrap_or(l);
                let (field, _) = decl.split_once(':')?;
                field
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
                    .then(|| field.to_string())
            })
            .collect()
    }

    #[test]
    fn app_state_stays_a_handful_of_parts() {
        let src = include_str!("state.rs");
        let fields = fields_of(src, "AppState");
        assert!(
            fields.len() >= 10,
            "the count must see the struct: {fields:?}"
        );
        assert!(
            fields.len() <= MOST_FIELDS,
            "AppState has {} fields (at most {MOST_FIELDS}): put new state into the part it \
             belongs to: {fields:?}",
            fields.len()
        );
    }

    #[test]
    fn the_field_count_reads_declarations_only() {
        let src = "pub(crate) struct S {\n    /// a: not a field\n    pub(crate) a: u8,\n    \
                   #[allow(dead_code)]\n    b: Option<(u8,\n        u8)>,\n    c: Vec<u8>,\n}\n\
                   pub(crate) struct T {\n    d: u8,\n}\n";
        assert_eq!(fields_of(src, "S"), ["a", "b", "c"]);
        assert_eq!(fields_of(src, "T"), ["d"]);
        assert!(fields_of(src, "U").is_empty());
    }
}
