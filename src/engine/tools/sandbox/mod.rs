//! The OS sandbox of the `bash` tool: what a command may write, whether it may use the network,
//! and that nothing it starts outlives it.
//!
//! A [`SandboxPolicy`] is a mode ([`SandboxMode::WorkspaceWrite`], [`SandboxMode::ReadOnly`],
//! [`SandboxMode::Off`]), a network switch ([`NetworkAccess`]) and extra writable paths. Reads
//! are allowed everywhere in every mode. Writes are allowed in the [`WritableSet`]:
//! the workspace but its `.git` and the extra paths (workspace-write only), the temp dirs
//! (`$TMPDIR`, `/tmp`, `/var/tmp`, `/dev/shm`, but not one that holds a workspace that must not
//! be written whole) and the device files a shell needs (`/dev/null`, `/dev/tty`, the
//! pseudo-terminals, …). Read-only mode keeps the temp dirs writable: they are scratch space,
//! not the user's files, and many read-only tools need a temp file.
//!
//! **Linux.** Everything is built in the agent before `fork` (the Landlock ruleset, opened with
//! the landlock crate, the seccomp filters, compiled by `seccompiler`, and the command's view of
//! the file system); the child, between `fork` and `exec`, makes only raw system calls, which are
//! async-signal-safe: `setsid` (a session of its own, so no controlling terminal: `/dev/tty`
//! leads nowhere and the user's terminal cannot be written or typed into), then, where user
//! namespaces work (asked once per process, [`namespaces_available`]), a user and mount
//! namespace in which every mount is read-only but the writable places, `.git` is read-only
//! within them and `/dev/pts` is a private instance ([`mounts`]), then
//! `prctl(PR_SET_NO_NEW_PRIVS)`, `landlock_restrict_self` on the prepared ruleset descriptor and
//! `seccomp(SECCOMP_SET_MODE_FILTER)` for each filter. Where user namespaces do not work, `.git`
//! is protected by granting the workspace entry by entry instead ([`GitRoute`]), read-only mode
//! refuses the metadata calls in the filter, and [`start_notice`] is the line shown at start
//! saying what is left open.
//! - *The mount namespace* makes the file system read-only but the writable places: Landlock has
//!   no right for a file's mode, owner, times or extended attributes, so without it a command
//!   could `chmod 777 ~/.ssh/id_ed25519` or `chmod -R 000 ~`.
//! - *Landlock* (best effort over the kernel's ABI) refuses reading other processes' files in
//!   `/proc` and the terminals in `/dev/pts`, and writes outside the writable set, symlinks
//!   included (the kernel checks where a path really leads); with the network off it also
//!   refuses TCP bind and connect (ABI 4+), connecting to abstract Unix sockets of processes
//!   outside the sandbox (ABI 6+) and reaching any Unix socket by its path (ABI 9+); it always
//!   refuses signals to processes outside the sandbox (ABI 6+), so a command cannot kill the
//!   watcher that guards it. An older kernel enforces what its ABI has, and [`Enforcement`] says
//!   what that was; a kernel without Landlock runs commands with the seccomp filters alone, and
//!   [`Support::notice`] is the one line the launcher shows at start.
//! - *seccomp* ([`seccomp`]): with the network off, `socket` is refused for every family (UDP
//!   included, which Landlock cannot see before ABI 10, and Unix sockets, whose connection to a
//!   host service by path Landlock cannot stop before ABI 9: a tmux server or ssh-agent outside
//!   would act for the command), and `socketpair` unless it makes a stream pair (a datagram end
//!   can send to any datagram socket by its path: the system log); always refused: `setsid` and
//!   `setpgid`, `unshare`, `setns` and the mount calls (so a command cannot undo its mounts),
//!   `io_uring` (its operations would bypass the filter), the terminal ioctls that type into a
//!   terminal (`TIOCSTI`, `TIOCLINUX`), and system calls of a foreign architecture (the process
//!   is killed). The filters are compiled from rules by `seccompiler`, the rust-vmm crate
//!   Firecracker uses (pure Rust, no C library to install); the unit tests read the programs back
//!   with an interpreter, the integration tests run them on the kernel.
//!
//! **Nothing outlives the command.** A command runs as the leader of its own process group
//! (`bash.rs`), and the seccomp filter refuses `setsid` and `setpgid`, so no process it starts can
//! leave that group. When the command ends, the whole group is killed before the leader is
//! reaped (its pid, and so the group's id, cannot be reused in between: [`contain`]); when
//! flower-tui dies, the parent-death signal and the lifeline watcher (`lifeline.rs`) kill the
//! group. So a `setsid` daemon fails to start and a background job stops with its command. The
//! cost: a program that insists on a session of its own (`setsid`, a daemon, Python's
//! `start_new_session`) fails in the sandbox with "Operation not permitted"; the tool result says
//! why ([`stop`]). git's automatic maintenance, which detaches that way after a commit, is told
//! through git's environment configuration to run in the foreground instead. Refusing was chosen
//! over pretending success (a program would then signal a group that is not what it thinks, the
//! command's own), over a PID namespace (it needs a user namespace, which many systems restrict,
//! and an init inside) and over a child subreaper (the agent would adopt and have to reap every
//! orphan, racing tokio's own reaping). With `--sandbox off` nothing of this applies: the
//! group is killed on timeout, on Esc and when flower-tui dies, but a process that calls `setsid`
//! leaves it and is not tracked, and background jobs outlive the command until flower-tui ends.
//!
//! **macOS.** The same policy as a `sandbox-exec` profile ([`seatbelt`]), generated on every
//! platform and used only on macOS; there the group is killed at the command's end as well, but
//! `setsid` cannot be refused.
//!
//! **Host services.** With the network off a command also loses the variables that name a local
//! service ([`SERVICE_VARIABLES`]: `TMUX`, `SSH_AUTH_SOCK`, `DBUS_SESSION_BUS_ADDRESS`,
//! `DISPLAY`, …), so programs do not try the sockets the filter refuses. With the network on,
//! they are kept and every socket opens: such a service can then act for the command.
//!
//! **Other processes.** A confined command cannot read the files of other processes in `/proc`
//! (`environ`, `mem`, `cmdline`, `status`): any process of the same user could otherwise read the
//! provider key from the environment of the shell that started flower-tui (Landlock's ptrace
//! scoping refuses `mem` but, on Linux 6.18 at least, not `environ`). Landlock only adds grants, so
//! files are readable beneath every top-level entry of `/` but `/proc`, beneath every entry of
//! `/proc` that is not a process, and beneath the command's own `/proc/<pid>`, granted in the
//! child. Its children have other pids: `ps`, `pgrep` and `top` show nothing, and a program that
//! reads its own `/proc/self/…` does without (Rust, Python, Java and Node programs run).
//!
//! **The workspace itself.** The workspace and its `.git` are recorded (device and inode) when the
//! session starts ([`pin_workspace`]); a command is refused, saying why, once either is no longer
//! the one recorded, and a temp dir that holds the workspace is never granted: a command could
//! otherwise move the workspace aside, make an empty folder in its place, and from the next
//! command on write the real `.git` unguarded (`anchor.rs`).
//!
//! **Known limits.** Reads are not confined elsewhere: with the network off a secret read from a
//! file can still reach the model through the command's output. Root inside the sandbox keeps its
//! capabilities apart from what Landlock, the read-only mounts and the filters refuse; no one
//! gains any (`no_new_privs`: `sudo` and set-user-id programs do not elevate). On the mount route,
//! a workspace also reachable through a second mount of its own (a bind mount elsewhere) has its
//! `.git` writable through that path: Landlock's grant follows the folder, the read-only bind
//! covers one path. Without user namespaces (see [`start_notice`]): in workspace-write mode a
//! command can change the metadata of files outside that the user owns, and gets no terminal of
//! its own.
//!
//! When the sandbox stopped a command, [`sandbox_stop_reason`] finds it in the output and the
//! `bash` tool adds a note naming the sandbox, so the model can adapt.

