//! Ctrl-R: a reverse search through the input history. Typing narrows the match (newest first,
//! case-insensitive), Ctrl-R again steps to an older one; the input box puts the match into the
//! input on Enter or Tab, and leaves the input as it was on Esc.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::input::History;

/// The query typed so far and the history entry it found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Search {
    /// What was typed since Ctrl-R.
    query: String,
    /// The history entry shown (an index into the history), if one matches.
    hit: Option<usize>,
}

impl Search {
    /// Ctrl-R: the search starts on the newest entry.
    pub(crate) fn start(history: &History) -> Self {
        Search {
            query: String::new(),
            hit: history.find_back("", None),
        }
    }

    /// What was typed since Ctrl-R.
    pub(crate) fn query(&self) -> &str {
        &self.query
    }

    /// The entry shown, if one matches.
    pub(crate) fn hit(&self) -> Option<usize> {
        self.hit
    }

    /// A key the search's bindings left: characters extend the query, Backspace shortens it.
    pub(crate) fn key(&mut self, key: KeyEvent, history: &History) {
        match key.code {
            KeyCode::Char(c)
                if !key
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                self.query.push(c);
            }
            KeyCode::Backspace => {
                self.query.pop();
            }
            _ => return,
        }
        self.hit = history.find_back(&self.query, None);
    }

    /// Ctrl-R again: the next older entry that matches (the match stays when there is none).
    pub(crate) fn older(&mut self, history: &History) {
        if let Some(hit) = self.hit
            && let Some(older) = history.find_back(&self.query, Some(hit))
        {
            self.hit = Some(older);
        }
    }
}
