//! The reducer's vocabulary: the messages it reacts to and the effects it asks the app for. The
//! reducer, the view and the app all import this; it imports nothing of theirs.

use std::path::PathBuf;
use std::time::Duration;

use crossterm::event::{KeyEvent, MouseEvent};

use crate::engine::protocol::{Event, HandoffId, Op};

pub(crate) use super::render::chat::ChatScroll;

/// Why a file the app read, wrote or removed for the reducer could not be, or why `$EDITOR` did
/// not give the file back. Its text is what the user reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FileError {
    /// The system refused (its kind, and its message as the user reads it).
    #[error("{message}")]
    Io {
        /// What kind of failure.
        kind: std::io::ErrorKind,
        /// The system's message.
        message: String,
    },
    /// Ctrl-E with no `$EDITOR`.
    #[error("$EDITOR is not set")]
    NoEditor,
    /// `$EDITOR` ran and failed.
    #[error("`{command}` exited with {status}")]
    EditorFailed {
        /// The editor command.
        command: String,
        /// How it exited.
        status: std::process::ExitStatus,
    },
    /// `$EDITOR` could not be run.
    #[error("`{command}`: {reason}")]
    EditorNotRun {
        /// The editor command.
        command: String,
        /// Why.
        reason: Box<FileError>,
    },
}

impl From<std::io::Error> for FileError {
    fn from(e: std::io::Error) -> Self {
        FileError::Io {
            kind: e.kind(),
            message: e.to_string(),
        }
    }
}

/// A part of the screen, for mouse events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pane {
    /// The transcript.
    Chat,
    /// The input box.
    Input,
    /// The approval prompt above the input box.
    Approval,
    /// The side editor.
    Editor,
}

/// Everything the reducer reacts to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Msg {
    /// A key press.
    Key(KeyEvent),
    /// A bracketed paste.
    Paste(String),
    /// A mouse event, with the pane under it (the view's last layout decides).
    Mouse {
        /// The event.
        event: MouseEvent,
        /// The pane at its position, if any.
        pane: Option<Pane>,
        /// The chat cell drawn at its position in the last frame, if any.
        cell: Option<usize>,
    },
    /// The terminal was resized.
    Resize,
    /// An event from the engine.
    Engine(Event),
    /// The engine's event channel closed.
    EngineClosed,
    /// A frame is about to be drawn (time-driven state: countdown, Ctrl-C window).
    Tick,
    /// The watched file changed; `content` is what it holds now.
    FileChanged {
        /// The file.
        path: PathBuf,
        /// Its text, or why it could not be read.
        content: Result<String, FileError>,
    },
    /// `Effect::LoadEditor` finished.
    EditorLoaded {
        /// The file.
        path: PathBuf,
        /// Its text, or why it could not be read.
        content: Result<String, FileError>,
    },
    /// `Effect::SaveEditor` finished.
    Saved {
        /// The file.
        path: PathBuf,
        /// What was written.
        text: String,
        /// Whether the write landed.
        result: Result<(), FileError>,
    },
    /// `$EDITOR` exited; `result` is the file's content afterwards, or why it failed.
    ExternalEditorDone {
        /// The file.
        path: PathBuf,
        /// Its text afterwards, or why the editor failed.
        result: Result<String, FileError>,
    },
    /// `Effect::KeepUnsaved` finished.
    UnsavedKept {
        /// The file whose editor held the edits.
        from: PathBuf,
        /// Where the edits were written, or why they could not be.
        result: Result<PathBuf, FileError>,
    },
    /// `Effect::WatchFile` failed.
    WatchFailed {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// SIGTERM, SIGHUP or the terminal gone (closed, unreadable): the app ends now, and the
    /// side editor's unsaved edits must not end with it.
    Hangup,
    /// `Effect::LoadUnsaved` finished.
    UnsavedLoaded {
        /// The kept edits' file.
        path: PathBuf,
        /// Its text, or why it could not be read.
        content: Result<String, FileError>,
    },
    /// `Effect::DiscardUnsaved` finished.
    UnsavedDiscarded {
        /// The kept edits' file.
        path: PathBuf,
        /// Whether it was removed.
        result: Result<(), FileError>,
    },
    /// The answer to `Effect::QueryFiles`.
    FileMatches {
        /// The query it answers.
        seq: u64,
        /// Matching paths, best first (directories end with `/`).
        items: Vec<String>,
        /// The index was complete when it answered.
        complete: bool,
        /// Paths indexed so far.
        indexed: usize,
    },
    /// The answer to `Effect::PasteImage`: the file the clipboard's image was saved to, or why
    /// there is none.
    ImagePasted(Result<PathBuf, String>),
    /// `Effect::Export` finished: the file it wrote (or tried to).
    Exported {
        /// The file.
        path: PathBuf,
        /// Whether it was written.
        result: Result<(), FileError>,
    },
    /// An `Effect::SendOp` could not be queued.
    SendFailed {
        /// The op that was not sent.
        op: Op,
        /// Why.
        reason: String,
    },
}