mod anchor;
mod contain;
mod environment;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod mounts;
#[cfg(any(target_os = "macos", test))]
pub(crate) mod seatbelt;
#[cfg(target_os = "linux")]
pub mod seccomp;
mod stop;
mod writable;

use std::path::{Path, PathBuf};

pub use anchor::{Moved, pin as pin_workspace};
pub(crate) use contain::LeaderExit;
pub use environment::SERVICE_VARIABLES;
#[cfg(any(target_os = "linux", target_os = "macos"))]
use environment::confined_environment;
#[cfg(target_os = "linux")]
use environment::git_maintenance_in_the_foreground;
#[cfg(target_os = "linux")]
pub use mounts::NO_NAMESPACES_VAR;
pub use stop::{Certainty, SandboxStopped, StopKind, StopReason, sandbox_stop_reason};
pub use writable::{GitGuard, GitRoute, Root, RootKind, WritableSet, in_a_temp_dir};

/// Whether a confined command can run in user and mount namespaces of its own here, so that a
/// workspace's `.git` is kept read-only by a mount (Linux; asked once per process).
pub fn namespaces_available() -> bool {
    #[cfg(target_os = "linux")]
    {
        mounts::available()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Start asking [`namespaces_available`] now, on a thread of its own (the probe forks a child), so
/// a start's other work runs beside it; the first caller waits for the answer if it is not in yet.
pub fn probe_namespaces_early() {
    #[cfg(target_os = "linux")]
    {
        let _ = std::thread::Builder::new()
            .name("namespaces".into())
            .spawn(namespaces_available);
    }
}

/// The one line to show at start when the sandbox of `policy` in `workspace` gives less than
/// its full protection on this machine: on Linux without user namespaces (the metadata of files
/// outside, no private terminal, and the workspace's `.git` kept read-only entry by entry);
/// `None` otherwise.
pub fn start_notice(policy: &SandboxPolicy, workspace: &Path) -> Option<String> {
    if !policy.is_on() || !cfg!(target_os = "linux") {
        return None;
    }
    let set = policy.writable_set(workspace);
    let entry_by_entry = set
        .guard
        .as_ref()
        .is_some_and(|g| g.route == GitRoute::EntryByEntry);
    let mut parts = Vec::new();
    if !namespaces_available() {
        parts.push(match policy.mode {
            SandboxMode::ReadOnly => {
                "commands may not change any file's mode, owner, times or extended attributes, \
                 temp files included (the filter refuses those calls)"
            }
            _ => {
                "confined commands can change the mode, owner, times and extended attributes of \
                 your files outside the workspace (`chmod`, `touch -d`: Landlock has no right for \
                 them)"
            }
        });
        parts.push("commands get no terminal of their own (`script`, `expect` fail)");
    }
    if entry_by_entry {
        parts.push(
            "the workspace's `.git` is kept read-only by granting its top-level entries one by \
             one: commands cannot create, rename or delete entries at the top level (a first \
             `cargo build`, `npm install`, `git commit`); the user can run those outside the \
             sandbox",
        );
    }
    if parts.is_empty() {
        return None;
    }
    let why = if namespaces_available() {
        "the workspace's `.git` is a symbolic link"
    } else {
        "user namespaces are not available here"
    };
    Some(format!("Sandbox: {why}, so {}.", parts.join("; ")))
}

/// Whether commands under `policy` start in a session of their own (the sandbox does that, so
/// they have no controlling terminal); the caller then must not put them in a process group.
pub(crate) fn starts_own_session(policy: &SandboxPolicy) -> bool {
    policy.is_on() && cfg!(any(target_os = "linux", target_os = "macos"))
}

/// What a sandboxed command may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// The workspace, the temp dirs and the configured paths.
    #[default]
    WorkspaceWrite,
    /// The temp dirs only.
    ReadOnly,
    /// No sandbox: the command runs with all of the user's rights.
    Off,
}

impl SandboxMode {
    /// The spelling of the flag and the config key.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::Off => "off",
        }
    }
}

