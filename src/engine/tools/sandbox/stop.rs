//! Whether the sandbox stopped a command, read from what the command printed and how it ended,
//! and the note the `bash` tool adds for the model.
//!
//! The sandbox does not tell a command why a call failed; the command's own error message is
//! all there is. So this reads the output: a permission error ("Permission denied",
//! "Operation not permitted", "Read-only file system") naming a path outside the writable set, a
//! refused `setsid`, a failed connection or name lookup with the network off, or a program
//! killed by the system-call filter (`SIGSYS`). It says so plainly where the evidence is clear
//! (a write to a path outside the set, a refused socket or `setsid`, `SIGSYS`) and "may have been
//! stopped" where it is not (a permission error whose path it cannot read, a network failure
//! that has other possible causes). A command that ended well gets a note too when its output
//! shows a refusal (a pipeline's status is its last program's: `curl … | head` ends well): a
//! refused write or socket as above, or a program's own network error line (`curl: (6) Could not
//! resolve host`); a permission error that may be a read's, or text that merely mentions a
//! failure (a log being read), is noted only for a command that failed.

use std::path::{Path, PathBuf};

use super::{GitRoute, NetworkAccess, SandboxMode, SandboxPolicy, WritableSet};
use crate::engine::tools::CommandExit;
use crate::engine::tools::paths;

/// `SIGSYS`, the signal of a seccomp kill.
const SIGSYS: i32 = 31;

/// Phrases of a refused file operation (EACCES, EPERM, EROFS), lowercase.
const DENIED: [&str; 3] = [
    "permission denied",
    "operation not permitted",
    "read-only file system",
];

/// Phrases that say an operation wrote (or tried to), lowercase.
const WRITE_VERBS: [&str; 16] = [
    "cannot create",
    "can't create",
    "cannot touch",
    "cannot remove",
    "cannot move",
    "cannot overwrite",
    "cannot make",
    "cannot link",
    "could not lock",
    "could not create",
    "could not write",
    "unable to create",
    "unable to write",
    "failed to create",
    "for writing",
    "read-only file system",
];

/// Failures a blocked network produces, lowercase.
const NETWORK: [&str; 16] = [
    "could not resolve",
    "couldn't resolve",
    "temporary failure in name resolution",
    "name or service not known",
    "name resolution",
    "getaddrinfo",
    "network is unreachable",
    "failed to connect",
    "couldn't connect",
    "could not connect",
    "unable to connect",
    "connection refused",
    "/dev/tcp/",
    "/dev/udp/",
    "dial tcp",
    "eai_again",
];

/// What "without network access" means, for the notes.
const NO_SOCKETS: &str = "no socket can be opened: internet sockets, TCP and UDP, and Unix sockets \
     included, since a Unix socket could reach a service outside the sandbox such as tmux, an ssh \
     agent or D-Bus; `socketpair` works";

/// What the sandbox refused.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StopKind {
    /// A write to this path, outside the writable set.
    Write { path: PathBuf },
    /// A write to the workspace's `.git`, or an entry created, renamed or deleted at the
    /// workspace's top level, which the sandbox keeps read-only to protect `.git`.
    Protected { path: PathBuf },
    /// A permission error whose path could not be read from the output.
    Permission,
    /// A socket or connection (the network is off).
    Network,
    /// `setsid` or `setpgid`: leaving the command's process group.
    Session,
    /// A system call of another architecture: the filter killed the program.
    Syscall,
}

/// How sure the reading is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Certainty {
    /// The output shows the sandbox's refusal.
    Sure,
    /// The failure fits a refusal, but has other possible causes.
    Possible,
}

/// The sandbox stopped (or may have stopped) a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopReason {
    pub kind: StopKind,
    pub certainty: Certainty,
    /// Where commands may write, in words (see [`super::WritableSet::describe`]).
    pub writable: String,
    /// Whether commands had the network.
    pub network: NetworkAccess,
    /// Whether the workspace's top level is closed to protect `.git` (entry by entry).
    pub top_level_closed: bool,
}

