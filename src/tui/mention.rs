//! `@path` completion (part of the pure reducer). While the word at the cursor starts with `@`,
//! the app is asked for the workspace files that fuzzy-match what follows it (the engine's file
//! index, which respects `.gitignore`); the answer fills a popup over the input. Tab or Enter puts
//! the chosen path into the message as `@path ` (quoted when it holds a space), which the engine
//! attaches when the message is sent; a directory stays open (`@src/`) to go on typing in it.

use std::time::Duration;

use ratatui_textarea::DataCursor;

use super::msg::Effect;
use super::state::{AppState, Focus, Mention};

/// Matches asked for.
pub(crate) const LIMIT: usize = 50;
/// While the index is still being built, ask again this often.
pub(crate) const REQUERY: Duration = Duration::from_millis(150);

/// The `@` token the cursor is in: (row, char column of the `@`, text after it up to the cursor).
/// An `@` counts at the start of a line or after whitespace or `(`, as the engine reads mentions.
pub(crate) fn token_at_cursor(
    lines: &[String],
    cursor: DataCursor,
) -> Option<(usize, usize, String)> {
    let DataCursor(row, col) = cursor;
    let line = lines.get(row)?;
    let before: Vec<char> = line.chars().take(col).collect();
    let at = before.iter().rposition(|c| *c == '@')?;
    let typed: String = before.get(at + 1..)?.iter().collect();
    let quoted = typed.starts_with('"');
    if !quoted && typed.chars().any(char::is_whitespace) {
        return None;
    }
    if quoted && typed.chars().skip(1).any(|c| c == '"') {
        return None; // a closed quote: the mention is complete
    }
    let starts = match at.checked_sub(1).and_then(|i| before.get(i)) {
        None => true,
        Some(p) => p.is_whitespace() || *p == '(',
    };
    if !starts {
        return None; // me@example.com
    }
    let query = typed.trim_start_matches('"').to_string();
    Some((row, at, query))
}

/// The input changed: open, follow or close the popup, asking for matches when the query moved.
pub(super) fn sync(state: &mut AppState, fx: &mut Vec<Effect>) {
    if state.focus != Focus::Input {
        state.mention = None;
        return;
    }
    let Some((row, col, query)) = token_at_cursor(state.input.lines(), state.input.cursor()) else {
        state.mention = None;
        return;
    };
    let same_token = state
        .mention
        .as_ref()
        .is_some_and(|m| m.row == row && m.col == col);
    if let Some(m) = state.mention.as_mut().filter(|_| same_token) {
        if m.query == query {
            return;
        }
        m.query = query.clone();
        m.selected = 0;
        m.dismissed = false;
    } else {
        state.mention = Some(Mention {
            row,
            col,
            query: query.clone(),
            items: Vec::new(),
            selected: 0,
            partial: true,
            indexed: 0,
            dismissed: false,
        });
    }
    ask(state, fx);
}

/// Ask the app for matches of the open popup's query.
pub(super) fn ask(state: &mut AppState, fx: &mut Vec<Effect>) {
    let Some(m) = state.mention.as_ref() else {
        return;
    };
    state.file_query_seq += 1;
    fx.push(Effect::QueryFiles {
        seq: state.file_query_seq,
        query: m.query.clone(),
        refresh: std::mem::take(&mut state.files_stale),
    });
}

/// The app's answer: kept when it answers the newest query.
pub(super) fn on_matches(
    state: &mut AppState,
    seq: u64,
    items: Vec<String>,
    complete: bool,
    indexed: usize,
    fx: &mut Vec<Effect>,
) {
    if seq != state.file_query_seq {
        return;
    }
    let Some(m) = state.mention.as_mut() else {
        return;
    };
    m.items = items;
    m.selected = m.selected.min(m.items.len().saturating_sub(1));
    m.partial = !complete;
    m.indexed = indexed;
    if !complete {
        fx.push(Effect::ScheduleFrame(Some(REQUERY)));
    }
}

/// A frame is due: a popup answered from a partial index asks again.
pub(super) fn on_tick(state: &mut AppState, fx: &mut Vec<Effect>) {
    if state
        .mention
        .as_ref()
        .is_some_and(|m| m.partial && !m.dismissed)
    {
        ask(state, fx);
    }
}

/// Whether the popup shows (and takes Up/Down/Tab/Enter/Esc).
pub(crate) fn visible(state: &AppState) -> bool {
    state.focus == Focus::Input
        && state
            .mention
            .as_ref()
            .is_some_and(|m| !m.dismissed && (!m.items.is_empty() || m.partial))
}

/// Up / Down in the popup.
pub(super) fn step(state: &mut AppState, down: bool) {
    if let Some(m) = state.mention.as_mut() {
        let n = m.items.len().max(1);
        m.selected = if down {
            (m.selected + 1) % n
        } else {
            (m.selected + n - 1) % n
        };
    }
}

/// Tab / Enter: the highlighted path replaces the typed token. A file gets a space after it (the
/// mention is done); a directory stays open, so its files come next.
pub(super) fn complete(state: &mut AppState, fx: &mut Vec<Effect>) {
    let Some((at_row, at_col, path)) = state
        .mention
        .as_ref()
        .and_then(|m| Some((m.row, m.col, m.items.get(m.selected)?.clone())))
    else {
        return;
    };
    let DataCursor(row, col) = state.input.cursor();
    if row != at_row || col < at_col {
        state.mention = None;
        return;
    }
    // Delete back to the `@` (the query, an opening quote and the `@` itself).
    for _ in at_col..col {
        state.input.delete_char();
    }
    let dir = path.ends_with('/');
    let text = if path.chars().any(char::is_whitespace) {
        if dir {
            format!("@\"{path}")
        } else {
            format!("@\"{path}\" ")
        }
    } else if dir {
        format!("@{path}")
    } else {
        format!("@{path} ")
    };
    state.input.insert_str(text);
    state.mention = None;
    if dir {
        sync(state, fx);
    }
}

/// Esc: the popup closes until the token changes.
pub(super) fn dismiss(state: &mut AppState) {
    if let Some(m) = state.mention.as_mut() {
        m.dismissed = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: &str, col: usize) -> Option<(usize, usize, String)> {
        token_at_cursor(&[line.to_string()], DataCursor(0, col))
    }

    #[test]
    fn the_token_at_the_cursor() {
        assert_eq!(at("look at @src/ma", 15), Some((0, 8, "src/ma".into())));
        assert_eq!(at("@", 1), Some((0, 0, String::new())));
        assert_eq!(at("(@lib", 5), Some((0, 1, "lib".into())));
        assert_eq!(at("mail me@example.com", 19), None, "not after a word");
        assert_eq!(at("@src/main.rs done", 17), None, "the cursor left it");
        assert_eq!(at("@\"my fi", 7), Some((0, 0, "my fi".into())));
        assert_eq!(at("@\"my file.rs\" x", 15), None);
        assert_eq!(at("no mention", 10), None);
        // The cursor inside the token: what is before it is the query.
        assert_eq!(at("@abcdef", 3), Some((0, 0, "ab".into())));
    }
}