impl std::fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A sandbox mode or network switch spelled wrongly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} `{value}`: expected one of {expected}")]
pub struct ParseError {
    what: &'static str,
    value: String,
    expected: &'static str,
}

impl std::str::FromStr for SandboxMode {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "workspace-write" => Ok(SandboxMode::WorkspaceWrite),
            "read-only" => Ok(SandboxMode::ReadOnly),
            "off" => Ok(SandboxMode::Off),
            other => Err(ParseError {
                what: "sandbox mode",
                value: other.to_string(),
                expected: "workspace-write, read-only, off",
            }),
        }
    }
}

/// Whether a sandboxed command may use the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NetworkAccess {
    /// No socket opens (TCP, UDP, Unix); `socketpair` works.
    #[default]
    Blocked,
    Allowed,
}

impl std::str::FromStr for NetworkAccess {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "off" => Ok(NetworkAccess::Blocked),
            "on" => Ok(NetworkAccess::Allowed),
            other => Err(ParseError {
                what: "sandbox network setting",
                value: other.to_string(),
                expected: "on, off",
            }),
        }
    }
}

/// How `bash` commands are confined. The default is workspace-write without network.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SandboxPolicy {
    pub mode: SandboxMode,
    pub network: NetworkAccess,
    /// Written in workspace-write mode besides the workspace and the temp dirs.
    pub writable: Vec<PathBuf>,
}

