//! The sandbox on Linux: a Landlock ruleset, the seccomp filters and, where user namespaces work,
//! the command's own view of the file system (`mounts.rs`), prepared in the agent and applied by
//! the child between `fork` and `exec` with raw system calls only: a session of its own first
//! (no controlling terminal: `/dev/tty` leads nowhere), the namespaces and mounts, then
//! `no_new_privs`, Landlock and the filters (which refuse the calls that could undo the mounts or
//! leave the session).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};

use super::mounts::MountPlan;
use super::seccomp::{self, Rules};
use super::{
    Enforcement, NetworkAccess, RootKind, SandboxError, SandboxMode, SandboxPolicy, Support,
    WritableSet,
};

/// The ABI whose write rights this sandbox asks for. ABI 9's right to reach a Unix socket by its
/// path is asked for apart, with the network off only (granted nowhere then: a datagram sent by
/// path is refused too, besides the seccomp filter's refusal of such sockets).
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
    /// The seccomp filters as the kernel reads them; none when this machine has none.
    filters: Vec<Vec<libc::sock_filter>>,
    /// The command's own view of the file system, where user namespaces work.
    mounts: Option<MountPlan>,
    /// The Landlock rights on the private `/dev/pts` (granted in the child, once it is mounted).
    terminal_access: u64,
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
        let namespaces = super::namespaces_available();
        let mounts = namespaces
            .then(|| {
                let writable: Vec<PathBuf> = set
                    .roots
                    .iter()
                    .filter(|r| r.kind != RootKind::Device)
                    .map(|r| r.path.clone())
                    .collect();
                MountPlan::prepare(&writable, &set.read_only).map_err(|source| {
                    SandboxError::Mounts {
                        path: workspace.to_path_buf(),
                        source,
                    }
                })
            })
            .transpose()?;
        let rules = Rules {
            block_network: blocked,
            freeze_metadata: !namespaces && policy.mode == SandboxMode::ReadOnly,
        };
        let filters = match seccomp::native() {
            Some(target) => seccomp::programs(&target, rules)?
                .into_iter()
                .map(|program| {
                    program
                        .into_iter()
                        .map(|i| libc::sock_filter {
                            code: i.code,
                            jt: i.jt,
                            jf: i.jf,
                            k: i.k,
                        })
                        .collect()
                })
                .collect(),
            None => Vec::new(),
        };
        let (ruleset, enforcement) = match support() {
            Support::Landlock { abi } => (ruleset(&set, blocked)?, abi),
            Support::NoLandlock { reason } => {
                return Ok(Confinement {
                    ruleset: None,
                    filters,
                    mounts,
                    terminal_access: 0,
                    enforcement: Enforcement::FilterOnly { reason },
                });
            }
            Support::Seatbelt | Support::Unsupported => (None, 0),
        };
        let terminal_access = terminal_access(enforcement);
        let enforcement = match ruleset {
            Some(_) => Enforcement::Landlock { abi: enforcement },
            None => Enforcement::FilterOnly {
                reason: "Landlock enforced nothing on this kernel".into(),
            },
        };
        Ok(Confinement {
            ruleset,
            filters,
            mounts,
            terminal_access,
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
            filters,
            mut mounts,
            terminal_access,
            ..
        } = self;
        let read_own = BitFlags::<AccessFs>::from(AccessFs::ReadFile).bits();
        // SAFETY: the closure runs in the child between fork and exec, where only
        // async-signal-safe calls are allowed. It makes system calls only (setsid, unshare,
        // open, write, the mount calls, prctl, landlock_add_rule, landlock_restrict_self,
        // seccomp) on data built before the fork (the mounts' paths and maps, the ruleset
        // descriptor, the filters), builds each `sock_fprog` on the stack, and makes io::Errors
        // from raw codes, which does not allocate.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setsid() < 0 {
                    return Err(io::Error::last_os_error());
                }
                if let Some(plan) = &mut mounts {
                    plan.enter()?;
                }
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                if let Some(fd) = &ruleset {
                    add_rule_beneath(fd.as_raw_fd(), c"/proc/self", read_own);
                    if mounts.as_ref().is_some_and(MountPlan::private_terminals) {
                        add_rule_beneath(fd.as_raw_fd(), c"/dev/pts", terminal_access);
                    }
                    if libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0u32) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                for filter in &filters {
                    let prog = libc::sock_fprog {
                        len: u16::try_from(filter.len()).unwrap_or(0),
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

/// What a command may do with the terminals of its private `/dev/pts`: read, write and set them
/// up (`IoctlDev` from ABI 5), as far as this kernel's ABI handles them.
fn terminal_access(abi: u32) -> u64 {
    let abi = ABI::from(i32::try_from(abi).unwrap_or(i32::MAX));
    let wanted = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev;
    (wanted & AccessFs::from_all(abi)).bits()
}

/// `struct landlock_path_beneath_attr`, as the kernel reads it (packed).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: libc::c_int,
}

/// `LANDLOCK_RULE_PATH_BENEATH`.
const RULE_PATH_BENEATH: libc::c_uint = 1;

/// In the child, before it restricts itself: grant `access` beneath `path` as the child sees it.
/// For `/proc/self`: let it read its own `/proc/<pid>`, so a program that reads its own status or
/// maps works when the shell runs it in place (its children have other pids and do without). For
/// `/dev/pts`: the private instance mounted for it. Raw system calls only; a failure leaves the
/// folder closed, nothing more.
///
/// # Safety
/// Called between `fork` and `exec`: async-signal-safe (open, the rule, close).
unsafe fn add_rule_beneath(ruleset: libc::c_int, path: &std::ffi::CStr, access: u64) {
    // SAFETY: a NUL-terminated path and flags; the result is checked.
    let own = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
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
        ruleset = ruleset
            .handle_access(AccessNet::from_all(TARGET_ABI))?
            .handle_access(AccessFs::ResolveUnix)?;
        scopes |= Scope::AbstractUnixSocket;
    }
    let ruleset = ruleset.scope(scopes)?;
    let created = ruleset
        .create()?
        .add_rules(path_beneath_rules(set.paths(), write))?
        .add_rules(path_beneath_rules(readable_roots(), read))?;
    Ok(created.into())
}

/// Where a command may read files: everywhere but other processes' files in `/proc` and the
/// terminals of `/dev/pts`. Landlock only adds grants, so this is every top-level entry of `/`
/// but `/proc` and `/dev`, every entry of `/dev` but `pts` (and its links), and every entry of
/// `/proc` that is not a process (`cpuinfo`, `meminfo`, `sys`, …; not `self`, which would lead to
/// the agent's own). A process's `environ` and `mem` would otherwise be readable by any process
/// of the same user (the provider key in the shell that started flower-tui), and the user's
/// terminal would give away what they type; the command's own `/proc` folder and its private
/// `/dev/pts` are granted in the child ([`add_rule_beneath`]).
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
        .filter(|(name, _, _)| name != "proc" && name != "dev")
        .map(|(_, path, _)| path)
        .collect();
    roots.extend(
        entries("/dev")
            .into_iter()
            .filter(|(name, _, link)| !link && name != "pts")
            .map(|(_, path, _)| path),
    );
    roots.extend(
        entries("/proc")
            .into_iter()
            .filter(|(name, _, link)| !link && !name.bytes().all(|b| b.is_ascii_digit()))
            .map(|(_, path, _)| path),
    );
    roots
}
