//! Selectors: what the state implies, computed on demand (the live key contexts, the slash popup's
//! rows, when the next frame is due). The reducer and the view both read them; they change nothing.

use std::time::{Duration, Instant};

use super::editor::Prompt;
use super::keymap::Context;
use super::render::spinner;
use super::slash;
use super::state::{AppState, Focus, Popup, QUIT_WINDOW};

impl AppState {
    /// The key contexts live right now, most specific first.
    pub fn contexts(&self) -> Vec<Context> {
        match self.focus {
            Focus::Approval => vec![Context::Approval, Context::Global],
            Focus::Editor => match self.editor.as_ref().map(|e| &e.prompt) {
                Some(Prompt::Conflict { .. }) => {
                    vec![Context::Conflict, Context::Editor, Context::Global]
                }
                Some(Prompt::Restore { .. }) => {
                    vec![Context::Restore, Context::Editor, Context::Global]
                }
                _ => vec![Context::Editor, Context::Global],
            },
            Focus::Input if !self.popup_items().is_empty() => {
                vec![Context::Popup, Context::Input, Context::Global]
            }
            Focus::Input => vec![Context::Input, Context::Global],
        }
    }

    /// The slash commands the popup shows (empty when it is hidden).
    pub fn popup_items(&self) -> Vec<&'static slash::CommandSpec> {
        if self.focus != Focus::Input || self.popup == Popup::Dismissed {
            return Vec::new();
        }
        match self.input.lines() {
            [line] => slash::popup_matches(line),
            _ => Vec::new(),
        }
    }

    /// The popup's selected row, clamped to the matches.
    pub fn popup_selected(&self) -> usize {
        match self.popup {
            Popup::Auto { selected } => selected.min(self.popup_items().len().saturating_sub(1)),
            Popup::Dismissed => 0,
        }
    }

    /// True while a second Ctrl-C would quit.
    pub fn quit_armed(&self, now: Instant) -> bool {
        self.ctrl_c_at
            .is_some_and(|t| now.saturating_duration_since(t) <= QUIT_WINDOW)
    }

    /// When the next frame is needed with nothing else happening: the spinner's next frame, the
    /// countdown's next second, the end of the Ctrl-C window. `None` = idle, no redraw.
    pub fn next_frame_in(&self, now: Instant) -> Option<Duration> {
        let spinner = self
            .spinner()
            .map(|(_, since, _)| spinner::next_frame_in(now.saturating_duration_since(since)));
        let background = self
            .background_spinner()
            .map(|(_, since, _)| spinner::next_frame_in(now.saturating_duration_since(since)));
        let countdown = self.editor.as_ref().and_then(|e| e.next_change(now));
        let quit = self
            .ctrl_c_at
            .map(|t| (t + QUIT_WINDOW).saturating_duration_since(now));
        [spinner, background, countdown, quit]
            .into_iter()
            .flatten()
            .min()
    }
}