impl SandboxPolicy {
    /// No sandbox.
    pub fn off() -> Self {
        SandboxPolicy {
            mode: SandboxMode::Off,
            ..SandboxPolicy::default()
        }
    }

    /// The policy in `mode`, network off, no extra paths.
    pub fn new(mode: SandboxMode) -> Self {
        SandboxPolicy {
            mode,
            ..SandboxPolicy::default()
        }
    }

    /// The same policy with the network switched.
    pub fn with_network(self, network: NetworkAccess) -> Self {
        SandboxPolicy { network, ..self }
    }

    /// The same policy with `paths` writable too (in workspace-write mode).
    pub fn with_writable(self, paths: impl IntoIterator<Item = PathBuf>) -> Self {
        let mut writable = self.writable;
        writable.extend(paths);
        SandboxPolicy { writable, ..self }
    }

    /// Whether commands run confined at all.
    pub fn is_on(&self) -> bool {
        self.mode != SandboxMode::Off
    }

    /// Where a command under this policy may write, for `workspace`.
    pub fn writable_set(&self, workspace: &Path) -> WritableSet {
        WritableSet::of(self, workspace)
    }
}

/// Why a sandbox could not be set up for a command (it does not run then).
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("the workspace {} cannot be opened for the sandbox: {source}", path.display())]
    Workspace {
        path: PathBuf,
        source: std::io::Error,
    },
    #[cfg(target_os = "linux")]
    #[error("the command's own view of the file system cannot be prepared for {}: {source}", path.display())]
    Mounts {
        path: PathBuf,
        source: std::io::Error,
    },
    #[cfg(target_os = "linux")]
    #[error("the Landlock ruleset could not be built: {0}")]
    Landlock(#[from] landlock::RulesetError),
    #[cfg(target_os = "linux")]
    #[error("the seccomp filter could not be built: {0}")]
    Filter(#[from] seccompiler::BackendError),
    #[error("{0}")]
    Moved(#[from] Moved),
}

/// What the sandbox of one command enforces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enforcement {
    /// Landlock confines writes (and, network off, TCP) at this ABI; the seccomp filter runs.
    Landlock { abi: u32 },
    /// The seccomp filter runs but nothing confines writes: the kernel has no Landlock.
    FilterOnly { reason: String },
    /// macOS: the `sandbox-exec` profile.
    Seatbelt,
    /// Not confined: the policy is off, or this platform has no sandbox.
    Unconfined { reason: String },
}

impl Enforcement {
    /// Whether writes outside the writable set are refused.
    pub fn confines_writes(&self) -> bool {
        matches!(self, Enforcement::Landlock { .. } | Enforcement::Seatbelt)
    }

    /// What this sandbox does not do that the full one does, in words (empty: nothing missing).
    pub fn gaps(&self) -> Vec<&'static str> {
        match self {
            Enforcement::Landlock { abi } => LANDLOCK_GAPS
                .iter()
                .filter(|(since, _)| abi < since)
                .map(|(_, gap)| *gap)
                .collect(),
            Enforcement::FilterOnly { .. } => vec!["writes are not confined"],
            Enforcement::Seatbelt => {
                vec!["`setsid` is not refused: a daemon may outlive its command"]
            }
            Enforcement::Unconfined { .. } => vec!["nothing is confined"],
        }
    }
}

