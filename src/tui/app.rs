//! The app shell: one `tokio::select!` loop over the terminal's events, the engine's events, the
//! file watcher, signals and the frame requester. It handles one event, drains what is queued,
//! and draws once when a frame is due. The reducer decides; this file does the I/O it asks for.

use std::collections::VecDeque;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use crossterm::event::{Event as TermEvent, EventStream};
use futures_util::StreamExt;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::mpsc::{self, error::TrySendError};
use tokio::time::sleep_until;

use crate::engine::fsutil::{atomic_write, now_unix};
use crate::engine::protocol::{Event, HandoffId, Op};
use crate::launch::recv_signal;

use super::export_file;
use super::file_queries::FileQueries;
use super::file_watch::FileWatch;
use super::frame::FrameRequester;
use super::history_file;
use super::msg::{Effect, FileError, Msg};
use super::render::theme::Theme;
use super::state::{AppState, initial_state};
use super::term_in::{WHEEL_BURST_MAX, term_msg, wheel_arrow};
use super::term_out;
use super::terminal::{self, Tui};
use super::unsaved_copy;
use super::update::update;
use super::view::{ViewCache, view};
use super::{Outcome, TuiParams};

/// Engine events handled per wake-up before a frame gets a chance to draw.
const DRAIN_BATCH: usize = 1024;
/// On the way out, the keys are read until none has come for this long…
const KEYS_QUIET: Duration = Duration::from_millis(300);
/// …or for this long at most (a long paste still arriving).
const KEYS_AT_MOST: Duration = Duration::from_secs(2);

/// Keep going or stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Continue,
    Quit,
}

/// What came of a frame.
enum Drawn {
    /// Drawn (or not needed: the state asked to quit first).
    Yes(Flow),
    /// The terminal did not take it.
    Failed(std::io::Error),
}

/// What woke the loop.
enum Wake {
    Frame,
    Quit,
    /// SIGINT (from outside, or Ctrl-C during `$EDITOR`): ignored.
    Interrupt,
    Term(Option<std::io::Result<TermEvent>>),
    Engine(Option<Event>),
    File(PathBuf),
    Files(Msg),
}

/// Bytes for the terminal itself, between frames (they draw nothing).
fn write_raw(bytes: &[u8]) {
    use std::io::Write as _;
    if bytes.is_empty() {
        return;
    }
    let mut out = std::io::stdout();
    let _ = out.write_all(bytes);
    let _ = out.flush();
}

fn read_text(path: &Path) -> Result<String, FileError> {
    Ok(std::fs::read_to_string(path)?)
}

/// Take SIGINT over for the rest of the process, so it no longer kills it. In raw mode Ctrl-C
/// arrives as a key; SIGINT comes only from outside, or from Ctrl-C while `$EDITOR` runs on the
/// cooked terminal, and neither may take the session (and unsaved edits) down. The caller drains
/// and ignores the stream; `None` if the handler could not be installed.
fn take_over_interrupts() -> Option<Signal> {
    signal(SignalKind::interrupt()).ok()
}

