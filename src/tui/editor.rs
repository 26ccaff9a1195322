//! The side editor: a textarea on the frozen handoff file (the cursor starts in the first
//! section's text, never on the header line), the review countdown (pure: time is passed in),
//! what is known to be on disk, the questions it asks (a change on disk, unsaved edits, a kept
//! copy to restore, the plan) and what typing, pasting, saving, Esc and Ctrl-E do to it. The
//! reducer drives it; file I/O (save, reload, watch) happens in `app.rs` through effects and
//! messages.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crossterm::event::KeyEvent;
use ratatui_textarea::{CursorMove, DataCursor, Scrolling, TextArea};

use super::input::human_bytes;
use super::keymap::{Action, label_for};
use super::msg::{Effect, FileError};
use super::render::editor_view::{TextAreaStyles, style_editor};
use crate::engine::handoff::store::foreign;

use super::editor_review::{AfterSave, Escape, External, Landed, Prompt, Review, conflict_keys};

/// The largest paste the side editor takes (its textarea re-measures every line on each edit).
pub(crate) const EDITOR_PASTE_MAX: usize = 1024 * 1024;

/// The side editor.
#[derive(Debug, Clone)]
pub(crate) struct SideEditor {
    /// The file being edited.
    path: PathBuf,
    /// The buffer.
    area: TextArea<'static>,
    /// The file's text as last seen on disk (loaded, saved or reloaded); `None` when it is gone.
    disk_text: Option<String>,
    /// The review window, if one runs.
    review: Review,
    /// The question shown on the last line, if any.
    prompt: Prompt,
    /// A short status note shown under the buffer ("saved", "reloaded from disk", …).
    note: Option<String>,
    /// The focus the textarea was last styled for (`None`: not styled since it was built).
    styled_focus: Option<bool>,
    /// What follows the save in flight.
    after_save: AfterSave,
    /// The document under review is degraded: why its writing failed (shown in the title).
    degraded: Option<String>,
    trailing_newline: bool,
}

