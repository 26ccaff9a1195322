//! A running command's output as its cell shows it while it runs: the engine's pieces (raw
//! terminal text: colours, `\r` progress bars) cleaned into lines, the first lines and the newest
//! ones kept (a command printing a million lines costs a bounded cell), the line being written
//! shown as it stands.

use std::collections::VecDeque;

use super::wrap::sanitize;

/// Lines kept from the start of the output.
pub(crate) const HEAD_KEEP: usize = 50;
/// Lines kept from the end of the output.
pub(crate) const TAIL_KEEP: usize = 2_000;
/// A line still being written is shown cut to this many bytes (a progress bar with no newline).
const PARTIAL_MAX: usize = 64 * 1024;

/// The output so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiveOutput {
    head: Vec<String>,
    tail: VecDeque<String>,
    /// Lines between the head and the tail that were let go.
    dropped: usize,
    /// The raw text of the line being written (no newline yet).
    partial: String,
}

/// One line as a terminal leaves it: escape sequences removed, and each `\r` starting over from
/// the left, the new text overwriting the old (`10%\r20%` shows `20%`).
pub(crate) fn resolve_line(raw: &str) -> String {
    if !raw.contains('\r') {
        return sanitize(raw).into_owned();
    }
    let mut cells: Vec<char> = Vec::new();
    for segment in raw.split('\r') {
        for (i, c) in sanitize(segment).chars().enumerate() {
            match cells.get_mut(i) {
                Some(slot) => *slot = c,
                None => cells.push(c),
            }
        }
    }
    cells.into_iter().collect()
}

impl LiveOutput {
    /// Add a piece of output.
    pub(crate) fn push(&mut self, raw: &str) {
        self.partial.push_str(raw);
        while let Some(i) = self.partial.find('\n') {
            let line: String = self.partial.drain(..=i).collect();
            let line = line.strip_suffix('\n').unwrap_or(&line);
            let line = line.strip_suffix('\r').unwrap_or(line);
            self.add_line(resolve_line(line));
        }
        if self.partial.len() > PARTIAL_MAX {
            // Keep the end of an endless line: a terminal would show its last state too.
            let cut = self.partial.len() - PARTIAL_MAX;
            let at = (cut..self.partial.len())
                .find(|i| self.partial.is_char_boundary(*i))
                .unwrap_or(self.partial.len());
            self.partial.drain(..at);
        }
    }

    fn add_line(&mut self, line: String) {
        if self.head.len() < HEAD_KEEP {
            self.head.push(line);
            return;
        }
        self.tail.push_back(line);
        if self.tail.len() > TAIL_KEEP {
            self.tail.pop_front();
            self.dropped += 1;
        }
    }

    /// True before any output came.
    pub(crate) fn is_empty(&self) -> bool {
        self.head.is_empty() && self.partial.is_empty()
    }

    /// Every line seen (kept or not), the one being written included.
    #[cfg(test)]
    pub(crate) fn line_count(&self) -> usize {
        self.head.len() + self.dropped + self.tail.len() + usize::from(!self.partial.is_empty())
    }

    /// The text to show: the kept lines, a note where lines were let go, the line being written.
    pub(crate) fn text(&self) -> String {
        let mut lines: Vec<String> = self.head.clone();
        if self.dropped > 0 {
            lines.push(format!(
                "… {} lines not kept while it runs (the result has them)",
                self.dropped
            ));
        }
        lines.extend(self.tail.iter().cloned());
        if !self.partial.is_empty() {
            lines.push(resolve_line(&self.partial));
        }
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_become_clean_lines_and_progress_bars_keep_their_last_state() {
        let mut o = LiveOutput::default();
        assert!(o.is_empty());
        o.push("\x1b[32mCompiling\x1b[0m foo\nDownloading 10%");
        assert_eq!(o.text(), "Compiling foo\nDownloading 10%");
        o.push("\rDownloading 55%\rDownloading 100%\r\n");
        o.push("done\n");
        assert_eq!(o.text(), "Compiling foo\nDownloading 100%\ndone");
        assert_eq!(o.line_count(), 3);
        assert_eq!(resolve_line("abcdef\rXY"), "XYcdef");
    }

    #[test]
    fn a_flood_keeps_the_head_and_the_newest_lines() {
        let mut o = LiveOutput::default();
        for i in 0..10_000 {
            o.push(&format!("line {i}\n"));
        }
        assert_eq!(o.line_count(), 10_000);
        let text = o.text();
        assert!(text.starts_with("line 0\nline 1\n"));
        assert!(text.ends_with("line 9999"));
        let dropped = 10_000 - HEAD_KEEP - TAIL_KEEP;
        assert!(
            text.contains(&format!("… {dropped} lines not kept")),
            "{}",
            &text[..400]
        );
        assert_eq!(text.lines().count(), HEAD_KEEP + TAIL_KEEP + 1);
        // An endless line without a newline stays bounded.
        let mut p = LiveOutput::default();
        for _ in 0..100 {
            p.push(&"é".repeat(1_000));
        }
        assert!(p.text().len() <= PARTIAL_MAX);
    }
}
