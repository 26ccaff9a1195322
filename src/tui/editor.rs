//! The side editor's state: a textarea on the frozen handoff file (the cursor starts in the first
//! section's text, never on the header line), the review countdown (pure: time is passed in),
//! what is known to be on disk, and the questions it asks (a change on disk, unsaved edits). The
//! reducer drives it; file I/O (save, reload, watch) happens in `app.rs` through effects and
//! messages.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ratatui_textarea::{CursorMove, DataCursor, TextArea};

use super::keymap::{Action, label_for};
use super::msg::FileError;
use crate::engine::handoff::store::foreign;

/// The review window of a frozen handoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Review {
    /// Counting down; the successor starts at `ends_at`.
    Counting {
        /// When the countdown runs out.
        ends_at: Instant,
    },
    /// A keystroke paused the countdown with `remaining` left; only Ctrl-S or Esc end it now.
    Paused {
        /// What was left when it paused.
        remaining: Duration,
    },
    /// Ctrl-S during the review: the save is in flight; `ReviewDone` follows its success.
    Saving,
    /// No review running: it ended, or the editor was opened with `/edit-handoff`.
    Over,
}

/// A question the editor is asking, shown on its last line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Prompt {
    /// Nothing asked.
    None,
    /// The file changed on disk while the buffer has unsaved edits: `r` reload / `k` keep mine.
    Conflict {
        /// What the file now holds on disk.
        disk: String,
    },
    /// Esc with unsaved edits: `s` save them / `d` discard them (then the review ends, or the
    /// editor closes) / Esc keep editing. Nothing is dropped unasked.
    Unsaved,
    /// Esc in the editor holding a presented plan (its edits saved): `i` implement here / `f` in
    /// a fresh session / `p` keep planning / Esc keep editing.
    Plan,
    /// A reopened review (the last process ended during it) found its unsaved edits kept in
    /// `path`: `r` restore them into the buffer / `d` discard them (the file is removed).
    Restore {
        /// The kept edits.
        path: PathBuf,
        /// Their text.
        text: String,
    },
}

/// The side editor.
#[derive(Debug, Clone)]
pub(crate) struct SideEditor {
    /// The file being edited.
    pub(crate) path: PathBuf,
    /// The buffer.
    pub(crate) area: TextArea<'static>,
    /// The file's text as last seen on disk (loaded, saved or reloaded); `None` when it is gone.
    pub(crate) disk_text: Option<String>,
    /// The review window, if one runs.
    pub(crate) review: Review,
    /// The question shown on the last line, if any.
    pub(crate) prompt: Prompt,
    /// A short status note shown under the buffer ("saved", "reloaded from disk", …).
    pub(crate) note: Option<String>,
    /// The focus the textarea was last styled for (`None`: not styled since it was built).
    pub(crate) styled_focus: Option<bool>,
    /// What follows the save in flight.
    pub(crate) after_save: AfterSave,
    /// The document under review is degraded: why its writing failed (shown in the title).
    pub(crate) degraded: Option<String>,
    trailing_newline: bool,
}

/// What the editor does once a save lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AfterSave {
    /// Nothing more: the buffer is saved.
    Stay,
    /// Ctrl-E saved the buffer first: `$EDITOR` opens on the file.
    OpenExternal,
    /// The unsaved-edits question was answered "save" after the review: the editor closes.
    Close,
    /// Esc saved a plan's edits: the plan question follows.
    PlanChoice,
}

/// `r reload / k keep mine`: the keys that answer the conflict prompt.
pub(crate) fn conflict_keys() -> String {
    format!(
        "{} reload / {} keep mine",
        label_for(Action::Reload),
        label_for(Action::KeepMine)
    )
}

/// The restore offer's keys, as the footer and the prompt say them.
pub(crate) fn restore_keys() -> String {
    format!(
        "{} restore / {} discard",
        label_for(Action::RestoreUnsaved),
        label_for(Action::DiscardUnsaved)
    )
}

/// `\r\n` → `\n`, so a CRLF file does not look edited.
fn normalize(text: &str) -> String {
    text.replace("\r\n", "\n")
}

/// The unsaved-edits question's keys: `s save · d discard · Esc keep editing`.
pub(crate) fn unsaved_keys() -> String {
    format!(
        "{} save · {} discard · {} keep editing",
        label_for(Action::SaveEdits),
        label_for(Action::DiscardEdits),
        label_for(Action::KeepEditing)
    )
}