/// That the sandbox stopped (or may have stopped) a command, as tool results and events carry
/// it: what it refused, how sure that is, and the note in plain words.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SandboxStopped {
    #[serde(flatten)]
    pub kind: StopKind,
    pub certainty: Certainty,
    /// The note the result ends with (`[sandbox: …]`).
    pub message: String,
}

impl StopReason {
    /// The note the tool result ends with, naming the sandbox.
    pub fn note(&self) -> String {
        let w = &self.writable;
        let body = match (&self.kind, self.certainty) {
            (StopKind::Write { path }, Certainty::Sure) => format!(
                "the sandbox refused the write to `{}`: commands may write only in {w}. Write \
                 inside the workspace instead; if it must go there, the user can run the command \
                 outside the sandbox.",
                path.display()
            ),
            (StopKind::Write { path }, Certainty::Possible) => format!(
                "`{}` is outside where the sandbox lets commands write ({w}), so the permission \
                 error above may have been the sandbox's.",
                path.display()
            ),
            (StopKind::Protected { path }, Certainty::Sure) if self.top_level_closed => format!(
                "the sandbox refused the write to `{}`: it keeps the repository's `.git` \
                 read-only (a hook, config or filter planted there would run outside the \
                 sandbox), so git commands that write (commit, add, checkout, stash) fail here, \
                 and commands cannot create, rename or delete entries at the workspace's top \
                 level (files already there can be written, and so can everything inside its \
                 folders). Commands may write only in {w}. Create a new top-level file with \
                 write_file; the user can run a git command outside the sandbox.",
                path.display()
            ),
            (StopKind::Protected { path }, Certainty::Sure) => format!(
                "the sandbox refused the write to `{}`: it keeps the repository's `.git` \
                 read-only (a hook, config or filter planted there would run outside the \
                 sandbox), so git commands that write (commit, add, checkout, stash) fail here. \
                 Commands may write only in {w}; the user can run a git command outside the \
                 sandbox.",
                path.display()
            ),
            (StopKind::Protected { path }, Certainty::Possible) => format!(
                "`{}` is in the workspace's `.git`{}, which the sandbox keeps read-only, so the \
                 permission error above may have been the sandbox's; git commands that write \
                 fail here and the user can run them outside the sandbox.",
                path.display(),
                if self.top_level_closed {
                    " or at its top level"
                } else {
                    ""
                }
            ),
            (StopKind::Permission, _) => format!(
                "the permission error above may have been the sandbox's: commands may write \
                 only in {w}, may not start new sessions or process groups (setsid, \
                 setpgid){}.",
                match self.network {
                    NetworkAccess::Blocked => " and have no network",
                    NetworkAccess::Allowed => "",
                }
            ),
            (StopKind::Network, Certainty::Sure) => format!(
                "the sandbox refused the connection: commands run without network access \
                 ({NO_SOCKETS}). Do without the network, or the user can run the command outside \
                 the sandbox."
            ),
            (StopKind::Network, Certainty::Possible) => format!(
                "commands run without network access ({NO_SOCKETS}), so the failure above may \
                 have been the sandbox's. Do without the network, or the user can run the \
                 command outside the sandbox."
            ),
            (StopKind::Session, _) => "the sandbox refuses `setsid` and `setpgid`: nothing a \
                 command starts may leave its process group, and everything it started is \
                 stopped when it ends, so daemons and detached sessions cannot be started here."
                .to_string(),
            (StopKind::Syscall, _) => "the sandbox's system-call filter killed the program \
                 (SIGSYS): it made a system call of another architecture (a 32-bit program?), \
                 which the sandbox does not allow."
                .to_string(),
        };
        format!("[sandbox: {body}]")
    }

    /// The stop as a result carries it.
    pub fn stopped(&self) -> SandboxStopped {
        SandboxStopped {
            kind: self.kind.clone(),
            certainty: self.certainty,
            message: self.note(),
        }
    }
}