/// Run the TUI until the user quits, the terminal closes, or SIGTERM/SIGHUP arrives.
pub(crate) async fn run(params: TuiParams) -> anyhow::Result<Outcome> {
    let sigint = take_over_interrupts();
    let (state, theme) = initial_state(&params);
    let tui = terminal::enter(params.mouse_capture).context("cannot set up the terminal")?;
    let (watch_tx, watch_rx) = mpsc::unbounded_channel();
    let mut shell = Shell {
        tui,
        state,
        cache: ViewCache::new(),
        theme,
        ops: params.ops,
        events: params.events,
        link_open: true,
        frames: FrameRequester::new(),
        watch: None,
        watch_tx,
        watch_rx,
        sigint,
        notify: params.notify,
        tmux: std::env::var_os("TMUX").is_some(),
        exit_notes: Vec::new(),
        files: FileQueries::new(params.workspace.clone()),
        workspace: params.workspace.clone(),
        on_first_frame: params.on_first_frame,
        leaving: false,
    };
    let result = shell.run().await;
    terminal::restore();
    let Shell {
        tui,
        state,
        exit_notes,
        ..
    } = shell;
    // `restore` showed the cursor already. ratatui's own drop would show it again and, with the
    // terminal gone (closed window, `tmux kill-session`), `eprintln!` its failure, which panics
    // and ends the process before the engine has kept its records: it is not run.
    std::mem::forget(tui);
    // What the way out did with unsaved edits, where the user (or their scrollback) can read it.
    // (Not `eprintln!`: with the terminal gone a failed write must not panic.)
    for note in &exit_notes {
        let _ = writeln!(std::io::stderr(), "flower-tui: {note}");
    }
    // Messages still queued (a signal, or the engine gone) were never sent: say so, masked.
    for line in unsent_notes(&state) {
        tracing::warn!("{line}");
        let _ = writeln!(std::io::stderr(), "flower-tui: {line}");
    }
    let outcome = Outcome {
        session_id: state.session.session_id().map(str::to_string),
        generation: state.session.generation(),
        run_id: state.session.run_id().map(str::to_string),
        conversation: super::info_commands::conversation_markdown(state.chat.cells().iter()),
        latest_handoff: state.editor.latest_handoff().map(Path::to_path_buf),
    };
    result.map(|()| outcome)
}

struct Shell {
    tui: Tui,
    state: AppState,
    cache: ViewCache,
    theme: Theme,
    ops: mpsc::Sender<Op>,
    events: mpsc::UnboundedReceiver<Event>,
    link_open: bool,
    frames: FrameRequester,
    watch: Option<FileWatch>,
    watch_tx: mpsc::UnboundedSender<PathBuf>,
    watch_rx: mpsc::UnboundedReceiver<PathBuf>,
    sigint: Option<Signal>,
    notify: crate::config::Notify,
    /// Inside tmux: OSC sequences go through its passthrough.
    tmux: bool,
    /// Printed after the terminal is restored (unsaved edits kept on the way out).
    exit_notes: Vec<String>,
    files: FileQueries,
    /// Run once the first frame is drawn.
    on_first_frame: Option<Box<dyn FnOnce() + Send>>,
    /// On the way out: the keys still pending are being read.
    leaving: bool,
    /// The workspace (`/export` writes there unless told otherwise).
    workspace: PathBuf,
}

impl Shell {
    async fn run(&mut self) -> anyhow::Result<()> {
        let mut sigterm = signal(SignalKind::terminate()).ok();
        let mut sighup = signal(SignalKind::hangup()).ok();
        let mut term = EventStream::new();
        self.frames.schedule_frame(Instant::now());
        loop {
            if !terminal::is_active() {
                // The panic hook restored the terminal (a panic on another task): drawing on
                // would scribble over the user's shell.
                anyhow::bail!("stopping the TUI after a panic (see the message above)");
            }
            let deadline = self.frames.deadline();
            let wake = tokio::select! {
                biased;
                _ = sleep_until(deadline.unwrap_or_else(Instant::now).into()), if deadline.is_some() => Wake::Frame,
                _ = recv_signal(&mut sigterm) => Wake::Quit,
                _ = recv_signal(&mut sighup) => Wake::Quit,
                _ = recv_signal(&mut self.sigint) => Wake::Interrupt,
                ev = term.next() => Wake::Term(ev),
                ev = self.events.recv(), if self.link_open => Wake::Engine(ev),
                Some(path) = self.watch_rx.recv() => Wake::File(path),
                Some(msg) = self.files.answers.recv() => Wake::Files(msg),
            };
            let flow = match wake {
                Wake::Frame => match self.frame(&mut term)? {
                    Drawn::Yes(flow) => flow,
                    Drawn::Failed(e) => {
                        return self
                            .terminal_failed(e, "drawing the screen", &mut term)
                            .await;
                    }
                },
                Wake::Files(msg) => {
                    self.files.answered();
                    let flow = self.dispatch(msg, &mut term)?;
                    self.frames.expedite_for_input(Instant::now());
                    flow
                }
                // SIGTERM, SIGHUP, the terminal closed: keep unsaved edits, then go.
                Wake::Quit | Wake::Term(None) => self.leave(&mut term).await?,
                Wake::Interrupt => Flow::Continue,
                Wake::Term(Some(Err(e))) => {
                    return self
                        .terminal_failed(e, "reading the terminal", &mut term)
                        .await;
                }
                Wake::Term(Some(Ok(ev))) => {
                    let mut flow = Flow::Continue;
                    for msg in self.term_msgs(ev, &mut term) {
                        flow = self.dispatch(msg, &mut term)?;
                        if flow == Flow::Quit {
                            break;
                        }
                    }
                    // The user's own input is drawn at once, not at the stream's next slot.
                    self.frames.expedite_for_input(Instant::now());
                    flow
                }
                Wake::Engine(None) => {
                    self.link_open = false;
                    self.dispatch(Msg::EngineClosed, &mut term)?
                }
                Wake::Engine(Some(ev)) => self.engine_batch(ev, &mut term)?,
                Wake::File(path) => {
                    let mut paths = vec![path];
                    while let Ok(p) = self.watch_rx.try_recv() {
                        if !paths.contains(&p) {
                            paths.push(p);
                        }
                    }
                    let mut flow = Flow::Continue;
                    for path in paths {
                        let content = read_text(&path);
                        flow = self.dispatch(Msg::FileChanged { path, content }, &mut term)?;
                    }
                    flow
                }
            };
            if flow == Flow::Quit {
                return Ok(());
            }
        }
    }

