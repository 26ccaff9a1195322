//! Selectors: what the state implies, computed on demand (the live key contexts, the slash popup's
//! rows, when the next frame is due). The reducer and the view both read them; they change nothing.

use std::time::{Duration, Instant};

use super::editor_review::Prompt;
use super::keymap::Context;
use super::render::spinner;
use super::slash;
use super::state::{AppState, Focus};

impl AppState {
    /// The key contexts live right now, most specific first.
    pub(crate) fn contexts(&self, now: Instant) -> Vec<Context> {
        if self.picker.is_some() || self.rewind.is_open() {
            return vec![Context::Picker, Context::Global];
        }
        if self.jobs.is_open() {
            return vec![Context::Jobs, Context::Global];
        }
        if self.input.search().is_some() && self.focus == Focus::Input {
            return vec![Context::Search, Context::Global];
        }
        if self.approval_takes_keys(now) {
            return vec![Context::Approval, Context::Input, Context::Global];
        }
        match self.focus {
            Focus::Editor => match self.editor.prompt() {
                Some(Prompt::Conflict { .. }) => {
                    vec![Context::Conflict, Context::Editor, Context::Global]
                }
                Some(Prompt::Restore { .. }) => {
                    vec![Context::Restore, Context::Editor, Context::Global]
                }
                Some(Prompt::Unsaved) => {
                    vec![Context::Unsaved, Context::Editor, Context::Global]
                }
                Some(Prompt::Plan) => vec![Context::Plan, Context::Editor, Context::Global],
                _ => vec![Context::Editor, Context::Global],
            },
            Focus::Input if self.mention.visible(true).is_some() => {
                vec![Context::Mention, Context::Input, Context::Global]
            }
            Focus::Input if !self.popup_items().is_empty() => {
                vec![Context::Popup, Context::Input, Context::Global]
            }
            Focus::Input => vec![Context::Input, Context::Global],
        }
    }

    /// When the waiting approval prompt may take keys: 400 ms after it appeared and after the
    /// user's own input last changed (`None` when no prompt waits).
    pub(crate) fn approval_ready_at(&self) -> Option<Instant> {
        self.questions.ready_at(self.input.edited_at())
    }

    /// True when the waiting approval prompt answers keys: the input has the focus and is empty
    /// (typed-ahead text stays there and never answers it), and the guard time has passed.
    pub(crate) fn approval_takes_keys(&self, now: Instant) -> bool {
        self.focus == Focus::Input
            && self.input.is_empty()
            && self.input.search().is_none()
            && self.approval_ready_at().is_some_and(|t| now >= t)
    }

    /// The slash commands the popup shows (empty when it is hidden).
    pub(crate) fn popup_items(&self) -> Vec<slash::PopupItem> {
        self.input.popup_items(
            self.focus == Focus::Input,
            &self.settings.extensions.commands,
        )
    }

    /// The popup's selected row, clamped to the matches.
    pub(crate) fn popup_selected(&self) -> usize {
        self.input.popup_selected(self.popup_items().len())
    }

    /// True while a second Ctrl-C would quit.
    pub(crate) fn quit_armed(&self, now: Instant) -> bool {
        self.quit.armed(now)
    }

    /// When the next frame is needed with nothing else happening: the spinner's next frame, the
    /// countdown's next second, the end of the Ctrl-C window. `None` = idle, no redraw.
    pub(crate) fn next_frame_in(&self, now: Instant) -> Option<Duration> {
        let spinner = self
            .spinner()
            .map(|(_, since, _)| spinner::next_frame_in(now.saturating_duration_since(since)));
        let background = self
            .handoff
            .spinner()
            .map(|(_, since, _)| spinner::next_frame_in(now.saturating_duration_since(since)));
        let countdown = self.editor.next_change(now);
        let quit = self.quit.ends_in(now);
        // The prompt's keys line changes when its guard ends.
        let approval = self
            .approval_ready_at()
            .filter(|t| *t > now)
            .map(|t| t.saturating_duration_since(now));
        let jobs = self.jobs.next_refresh_in(now);
        [spinner, background, countdown, quit, approval, jobs]
            .into_iter()
            .flatten()
            .min()
    }
}
