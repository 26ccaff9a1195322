//! The sandbox on Linux: a Landlock ruleset, the seccomp program and, for a workspace whose
//! `.git` is kept read-only by a mount, that mount (`gitmount.rs`), prepared in the agent and
//! applied by the child between `fork` and `exec` with raw system calls only: the namespaces and
//! the mount first, then `no_new_privs`, Landlock and the filter (which refuses the calls that
//! could undo the mount).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};

use super::gitmount::ReadOnlyMount;
use super::seccomp::{self, Rules};
use super::{Enforcement, NetworkAccess, SandboxError, SandboxPolicy, Support, WritableSet};

/// The newest ABI whose rights this sandbox asks for. Later ABIs add rights it does not want
/// handled (ABI 9 confines connecting to Unix sockets by path, which the seccomp filter
/// already refuses with the network off and allows with it on).
const TARGET_ABI: ABI = ABI::V6;

/// `LANDLOCK_CREATE_RULESET_VERSION`: ask the kernel for its ABI version.
const CREATE_RULESET_VERSION: libc::c_uint = 1;

/// The kernel's Landlock ABI, or why there is none.
pub(super) fn support() -> Support {
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag the call only returns
    // a number; it reads and writes no memory of ours.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    if v > 0 {
        return Support::Landlock {
            abi: u32::try_from(v).unwrap_or(u32::MAX),
        };
    }
    let reason = match io::Error::last_os_error().raw_os_error() {
        Some(libc::EOPNOTSUPP) => "built in but not enabled at boot: add `landlock` to `lsm=`",
        Some(libc::ENOSYS) => "not built into this kernel (Linux 5.13 or later has it)",
        _ => "the kernel refused to say",
    };
    Support::NoLandlock {
        reason: reason.to_string(),
    }
}

/// Everything the child needs, made before the fork.
pub(super) struct Confinement {
    /// The Landlock ruleset; `None` when the kernel has no Landlock.
    ruleset: Option<OwnedFd>,
    /// The seccomp program as the kernel reads it; empty when this machine has none.
    filter: Vec<libc::sock_filter>,
    /// The `.git` to make read-only in the command's own namespaces, when that is the route.
    git_mount: Option<ReadOnlyMount>,
    enforcement: Enforcement,
}

impl Confinement {
    pub(super) fn prepare(policy: &SandboxPolicy, workspace: &Path) -> Result<Self, SandboxError> {
        if let Err(source) = std::fs::metadata(workspace) {
            return Err(SandboxError::Workspace {
                path: workspace.to_path_buf(),
                source,
            });
        }
        let blocked = policy.network == NetworkAccess::Blocked;
        let set = policy.writable_set(workspace);
        let git_mount = set
            .read_only_mount()
            .map(|git| {
                ReadOnlyMount::prepare(git).map_err(|source| SandboxError::GitMount {
                    path: git.to_path_buf(),
                    source,
                })
            })
            .transpose()?;
        let filter = seccomp::native()
            .map(|t| {
                seccomp::program(
                    &t,
                    Rules {
                        block_network: blocked,
                    },
                )
            })
            .unwrap_or_default()
            .into_iter()
            .map(|i| libc::sock_filter {
                code: i.code,
                jt: i.jt,
                jf: i.jf,
                k: i.k,
            })
            .collect();
        let (ruleset, enforcement) = match support() {
            Support::Landlock { abi } => (ruleset(&set, blocked)?, abi),
            Support::NoLandlock { reason } => {
                return Ok(Confinement {
                    ruleset: None,
                    filter,
                    git_mount,
                    enforcement: Enforcement::FilterOnly { reason },
                });
            }
            Support::Seatbelt | Support::Unsupported => (None, 0),
        };
        let enforcement = match ruleset {
            Some(_) => Enforcement::Landlock { abi: enforcement },
            None => Enforcement::FilterOnly {
                reason: "Landlock enforced nothing on this kernel".into(),
            },
        };
        Ok(Confinement {
            ruleset,
            filter,
            git_mount,
            enforcement,
        })
    }

    pub(super) fn enforcement(&self) -> Enforcement {
        self.enforcement.clone()
    }