/// What the app must do for the reducer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Effect {
    /// `try_send` to the engine; failure comes back as `Msg::SendFailed`.
    SendOp(Op),
    /// Leave the app (sends `Op::Shutdown`).
    Quit,
    /// Suspend the TUI and run `$EDITOR` on the path.
    OpenExternalEditor(PathBuf),
    /// Atomic write; the result comes back as `Msg::Saved`.
    SaveEditor {
        /// The file.
        path: PathBuf,
        /// The text to write.
        text: String,
    },
    /// Write an editor's unsaved text to a new file beside `path` (never over another); comes
    /// back as `Msg::UnsavedKept`.
    KeepUnsaved {
        /// The file the editor was on.
        path: PathBuf,
        /// The unsaved text.
        text: String,
    },
    /// Read the file for the side editor; comes back as `Msg::EditorLoaded`.
    LoadEditor(PathBuf),
    /// On the way out (`Msg::Hangup`): write the editor's unsaved text beside `path` now, and
    /// when `handoff` is under review tell the engine where (`Op::UnsavedEdits`), before the
    /// `Quit` that follows. What happened is printed once the terminal is restored.
    KeepUnsavedOnExit {
        /// The file the editor is on.
        path: PathBuf,
        /// The unsaved text.
        text: String,
        /// The handoff whose review the editor holds, if any.
        handoff: Option<HandoffId>,
    },
    /// Read unsaved edits kept by an earlier process; comes back as `Msg::UnsavedLoaded`.
    LoadUnsaved(PathBuf),
    /// Remove unsaved edits the user discarded; comes back as `Msg::UnsavedDiscarded`.
    DiscardUnsaved(PathBuf),
    /// Scroll the chat view.
    ScrollChat(ChatScroll),
    /// Scroll the approval prompt's body by this many rows (negative is up).
    ScrollPrompt(i32),
    /// Draw: now (`None`) or after a delay (an animation step).
    ScheduleFrame(Option<Duration>),
    /// Watch the file (replacing any previous watch); changes come back as `Msg::FileChanged`.
    WatchFile(PathBuf),
    /// Stop watching.
    UnwatchFile,
    /// `/export`: write `markdown` to `path` (relative: in the workspace), or to a new file in
    /// the workspace named after the time; comes back as `Msg::Exported`.
    Export {
        /// Where, as the user typed it.
        path: Option<PathBuf>,
        /// The conversation.
        markdown: String,
    },
    /// Append a sent message to this workspace's input history file.
    AppendHistory(String),
    /// Capture the mouse, or leave it to the terminal.
    MouseCapture(bool),
    /// Put text on the terminal's clipboard (OSC 52).
    CopyToClipboard(String),
    /// Read an image from the system clipboard into a file; comes back as `Msg::ImagePasted`.
    PasteImage,
    /// A long turn ended: ring the bell or post a desktop notification with this text.
    Notify(String),
    /// Fuzzy-match workspace paths (off the UI thread); the answer comes as `Msg::FileMatches`.
    QueryFiles {
        /// Numbers the query (answers to older ones are dropped).
        seq: u64,
        /// What follows the `@`.
        query: String,
        /// Files changed since the index walked: walk again (the old list answers meanwhile).
        refresh: bool,
    },
}
