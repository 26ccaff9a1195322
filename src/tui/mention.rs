//! `@path` completion, a part of the state. While the word at the cursor starts with `@`,
//! the app is asked for the workspace files that fuzzy-match what follows it (the engine's file
//! index, which respects `.gitignore`); the answer fills a popup over the input. Tab or Enter puts
//! the chosen path into the message as `@path ` (quoted when it holds a space), which the engine
//! attaches when the message is sent; a directory stays open (`@src/`) to go on typing in it.
//! The index walks again before the next answer once a tool call the engine said may change
//! files has its result.

use std::time::Duration;

use ratatui_textarea::DataCursor;

use super::msg::Effect;

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

/// `@path` completion: what is typed after the `@` and the files that match it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mention {
    /// Where the `@` is: the input's row.
    row: usize,
    /// The character column of the `@`.
    col: usize,
    /// What follows the `@` up to the cursor.
    query: String,
    /// Matching workspace paths, best first.
    items: Vec<String>,
    /// The highlighted row.
    selected: usize,
    /// The index was still being built when these matches came (ask again soon).
    partial: bool,
    /// Paths indexed so far.
    indexed: usize,
    /// The `@` was dismissed with Esc: no popup until the token changes.
    dismissed: bool,
}

impl Mention {
    /// What follows the `@` up to the cursor.
    pub(crate) fn query(&self) -> &str {
        &self.query
    }

    /// Matching workspace paths, best first.
    pub(crate) fn items(&self) -> &[String] {
        &self.items
    }

    /// The highlighted row.
    pub(crate) fn selected(&self) -> usize {
        self.selected
    }

    /// The index was still being built when these matches came.
    pub(crate) fn partial(&self) -> bool {
        self.partial
    }

    /// Paths indexed so far.
    pub(crate) fn indexed(&self) -> usize {
        self.indexed
    }
}

/// The `@` popup and the file queries behind it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Mentions {
    /// The popup, while an `@` token is being typed.
    open: Option<Mention>,
    /// The last file query asked of the app (answers to older ones are dropped).
    seq: u64,
    /// A tool changed files since the index last walked.
    stale: bool,
    /// Running calls the engine said may change files (their results make the index stale).
    changing_calls: Vec<String>,
}

impl Mentions {
    /// The popup, if one is open (shown or dismissed).
    #[cfg(test)]
    pub(crate) fn open(&self) -> Option<&Mention> {
        self.open.as_ref()
    }

    /// The popup when it shows (and takes Up/Down/Tab/Enter/Esc), the input having the focus.
    pub(crate) fn visible(&self, input_focused: bool) -> Option<&Mention> {
        self.open
            .as_ref()
            .filter(|m| input_focused && !m.dismissed && (!m.items.is_empty() || m.partial))
    }

    /// The last file query asked.
    #[cfg(test)]
    pub(crate) fn seq(&self) -> u64 {
        self.seq
    }

    /// Whether the index walks again before the next answer.
    #[cfg(test)]
    pub(crate) fn stale(&self) -> bool {
        self.stale
    }

    /// The input changed: open, follow or close the popup, asking for matches when the query
    /// moved.
    pub(crate) fn sync(
        &mut self,
        input_focused: bool,
        lines: &[String],
        cursor: DataCursor,
        fx: &mut Vec<Effect>,
    ) {
        if !input_focused {
            self.open = None;
            return;
        }
        let Some((row, col, query)) = token_at_cursor(lines, cursor) else {
            self.open = None;
            return;
        };
        let same_token = self
            .open
            .as_ref()
            .is_some_and(|m| m.row == row && m.col == col);
        if let Some(m) = self.open.as_mut().filter(|_| same_token) {
            if m.query == query {
                return;
            }
            m.query = query;
            m.selected = 0;
            m.dismissed = false;
        } else {
            self.open = Some(Mention {
                row,
                col,
                query,
                items: Vec::new(),
                selected: 0,
                partial: true,
                indexed: 0,
                dismissed: false,
            });
        }
        self.ask(fx);
    }

    /// Ask the app for matches of the open popup's query.
    fn ask(&mut self, fx: &mut Vec<Effect>) {
        let Some(m) = self.open.as_ref() else {
            return;
        };
        self.seq += 1;
        fx.push(Effect::QueryFiles {
            seq: self.seq,
            query: m.query.clone(),
            refresh: std::mem::take(&mut self.stale),
        });
    }

    /// The app's answer: kept when it answers the newest query.
    pub(crate) fn on_matches(
        &mut self,
        seq: u64,
        items: Vec<String>,
        complete: bool,
        indexed: usize,
        fx: &mut Vec<Effect>,
    ) {
        if seq != self.seq {
            return;
        }
        let Some(m) = self.open.as_mut() else {
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
    pub(crate) fn on_tick(&mut self, fx: &mut Vec<Effect>) {
        if self
            .open
            .as_ref()
            .is_some_and(|m| m.partial && !m.dismissed)
        {
            self.ask(fx);
        }
    }

    /// Up / Down in the popup.
    pub(crate) fn step(&mut self, down: bool) {
        if let Some(m) = self.open.as_mut() {
            let n = m.items.len().max(1);
            m.selected = if down {
                (m.selected + 1) % n
            } else {
                (m.selected + n - 1) % n
            };
        }
    }

    /// Tab / Enter: the popup closes; returned are where its `@` is (row, column) and what
    /// replaces the typed token: the highlighted path, with a space after a file (the mention
    /// is done), open after a directory (its files come next, `true`).
    pub(crate) fn take_chosen(&mut self) -> Option<(usize, usize, String, bool)> {
        let (row, col, path) = self
            .open
            .as_ref()
            .and_then(|m| Some((m.row, m.col, m.items.get(m.selected)?.clone())))?;
        self.open = None;
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
        Some((row, col, text, dir))
    }

    /// Esc: the popup closes until the token changes.
    pub(crate) fn dismiss(&mut self) {
        if let Some(m) = self.open.as_mut() {
            m.dismissed = true;
        }
    }

    /// A tool call the engine said may change files started.
    pub(crate) fn call_may_change_files(&mut self, id: String) {
        self.changing_calls.push(id);
    }

    /// A tool call has its result: if it may have changed files, the index walks again before
    /// its next answer.
    pub(crate) fn call_done(&mut self, id: &str) {
        if let Some(i) = self.changing_calls.iter().position(|c| c == id) {
            self.changing_calls.swap_remove(i);
            self.stale = true;
        }
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