/// Where the cursor starts in a document: at the end of its first section's text, where typing
/// adds to that section and cannot break the header line above it (the last line of the
/// document when there is no section with text).
fn start_cursor(lines: &[String]) -> (usize, usize) {
    let end = || {
        let row = lines.len().saturating_sub(1);
        (row, lines.get(row).map_or(0, |l| l.chars().count()))
    };
    let Some(heading) = lines.iter().position(|l| l.starts_with("## ")) else {
        return end();
    };
    let body = lines
        .iter()
        .enumerate()
        .skip(heading + 1)
        .take_while(|(_, l)| !l.starts_with('#'))
        .filter(|(_, l)| !l.trim().is_empty())
        .last();
    match body {
        Some((row, line)) => (row, line.chars().count()),
        None => end(),
    }
}

fn jump(area: &mut TextArea<'static>, (row, col): (usize, usize)) {
    area.move_cursor(CursorMove::Jump(
        row.min(u16::MAX as usize) as u16,
        col.min(u16::MAX as usize) as u16,
    ));
}

fn textarea_for(text: &str) -> TextArea<'static> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let mut area = TextArea::from(body.split('\n').map(str::to_string));
    // The document is prose: long lines wrap at words instead of running off the right edge.
    area.set_wrap_mode(ratatui_textarea::WrapMode::WordOrGlyph);
    area
}

impl SideEditor {
    /// Open on `text` (the file's content). `review` = the countdown length, `None` = no review.
    pub(crate) fn open(path: PathBuf, text: &str, review: Option<Duration>, now: Instant) -> Self {
        let text = normalize(text);
        let mut area = textarea_for(&text);
        let start = start_cursor(area.lines());
        jump(&mut area, start);
        SideEditor {
            path,
            area,
            trailing_newline: text.ends_with('\n'),
            disk_text: Some(text),
            review: match review {
                Some(d) => Review::Counting { ends_at: now + d },
                None => Review::Over,
            },
            prompt: Prompt::None,
            note: None,
            styled_focus: None,
            after_save: AfterSave::Stay,
            degraded: None,
        }
    }

    /// A question stands on the last line: keys answer it, nothing is typed or pasted.
    pub(crate) fn asks(&self) -> bool {
        self.prompt != Prompt::None
    }

    /// The buffer as file text.
    pub(crate) fn text(&self) -> String {
        let mut out = self.area.lines().join("\n");
        if self.trailing_newline {
            out.push('\n');
        }
        out
    }

    /// True when the buffer differs from what is on disk.
    pub(crate) fn is_dirty(&self) -> bool {
        self.disk_text.as_deref() != Some(self.text().as_str())
    }

    /// True while the review window is open (counting, paused or saving).
    pub(crate) fn in_review(&self) -> bool {
        !matches!(self.review, Review::Over)
    }

    /// Whole seconds left on the countdown (rounded up), while in review.
    pub(crate) fn countdown(&self, now: Instant) -> Option<u64> {
        let left = match self.review {
            Review::Counting { ends_at } => ends_at.saturating_duration_since(now),
            Review::Paused { remaining } => remaining,
            Review::Saving | Review::Over => return None,
        };
        Some(left.as_millis().div_ceil(1000) as u64)
    }

    /// True when a keystroke paused the countdown.
    pub(crate) fn is_paused(&self) -> bool {
        matches!(self.review, Review::Paused { .. })
    }

    /// A keystroke in the editor: a running countdown stops where it is.
    pub(crate) fn pause(&mut self, now: Instant) {
        if let Review::Counting { ends_at } = self.review {
            self.review = Review::Paused {
                remaining: ends_at.saturating_duration_since(now),
            };
        }
    }

    /// Advance the countdown. True exactly when it has just run out (the review is then over).
    pub(crate) fn tick(&mut self, now: Instant) -> bool {
        match self.review {
            Review::Counting { ends_at } if now >= ends_at => {
                self.review = Review::Over;
                true
            }
            _ => false,
        }
    }

    /// How long until the countdown label changes (the next whole second), while it counts.
    pub(crate) fn next_change(&self, now: Instant) -> Option<Duration> {
        let Review::Counting { ends_at } = self.review else {
            return None;
        };
        let left = ends_at.saturating_duration_since(now);
        let into_second = Duration::from_nanos((left.as_nanos() % 1_000_000_000) as u64);
        Some(if into_second.is_zero() {
            Duration::from_secs(1).min(left)
        } else {
            into_second
        })
    }

