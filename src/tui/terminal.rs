//! The terminal guard: raw mode, alternate screen, bracketed paste, mouse capture, and one
//! idempotent [`restore`] shared by normal exit, error exit, the panic hook and the signal path.

use std::io::{self, Stdout, Write};
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

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
static PANIC_HOOK: Once = Once::new();

/// Put the terminal into the app's modes. Safe to call again after [`restore`].
fn enter_modes() -> io::Result<()> {
    // Mark active first: if anything below fails, restore() undoes what did happen.
    ACTIVE.store(true, Ordering::SeqCst);
    enable_raw_mode()?;
    let mut out = io::stdout();
    execute!(
        out,
        EnterAlternateScreen,
        EnableBracketedPaste,
        EnableMouseCapture
    )?;
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

/// Enter the app's terminal modes and build the ratatui terminal; installs the panic hook once.
pub(crate) fn enter() -> io::Result<Tui> {
    install_panic_hook();
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