/// Whether `policy`'s sandbox stopped `command` (run in `workspace`), judged from its `output`
/// and `exit`. `None` when the policy is off or nothing points at the sandbox.
pub fn sandbox_stop_reason(
    policy: &SandboxPolicy,
    workspace: &Path,
    command: &str,
    output: &str,
    exit: &CommandExit,
) -> Option<StopReason> {
    if policy.mode == SandboxMode::Off {
        return None;
    }
    stop_reason_in(
        &policy.writable_set(workspace),
        policy,
        workspace,
        command,
        output,
        exit,
    )
}

/// [`sandbox_stop_reason`] for a command that could write in `writable`.
pub(super) fn stop_reason_in(
    writable: &WritableSet,
    policy: &SandboxPolicy,
    workspace: &Path,
    command: &str,
    output: &str,
    exit: &CommandExit,
) -> Option<StopReason> {
    let top_level_closed = writable
        .guard
        .as_ref()
        .is_some_and(|g| g.route == GitRoute::EntryByEntry);
    let failed = exit.code() != Some(0) || exit.signal().is_some();
    let reason = |kind, certainty| {
        Some(StopReason {
            kind,
            certainty,
            writable: writable.describe(),
            network: policy.network,
            top_level_closed,
        })
    };
    if exit.signal() == Some(SIGSYS) {
        return reason(StopKind::Syscall, Certainty::Sure);
    }
    let lines: Vec<String> = output.lines().map(str::to_ascii_lowercase).collect();
    let denied = |l: &str| DENIED.iter().any(|p| l.contains(p));
    if lines
        .iter()
        .any(|l| denied(l) && (l.contains("setsid") || l.contains("setpgid")))
    {
        return reason(StopKind::Session, Certainty::Sure);
    }
    let network_off = policy.network == NetworkAccess::Blocked;
    if network_off && lines.iter().any(|l| denied(l) && about_network(l)) {
        return reason(StopKind::Network, Certainty::Sure);
    }
    let mut unread_denial = false;
    let mut possible = None;
    for (lower, line) in lines.iter().zip(output.lines()) {
        // Refused sockets were judged above.
        if !denied(lower) || about_network(lower) {
            continue;
        }
        let candidates = candidate_paths(line);
        let outside = candidates
            .iter()
            .map(|raw| (raw, paths::resolve(workspace, raw)))
            .find(|(_, p)| !writable.allows(p));
        match outside {
            Some((raw, path)) => {
                let wrote = WRITE_VERBS.iter().any(|v| lower.contains(v))
                    || redirects_to(command, raw)
                    || redirects_to(command, &path.display().to_string());
                let kind = if writable.guards(&path) {
                    StopKind::Protected { path }
                } else {
                    StopKind::Write { path }
                };
                if wrote {
                    return reason(kind, Certainty::Sure);
                }
                possible.get_or_insert(kind);
            }
            None if candidates.is_empty() => unread_denial = true,
            None => {}
        }
    }
    if failed && let Some(kind) = possible {
        return reason(kind, Certainty::Possible);
    }
    // A network failure, or a permission error in output that speaks of sockets (a traceback).
    // After a command that ended well, only a program's own error line counts (`curl: (6) Could
    // not resolve host`), not text that merely mentions a failure (a log being read).
    let network_failure = lines
        .iter()
        .any(|l| NETWORK.iter().any(|p| l.contains(p)) && (failed || error_line_of(command, l)))
        || (failed && unread_denial && lines.iter().any(|l| about_network(l)));
    if network_off && network_failure {
        return reason(StopKind::Network, Certainty::Possible);
    }
    if !failed {
        return None;
    }
    if unread_denial {
        return reason(StopKind::Permission, Certainty::Possible);
    }
    None
}

