//! A front end's own terminal for `bash`: an editor that offers terminals (the Agent Client
//! Protocol's `terminal/*`) runs the command in a terminal the user sees, embedded in the tool
//! call. Only a command the sandbox would not confine anyway goes there (the sandbox is off): a
//! terminal of the front end runs outside flower-tui's confinement, so a confined command stays in
//! flower-tui's sandbox. Approvals, checkpoints and the result's shape are the same either way;
//! the timeout, the interrupt and the output limit are handed to the front end with the command.
//!
//! A front end that cannot run the command (it refused the terminal, or it is gone) returns
//! `None`, and the command runs here as it would without it.

use std::fmt;
use std::future::Future;
use std::io;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;

/// A command to run in the front end's terminal: `bash -c command` in `cwd`.
pub struct TerminalRun<'a> {
    /// The tool call the terminal belongs to (the front end shows it there).
    pub call: &'a str,
    pub command: &'a str,
    pub cwd: &'a Path,
    /// Variables set for the command besides the front end's own.
    pub env: Vec<(String, String)>,
    /// Kill the command after this long.
    pub timeout: Duration,
    /// Keep at most this many bytes of output (the end of it).
    pub output_limit: u64,
    /// Resolves when the user stops the command (a dropped sender is no interrupt).
    pub interrupt: Option<oneshot::Receiver<()>>,
}

/// Why a command in the front end's terminal was killed before it ended by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TerminalStop {
    TimedOut,
    Interrupted,
}

/// What a command in the front end's terminal left behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalEnd {
    pub output: String,
    /// The front end dropped the start of the output to keep within the limit.
    pub truncated: bool,
    /// Its exit code, when it exited by itself.
    pub exit_code: Option<u32>,
    /// The signal that ended it (`SIGKILL` or `9`), when one did.
    pub signal: Option<String>,
    /// We killed it: its timeout passed or the user stopped it.
    pub stopped: Option<TerminalStop>,
    pub elapsed: Duration,
}

/// The future of a command in the front end's terminal; `None`: run it here instead.
pub type TerminalFuture<'a> =
    Pin<Box<dyn Future<Output = Option<io::Result<TerminalEnd>>> + Send + 'a>>;

/// A front end's terminals.
pub trait Terminals: Send + Sync {
    /// Run `run` to its end in a terminal of the front end. Dropping the future releases the
    /// terminal (the command is killed).
    fn run<'a>(&'a self, run: TerminalRun<'a>) -> TerminalFuture<'a>;
}

/// Where `bash` runs an unconfined command: here (the default) or in the front end's terminal.
#[derive(Clone, Default)]
pub struct TerminalAccess(Option<Arc<dyn Terminals>>);

impl TerminalAccess {
    /// Through `terminals`.
    pub fn through(terminals: Arc<dyn Terminals>) -> TerminalAccess {
        TerminalAccess(Some(terminals))
    }

    /// The front end's terminals, if it offers them.
    pub(crate) fn get(&self) -> Option<&dyn Terminals> {
        self.0.as_deref()
    }
}

impl fmt::Debug for TerminalAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "TerminalAccess(front end)"
        } else {
            "TerminalAccess(here)"
        })
    }
}

/// Two accesses are the same when both run here or both are the same front end's.
impl PartialEq for TerminalAccess {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Eq for TerminalAccess {}

/// The signal number of a front end's signal name (`SIGKILL`, `KILL`, `9`).
pub(crate) fn signal_number(name: &str) -> Option<i32> {
    let name = name.trim();
    if let Ok(n) = name.parse::<i32>() {
        return Some(n);
    }
    let bare = name.strip_prefix("SIG").unwrap_or(name);
    let n = match bare {
        "HUP" => libc::SIGHUP,
        "INT" => libc::SIGINT,
        "QUIT" => libc::SIGQUIT,
        "ABRT" => libc::SIGABRT,
        "KILL" => libc::SIGKILL,
        "SEGV" => libc::SIGSEGV,
        "PIPE" => libc::SIGPIPE,
        "TERM" => libc::SIGTERM,
        "BUS" => libc::SIGBUS,
        "FPE" => libc::SIGFPE,
        "ILL" => libc::SIGILL,
        _ => return None,
    };
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_names_and_numbers_are_read() {
        assert_eq!(signal_number("SIGKILL"), Some(9));
        assert_eq!(signal_number("TERM"), Some(15));
        assert_eq!(signal_number("9"), Some(9));
        assert_eq!(signal_number("SIGWHAT"), None);
    }

    #[test]
    fn accesses_compare_by_front_end() {
        struct Refuses;
        impl Terminals for Refuses {
            fn run<'a>(&'a self, _: TerminalRun<'a>) -> TerminalFuture<'a> {
                Box::pin(async { None })
            }
        }
        let a = TerminalAccess::through(Arc::new(Refuses));
        assert_eq!(a, a.clone());
        assert_ne!(a, TerminalAccess::default());
        assert_eq!(format!("{a:?}"), "TerminalAccess(front end)");
    }
}
