//! The engine's one error type, [`Error`], and the [`ErrorKind`]s the protocol carries.

use std::fmt;
use std::io;
use std::path::PathBuf;

use serde::Serialize;

use super::compact::CompactError;
use super::provider::ErrorKind as ProviderErrorKind;
use super::provider::ProviderError;

/// Everything that can go wrong in the engine (and in starting it, `launch.rs`).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A model request failed.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// A file or directory could not be read or written: `what` says which, in words.
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// `--continue`, `--resume` or `/resume` found nothing it can continue.
    #[error("cannot continue: {0}")]
    Resume(#[from] ResumeError),
    /// `--run-dir` names a directory that holds a run already, and no new `--step` for it.
    #[error(
        "--run-dir {} already holds a run: use --continue to go on with it, --step NAME to add a \
         step to it, or another --run-dir",
        path.display()
    )]
    RunDirTaken { path: PathBuf },
    /// `--run-dir` with a `--step` the run has already.
    #[error(
        "--run-dir {} already has step {step}: use --continue --step {step} to go on with it, or \
         another --step",
        path.display()
    )]
    StepTaken { path: PathBuf, step: String },
    /// `--run-dir` names a run of another workspace.
    #[error(
        "--run-dir {} is a run of the workspace {}: its steps share that workspace; use \
         --workspace {} or another --run-dir",
        path.display(),
        workspace.display(),
        workspace.display()
    )]
    RunOfOtherWorkspace { path: PathBuf, workspace: PathBuf },
    /// `max_generations` handoffs in one step.
    #[error(
        "handoff breaker: {max} handoffs in this step. The handoff line ({at} tokens) is probably \
         below this session's startup floor (system prompt + tools), so every new session crosses \
         it at once. Raise --window or use --no-handoff."
    )]
    HandoffBreaker { max: u32, at: u64 },
    /// A compaction could not replace the history.
    #[error(transparent)]
    Compaction(#[from] CompactError),
    /// No provider can be built: no key for an endpoint that needs one.
    #[error("no API key configured")]
    NoApiKey,
}

/// Why `--continue` cannot attach.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error("no earlier run for {} under {}", workspace.display(), runs.display())]
    NoEarlierRun { workspace: PathBuf, runs: PathBuf },
    /// The ledger cannot be read (the error names the file).
    #[error("cannot read the run's manifest {0}")]
    Manifest(#[source] io::Error),
    /// The newest run of the workspace has a ledger that cannot be read: nothing is continued
    /// silently in its place (headless); the TUI continues `next` after saying so.
    #[error(
        "the newest run of this workspace cannot be continued: its manifest {} is unreadable \
         ({reason}). {}",
        manifest.display(),
        match next {
            Some(dir) => format!(
                "To continue the run before it instead: --continue --run-dir {}",
                dir.display()
            ),
            None => "No earlier run of this workspace can be read either.".to_string(),
        }
    )]
    NewestUnreadable {
        manifest: PathBuf,
        reason: String,
        next: Option<PathBuf>,
    },
    #[error("the last run has no session to continue")]
    NoSession,
    /// `--continue --step NAME` and the run has no such step.
    #[error("the run has no step {step} (its steps: {})", if steps.is_empty() { "none".to_string() } else { steps.join(", ") })]
    NoStep { step: String, steps: Vec<String> },
    #[error("cannot read session {id}: {source}")]
    Session {
        id: String,
        #[source]
        source: io::Error,
    },
    /// `--resume RUN_ID` / `/resume`: no run of this workspace has that id.
    #[error("no run of {} has the id {id:?} (flower-tui --resume lists them)", workspace.display())]
    UnknownRun { id: String, workspace: PathBuf },
    /// `/resume` of the run that is running.
    #[error("run {id} is the one running now")]
    SameRun { id: String },
    /// A prefix that more than one run id starts with.
    #[error("{matches} runs start with {id:?}: give more of the id")]
    AmbiguousRun { id: String, matches: usize },
    /// Another live process works on that step in this workspace.
    #[error(
        "step {step} is in use by another flower-tui{} in this workspace; wait for it to end",
        pid.map_or_else(String::new, |p| format!(" (pid {p})"))
    )]
    StepInUse { step: String, pid: Option<u32> },
}