/// Whether a (lowercase) line is the error message of a program `command` runs: it starts with
/// that program's name and a colon (`curl: (6) could not resolve host`, for `curl … | head`).
/// Text the command only prints (a log being read) starts otherwise.
fn error_line_of(command: &str, line: &str) -> bool {
    let Some((head, _)) = line.trim_start().split_once(": ") else {
        return false;
    };
    if head.is_empty() || head.contains(char::is_whitespace) {
        return false;
    }
    command
        .split(|c: char| c.is_whitespace() || matches!(c, '|' | ';' | '&' | '(' | ')' | '`'))
        .filter_map(|w| w.rsplit('/').next())
        .any(|program| program.eq_ignore_ascii_case(head))
}

/// Whether a (lowercase) error line is about a socket or a connection.
fn about_network(line: &str) -> bool {
    ["socket", "connect", "/dev/tcp/", "/dev/udp/"]
        .iter()
        .any(|w| line.contains(w))
}

/// Whether `command` redirects output into `path` (`> path`, `>> path`, `tee path`).
fn redirects_to(command: &str, path: &str) -> bool {
    let squeezed = command.split_whitespace().collect::<Vec<_>>().join(" ");
    [">", "tee ", "tee -a "].iter().any(|op| {
        squeezed.contains(&format!("{op}{path}")) || squeezed.contains(&format!("{op} {path}"))
    })
}

/// Path-like words of an error line, nearest the denial phrase first: the last one before it
/// (`touch: cannot touch '/etc/x': Permission denied`), then the first one after it
/// (`PermissionError: [Errno 13] Permission denied: '/etc/x'`). The word right before the phrase
/// counts when quoted or named like a file (`bash: line 1: new.txt: Permission denied`).
fn candidate_paths(line: &str) -> Vec<String> {
    // ASCII lowercase keeps byte offsets, so `at` is an offset in `line` too (on a char
    // boundary: the phrases are ASCII).
    let lower = line.to_ascii_lowercase();
    let Some(at) = DENIED.iter().filter_map(|p| lower.find(p)).min() else {
        return Vec::new();
    };
    let (before, after) = (
        line.get(..at).unwrap_or_default(),
        line.get(at..).unwrap_or_default(),
    );
    let words = |s: &str| -> Vec<(String, bool)> {
        s.split([' ', '\t', '=', '(', ')', '[', ']'])
            .filter(|w| !w.is_empty())
            .map(|w| (clean_word(w), w.starts_with(QUOTES)))
            .collect()
    };
    let mut found = Vec::new();
    let before = words(before);
    let nearest = before
        .last()
        .filter(|(w, quoted)| !w.is_empty() && !looks_like_path(w) && (*quoted || w.contains('.')));
    if let Some((w, _)) = nearest {
        found.push(w.clone());
    } else if let Some((w, _)) = before.iter().rev().find(|(w, _)| looks_like_path(w)) {
        found.push(w.clone());
    }
    if let Some((w, _)) = words(after).into_iter().find(|(w, _)| looks_like_path(w)) {
        found.push(w);
    }
    found
}

/// The quotes error messages put around paths.
const QUOTES: [char; 9] = ['\'', '"', '`', '‘', '’', '“', '”', '«', '»'];

/// A word without the quotes and punctuation error messages put around paths.
fn clean_word(w: &str) -> String {
    w.trim_start_matches(QUOTES)
        .trim_end_matches(|c: char| QUOTES.contains(&c) || matches!(c, ':' | ',' | ';' | '.'))
        .to_string()
}

/// An absolute path, a home path, or a relative path with a separator; not bash's network
/// pseudo-files. Program prefixes such as `/usr/bin/bash:` are paths too; they are never the
/// nearest word before the phrase in the messages this reads.
fn looks_like_path(w: &str) -> bool {
    !w.is_empty()
        && !w.contains("://")
        && !w.starts_with("/dev/tcp/")
        && !w.starts_with("/dev/udp/")
        && (w.starts_with('/') || w.starts_with("~/") || (w.contains('/') && !w.starts_with('-')))
}

#[cfg(test)]
#[path = "stop_tests.rs"]
mod tests;