    /// Replace the buffer with `text` from disk (clean afterwards); the cursor stays on its line.
    pub(crate) fn reload(&mut self, text: &str) {
        let text = normalize(text);
        let DataCursor(row, col) = self.area.cursor();
        self.area = textarea_for(&text);
        self.styled_focus = None;
        self.trailing_newline = text.ends_with('\n');
        let last = self.area.lines().len().saturating_sub(1);
        jump(&mut self.area, (row.min(last), col));
        self.disk_text = Some(text);
        self.prompt = Prompt::None;
    }

    /// The disk now holds `text` (a save of ours finished, or we chose to keep our edits).
    pub(crate) fn mark_disk(&mut self, text: &str) {
        self.disk_text = Some(normalize(text));
    }

    /// The file changed on disk (watcher, `$EDITOR`). Reload when the buffer is clean; ask when it
    /// has unsaved edits; ignore when the disk already matches (our own save), or when the file
    /// now holds another handoff document (its header names another step or generation: another
    /// process's freeze), which this editor never takes for its own.
    pub(crate) fn disk_changed(&mut self, content: Result<String, FileError>) {
        match content {
            Ok(disk) => {
                let disk = normalize(&disk);
                if self.disk_text.as_deref() == Some(disk.as_str()) {
                    return;
                }
                if let Some(other) = self
                    .disk_text
                    .as_deref()
                    .and_then(|ours| foreign(&disk, ours))
                {
                    self.note = Some(format!(
                        "ignored a change on disk: the file now holds another document ({other})"
                    ));
                    return;
                }
                if self.text() == disk {
                    self.disk_text = Some(disk);
                    self.prompt = Prompt::None;
                } else if !self.is_dirty() {
                    self.reload(&disk);
                    self.note = Some("reloaded: the file changed on disk".into());
                } else {
                    self.prompt = Prompt::Conflict { disk };
                }
            }
            Err(e) => {
                if self.disk_text.is_some() {
                    self.disk_text = None;
                    self.note = Some(format!(
                        "the file is gone from disk ({e}): {} or the end of the review writes \
                         this text back to it",
                        label_for(Action::Save)
                    ));
                }
            }
        }
    }

    /// Answer the conflict prompt: reload the disk text, or keep the buffer.
    pub(crate) fn resolve_conflict(&mut self, reload: bool) {
        if let Prompt::Conflict { disk } = std::mem::replace(&mut self.prompt, Prompt::None) {
            if reload {
                self.reload(&disk);
                self.note = Some("reloaded from disk".into());
            } else {
                self.disk_text = Some(disk);
                self.note = Some("kept your edits (unsaved)".into());
            }
        }
    }

    /// Offer unsaved edits kept by an earlier process (`Prompt::Restore`); the countdown stops
    /// until they are restored or discarded.
    pub(crate) fn offer_restore(&mut self, path: PathBuf, text: String, now: Instant) {
        self.pause(now);
        self.prompt = Prompt::Restore {
            path,
            text: normalize(&text),
        };
    }

