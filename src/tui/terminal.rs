//! The terminal guard: raw mode, alternate screen, bracketed paste, the mouse (left to the
//! terminal by default, so its selection works and the wheel scrolls through the terminal's
//! alternate-scroll mode; captured on request), and one
//! idempotent [`restore`] shared by normal exit, error exit, the panic hook and the signal path;
//! and, on the way out, whether the terminal is gone and how its last keys can still be read.

use std::io::{self, IsTerminal as _, Stdout, Write};
use std::os::fd::AsRawFd as _;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};
use std::time::Duration;

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// The terminal the app draws on.
pub(crate) type Tui = Terminal<CrosstermBackend<Stdout>>;

/// True while the terminal is in the app's modes (raw, alternate screen, …).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// True when keyboard enhancement flags were pushed and must be popped.
static KEYBOARD_FLAGS: AtomicBool = AtomicBool::new(false);
/// True when the keys are read from stdin (crossterm reads stdin when it is the terminal, and
/// opens `/dev/tty` otherwise), as it was when the app took the terminal over.
static KEYS_FROM_STDIN: AtomicBool = AtomicBool::new(false);
static PANIC_HOOK: Once = Once::new();
/// True while the app captures the mouse (clicks and the wheel as events; no terminal selection).
static MOUSE_CAPTURE: AtomicBool = AtomicBool::new(false);

/// xterm's alternate scroll mode: in the alternate screen the wheel sends Up / Down keys.
const ALTERNATE_SCROLL_ON: &[u8] = b"\x1b[?1007h";
const ALTERNATE_SCROLL_OFF: &[u8] = b"\x1b[?1007l";

