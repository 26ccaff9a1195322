//! The input box: the textarea being typed into, the big pastes held as chips behind it, the
//! sent messages Up/Down recalls (and Ctrl-R searches), the slash popup's selection, the messages
//! queued while a turn runs, and when the user last changed or typed into it. Each change goes
//! through a method here, which keeps the chips, the popup and the history's browsing in step.

use std::time::{Duration, Instant};

use crossterm::event::KeyEvent;
use ratatui_textarea::{DataCursor, TextArea};

use crate::engine::commands::Catalog;

use super::input::{History, Pastes, needs_chip};
use super::keymap::{Action, label_for};
use super::render::editor_view::{TextAreaStyles, edit_key, style_input};
use super::search::Search;
use super::slash;

/// A key typed into the input this recently means the user is typing: a handoff document opens
/// beside the chat without taking the focus.
pub(crate) const TYPING_RECENTLY: Duration = Duration::from_millis(1500);

/// Whether the slash popup may show for the current input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Popup {
    /// Shown while the input is a command word being typed; `selected` indexes the matches.
    Auto {
        /// The highlighted match.
        selected: usize,
    },
    /// Esc closed it; it comes back when the input changes.
    Dismissed,
}

/// A message typed while a turn runs, waiting for the turn to end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Queued {
    /// The text as typed (chips as labels): what the chat and the queue show.
    pub(crate) raw: String,
    /// The pastes behind its chips.
    pub(crate) pastes: Pastes,
}

/// The input box and what belongs to it.
pub(crate) struct InputBox {
    /// The textarea.
    area: TextArea<'static>,
    /// Big pastes held as chips.
    pastes: Pastes,
    /// Sent messages, for Up/Down and Ctrl-R.
    history: History,
    /// Ctrl-R: the reverse search through the history, while it runs.
    search: Option<Search>,
    /// The slash popup.
    popup: Popup,
    /// Messages typed while a turn runs, oldest first: sent one by one as turns end.
    queue: Vec<Queued>,
    /// When the user last changed the input box (typing, pasting, clearing, sending).
    edited_at: Option<Instant>,
    /// When the user last typed or pasted into it (not cleared by sending): whether they are in
    /// the middle of writing something.
    typed_at: Option<Instant>,
}

/// The textarea, empty, with the placeholder.
fn new_area() -> TextArea<'static> {
    let mut t = TextArea::default();
    t.set_placeholder_text(format!(
        "Ask anything · / for commands · {} for a newline",
        label_for(Action::Newline)
    ));
    t.set_cursor_line_style(ratatui::style::Style::default());
    t.set_wrap_mode(ratatui_textarea::WrapMode::WordOrGlyph);
    t
}

impl InputBox {
    /// An empty input box with the history of earlier runs (oldest first).
    pub(crate) fn new(history: Vec<String>) -> Self {
        InputBox {
            area: new_area(),
            pastes: Pastes::default(),
            history: History::with_entries(history),
            search: None,
            popup: Popup::Auto { selected: 0 },
            queue: Vec::new(),
            edited_at: None,
            typed_at: None,
        }
    }