    /// A terminal event as messages. While the mouse is the terminal's, its wheel arrives as
    /// Up / Down keys (alternate scroll mode), several to a notch in one read: in the plain
    /// input, a run of the same arrow that arrived together scrolls the chat, one at a time (a
    /// key pressed, or held) is the key. The events read behind it follow as they came.
    fn term_msgs(&mut self, first: TermEvent, term: &mut EventStream) -> Vec<Msg> {
        let arrow = wheel_arrow(&first);
        // Only where arrows move through the input's history: a picker, a popup, an approval
        // prompt or the side editor keep every arrow.
        let plain_input = self.state.contexts(Instant::now())
            == [
                super::keymap::Context::Input,
                super::keymap::Context::Global,
            ];
        if arrow.is_none() || self.state.settings.mouse_capture || !plain_input {
            return term_msg(first, &self.cache).into_iter().collect();
        }
        let mut events = vec![first];
        // What the terminal sent in the same breath, read without waiting (the stream's own
        // poll is not used: a poll that finds nothing leaves its wake-up with a waker nobody
        // listens to). The stream reads from the same queue, so nothing is read twice.
        let _ = term;
        while events.len() < WHEEL_BURST_MAX
            && crossterm::event::poll(Duration::ZERO).unwrap_or(false)
        {
            match crossterm::event::read() {
                Ok(ev) => events.push(ev),
                Err(_) => break,
            }
        }
        let run = events
            .iter()
            .take_while(|e| wheel_arrow(e) == arrow)
            .count();
        let mut msgs = Vec::new();
        let mut rest = events.into_iter();
        if run >= 2 {
            let up = arrow == Some(true);
            let kind = if up {
                crossterm::event::MouseEventKind::ScrollUp
            } else {
                crossterm::event::MouseEventKind::ScrollDown
            };
            for _ in rest.by_ref().take(run) {
                msgs.push(Msg::Mouse {
                    event: crossterm::event::MouseEvent {
                        kind,
                        column: 0,
                        row: 0,
                        modifiers: crossterm::event::KeyModifiers::NONE,
                    },
                    pane: Some(super::msg::Pane::Chat),
                    cell: None,
                });
            }
        }
        msgs.extend(rest.filter_map(|ev| term_msg(ev, &self.cache)));
        msgs
    }