    /// Answer the restore offer: put the kept edits in the buffer (unsaved until Ctrl-S), or drop
    /// the offer. Returns the kept file when the answer was to discard it.
    pub(crate) fn resolve_restore(&mut self, restore: bool) -> Option<PathBuf> {
        let Prompt::Restore { path, text } = std::mem::replace(&mut self.prompt, Prompt::None)
        else {
            return None;
        };
        if !restore {
            return Some(path);
        }
        let DataCursor(row, col) = self.area.cursor();
        self.area = textarea_for(&text);
        self.styled_focus = None;
        self.trailing_newline = text.ends_with('\n');
        let row = row.min(self.area.lines().len().saturating_sub(1));
        jump(&mut self.area, (row, col));
        self.note = Some(format!(
            "restored the unsaved edits from {}: {} saves them",
            path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned()
            ),
            label_for(Action::Save)
        ));
        None
    }

    /// Ctrl-Home / Ctrl-End: the cursor to the document's first or last character.
    pub(crate) fn cursor_to(&mut self, end: bool) {
        if end {
            self.area.move_cursor(CursorMove::Bottom);
            self.area.move_cursor(CursorMove::End);
        } else {
            self.area.move_cursor(CursorMove::Top);
            self.area.move_cursor(CursorMove::Head);
        }
    }

    /// Put the buffer back to what is on disk (the unsaved edits discarded).
    pub(crate) fn revert(&mut self) {
        if let Some(disk) = self.disk_text.clone()
            && self.text() != disk
        {
            self.reload(&disk);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Handoff\n## Doing\nx\n## Next\ny\n";

    fn ed(review: Option<u64>, t0: Instant) -> SideEditor {
        SideEditor::open("/n/h.md".into(), DOC, review.map(Duration::from_secs), t0)
    }

    #[test]
    fn round_trips_the_file_text() {
        let t0 = Instant::now();
        let e = ed(None, t0);
        assert_eq!(e.text(), DOC);
        assert!(!e.is_dirty());
        let e = SideEditor::open("x".into(), "a\r\nb", None, t0);
        assert_eq!(e.text(), "a\nb");
        assert!(!e.is_dirty());
        let e = SideEditor::open("x".into(), "", None, t0);
        assert_eq!(e.text(), "");
        assert!(!e.is_dirty());
    }

    #[test]
    fn countdown_runs_pauses_and_ends() {
        let t0 = Instant::now();
        let mut e = ed(Some(15), t0);
        assert_eq!(e.countdown(t0), Some(15));
        assert_eq!(e.countdown(t0 + Duration::from_millis(8_200)), Some(7));
        assert_eq!(
            e.next_change(t0 + Duration::from_millis(8_200)),
            Some(Duration::from_millis(800))
        );
        assert!(!e.tick(t0 + Duration::from_secs(14)));
        assert!(e.tick(t0 + Duration::from_secs(15)));
        assert!(!e.in_review());
        assert!(!e.tick(t0 + Duration::from_secs(16)), "ends once");

        let mut e = ed(Some(15), t0);
        e.pause(t0 + Duration::from_secs(5));
        assert!(e.is_paused());
        assert_eq!(e.countdown(t0 + Duration::from_secs(60)), Some(10));
        assert!(
            !e.tick(t0 + Duration::from_secs(60)),
            "paused never runs out"
        );
        assert_eq!(e.next_change(t0), None);
    }

    #[test]
    fn disk_changes_reload_or_conflict() {
        let t0 = Instant::now();
        let mut e = ed(None, t0);
        e.disk_changed(Ok(DOC.into()));
        assert_eq!(e.note, None, "no change: ignored");
        e.disk_changed(Ok("new\n".into()));
        assert_eq!(e.text(), "new\n");
        assert!(!e.is_dirty());

        e.cursor_to(false);
        e.area.insert_str("mine ");
        assert!(e.is_dirty());
        e.disk_changed(Ok("theirs\n".into()));
        assert_eq!(
            e.prompt,
            Prompt::Conflict {
                disk: "theirs\n".into()
            }
        );
        assert_eq!(
            e.text(),
            "mine new\n",
            "the buffer is untouched until answered"
        );
        e.resolve_conflict(false);
        assert_eq!(e.prompt, Prompt::None);
        assert!(e.is_dirty(), "kept edits stay unsaved");

        e.disk_changed(Ok("third\n".into()));
        e.resolve_conflict(true);
        assert_eq!(e.text(), "third\n");
        assert!(!e.is_dirty());

        e.disk_changed(Err(std::io::Error::other("No such file").into()));
        assert!(e.disk_text.is_none());
        assert!(e.is_dirty(), "a deleted file makes the buffer unsaved");
    }

    #[test]
    fn the_cursor_starts_in_the_first_section_and_ctrl_end_reaches_the_end() {
        let t0 = Instant::now();
        let doc =
            "# Handoff · step demo · generation 2\n\n## Doing\nFixing it.\nStill.\n\n## Next\ny\n";
        let mut e = SideEditor::open("/n/h.md".into(), doc, None, t0);
        assert_eq!(e.area.cursor(), DataCursor(4, 6), "after `Still.`");
        e.area.insert_str(" more");
        assert_eq!(
            e.text(),
            "# Handoff · step demo · generation 2\n\n## Doing\nFixing it.\nStill. more\n\n## Next\ny\n",
            "the header line is untouched"
        );
        e.cursor_to(true);
        assert_eq!(e.area.cursor(), DataCursor(7, 1));
        e.cursor_to(false);
        assert_eq!(e.area.cursor(), DataCursor(0, 0));
        // No section with text: the end of the document.
        let e = SideEditor::open("x".into(), "# Handoff\n## Doing\n## Next\n", None, t0);
        assert_eq!(e.area.cursor(), DataCursor(2, 7));
        let e = SideEditor::open("x".into(), "", None, t0);
        assert_eq!(e.area.cursor(), DataCursor(0, 0));
    }

    #[test]
    fn revert_restores_the_disk_text() {
        let t0 = Instant::now();
        let mut e = ed(Some(15), t0);
        e.area.insert_str("typo");
        e.revert();
        assert_eq!(e.text(), DOC);
    }
}