/// What each Landlock ABI added that the sandbox uses: (the ABI, what is missing before it).
const LANDLOCK_GAPS: [(u32, &str); 5] = [
    (
        2,
        "moving or linking a file between folders is refused everywhere, the workspace too",
    ),
    (
        3,
        "truncating a file outside the writable places is not refused",
    ),
    (4, "TCP is refused by the seccomp filter alone"),
    (5, "ioctls on devices are not confined"),
    (
        6,
        "signals to processes outside the sandbox are not refused",
    ),
];

/// What this machine's kernel offers the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// Landlock at this ABI version.
    Landlock { abi: u32 },
    /// Linux without Landlock: why.
    NoLandlock { reason: String },
    /// macOS `sandbox-exec`.
    Seatbelt,
    /// Another platform: no sandbox.
    Unsupported,
}

impl Support {
    /// Ask the kernel (cheap: one system call).
    pub fn current() -> Support {
        #[cfg(target_os = "linux")]
        {
            linux::support()
        }
        #[cfg(target_os = "macos")]
        {
            Support::Seatbelt
        }
        #[cfg(not(any(target_os = "linux", target_os = "macos")))]
        {
            Support::Unsupported
        }
    }

    /// Whether writes can be confined here.
    pub fn confines_writes(&self) -> bool {
        matches!(self, Support::Landlock { .. } | Support::Seatbelt)
    }

    /// The one line to show at start when `policy` asks for a sandbox this machine cannot
    /// give; `None` when it can (or the policy is off).
    pub fn notice(&self, policy: &SandboxPolicy) -> Option<String> {
        if !policy.is_on() {
            return None;
        }
        match self {
            Support::Landlock { .. } | Support::Seatbelt => None,
            Support::NoLandlock { reason } => Some(format!(
                "Sandbox: this kernel has no Landlock ({reason}); commands run with the seccomp \
                 filter only (no network, no daemons) and may write anywhere, so approvals stay \
                 as they are."
            )),
            Support::Unsupported => Some(
                "Sandbox: this platform has no sandbox for commands; approvals stay as they are."
                    .to_string(),
            ),
        }
    }
}

/// The sandbox in force for `policy` on a machine with `support`, in one line (for `-v` and
/// `/permissions`): `workspace-write, network off, Landlock ABI 7 and a seccomp filter`.
pub fn describe(policy: &SandboxPolicy, support: &Support) -> String {
    if !policy.is_on() {
        return "off (commands run with all of the user's rights)".to_string();
    }
    let network = match policy.network {
        NetworkAccess::Blocked => "network off",
        NetworkAccess::Allowed => "network on",
    };
    let mut line = format!("{}, {network}", policy.mode);
    if policy.mode == SandboxMode::WorkspaceWrite && !policy.writable.is_empty() {
        let paths: Vec<String> = policy
            .writable
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        line.push_str(&format!(", also writable: {}", paths.join(", ")));
    }
    let how = match support {
        Support::Landlock { abi } => format!("Landlock ABI {abi} and a seccomp filter"),
        Support::NoLandlock { .. } => {
            "the seccomp filter only: this kernel has no Landlock, writes are not confined".into()
        }
        Support::Seatbelt => "sandbox-exec".into(),
        Support::Unsupported => "not enforced: this platform has no sandbox".into(),
    };
    format!("{line} ({how})")
}