    /// The textarea, to draw and measure.
    pub(crate) fn area(&self) -> &TextArea<'static> {
        &self.area
    }

    /// The text as one string (lines joined).
    pub(crate) fn text(&self) -> String {
        self.area.lines().join("\n")
    }

    /// Nothing is typed.
    pub(crate) fn is_empty(&self) -> bool {
        self.area.is_empty()
    }

    /// The lines typed.
    pub(crate) fn lines(&self) -> &[String] {
        self.area.lines()
    }

    /// Where the cursor is.
    pub(crate) fn cursor(&self) -> DataCursor {
        self.area.cursor()
    }

    /// When the user last changed the input box.
    pub(crate) fn edited_at(&self) -> Option<Instant> {
        self.edited_at
    }

    /// The user changed the input box (an approval prompt's key guard starts again).
    pub(crate) fn mark_edited(&mut self, now: Instant) {
        self.edited_at = Some(now);
    }

    /// The box holds text, or a key went there lately.
    pub(crate) fn typing(&self, now: Instant) -> bool {
        !self.area.is_empty()
            || self
                .typed_at
                .is_some_and(|t| now.saturating_duration_since(t) < TYPING_RECENTLY)
    }

    /// Styles the textarea (the focused one shows its cursor).
    pub(crate) fn style(&mut self, styles: &TextAreaStyles, focused: bool) {
        style_input(&mut self.area, styles, focused);
    }

    /// The popup shows again, on its first row.
    fn reset_popup(&mut self) {
        self.popup = Popup::Auto { selected: 0 };
    }

    /// The text is replaced by `text` (the chips stay as they are).
    fn replace(&mut self, text: &str) {
        self.area = new_area();
        self.area.insert_str(text);
    }

    /// A key the textarea handles itself; false when it changed nothing.
    pub(crate) fn key(&mut self, key: KeyEvent, now: Instant) -> bool {
        if !edit_key(&mut self.area, key) {
            return false;
        }
        self.reset_popup();
        self.mark_edited(now);
        self.typed_at = Some(now);
        if self.area.is_empty() {
            self.pastes.clear();
        }
        true
    }

    /// A newline where the cursor is.
    pub(crate) fn insert_newline(&mut self) {
        self.area.insert_newline();
    }

    /// The input becomes `text` (a recalled entry, a completed command).
    pub(crate) fn set_text(&mut self, text: &str, now: Instant) {
        self.replace(text);
        self.reset_popup();
        self.mark_edited(now);
    }

    /// Ctrl-C on text: the input, its chips and the history's browsing go.
    pub(crate) fn clear(&mut self, now: Instant) {
        self.area = new_area();
        self.pastes.clear();
        self.reset_popup();
        self.history.reset_browsing();
        self.mark_edited(now);
    }

    /// Enter: the input is emptied for what comes next; the pastes behind its chips are
    /// returned. Nobody is typing now.
    pub(crate) fn take_sent(&mut self, now: Instant) -> Pastes {
        let pastes = std::mem::take(&mut self.pastes);
        self.area = new_area();
        self.mark_edited(now);
        self.typed_at = None;
        self.reset_popup();
        pastes
    }

    /// A sent message (chips with it) is remembered for Up/Down.
    pub(crate) fn remember(&mut self, raw: &str, pastes: Pastes) {
        self.history.push(raw, pastes);
    }

    /// Up on the first line recalls an older message, Down on the last line a newer one; false
    /// when the cursor is elsewhere or there is no more history (the key moves the cursor).
    pub(crate) fn recall(&mut self, older: bool, now: Instant) -> bool {
        let DataCursor(row, _) = self.area.cursor();
        let last = self.area.lines().len().saturating_sub(1);
        let recalled = match older {
            true if row == 0 => {
                let current = self.text();
                self.history.older(&current, &mut self.pastes)
            }
            false if row == last => self.history.newer(&mut self.pastes),
            _ => None,
        };
        match recalled {
            // A recalled command shows no popup: Up and Down go on browsing the history.
            Some(text) => {
                self.set_text(&text, now);
                self.popup = Popup::Dismissed;
                true
            }
            None => false,
        }
    }

    /// Text pasted into the input (a big one as a chip); a search running stops (a paste is text
    /// for the input, not a query).
    pub(crate) fn paste(&mut self, text: String, now: Instant) {
        self.search = None;
        if needs_chip(&text) {
            let label = self.pastes.add(text);
            self.area.insert_str(label);
        } else {
            self.area.insert_str(text);
        }
        self.reset_popup();
        self.mark_edited(now);
        self.typed_at = Some(now);
    }

    /// A rewound message back in the input, when it is empty (false: it holds text, kept).
    pub(crate) fn put_back(&mut self, text: &str, now: Instant) -> bool {
        if !self.area.is_empty() {
            return false;
        }
        self.replace(text);
        self.mark_edited(now);
        true
    }

    /// `@` completion: the text from the `@` at (`row`, `col`) to the cursor becomes `text`;
    /// false when the cursor has left that token.
    pub(crate) fn replace_token(&mut self, row: usize, col: usize, text: String) -> bool {
        let DataCursor(at_row, at_col) = self.area.cursor();
        if at_row != row || at_col < col {
            return false;
        }
        for _ in col..at_col {
            self.area.delete_char();
        }
        self.area.insert_str(text);
        true
    }

    /// The slash commands the popup shows (empty when it is hidden).
    pub(crate) fn popup_items(&self, focused: bool, custom: &Catalog) -> Vec<slash::PopupItem> {
        if !focused || self.popup == Popup::Dismissed {
            return Vec::new();
        }
        match self.area.lines() {
            [line] => slash::popup_matches(line, custom),
            _ => Vec::new(),
        }
    }

    /// The popup's selected row, clamped to its `items` rows.
    pub(crate) fn popup_selected(&self, items: usize) -> usize {
        match self.popup {
            Popup::Auto { selected } => selected.min(items.saturating_sub(1)),
            Popup::Dismissed => 0,
        }
    }

    /// Up / Down in the popup of `items` rows (from `selected`), wrapping around.
    pub(crate) fn popup_move(&mut self, selected: usize, items: usize, down: bool) {
        let n = items.max(1);
        let sel = if down {
            (selected + 1) % n
        } else {
            (selected + n - 1) % n
        };
        self.popup = Popup::Auto { selected: sel };
    }

    /// Esc: the popup closes until the input changes.
    pub(crate) fn dismiss_popup(&mut self) {
        self.popup = Popup::Dismissed;
    }

    /// The history search, while it runs.
    pub(crate) fn search(&self) -> Option<&Search> {
        self.search.as_ref()
    }

    /// The history entry the search shows, if one matches.
    pub(crate) fn search_match(&self) -> Option<&str> {
        let hit = self.search.as_ref()?.hit()?;
        self.history.entry(hit).map(|(t, _)| t)
    }

    /// Ctrl-R: the search starts on the newest entry.
    pub(crate) fn start_search(&mut self) {
        self.search = Some(Search::start(&self.history));
    }

    /// A key the search's bindings left: characters extend the query, Backspace shortens it.
    pub(crate) fn search_key(&mut self, key: KeyEvent) {
        if let Some(search) = self.search.as_mut() {
            search.key(key, &self.history);
        }
    }

    /// Ctrl-R again: the next older match.
    pub(crate) fn search_older(&mut self) {
        if let Some(search) = self.search.as_mut() {
            search.older(&self.history);
        }
    }

    /// Enter / Tab: the match into the input (its pasted chips with it).
    pub(crate) fn accept_search(&mut self, now: Instant) {
        let Some(search) = self.search.take() else {
            return;
        };
        let Some((text, pastes)) = search.hit().and_then(|i| self.history.entry(i)) else {
            return;
        };
        let (text, pastes) = (text.to_string(), pastes.clone());
        self.replace(&text);
        self.pastes = pastes;
        self.reset_popup();
        self.history.reset_browsing();
        self.mark_edited(now);
    }

    /// Esc: the search ends; the input is what it was.
    pub(crate) fn cancel_search(&mut self) {
        self.search = None;
    }

    /// The queued messages, oldest first.
    pub(crate) fn queued(&self) -> &[Queued] {
        &self.queue
    }

    /// A message waits for the turns before it.
    pub(crate) fn queue(&mut self, raw: String, pastes: Pastes) {
        self.queue.push(Queued { raw, pastes });
    }

    /// The oldest queued message, taken to be sent.
    pub(crate) fn next_queued(&mut self) -> Option<Queued> {
        (!self.queue.is_empty()).then(|| self.queue.remove(0))
    }

    /// Esc or Ctrl-C on an empty input: the newest queued message is dropped (false: none).
    pub(crate) fn drop_newest(&mut self) -> bool {
        self.queue.pop().is_some()
    }

    /// Another run replaced the chat: what was queued for the old one goes.
    pub(crate) fn clear_queue(&mut self) {
        self.queue.clear();
    }

    /// Up on an empty input: the newest queued message back into the input, for editing (Enter
    /// queues it again). False when nothing is queued.
    pub(crate) fn recall_newest(&mut self, now: Instant) -> bool {
        let Some(q) = self.queue.pop() else {
            return false;
        };
        self.replace(&q.raw);
        self.pastes = q.pastes;
        self.reset_popup();
        self.history.reset_browsing();
        self.mark_edited(now);
        true
    }

    /// Every queued message back into the input, oldest first, before what is typed there;
    /// returns how many there were.
    pub(crate) fn unqueue_all(&mut self, now: Instant) -> usize {
        let queued = std::mem::take(&mut self.queue);
        let n = queued.len();
        let mut pastes = Pastes::default();
        let mut parts: Vec<String> = Vec::new();
        for q in queued {
            parts.push(q.raw);
            pastes.extend(q.pastes);
        }
        let typed = self.text();
        if !typed.trim().is_empty() {
            parts.push(typed);
        }
        pastes.extend(std::mem::take(&mut self.pastes));
        self.replace(&parts.join("\n"));
        self.pastes = pastes;
        self.reset_popup();
        self.mark_edited(now);
        n
    }
}