/// `\r\n` → `\n`, so a CRLF file does not look edited.
fn normalize(text: &str) -> String {
    text.replace("\r\n", "\n")
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

    /// The file being edited.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The buffer, to draw.
    pub(crate) fn area(&self) -> &TextArea<'static> {
        &self.area
    }

    /// The question shown on the last line.
    pub(crate) fn prompt(&self) -> &Prompt {
        &self.prompt
    }

    /// The note shown under the buffer, if any.
    pub(crate) fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// Why the document under review is degraded, if it is.
    pub(crate) fn degraded(&self) -> Option<&str> {
        self.degraded.as_deref()
    }

    /// Where the review window stands.
    #[cfg(test)]
    pub(crate) fn review(&self) -> Review {
        self.review
    }

    /// A short note under the buffer.
    pub(crate) fn set_note(&mut self, note: impl Into<String>) {
        self.note = Some(note.into());
    }

    /// The document under review is degraded (why its writing failed), or not.
    pub(crate) fn set_degraded(&mut self, why: Option<String>) {
        self.degraded = why;
    }

    /// Styles the textarea for the focus, only when the focus or the buffer changed since it was
    /// last styled (its heading pattern is compiled then).
    pub(crate) fn style(&mut self, styles: &TextAreaStyles, focused: bool) {
        if self.styled_focus != Some(focused) {
            style_editor(&mut self.area, styles, focused);
            self.styled_focus = Some(focused);
        }
    }

    /// A key typed into the buffer: it pauses the review countdown. Nothing is typed while a
    /// question stands (answer it first: r / k, r / d, s / d / Esc, i / f / p / Esc; Ctrl-S).
    pub(crate) fn type_key(&mut self, key: KeyEvent, now: Instant) {
        if self.asks() {
            return;
        }
        self.pause(now);
        self.prompt = Prompt::None;
        self.note = None;
        super::render::editor_view::edit_key(&mut self.area, key);
    }

    /// Text pasted into the buffer (it pauses the countdown); one over [`EDITOR_PASTE_MAX`] is
    /// refused with a note. Nothing is pasted while a question stands.
    pub(crate) fn paste(&mut self, text: String, now: Instant) {
        if self.asks() {
            return;
        }
        self.pause(now);
        self.prompt = Prompt::None;
        if text.len() > EDITOR_PASTE_MAX {
            self.note = Some(format!(
                "paste too large for the editor ({}); {} opens $EDITOR",
                human_bytes(text.len()),
                label_for(Action::ExternalEditor)
            ));
        } else {
            self.area.insert_str(text);
        }
    }

    /// The mouse wheel: the buffer scrolls by `rows`.
    pub(crate) fn scroll(&mut self, rows: i16) {
        self.area.scroll(Scrolling::Delta { rows, cols: 0 });
    }

    /// Ctrl-Home / Ctrl-End: the start or the end of the document (the countdown pauses).
    pub(crate) fn jump_to(&mut self, end: bool, now: Instant) {
        self.pause(now);
        self.cursor_to(end);
    }

    /// The save to do: the buffer to the file.
    fn save_effect(&self) -> Effect {
        Effect::SaveEditor {
            path: self.path.clone(),
            text: self.text(),
        }
    }

    /// Ctrl-S: the buffer is saved (during the review, the review ends once it is on disk).
    /// `None` while a save of the review is in flight.
    pub(crate) fn begin_save(&mut self) -> Option<Effect> {
        if self.review == Review::Saving {
            return None;
        }
        if self.in_review() {
            self.review = Review::Saving;
        }
        self.prompt = Prompt::None;
        self.note = Some("saving…".into());
        Some(self.save_effect())
    }

    /// What follows the save in flight.
    pub(crate) fn then(&mut self, after: AfterSave) {
        self.after_save = after;
    }

    /// A save of `text` landed with `result`: the disk holds it, or the save failed (the note
    /// says so; a review whose save failed waits paused, Esc goes on with the file on disk).
    pub(crate) fn save_landed(&mut self, text: &str, result: &Result<(), FileError>) -> Landed {
        let after = std::mem::replace(&mut self.after_save, AfterSave::Stay);
        // The file was gone (deleted during the review): this save wrote it again.
        let recreated = self.disk_text.is_none();
        let saving = self.review == Review::Saving;
        match result {
            Ok(()) => {
                self.mark_disk(text);
                if saving {
                    self.review = Review::Over;
                    self.note = Some(if recreated {
                        "written back (the file had been deleted): the next session reads this \
                         text"
                            .into()
                    } else {
                        "saved: the next session reads this file".into()
                    });
                } else {
                    self.note = Some("saved".into());
                }
            }
            Err(e) => {
                if saving {
                    self.review = Review::Paused {
                        remaining: Duration::ZERO,
                    };
                }
                self.note = Some(if after == AfterSave::OpenExternal {
                    format!("save failed: {e}; $EDITOR not opened")
                } else {
                    format!("save failed: {e}")
                });
            }
        }
        Landed {
            after,
            review_ended: saving && result.is_ok(),
            recreated,
        }
    }

    /// Esc in the editor (`running`: something runs that Esc aborts). A restore offer is
    /// dismissed (its edits stay in their file); unsaved edits are asked about first (save /
    /// discard / keep editing, the countdown paused; a conflict on disk meanwhile becomes part
    /// of that question). With the file gone during the review there is nothing to discard the
    /// edits for: the editor leaves, and the review ends with the buffer written back.
    pub(crate) fn escape(&mut self, running: bool, now: Instant) -> Escape {
        let in_review = self.in_review();
        match (self.review, &self.prompt) {
            (Review::Saving, _) => return Escape::Wait,
            // Esc aborts what runs first, as it does in the input; the editor is left as it is.
            (Review::Over, _) if running => return Escape::Abort,
            (_, Prompt::Restore { .. }) => {
                self.prompt = Prompt::None;
                if !in_review {
                    return Escape::Wait;
                }
            }
            _ => {}
        }
        if self.is_dirty() && (self.disk_text.is_some() || !in_review) {
            self.resolve_conflict(false);
            self.pause(now);
            self.prompt = Prompt::Unsaved;
            self.note = None;
            return Escape::Asked;
        }
        Escape::Leave
    }

    /// The review ends with the file as it is on disk.
    pub(crate) fn end_review(&mut self, note: &str) {
        self.prompt = Prompt::None;
        self.review = Review::Over;
        self.note = Some(note.into());
    }

    /// The engine moved on (the review ended on its side): the countdown is moot.
    pub(crate) fn review_moot(&mut self) {
        if self.in_review() {
            self.review = Review::Over;
        }
    }

    /// The review ends while its file is gone from disk (deleted meanwhile): the buffer is what
    /// continues, so it is written back to the path first (the save returned), and the review
    /// ends once it is on disk. `None` when the file is there.
    pub(crate) fn write_back(&mut self) -> Option<Effect> {
        if self.disk_text.is_some() {
            return None;
        }
        self.review = Review::Saving;
        self.prompt = Prompt::None;
        self.note = Some("the file was deleted: writing this text back to it…".into());
        Some(self.save_effect())
    }

    /// Whether the unsaved-edits question stands.
    pub(crate) fn asks_unsaved(&self) -> bool {
        self.prompt == Prompt::Unsaved
    }

    /// Whether the plan question stands.
    pub(crate) fn asks_plan(&self) -> bool {
        self.prompt == Prompt::Plan
    }

    /// The plan question: implement here, in a fresh session, or keep planning.
    pub(crate) fn ask_plan(&mut self) {
        self.prompt = Prompt::Plan;
        self.note = None;
    }

    /// The question shown is left unanswered (back to editing); `note` says how to get back.
    pub(crate) fn keep_editing(&mut self, note: String) {
        self.prompt = Prompt::None;
        self.note = Some(note);
    }

    /// Ctrl-E: `$EDITOR` opens the file. It must hold the buffer, or the edits end in a
    /// conflict: unsaved edits are saved first; a conflict on disk is answered first.
    pub(crate) fn for_external(&mut self, now: Instant) -> External {
        self.pause(now);
        if matches!(self.prompt, Prompt::Conflict { .. }) {
            self.note = Some(format!(
                "the file changed on disk: {} first",
                conflict_keys()
            ));
            return External::Blocked;
        }
        if !self.is_dirty() {
            return External::Open;
        }
        self.after_save = AfterSave::OpenExternal;
        self.prompt = Prompt::None;
        self.note = Some("saving for $EDITOR…".into());
        External::Save(self.save_effect())
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
#[path = "editor_unit_tests.rs"]
mod tests;