    /// One engine event, then whatever else is already queued (up to a batch).
    fn engine_batch(&mut self, first: Event, term: &mut EventStream) -> anyhow::Result<Flow> {
        if self.dispatch(Msg::Engine(first), term)? == Flow::Quit {
            return Ok(Flow::Quit);
        }
        for _ in 0..DRAIN_BATCH {
            match self.events.try_recv() {
                Ok(ev) => {
                    if self.dispatch(Msg::Engine(ev), term)? == Flow::Quit {
                        return Ok(Flow::Quit);
                    }
                }
                Err(mpsc::error::TryRecvError::Empty) => break,
                Err(mpsc::error::TryRecvError::Disconnected) => {
                    self.link_open = false;
                    return self.dispatch(Msg::EngineClosed, term);
                }
            }
        }
        Ok(Flow::Continue)
    }

    /// Run a message through the reducer and execute its effects, and those of the messages the
    /// effects produce.
    fn dispatch(&mut self, msg: Msg, term: &mut EventStream) -> anyhow::Result<Flow> {
        let mut queue = VecDeque::from([msg]);
        while let Some(msg) = queue.pop_front() {
            let now = Instant::now();
            for effect in update(&mut self.state, msg, now) {
                if self.execute(effect, now, &mut queue, term)? == Flow::Quit {
                    return Ok(Flow::Quit);
                }
            }
        }
        Ok(Flow::Continue)
    }

    /// Writing or reading the terminal failed. Whatever the cause, the edits are kept first, as
    /// on SIGHUP. A terminal that is gone is the user leaving, a clean exit as on SIGHUP: the
    /// kernel fails every write to a closed terminal before it even sends that signal, so a frame
    /// due in between (a spinner, the echo of a key) is how the program learns of it first.
    /// Anything else is an error.
    async fn terminal_failed(
        &mut self,
        e: std::io::Error,
        doing: &'static str,
        term: &mut EventStream,
    ) -> anyhow::Result<()> {
        self.leave(term).await?;
        if terminal::gone(&e) {
            tracing::info!("the terminal is gone ({doing}: {e}): leaving as on SIGHUP");
            Ok(())
        } else {
            Err(e).context(doing)
        }
    }

    /// The way out (SIGTERM, SIGHUP, a terminal that is gone). Every key the terminal has
    /// delivered, or still holds, goes where it was typed first: the loop takes a signal or a due
    /// frame before the keys already read behind it, and the edits they make are the user's. Then
    /// the unsaved edits are kept. A key read here that quits ends it there.
    async fn leave(&mut self, term: &mut EventStream) -> anyhow::Result<Flow> {
        self.leaving = true;
        if terminal::keys_can_be_drained() {
            let started = Instant::now();
            while started.elapsed() < KEYS_AT_MOST {
                let Ok(Some(Ok(ev))) = tokio::time::timeout(KEYS_QUIET, term.next()).await else {
                    break;
                };
                if let Some(msg) = term_msg(ev, &self.cache)
                    && self.dispatch(msg, term)? == Flow::Quit
                {
                    return Ok(Flow::Quit);
                }
            }
        }
        self.dispatch(Msg::Hangup, term)
    }

    /// A frame is due: time-driven state first, then draw, then the animation's next frame.
    fn frame(&mut self, term: &mut EventStream) -> anyhow::Result<Drawn> {
        let now = Instant::now();
        let mut later = Vec::new();
        let mut queue = VecDeque::new();
        for effect in update(&mut self.state, Msg::Tick, now) {
            match effect {
                Effect::ScheduleFrame(_) => later.push(effect),
                other => {
                    if self.execute(other, now, &mut queue, term)? == Flow::Quit {
                        return Ok(Drawn::Yes(Flow::Quit));
                    }
                }
            }
        }
        while let Some(msg) = queue.pop_front() {
            if self.dispatch(msg, term)? == Flow::Quit {
                return Ok(Drawn::Yes(Flow::Quit));
            }
        }
        let (state, cache, theme) = (&self.state, &mut self.cache, &self.theme);
        if let Err(e) = self.tui.draw(|f| view(f, state, cache, theme, now)) {
            return Ok(Drawn::Failed(e));
        }
        self.frames.frame_drawn(now);
        // The first frame is up: the `@` index walks in the background from now on, and the
        // MCP servers spawn their processes.
        self.files.index();
        if let Some(first) = self.on_first_frame.take() {
            first();
        }
        let mut none = VecDeque::new();
        for effect in later {
            self.execute(effect, now, &mut none, term)?;
        }
        Ok(Drawn::Yes(Flow::Continue))
    }

