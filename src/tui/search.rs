//! Ctrl-R: a reverse search through the input history (part of the pure reducer). Typing narrows
//! the match (newest first, case-insensitive), Ctrl-R again steps to an older one, Enter or Tab
//! puts it into the input for editing, Esc leaves the input as it was.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::state::{AppState, Popup, Search, new_input};

/// Ctrl-R in the input: the search starts on the newest entry.
pub(super) fn start(state: &mut AppState) {
    state.search = Some(Search {
        query: String::new(),
        hit: state.history.find_back("", None),
    });
}

/// A key the search's bindings left: characters extend the query, Backspace shortens it.
pub(super) fn key(state: &mut AppState, key: KeyEvent) {
    let Some(search) = state.search.as_mut() else {
        return;
    };
    match key.code {
        KeyCode::Char(c)
            if !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            search.query.push(c);
        }
        KeyCode::Backspace => {
            search.query.pop();
        }
        _ => return,
    }
    search.hit = state.history.find_back(&search.query, None);
}

/// Ctrl-R again: the next older entry that matches (the match stays when there is none).
pub(super) fn older(state: &mut AppState) {
    if let Some(search) = state.search.as_mut()
        && let Some(hit) = search.hit
        && let Some(older) = state.history.find_back(&search.query, Some(hit))
    {
        search.hit = Some(older);
    }
}

/// Enter / Tab: the match into the input (its pasted chips with it).
pub(super) fn accept(state: &mut AppState, now: Instant) {
    let Some(search) = state.search.take() else {
        return;
    };
    let Some((text, pastes)) = search.hit.and_then(|i| state.history.entry(i)) else {
        return;
    };
    let (text, pastes) = (text.to_string(), pastes.clone());
    state.input = new_input();
    state.input.insert_str(text);
    state.pastes = pastes;
    state.popup = Popup::Auto { selected: 0 };
    state.history.reset_browsing();
    state.input_edited(now);
}

/// Esc: leave the search; the input is what it was.
pub(super) fn cancel(state: &mut AppState) {
    state.search = None;
}