    /// Arrange for the child of `cmd` to confine itself right before `exec`.
    pub(super) fn install(self, cmd: &mut tokio::process::Command) {
        let Confinement {
            ruleset,
            filter,
            git_mount,
            ..
        } = self;
        let len = u16::try_from(filter.len()).unwrap_or(0);
        let read_own = BitFlags::<AccessFs>::from(AccessFs::ReadFile).bits();
        // SAFETY: the closure runs in the child between fork and exec, where only
        // async-signal-safe calls are allowed. It makes system calls only (unshare, open, write,
        // mount, prctl, landlock_restrict_self, seccomp) on data built before the fork (the
        // mount's paths and maps, the ruleset descriptor, the filter), builds the `sock_fprog` on
        // the stack, and makes io::Errors from raw codes, which does not allocate.
        unsafe {
            cmd.pre_exec(move || {
                if let Some(mount) = &git_mount {
                    mount.enter()?;
                }
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                if let Some(fd) = &ruleset {
                    own_proc_rule(fd.as_raw_fd(), read_own);
                    if libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0u32) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                if len > 0 {
                    let prog = libc::sock_fprog {
                        len,
                        filter: filter.as_ptr().cast_mut(),
                    };
                    let r = libc::syscall(
                        libc::SYS_seccomp,
                        libc::SECCOMP_SET_MODE_FILTER,
                        0u32,
                        &raw const prog,
                    );
                    if r != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
    }
}

/// `struct landlock_path_beneath_attr`, as the kernel reads it (packed).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: libc::c_int,
}

/// `LANDLOCK_RULE_PATH_BENEATH`.
const RULE_PATH_BENEATH: libc::c_uint = 1;

/// In the child, before it restricts itself: let it read its own `/proc/<pid>` (which `/proc/self`
/// names there), so a program that reads its own status or maps works when the shell runs it in
/// place. Its children have other pids and do without. Raw system calls only; a failure leaves the
/// folder unreadable, nothing more.
///
/// # Safety
/// Called between `fork` and `exec`: async-signal-safe (open, the rule, close).
unsafe fn own_proc_rule(ruleset: libc::c_int, access: u64) {
    // SAFETY: a NUL-terminated path and flags; the result is checked.
    let own = unsafe { libc::open(c"/proc/self".as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if own < 0 {
        return;
    }
    let attr = PathBeneathAttr {
        allowed_access: access,
        parent_fd: own,
    };
    // SAFETY: the attribute lives on this stack frame for the call; the kernel copies it.
    unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            RULE_PATH_BENEATH,
            &raw const attr,
            0u32,
        );
        libc::close(own);
    }
}

/// The Landlock ruleset: writes handled (allowed in the writable `set` only), TCP
/// handled when the network is blocked, signals (and abstract Unix sockets, network blocked)
/// scoped to the sandbox. `None` when the kernel enforces none of it.
fn ruleset(set: &WritableSet, block_network: bool) -> Result<Option<OwnedFd>, SandboxError> {
    let write = AccessFs::from_write(TARGET_ABI);
    let read: BitFlags<AccessFs> = AccessFs::ReadFile.into();
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(write | read)?;
    let mut scopes: BitFlags<Scope> = Scope::Signal.into();
    if block_network {
        ruleset = ruleset.handle_access(AccessNet::from_all(TARGET_ABI))?;
        scopes |= Scope::AbstractUnixSocket;
    }
    let ruleset = ruleset.scope(scopes)?;
    let created = ruleset
        .create()?
        .add_rules(path_beneath_rules(set.paths(), write))?
        .add_rules(path_beneath_rules(readable_roots(), read))?;
    Ok(created.into())
}

/// Where a command may read files: everywhere but other processes' files in `/proc`. Landlock
/// only adds grants, so this is every top-level entry of `/` but `/proc`, and every entry of
/// `/proc` that is not a process (`cpuinfo`, `meminfo`, `sys`, …; not `self`, which would lead to
/// the agent's own). A process's `environ` and `mem` would otherwise be readable by any process
/// of the same user (the provider key in the shell that started flower-tui); the command's own
/// folder is granted in the child ([`own_proc_rule`]).
fn readable_roots() -> Vec<PathBuf> {
    let entries = |dir: &str| -> Vec<(String, PathBuf, bool)> {
        std::fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .map(|e| {
                        let link = e.file_type().is_ok_and(|t| t.is_symlink());
                        (e.file_name().to_string_lossy().into_owned(), e.path(), link)
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut roots: Vec<PathBuf> = entries("/")
        .into_iter()
        .filter(|(name, _, _)| name != "proc")
        .map(|(_, path, _)| path)
        .collect();
    roots.extend(
        entries("/proc")
            .into_iter()
            .filter(|(name, _, link)| !link && !name.bytes().all(|b| b.is_ascii_digit()))
            .map(|(_, path, _)| path),
    );
    roots
}