/// Capture the mouse (`on`) or leave it to the terminal; takes effect at once while the app
/// holds the terminal, and on the next enter otherwise.
pub(crate) fn set_mouse_capture(on: bool) {
    MOUSE_CAPTURE.store(on, Ordering::SeqCst);
    if !ACTIVE.load(Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    let _ = if on {
        execute!(out, EnableMouseCapture)
    } else {
        execute!(out, DisableMouseCapture)
    };
}

/// Put the terminal into the app's modes. Safe to call again after [`restore`].
fn enter_modes() -> io::Result<()> {
    // Mark active first: if anything below fails, restore() undoes what did happen.
    ACTIVE.store(true, Ordering::SeqCst);
    enable_raw_mode()?;
    let mut out = io::stdout();
    execute!(out, EnterAlternateScreen, EnableBracketedPaste)?;
    // The wheel sends arrow keys in the alternate screen (xterm's alternate scroll mode); the
    // terminal keeps drag-select.
    out.write_all(ALTERNATE_SCROLL_ON)?;
    out.flush()?;
    if MOUSE_CAPTURE.load(Ordering::SeqCst) {
        execute!(out, EnableMouseCapture)?;
    }
    // Shift-Enter is only distinguishable from Enter with the kitty keyboard protocol.
    if crossterm::terminal::supports_keyboard_enhancement().unwrap_or(false)
        && execute!(
            out,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )
        .is_ok()
    {
        KEYBOARD_FLAGS.store(true, Ordering::SeqCst);
    }
    Ok(())
}

/// Enter the app's terminal modes (`mouse_capture`: with the mouse captured from the start) and
/// build the ratatui terminal; installs the panic hook once.
pub(crate) fn enter(mouse_capture: bool) -> io::Result<Tui> {
    install_panic_hook();
    MOUSE_CAPTURE.store(mouse_capture, Ordering::SeqCst);
    if io::stdin().is_terminal() && !KEYS_FROM_STDIN.swap(true, Ordering::SeqCst) {
        watch_for_hangup();
    }
    if let Err(e) = enter_modes() {
        restore();
        return Err(e);
    }
    match Terminal::new(CrosstermBackend::new(io::stdout())) {
        Ok(t) => Ok(t),
        Err(e) => {
            restore();
            Err(e)
        }
    }
}

/// Give the terminal back: leave the alternate screen, disable raw mode, paste and mouse modes,
/// show the cursor. Idempotent and infallible (errors are ignored: there is nowhere to report
/// them once the terminal is being torn down).
pub(crate) fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    if KEYBOARD_FLAGS.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = out.write_all(ALTERNATE_SCROLL_OFF);
    let _ = execute!(
        out,
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

/// True when `e`, from writing or reading the terminal, means that the terminal is gone (its
/// window closed, `tmux kill-session`, the line hung up). The kernel answers every write to it
/// with EIO from the moment it closes; once the hangup is complete the descriptor is no longer
/// a terminal either, which is what tells it apart when the failure came from elsewhere (the
/// size query falls back to `tput`, whose failure carries no useful error code).
pub(crate) fn gone(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EIO) || !io::stdout().is_terminal()
}

/// How often the hangup watcher looks whether the terminal is still there.
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// True when the keys still pending can be read to their end without the reader hanging: the
/// terminal is open, or it is gone and stdin is silenced ([`watch_for_hangup`]).
pub(crate) fn keys_can_be_drained() -> bool {
    io::stdin().is_terminal() || (KEYS_FROM_STDIN.load(Ordering::SeqCst) && silence_stdin())
}

/// A terminal that is gone answers every read with end of file, which the key reader takes for
/// "more to come" and reads again, without end, holding up whichever thread asked it for a key
/// (the app's loop too, which then handles neither SIGHUP nor its next frame). A watcher thread
/// replaces stdin by an empty socket that stays open within [`WATCH_EVERY`] of the terminal
/// going: the reader's next read says "nothing yet" and it waits, as on a quiet terminal, and the
/// keys it had already read still come out.
fn watch_for_hangup() {
    let watcher = std::thread::Builder::new()
        .name("hangup-watch".into())
        .spawn(|| {
            while io::stdin().is_terminal() {
                std::thread::sleep(WATCH_EVERY);
            }
            silence_stdin();
        });
    if let Err(e) = watcher {
        tracing::warn!("no hangup watcher: {e}");
    }
}

/// Make stdin an open, empty, non-blocking socket for the rest of the process, once; true when
/// it is.
fn silence_stdin() -> bool {
    static SILENCED: Mutex<bool> = Mutex::new(false);
    let mut done = SILENCED.lock().unwrap_or_else(|p| p.into_inner());
    if !*done {
        match silent_socket_as_stdin() {
            Ok(()) => *done = true,
            Err(e) => tracing::warn!("the closed terminal's input could not be replaced: {e}"),
        }
    }
    *done
}

fn silent_socket_as_stdin() -> io::Result<()> {
    let (quiet, peer) = UnixStream::pair()?;
    quiet.set_nonblocking(true)?;
    // SAFETY: both descriptors are open; dup2 only makes descriptor 0 a copy of `quiet`.
    if unsafe { libc::dup2(quiet.as_raw_fd(), libc::STDIN_FILENO) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // With its peer closed the socket would read as end of file again.
    std::mem::forget(peer);
    Ok(())
}

/// True while the app owns the terminal.
pub(crate) fn is_active() -> bool {
    ACTIVE.load(Ordering::SeqCst)
}

/// Restore the terminal before the previous panic hook prints, so the message is readable.
pub(crate) fn install_panic_hook() {
    PANIC_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}

/// `$EDITOR` on `path` the way a shell would run `$EDITOR "$path"`: `sh -c '<editor> "$1"' sh
/// <path>`, so `code --wait`, quoted arguments and paths with spaces or quotes all work (the
/// path is an argument, never part of the script). `None` when `editor` is blank.
pub(crate) fn editor_command(editor: &str, path: &Path) -> Option<Command> {
    if editor.trim().is_empty() {
        return None;
    }
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(path);
    Some(cmd)
}

/// Run `$EDITOR path` on the real terminal: restore, run it synchronously with inherited stdio,
/// re-enter and clear so the next draw is a full redraw. The caller must drop its crossterm
/// `EventStream` before calling, or its reader thread would steal the editor's keystrokes.
pub(crate) fn run_external_editor(
    tui: &mut Tui,
    editor: &str,
    path: &Path,
) -> io::Result<ExitStatus> {
    let mut cmd = editor_command(editor, path)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "$EDITOR is empty"))?;
    restore();
    let status = cmd.status();
    enter_modes()?;
    tui.clear()?;
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restore_is_idempotent_when_never_entered() {
        // Never entered here: both calls are no-ops and must not touch the test's terminal.
        restore();
        restore();
        assert!(!is_active());
    }

    #[test]
    fn eio_means_the_terminal_is_gone() {
        // What every write to a closed terminal returns, before SIGHUP is even sent.
        assert!(gone(&io::Error::from_raw_os_error(libc::EIO)));
    }

    #[test]
    fn editor_command_runs_through_the_shell() {
        let cmd = editor_command("code --wait", Path::new("/tmp/h.md")).unwrap();
        assert_eq!(cmd.get_program(), "sh");
        let args: Vec<_> = cmd.get_args().collect();
        assert_eq!(args, ["-c", "code --wait \"$1\"", "sh", "/tmp/h.md"]);
        assert!(editor_command("   ", Path::new("x")).is_none());
    }

    #[test]
    fn editor_command_runs_a_real_program_on_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("h.md");
        let mut touch = editor_command("touch", &file).unwrap();
        assert!(touch.status().unwrap().success());
        assert!(file.exists());
    }

    #[test]
    fn editor_command_keeps_quoted_arguments_and_odd_paths_whole() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("my notes \"$(touch pwned)\" 'x'.md");
        let mut cmd = editor_command("printf '%s|' 'two words' >", &file).unwrap();
        cmd.current_dir(dir.path());
        assert!(cmd.status().unwrap().success());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "two words|");
        assert!(
            !dir.path().join("pwned").exists(),
            "the path is data, not script"
        );
    }
}