impl Error {
    /// An I/O error with what was being done and where.
    pub fn io(what: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            what,
            path: path.into(),
            source,
        }
    }

    /// The kind the protocol carries.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Provider(e) => ErrorKind::Provider(e.kind),
            Error::HandoffBreaker { .. } => ErrorKind::HandoffBreaker,
            Error::Io { .. }
            | Error::RunDirTaken { .. }
            | Error::StepTaken { .. }
            | Error::RunOfOtherWorkspace { .. } => ErrorKind::Io,
            Error::Resume(_) => ErrorKind::Resume,
            Error::Compaction(_) => ErrorKind::Compaction,
            Error::NoApiKey => ErrorKind::Config,
        }
    }

    /// The process's exit code when this error stops a run before it starts: 2 for flags that ask
    /// for what the disk refuses (as for a bad flag), else 1.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::RunDirTaken { .. }
            | Error::StepTaken { .. }
            | Error::RunOfOtherWorkspace { .. } => 2,
            _ => 1,
        }
    }

    /// Whether trying again may help (429, 5xx, 529, a dropped connection).
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Provider(e) => e.retryable,
            _ => false,
        }
    }

    /// What `Event::Error` shows: a provider's message without its kind (the event carries the
    /// kind), anything else as it reads.
    pub fn message(&self) -> String {
        match self {
            Error::Provider(e) => e.message.clone(),
            other => other.to_string(),
        }
    }
}

/// What went wrong, as a type: carried by `Event::Error` and `ExitReason::Error`, written as one
/// snake_case word on the wire (`rate_limited`, `handoff_breaker`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A model request failed.
    Provider(ProviderErrorKind),
    /// `max_generations` handoffs in one step.
    HandoffBreaker,
    /// A file or directory could not be read or written.
    Io,
    /// `--continue` cannot attach.
    Resume,
    /// A compaction could not replace the history.
    Compaction,
    /// The configuration cannot start a provider.
    Config,
}

impl ErrorKind {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Provider(k) => k.as_str(),
            ErrorKind::HandoffBreaker => "handoff_breaker",
            ErrorKind::Io => "io",
            ErrorKind::Resume => "resume",
            ErrorKind::Compaction => "compaction",
            ErrorKind::Config => "config",
        }
    }

    /// A context-window overflow (the overflow path acts on it).
    pub fn is_overflow(self) -> bool {
        self == ErrorKind::Provider(ProviderErrorKind::ContextWindowExceeded)
    }
}

impl From<ProviderErrorKind> for ErrorKind {
    fn from(k: ProviderErrorKind) -> Self {
        ErrorKind::Provider(k)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_one_word_on_the_wire() {
        let table = [
            (
                ErrorKind::Provider(ProviderErrorKind::ContextWindowExceeded),
                "context_window_exceeded",
            ),
            (
                ErrorKind::Provider(ProviderErrorKind::RateLimited),
                "rate_limited",
            ),
            (ErrorKind::HandoffBreaker, "handoff_breaker"),
        ];
        for (kind, word) in table {
            assert_eq!(kind.to_string(), word);
            assert_eq!(
                serde_json::to_value(kind).ok(),
                Some(serde_json::json!(word))
            );
        }
        assert!(ErrorKind::from(ProviderErrorKind::ContextWindowExceeded).is_overflow());
        assert!(!ErrorKind::HandoffBreaker.is_overflow());
    }

    #[test]
    fn errors_know_their_kind_and_read_as_one_line() {
        let breaker = Error::HandoffBreaker { max: 8, at: 10_000 };
        assert_eq!(breaker.kind(), ErrorKind::HandoffBreaker);
        let text = breaker.to_string();
        assert!(
            text.starts_with("handoff breaker: 8 handoffs")
                && text.contains("(10000 tokens)")
                && text.contains("startup floor")
                && text.ends_with("Raise --window or use --no-handoff."),
            "{text}"
        );
        assert!(!text.contains('\n') && !text.contains("  "), "{text}");
        let rate = Error::from(ProviderError::new(
            ProviderErrorKind::RateLimited,
            "slow down",
        ));
        assert_eq!(rate.kind().as_str(), "rate_limited");
        assert!(rate.is_retryable());
        assert_eq!(rate.message(), "slow down");
        assert_eq!(rate.to_string(), "rate_limited: slow down");
        let io = Error::io(
            "cannot create the run directory",
            "/r",
            io::Error::from(io::ErrorKind::PermissionDenied),
        );
        assert_eq!(io.kind(), ErrorKind::Io);
        assert!(!io.is_retryable());
        assert!(
            io.to_string()
                .starts_with("cannot create the run directory /r: ")
        );
        let resume = Error::from(ResumeError::NoSession);
        assert_eq!(
            resume.to_string(),
            "cannot continue: the last run has no session to continue"
        );
    }
}