    /// The way out with unsaved edits: beside the file (or in the temp dir), the engine told
    /// where when they belong to the review it waits on; the result is printed after restore.
    fn keep_unsaved_on_exit(&mut self, path: &Path, text: &str, handoff: Option<HandoffId>) {
        // The demo's scratch copy is removed on the way out (and never continued): its edits go
        // to the temp directory.
        let demo = self.state.status.labels().demo;
        let beside = if demo {
            std::env::temp_dir().join(path.file_name().unwrap_or_default())
        } else {
            path.to_path_buf()
        };
        match unsaved_copy::keep_unsaved(&beside, text, now_unix().0) {
            Ok(kept) => {
                tracing::info!(from = %path.display(), kept = %kept.display(), "unsaved edits kept on the way out");
                self.exit_notes.push(format!(
                    "your unsaved edits to {} are kept in {}",
                    path.display(),
                    kept.display()
                ));
                if let Some(handoff) = handoff.filter(|_| !demo) {
                    let _ = self.ops.try_send(Op::UnsavedEdits {
                        handoff,
                        path: kept,
                    });
                    self.exit_notes.push(
                        "the handoff was not turned over: flower-tui --continue reopens its review"
                            .into(),
                    );
                }
            }
            Err(e) => {
                tracing::error!(from = %path.display(), "unsaved edits could not be kept: {e}");
                self.exit_notes.push(format!(
                    "your unsaved edits to {} could not be kept ({e}); they were:\n{text}",
                    path.display()
                ));
            }
        }
    }