/// Whether a command under `policy` runs confined to its writable places on a machine with
/// `support`: then it needs no approval to stay in the workspace.
pub fn confines(policy: &SandboxPolicy, support: &Support) -> bool {
    policy.is_on() && support.confines_writes()
}

/// How the end of a command is handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Containment {
    /// Kill the command's process group when it ends: nothing it started outlives it.
    KillGroupAtEnd,
    /// Leave background jobs running (they still die with flower-tui).
    LeaveBackground,
}

/// A command that runs `shell -c command` in `workspace` under `policy`, and what the sandbox
/// enforces for it. Builds everything the child needs before it is forked.
pub(crate) fn shell_command(
    shell: &str,
    command: &str,
    workspace: &Path,
    policy: &SandboxPolicy,
) -> Result<(tokio::process::Command, Enforcement, Containment), SandboxError> {
    if !policy.is_on() {
        let mut cmd = tokio::process::Command::new(shell);
        cmd.arg("-c").arg(command);
        let why = "the sandbox is off".to_string();
        return Ok((
            cmd,
            Enforcement::Unconfined { reason: why },
            Containment::LeaveBackground,
        ));
    }
    anchor::check(workspace)?;
    #[cfg(target_os = "linux")]
    {
        let mut cmd = tokio::process::Command::new(shell);
        cmd.arg("-c").arg(command);
        git_maintenance_in_the_foreground(&mut cmd);
        confined_environment(&mut cmd, policy, workspace);
        let confinement = linux::Confinement::prepare(policy, workspace)?;
        let enforcement = confinement.enforcement();
        confinement.install(&mut cmd);
        Ok((cmd, enforcement, Containment::KillGroupAtEnd))
    }
    #[cfg(target_os = "macos")]
    {
        let profile = seatbelt::profile(policy, workspace);
        let mut cmd = tokio::process::Command::new(seatbelt::SANDBOX_EXEC);
        cmd.args(profile.args()).arg(shell).arg("-c").arg(command);
        confined_environment(&mut cmd, policy, workspace);
        // SAFETY: runs in the child between fork and exec: one async-signal-safe system call.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        Ok((cmd, Enforcement::Seatbelt, Containment::KillGroupAtEnd))
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        let _ = workspace;
        let mut cmd = tokio::process::Command::new(shell);
        cmd.arg("-c").arg(command);
        let why = "this platform has no sandbox".to_string();
        Ok((
            cmd,
            Enforcement::Unconfined { reason: why },
            Containment::KillGroupAtEnd,
        ))
    }
}

/// What the sandbox would enforce for a command under `policy` in `workspace`, without running
/// one (for the launcher and the tests): the ruleset is built and dropped.
pub fn enforcement(policy: &SandboxPolicy, workspace: &Path) -> Result<Enforcement, SandboxError> {
    if !policy.is_on() {
        return Ok(Enforcement::Unconfined {
            reason: "the sandbox is off".into(),
        });
    }
    #[cfg(target_os = "linux")]
    {
        Ok(linux::Confinement::prepare(policy, workspace)?.enforcement())
    }
    #[cfg(target_os = "macos")]
    {
        let _ = workspace;
        Ok(Enforcement::Seatbelt)
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        let _ = workspace;
        Ok(Enforcement::Unconfined {
            reason: "this platform has no sandbox".into(),
        })
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