    fn execute(
        &mut self,
        effect: Effect,
        now: Instant,
        queue: &mut VecDeque<Msg>,
        term: &mut EventStream,
    ) -> anyhow::Result<Flow> {
        match effect {
            Effect::SendOp(op) => match self.ops.try_send(op) {
                Ok(()) => {}
                Err(TrySendError::Full(op)) => queue.push_back(Msg::SendFailed {
                    op,
                    reason: "the engine is busy; try again".into(),
                }),
                Err(TrySendError::Closed(op)) => queue.push_back(Msg::SendFailed {
                    op,
                    reason: "the engine has stopped".into(),
                }),
            },
            Effect::Quit => {
                let _ = self.ops.try_send(Op::Shutdown);
                return Ok(Flow::Quit);
            }
            // On the way out no editor is started: the terminal is gone or going.
            Effect::OpenExternalEditor(_) if self.leaving => {}
            Effect::OpenExternalEditor(path) => {
                let result = match self.state.settings.editor_cmd.clone() {
                    None => Err(FileError::NoEditor),
                    Some(cmd) => {
                        // The old stream's reader thread would steal the editor's keystrokes.
                        drop(std::mem::replace(term, EventStream::new()));
                        match terminal::run_external_editor(&mut self.tui, &cmd, &path) {
                            Ok(status) if status.success() => read_text(&path),
                            Ok(status) => Err(FileError::EditorFailed {
                                command: cmd,
                                status,
                            }),
                            Err(e) => Err(FileError::EditorNotRun {
                                command: cmd,
                                reason: Box::new(e.into()),
                            }),
                        }
                    }
                };
                queue.push_back(Msg::ExternalEditorDone { path, result });
                self.frames.schedule_frame(now);
            }
            Effect::SaveEditor { path, text } => {
                // A folder deleted with the file (during a review) is made again.
                let folder = path.parent().map_or(Ok(()), std::fs::create_dir_all);
                let result = folder
                    .and_then(|()| atomic_write(&path, text.as_bytes()))
                    .map_err(FileError::from);
                queue.push_back(Msg::Saved { path, text, result });
            }
            Effect::KeepUnsaved { path, text } => {
                let result =
                    unsaved_copy::keep_unsaved(&path, &text, now_unix().0).map_err(FileError::from);
                queue.push_back(Msg::UnsavedKept { from: path, result });
            }
            Effect::LoadEditor(path) => {
                let content = read_text(&path);
                queue.push_back(Msg::EditorLoaded { path, content });
            }
            Effect::KeepUnsavedOnExit {
                path,
                text,
                handoff,
            } => self.keep_unsaved_on_exit(&path, &text, handoff),
            Effect::LoadUnsaved(path) => {
                let content = read_text(&path);
                queue.push_back(Msg::UnsavedLoaded { path, content });
            }
            Effect::DiscardUnsaved(path) => {
                let result = std::fs::remove_file(&path).map_err(FileError::from);
                queue.push_back(Msg::UnsavedDiscarded { path, result });
            }
            Effect::ScrollChat(s) => self.cache.scroll_chat(s),
            Effect::ScheduleFrame(None) => self.frames.schedule_frame(now),
            Effect::ScheduleFrame(Some(d)) => self.frames.schedule_frame_in(now, d),
            Effect::WatchFile(path) => {
                self.watch = None;
                match FileWatch::new(&path, self.watch_tx.clone()) {
                    Ok(w) => self.watch = Some(w),
                    Err(e) => queue.push_back(Msg::WatchFailed {
                        path,
                        reason: e.to_string(),
                    }),
                }
            }
            Effect::UnwatchFile => self.watch = None,
            Effect::ScrollPrompt(delta) => self.cache.scroll_prompt(delta),
            Effect::AppendHistory(text) => {
                if let Some(path) = self.state.settings.history_file.as_deref()
                    && let Err(e) = history_file::append(path, &text)
                {
                    tracing::warn!("input history {}: {e}", path.display());
                }
            }
            Effect::Export { path, markdown } => {
                let (path, result) = export_file::write(&self.workspace, path, &markdown);
                queue.push_back(Msg::Exported { path, result });
            }
            Effect::MouseCapture(on) => terminal::set_mouse_capture(on),
            Effect::CopyToClipboard(text) => {
                write_raw(&term_out::clipboard(&text, self.tmux));
            }
            Effect::PasteImage => {
                use crate::engine::images::clipboard;
                let pasted = clipboard::paste_to_file(&clipboard::paste_dir());
                queue.push_back(Msg::ImagePasted(pasted));
            }
            Effect::Notify(message) => {
                write_raw(&term_out::notification(self.notify, &message, self.tmux));
            }
            Effect::QueryFiles {
                seq,
                query,
                refresh,
            } => self.files.query(seq, query, refresh),
        }
        Ok(Flow::Continue)
    }
}

/// One line per queued message that was never sent, naming its start (masked) and where it can
/// be found again.
fn unsent_notes(state: &AppState) -> Vec<String> {
    let again = if state.settings.history_file.is_some() {
        " (Up recalls it from the input history)"
    } else {
        ""
    };
    state
        .input
        .queued()
        .iter()
        .map(|q| {
            let text = crate::engine::secrets::redact(&q.raw);
            let start = crate::engine::text::one_line(&text, 80);
            format!("a queued message was not sent{again}: {start}")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn sigint_is_taken_over_and_does_not_kill_the_process() {
        let mut sigint = take_over_interrupts().expect("SIGINT handler");
        // Without the handler this kills the whole test binary.
        let status = std::process::Command::new("kill")
            .args(["-INT", &std::process::id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let got = tokio::time::timeout(Duration::from_secs(5), sigint.recv()).await;
        assert_eq!(got.unwrap(), Some(()), "the signal arrives as an event");
    }

    #[test]
    fn read_text_reports_errors() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_text(&dir.path().join("missing")).is_err());
        std::fs::write(dir.path().join("bin"), [0xff, 0xfe, 0x00]).unwrap();
        assert!(read_text(&dir.path().join("bin")).is_err());
    }
}
